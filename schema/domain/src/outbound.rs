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
/// (carrier NAT), multicast, documentation, reserved or unspecified, in IPv4 or IPv6. An IPv6
/// address that carries an IPv4 one (mapped, compatible, NAT64's well-known prefix, 6to4) is
/// judged by the IPv4 address it leads to; prefixes whose IPv4 address is hidden or local
/// (Teredo, local-use NAT64, site-local) are not public.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                // IETF protocol assignments (192.0.0.0/24: DS-Lite, NAT64 discovery, …).
                || (a == 192 && b == 0 && c == 0)
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let embedded = |high: u16, low: u16| IpAddr::V4(std::net::Ipv4Addr::from((u32::from(high) << 16) | u32::from(low)));
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            // IPv4-compatible (::a.b.c.d, deprecated but still routed by some stacks).
            if s[..6] == [0; 6] && !v6.is_loopback() && !v6.is_unspecified() {
                return is_public(embedded(s[6], s[7]));
            }
            // NAT64, the well-known prefix 64:ff9b::/96: the IPv4 address it translates to.
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                return is_public(embedded(s[6], s[7]));
            }
            // 6to4 (2002::/16): the IPv4 address of the relay's far end.
            if s[0] == 0x2002 {
                return is_public(embedded(s[1], s[2]));
            }
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                // Unique local (fc00::/7), link-local (fe80::/10), site-local (fec0::/10).
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || (s[0] & 0xffc0) == 0xfec0
                // Local-use NAT64 (64:ff9b:1::/48): translated inside the operator's network.
                || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1)
                // Teredo (2001::/32): the IPv4 address inside is obscured.
                || (s[0] == 0x2001 && s[1] == 0)
                // Documentation (2001:db8::/32) and the discard prefix (100::/64).
                || (s[0] == 0x2001 && s[1] == 0x0db8)
                || (s[0] == 0x100 && s[1..4] == [0, 0, 0]))
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

