//! From a URL to a [`Target`] (split by `webstand_results::url`, resolved here), and back to the
//! authority a request names (HTTP/1's Host, HTTP/2's `:authority`); the request bytes themselves
//! are the protocol's (`h1/request.rs`, `h2/prepared.rs`).

use anyhow::bail;
use std::net::{SocketAddr, ToSocketAddrs};
use webstand_results::plan::{Plan, Target};
pub use webstand_results::url::{split_authority, split_url, Scheme};

/// The scheme a plan's connections speak: `https` with TLS.
pub(crate) fn scheme_of(plan: &Plan) -> Scheme {
    match plan.tls {
        Some(_) => Scheme::Https,
        None => Scheme::Http,
    }
}

/// The target as a request names it: its host, with `:port` unless the port is the scheme's
/// default.
pub fn authority(plan: &Plan) -> String {
    let t = &plan.target;
    match t.port == scheme_of(plan).default_port() {
        true => t.host.clone(),
        false => format!("{}:{}", t.host, t.port),
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
    let addrs = resolve(&host, port, "host")?;
    Ok((Target { host, port, addrs }, path, scheme))
}

/// The addresses of `host` (a name, an address, or an IPv6 address in brackets) at `port`; the
/// error names it as `what` ("host", "proxy host").
pub fn resolve(host: &str, port: u16, what: &str) -> anyhow::Result<Vec<SocketAddr>> {
    let lookup = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<_> = (lookup, port)
        .to_socket_addrs()
        .map_err(|e| anyhow::anyhow!("unknown {what} '{host}': {e}"))?
        .collect();
    if addrs.is_empty() {
        bail!("unknown {what} '{host}': no address");
    }
    Ok(addrs)
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
        assert!(e("ftp://127.0.0.1/").ends_with("only http:// and https:// are supported"));
        let (t, p, s) = parse_web_url("HTTPS://127.0.0.1/x").unwrap();
        assert_eq!((t.port, p.as_str(), s), (443, "/x", Scheme::Https));
        assert!(e("127.0.0.1/x").contains("expected http://"));
        assert!(e("http://127.0.0.1:99999/").contains("bad port"));
        assert!(e("http:///x").contains("no host"));
        // Not a host name ('!'): the C library refuses it without asking a DNS server, so the test
        // sends no query off the machine (tests/bench.rs checks a well-formed unknown name offline).
        assert!(e("http://not!a-host.invalid/").contains("unknown host 'not!a-host.invalid'"));
    }
}
