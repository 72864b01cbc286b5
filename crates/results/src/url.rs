//! A URL split into its host, port, path and scheme: the one URL splitter, which the engine (that
//! then resolves the host), the command line, the URL files and the reports' labels all use.

use anyhow::{bail, Context};

/// A URL's scheme: plain HTTP, or HTTP over TLS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    Http,
    Https,
}

impl Scheme {
    /// The port a URL without one means.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }

    /// As written in a URL (and in HTTP/2's `:scheme`).
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }
}

/// `http://` or `https://host[:port][/path]` split: the host as written, the port (the scheme's
/// default if none), the path with its query (starting with `/`, without the fragment), the scheme.
/// Nothing is resolved (the engine resolves the host; a proxy does, ab's `-X`).
pub fn split_url(url: &str) -> anyhow::Result<(String, u16, String, Scheme)> {
    let Some((scheme, rest)) = url.split_once("://") else {
        bail!("invalid URL '{url}': expected http://host[:port]/path");
    };
    let scheme = if scheme.eq_ignore_ascii_case("http") {
        Scheme::Http
    } else if scheme.eq_ignore_ascii_case("https") {
        Scheme::Https
    } else {
        bail!(
            "unsupported URL scheme '{scheme}' in '{url}': only http:// and https:// are supported"
        );
    };
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let path = path.split('#').next().unwrap_or("/");
    let path = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    if authority.contains('@') {
        bail!("invalid URL '{url}': user info (user@host) is not supported");
    }
    let (host, port) = split_authority(authority, Some(scheme.default_port()))
        .with_context(|| format!("invalid URL '{url}'"))?;
    if host.is_empty() {
        bail!("invalid URL '{url}': no host");
    }
    if path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        bail!("invalid URL '{url}': the path contains spaces or control characters");
    }
    Ok((host.to_string(), port, path, scheme))
}

/// `host[:port]` (an IPv6 address in brackets, kept as written): the host and the port, else
/// `default_port`; with no default the port is required (a proxy's address, ab's `-X`).
pub fn split_authority(authority: &str, default_port: Option<u16>) -> anyhow::Result<(&str, u16)> {
    // IPv6 literal: [::1]:8080
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']').context("unclosed '[' in host")?;
        let after = &authority[end + 1..];
        match after.strip_prefix(':') {
            Some(p) => (&authority[..=end], Some(p)),
            None if after.is_empty() => (&authority[..=end], None),
            None => bail!("unexpected text after IPv6 address"),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let port = match port {
        None => default_port.context("no port")?,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .with_context(|| format!("bad port '{p}'"))?,
    };
    Ok((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_host_port_path_and_scheme() {
        let split = |u: &str| split_url(u).unwrap();
        assert_eq!(
            split("http://127.0.0.1:8080/a/b?x=1#frag"),
            ("127.0.0.1".into(), 8080, "/a/b?x=1".into(), Scheme::Http)
        );
        assert_eq!(
            split("HTTPS://example.test?q"),
            ("example.test".into(), 443, "/?q".into(), Scheme::Https)
        );
        assert_eq!(
            split("http://[::1]:81"),
            ("[::1]".into(), 81, "/".into(), Scheme::Http)
        );
    }

    #[test]
    fn refuses_what_is_not_an_http_url() {
        let e = |u: &str| format!("{:#}", split_url(u).unwrap_err());
        assert!(e("ftp://127.0.0.1/").contains("only http:// and https://"));
        assert!(e("127.0.0.1/x").contains("expected http://"));
        assert!(e("http://u@127.0.0.1/").contains("user info"));
        assert!(e("http://[::1/").contains("unclosed '['"));
        assert!(e("http://127.0.0.1:0/").contains("bad port"));
        assert!(e("http:///x").contains("no host"));
        assert!(e("http://h/a b").contains("spaces or control characters"));
    }
}
