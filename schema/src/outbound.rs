//! Posting to URLs someone configured: the alert webhook (an admin's) and notification channels
//! (any user's). Both share the client's settings (timeouts, no redirects: a redirect would send
//! the body somewhere nobody chose), how a reply is read (what may pass is retried, what will
//! not is given up at once) and how a URL is logged (scheme, host and port: the path of a Slack
//! webhook URL is its secret).
//!
//! A user's URL must not turn the gateway into a way into the network it runs in (cloud
//! metadata at 169.254.169.254, the database, Redis, the Kubernetes API): unless the operator
//! allows private targets, a [`Client::guarded`] refuses URLs whose host is, or resolves to, a
//! loopback, private, link-local or otherwise non-public address — checked when connecting, so a
//! name that resolves differently later (DNS rebinding) is caught too.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// Longest a POST may take, connecting included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// What came of one attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Delivered,
    /// Might work later (network errors, timeouts, 408, 429, 5xx).
    Retry(String),
    /// Will not work as it is (another 4xx: the payload or the URL is wrong).
    GiveUp(String),
}

/// An http(s) URL with a host, or `None`; the error never echoes it.
pub fn parse_url(url: &str) -> Option<reqwest::Url> {
    reqwest::Url::parse(url.trim()).ok().filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
}

/// The URL as logs and the API show it: scheme, host and port.
pub fn shown(url: &reqwest::Url) -> String {
    let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
    format!("{}://{}{port}", url.scheme(), url.host_str().unwrap_or_default())
}

/// Whether an address is on the public internet: not loopback, private, link-local, shared
/// (carrier NAT), multicast, documentation or unspecified, in IPv4 or IPv6 (mapped ones
/// included).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || first == 0x2001 && v6.segments()[1] == 0x0db8)
        }
    }
}

/// Why a URL may not be posted to from here, when its host is a literal address that is not
/// public (names are checked when they are resolved).
pub fn literal_refusal(url: &reqwest::Url) -> Option<String> {
    let ip = match url.host()? {
        url::Host::Ipv4(ip) => IpAddr::V4(ip),
        url::Host::Ipv6(ip) => IpAddr::V6(ip),
        url::Host::Domain(name) if name.eq_ignore_ascii_case("localhost") || name.ends_with(".localhost") => {
            return Some("its host is this machine".into());
        }
        url::Host::Domain(_) => return None,
    };
    (!is_public(ip)).then(|| format!("its host {ip} is not a public address"))
}

/// Resolves names like the system does, refusing any that leads to a non-public address.
struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if let Some(private) = found.iter().find(|a| !is_public(a.ip())) {
                let refusal = format!("`{host}` resolves to {}, which is not a public address", private.ip());
                return Err(refusal.into());
            }
            let addresses: reqwest::dns::Addrs = Box::new(found.into_iter());
            Ok(addresses)
        })
    }
}

/// An HTTP client for configured URLs.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    /// Whether non-public targets are refused.
    guarded: bool,
}

impl Client {
    /// For URLs an operator set (anything it can reach).
    pub fn open() -> anyhow::Result<Self> {
        Ok(Self { http: builder().build()?, guarded: false })
    }

    /// For URLs users set: public addresses only.
    pub fn guarded() -> anyhow::Result<Self> {
        Ok(Self { http: builder().dns_resolver(Arc::new(PublicOnly)).build()?, guarded: true })
    }

    /// Whether this client refuses non-public targets.
    pub fn is_guarded(&self) -> bool {
        self.guarded
    }

    /// POSTs `body` (JSON) with `headers`.
    pub async fn post_json(&self, url: &reqwest::Url, body: Vec<u8>, headers: &[(&str, String)]) -> Outcome {
        if self.guarded
            && let Some(refusal) = literal_refusal(url)
        {
            return Outcome::GiveUp(format!("not sent: {refusal}"));
        }
        let mut request = self.http.post(url.clone()).header(reqwest::header::CONTENT_TYPE, "application/json").body(body);
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        match request.send().await {
            Ok(response) => {
                let status = response.status();
                if status.is_success() {
                    Outcome::Delivered
                } else if status.is_server_error() || status.as_u16() == 408 || status.as_u16() == 429 {
                    Outcome::Retry(format!("HTTP {status}"))
                } else {
                    Outcome::GiveUp(format!("HTTP {status}"))
                }
            }
            // Without the URL: reqwest puts it in its messages. A refused resolution is final.
            Err(error) => {
                let why = describe(&error.without_url());
                if why.contains("not a public address") { Outcome::GiveUp(why) } else { Outcome::Retry(why) }
            }
        }
    }
}

fn builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder().timeout(REQUEST_TIMEOUT).connect_timeout(REQUEST_TIMEOUT).redirect(reqwest::redirect::Policy::none())
}

/// The error and its causes on one line (reqwest's own message is only "error sending request").
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!is_public(private.parse().expect("an address")), "{private}");
        }
        for public in ["8.8.8.8", "140.82.112.3", "2606:4700::1111", "::ffff:1.1.1.1"] {
            assert!(is_public(public.parse().expect("an address")), "{public}");
        }
    }

    #[test]
    fn literal_private_hosts_are_refused_and_names_wait_for_resolution() {
        let refused = |u: &str| literal_refusal(&parse_url(u).expect("a URL"));
        assert!(refused("http://169.254.169.254/latest/meta-data").is_some());
        assert!(refused("http://[::1]:6379/").is_some());
        assert!(refused("http://localhost:5432/").is_some());
        assert!(refused("https://hooks.slack.com/services/T0/B0/x").is_none());
        assert_eq!(shown(&parse_url("https://hooks.slack.com:8443/services/T0/B0/secret").expect("a URL")), "https://hooks.slack.com:8443");
        assert!(parse_url("ftp://example.com/").is_none() && parse_url("hooks.slack.com/x").is_none());
    }
}