/// Resolves names like the system does (or, in tests, as `lookup` says), refusing any that
/// leads to a non-public address.
struct PublicOnly {
    lookup: Option<fn(&str) -> Vec<IpAddr>>,
}

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let lookup = self.lookup;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> = match lookup {
                Some(lookup) => lookup(&host).into_iter().map(|ip| SocketAddr::new(ip, 0)).collect(),
                None => tokio::net::lookup_host((host.as_str(), 0)).await?.collect(),
            };
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

    /// For URLs users set: public addresses only. Never through a proxy (`HTTPS_PROXY` and
    /// the like are ignored): a proxy would be handed the user's host name and resolve it
    /// itself, past the check (`CONNECT metadata.google.internal:443`); the gateway resolves,
    /// checks and connects to the checked address itself.
    pub fn guarded() -> anyhow::Result<Self> {
        Self::guarded_with(None)
    }

    fn guarded_with(lookup: Option<fn(&str) -> Vec<IpAddr>>) -> anyhow::Result<Self> {
        Ok(Self { http: builder().no_proxy().dns_resolver(Arc::new(PublicOnly { lookup })).build()?, guarded: true })
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
                let refused = why.contains("not a public address");
                // What a user's URL got says nothing about the network in between: "connection
                // refused" against "timed out" would map the gateway's neighbours port by port.
                let why = match (self.guarded, refused) {
                    (false, _) => why,
                    (true, true) => "its host resolves to an address that is not public".to_owned(),
                    (true, false) => {
                        tracing::debug!(host = %shown(url), why, "a user's URL could not be reached");
                        format!("could not be reached, or did not answer within {} s", REQUEST_TIMEOUT.as_secs())
                    }
                };
                if refused { Outcome::GiveUp(format!("not sent: {why}")) } else { Outcome::Retry(why) }
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
            // IPv4 carried in IPv6, leading somewhere private.
            "::10.0.0.1",
            "::169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::7f00:1",
            "2002:a9fe:a9fe::1",
            "2002:c0a8:101::",
            // Never public, whatever they carry.
            "64:ff9b:1::8.8.8.8",
            "fec0::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:db8::1",
            "100::1",
            "192.0.0.1",
            "192.0.0.170",
        ] {
            assert!(!is_public(private.parse().expect("an address")), "{private}");
        }
        for public in ["8.8.8.8", "140.82.112.3", "2606:4700::1111", "::ffff:1.1.1.1", "64:ff9b::808:808", "2002:808:808::1", "192.0.1.1"] {
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

    /// What the test resolver says: one name that leads to cloud metadata.
    fn test_lookup(name: &str) -> Vec<IpAddr> {
        match name {
            "metadata.test" => vec!["169.254.169.254".parse().expect("an address")],
            "nat64.test" => vec!["64:ff9b::a9fe:a9fe".parse().expect("an address")],
            _ => Vec::new(),
        }
    }

    #[tokio::test]
    async fn a_guarded_delivery_that_fails_says_only_that_it_could_not_reach() {
        // `nowhere.test` resolves to nothing: no connection is tried anywhere. What reqwest
        // says (a resolver error here; "connection refused" or "timed out" against a real host)
        // would map the gateway's network for whoever owns the URL, so users get one sentence.
        let client = Client::guarded_with(Some(test_lookup)).expect("a client");
        let outcome = client.post_json(&parse_url("https://nowhere.test:8443/hook").expect("a URL"), b"{}".to_vec(), &[]).await;
        let Outcome::Retry(why) = outcome else { panic!("a failure to reach is retried: {outcome:?}") };
        assert_eq!(why, format!("could not be reached, or did not answer within {} s", REQUEST_TIMEOUT.as_secs()));
        // An operator's own (open) client keeps the detail for its logs.
        let open =
            Client { http: builder().dns_resolver(Arc::new(PublicOnly { lookup: Some(test_lookup) })).build().expect("a client"), guarded: false };
        let Outcome::Retry(detail) = open.post_json(&parse_url("https://nowhere.test:8443/hook").expect("a URL"), b"{}".to_vec(), &[]).await else {
            panic!("retried")
        };
        assert!(!detail.starts_with("could not be reached"), "{detail}");
    }

    /// Run only as a child of [`a_guarded_client_never_hands_a_target_to_a_proxy`], with the
    /// proxy in its environment (reqwest reads it when a client is built): ignored otherwise.
    #[tokio::test]
    #[ignore = "a child process of a_guarded_client_never_hands_a_target_to_a_proxy"]
    async fn proxy_probe_child() {
        let which = std::env::var("EGS_PROXY_PROBE").expect("run by the parent test, which names the client");
        let client = match which.as_str() {
            "guarded" => Client::guarded_with(Some(test_lookup)).expect("a client"),
            _ => Client::open().expect("a client"),
        };
        for url in ["http://metadata.test/latest/meta-data", "http://nat64.test/"] {
            let outcome = client.post_json(&parse_url(url).expect("a URL"), b"{}".to_vec(), &[]).await;
            println!("PROBE {url} {outcome:?}");
        }
    }

    #[test]
    fn a_guarded_client_never_hands_a_target_to_a_proxy() {
        use std::io::{BufRead, Write};
        // A proxy on loopback that records the first line of every request and answers 200.
        let proxy = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let address = proxy.local_addr().expect("an address");
        let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let recorded = seen.clone();
        std::thread::spawn(move || {
            for stream in proxy.incoming().flatten() {
                let mut line = String::new();
                let _ = std::io::BufReader::new(&stream).read_line(&mut line);
                recorded.lock().expect("lock").push(line.trim().to_owned());
                let _ = (&stream).write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            }
        });
        let probe = |which: &str| {
            let output = std::process::Command::new(std::env::current_exe().expect("this test binary"))
                .args(["--exact", "outbound::tests::proxy_probe_child", "--ignored", "--nocapture", "--test-threads=1"])
                .env("EGS_PROXY_PROBE", which)
                .env("HTTP_PROXY", format!("http://{address}"))
                .env("HTTPS_PROXY", format!("http://{address}"))
                .env("ALL_PROXY", format!("http://{address}"))
                .env_remove("NO_PROXY")
                .env_remove("no_proxy")
                .output()
                .expect("the probe runs");
            assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
            String::from_utf8_lossy(&output.stdout).lines().filter_map(|l| l.find("PROBE").map(|at| l[at..].to_owned())).collect::<Vec<_>>()
        };
        let guarded = probe("guarded");
        assert_eq!(guarded.len(), 2, "{guarded:?}");
        assert!(guarded.iter().all(|l| l.contains("GiveUp") && l.contains("not public")), "{guarded:?}");
        // Nor does the refusal say where the name led (an oracle for the internal DNS).
        assert!(guarded.iter().all(|l| !l.contains("169.254") && !l.contains("ff9b")), "{guarded:?}");
        assert!(seen.lock().expect("lock").is_empty(), "the proxy was asked: {:?}", seen.lock().expect("lock"));
        // The same environment does send an operator's (open) client through the proxy: the
        // probe would have seen the guarded one's requests.
        let open = probe("open");
        assert!(open.iter().all(|l| l.contains("Delivered")), "{open:?}");
        let asked = seen.lock().expect("lock").clone();
        assert!(asked.iter().any(|l| l.contains("metadata.test")), "{asked:?}");
    }
}
