//! The CGI/1.1 meta-variables a FastCGI request carries (RFC 3875 §4.1, plus what PHP applications
//! read: SCRIPT_FILENAME, DOCUMENT_ROOT, REQUEST_URI, DOCUMENT_URI, REMOTE_PORT, SERVER_ADDR,
//! REDIRECT_STATUS, HTTPS), encoded as one PARAMS stream.
//!
//! Request headers become `HTTP_*` as for CGI (cgi.rs's `header_vars`, which drops `Proxy`: no
//! HTTP_PROXY from a client, the httpoxy hole).

use super::record::push_param;
use crate::request::RequestBody;
use crate::request::{Head, Method};
use std::net::SocketAddr;
use std::path::Path;

/// What the parameters are built from besides the head.
pub struct Inputs<'a> {
    pub head: &'a Head<'a>,
    pub body_len: u64,
    pub query: &'a [u8],
    /// The script's URL path ("/dir/index.php") and the decoded rest ("" or "/…").
    pub script_name: &'a str,
    pub path_info: &'a str,
    pub root: &'a Path,
    /// (local, peer) addresses of the client connection.
    pub addrs: (SocketAddr, SocketAddr),
    /// The client connection is TLS: HTTPS=on.
    pub https: bool,
    pub user: Option<&'a str>,
}

/// The PARAMS stream (name-value pairs, not yet cut into records).
pub fn encode(i: &Inputs, out: &mut Vec<u8>) {
    let head = i.head;
    let mut p = |k: &str, v: &[u8]| push_param(out, k.as_bytes(), v);
    let root = i.root.as_os_str().as_encoded_bytes();
    let mut filename = root.to_vec();
    filename.extend_from_slice(i.script_name.as_bytes());
    p("GATEWAY_INTERFACE", b"CGI/1.1");
    p("SERVER_SOFTWARE", b"webstand");
    p("SERVER_PROTOCOL", head.version.name());
    p("REQUEST_METHOD", head.method_name.as_bytes());
    p("REQUEST_URI", head.target);
    p("DOCUMENT_URI", i.script_name.as_bytes());
    p("SCRIPT_NAME", i.script_name.as_bytes());
    p("SCRIPT_FILENAME", &filename);
    p("DOCUMENT_ROOT", root);
    p("PATH_INFO", i.path_info.as_bytes());
    if !i.path_info.is_empty() {
        let mut translated = root.to_vec();
        translated.extend_from_slice(i.path_info.as_bytes());
        p("PATH_TRANSLATED", &translated);
    }
    p("QUERY_STRING", i.query);
    let (local, peer) = i.addrs;
    let vars = crate::gateway::header_vars(head.fields());
    let host = vars.iter().find(|(k, _)| k == "HTTP_HOST");
    let server_name = host_name(host.map(|(_, v)| v.as_slice())).unwrap_or_default();
    let local_ip = local.ip().to_string();
    p(
        "SERVER_NAME",
        if server_name.is_empty() {
            local_ip.as_bytes()
        } else {
            server_name
        },
    );
    p("SERVER_ADDR", local_ip.as_bytes());
    p("SERVER_PORT", local.port().to_string().as_bytes());
    p("REMOTE_ADDR", peer.ip().to_string().as_bytes());
    p("REMOTE_PORT", peer.port().to_string().as_bytes());
    // php-cgi built with cgi.force_redirect refuses to run without it; php-fpm ignores it.
    p("REDIRECT_STATUS", b"200");
    if i.https {
        p("HTTPS", b"on");
    }
    if let Some(user) = i.user {
        p("AUTH_TYPE", b"Basic");
        p("REMOTE_USER", user.as_bytes());
    }
    if head.body != RequestBody::None || head.method == Method::Post {
        p("CONTENT_LENGTH", i.body_len.to_string().as_bytes());
    }
    for (name, value) in &vars {
        p(name, value);
    }
}

/// The host part of a Host header ("example.org:8080" → "example.org", "[::1]:80" → "[::1]").
fn host_name(host: Option<&[u8]>) -> Option<&[u8]> {
    let h = host?;
    if h.starts_with(b"[") {
        return h.iter().position(|&b| b == b']').map(|e| &h[..=e]);
    }
    Some(match h.iter().rposition(|&b| b == b':') {
        Some(c) => &h[..c],
        None => h,
    })
}

#[cfg(test)]
mod tests {
    use super::host_name;

    #[test]
    fn host_names_lose_their_port() {
        assert_eq!(
            host_name(Some(b"example.org:8080")),
            Some(&b"example.org"[..])
        );
        assert_eq!(host_name(Some(b"example.org")), Some(&b"example.org"[..]));
        assert_eq!(host_name(Some(b"[::1]:80")), Some(&b"[::1]"[..]));
        assert_eq!(host_name(None), None);
    }
}
