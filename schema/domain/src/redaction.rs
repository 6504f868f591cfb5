//! Credentials never leave in text: URLs in error messages, events and log lines lose their
//! userinfo (`http://user:secret@proxy:3128` → `http://[redacted]@proxy:3128`). Kubernetes
//! client errors quote the proxy or server URL they failed on, which a kubeconfig may carry
//! with a password.

use std::borrow::Cow;

/// `text` with the userinfo of every URL in it replaced.
pub fn scrub_credentials(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        // The authority ends where the path, query or fragment begins, or the text around it.
        let end = tail.find(|c: char| matches!(c, '/' | '?' | '#' | '"' | '\'' | '>' | ')' | ',' | ';') || c.is_whitespace()).unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(i) => {
                out.push_str("[redacted]@");
                out.push_str(&authority[i + 1..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// An error (or anything displayable) as text without credentials, for logs and messages.
pub fn scrubbed(value: &dyn std::fmt::Display) -> String {
    scrub_credentials(&value.to_string()).into_owned()
}

/// The first line of `value` without credentials, at most 200 characters: enough to act on, too
/// little to leak a token a parser or a server quoted.
pub fn first_line(value: &dyn std::fmt::Display) -> String {
    let text = scrubbed(value);
    text.lines().next().unwrap_or_default().chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_goes_and_everything_else_stays() {
        assert_eq!(
            scrub_credentials("error connecting to proxy http://alice:s3cret@proxy.corp:3128/x: refused"),
            "error connecting to proxy http://[redacted]@proxy.corp:3128/x: refused"
        );
        assert_eq!(
            scrub_credentials("https://token@api:6443, then socks5://u:p@h:1080"),
            "https://[redacted]@api:6443, then socks5://[redacted]@h:1080"
        );
        assert_eq!(scrub_credentials("https://api.example:6443/healthz?x=y@z"), "https://api.example:6443/healthz?x=y@z");
        assert_eq!(scrub_credentials("no url here"), "no url here");
        assert_eq!(scrub_credentials("dangling http://"), "dangling http://");
    }
}
