//! From a URL to a [`Target`], and from a plan to the request bytes sent on the wire (built once).

use crate::{HttpVersion, Plan, Target};
use anyhow::{bail, Context};
use std::net::ToSocketAddrs;

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
}

/// Parses `http://host[:port][/path]` and resolves the host. Returns the target and the path (with
/// query, starting with `/`). Only `http://` is supported (see [`parse_web_url`] for https).
pub fn parse_url(url: &str) -> anyhow::Result<(Target, String)> {
    match parse_web_url(url)? {
        (t, path, Scheme::Http) => Ok((t, path)),
        (_, _, Scheme::Https) => {
            bail!("unsupported URL scheme 'https' in '{url}': only http:// is supported here")
        }
    }
}

/// Parses `http://` or `https://host[:port][/path]` and resolves the host.
pub fn parse_web_url(url: &str) -> anyhow::Result<(Target, String, Scheme)> {
    let (host, port, path, scheme) = split_url(url)?;
    let lookup = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<_> = (lookup, port)
        .to_socket_addrs()
        .map_err(|e| anyhow::anyhow!("unknown host '{host}': {e}"))?
        .collect();
    if addrs.is_empty() {
        bail!("unknown host '{host}': no address");
    }
    Ok((Target { host, port, addrs }, path, scheme))
}

/// [`parse_web_url`] without resolving the host (a proxy resolves it, ab's `-X`): host as written,
/// port, path, scheme.
pub fn split_url(url: &str) -> anyhow::Result<(String, u16, String, Scheme)> {
    let Some((scheme, rest)) = url.split_once("://") else {
        bail!("invalid URL '{url}': expected http://host[:port]/path");
    };
    let scheme = if scheme.eq_ignore_ascii_case("http") {
        Scheme::Http
    } else if scheme.eq_ignore_ascii_case("https") {
        Scheme::Https
    } else {
        bail!("unsupported URL scheme '{scheme}' in '{url}': only http:// and https:// are");
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
    let (host, port) = split_host_port(authority, scheme.default_port())
        .with_context(|| format!("invalid URL '{url}'"))?;
    if host.is_empty() {
        bail!("invalid URL '{url}': no host");
    }
    if path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        bail!("invalid URL '{url}': the path contains spaces or control characters");
    }
    Ok((host.to_string(), port, path, scheme))
}

fn split_host_port(authority: &str, default_port: u16) -> anyhow::Result<(&str, u16)> {
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
        None => default_port,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .with_context(|| format!("bad port '{p}'"))?,
    };
    Ok((host, port))
}

/// The request bytes for `path` under `plan`: request line, Host, User-Agent, Accept, Connection,
/// the body's Content-Length/Content-Type, the user's headers (which replace defaults of the same
/// name), the blank line and the body.
pub fn request_bytes(plan: &Plan, path: &str) -> Vec<u8> {
    let version = match plan.http_version {
        HttpVersion::Http10 => "HTTP/1.0",
        HttpVersion::Http11 => "HTTP/1.1",
    };
    let user_has = |name: &str| {
        plan.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    let keep_alive = plan.keep_alive || plan.pipeline > 1;
    let mut r = format!("{} {} {}\r\n", plan.method, path, version);
    if !user_has("host") {
        let t = &plan.target;
        let scheme = match plan.tls {
            Some(_) => Scheme::Https,
            None => Scheme::Http,
        };
        if t.port == scheme.default_port() {
            r += &format!("Host: {}\r\n", t.host);
        } else {
            r += &format!("Host: {}:{}\r\n", t.host, t.port);
        }
    }
    if !user_has("user-agent") {
        r += concat!("User-Agent: webstand/", env!("CARGO_PKG_VERSION"), "\r\n");
    }
    if !user_has("accept") {
        r += "Accept: */*\r\n";
    }
    if !user_has("connection") {
        match (keep_alive, plan.http_version) {
            (true, HttpVersion::Http10) => r += "Connection: keep-alive\r\n",
            (false, HttpVersion::Http11) => r += "Connection: close\r\n",
            _ => {}
        }
    }
    if let Some((body, ctype)) = &plan.body {
        if !user_has("content-type") {
            r += &format!("Content-Type: {ctype}\r\n");
        }
        if !user_has("content-length") {
            r += &format!("Content-Length: {}\r\n", body.len());
        }
    }
    for (n, v) in &plan.headers {
        r += &format!("{n}: {v}\r\n");
    }
    r += "\r\n";
    let mut bytes = r.into_bytes();
    if let Some((body, _)) = &plan.body {
        bytes.extend_from_slice(body);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_host_port_and_path() {
        let (t, p) = parse_url("http://127.0.0.1:8080/a/b?x=1#frag").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, p.as_str()),
            ("127.0.0.1", 8080, "/a/b?x=1")
        );
        let (t, p) = parse_url("HTTP://127.0.0.1").unwrap();
        assert_eq!((t.port, p.as_str()), (80, "/"));
        let (t, _) = parse_url("http://[::1]:81/").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("[::1]", 81));
        assert!(t.addrs[0].is_ipv6());
    }

    #[test]
    fn rejects_bad_urls_with_reasons() {
        let e = |u: &str| format!("{:#}", parse_url(u).unwrap_err());
        assert!(e("https://127.0.0.1/").contains("only http://"));
        assert!(e("ftp://127.0.0.1/").contains("only http:// and https://"));
        let (t, p, s) = parse_web_url("HTTPS://127.0.0.1/x").unwrap();
        assert_eq!((t.port, p.as_str(), s), (443, "/x", Scheme::Https));
        assert!(e("127.0.0.1/x").contains("expected http://"));
        assert!(e("http://127.0.0.1:99999/").contains("bad port"));
        assert!(e("http:///x").contains("no host"));
        assert!(e("http://no-such-host.invalid/").contains("unknown host"));
    }

    #[test]
    fn request_bytes_have_defaults_and_user_overrides() {
        let (t, p) = parse_url("http://127.0.0.1:8080/x").unwrap();
        let mut plan = Plan::new(t, &p);
        let r = String::from_utf8(request_bytes(&plan, "/x")).unwrap();
        assert!(r.starts_with("GET /x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
        assert!(r.contains("Connection: close\r\n") && r.ends_with("\r\n\r\n"));
        plan.keep_alive = true;
        plan.headers.push(("Host".into(), "example".into()));
        plan.body = Some((b"abc".to_vec(), "text/plain".into()));
        plan.method = "POST".into();
        let r = String::from_utf8(request_bytes(&plan, "/x")).unwrap();
        assert!(
            !r.contains("Connection:") && r.contains("Host: example\r\n") && !r.contains("8080")
        );
        assert!(r.contains("Content-Length: 3\r\n") && r.ends_with("\r\n\r\nabc"));
    }
}
