//! HTTP/1's request: the bytes that ask for a plan's URL, built once per URL before the run.

use crate::target::authority;
use webstand_results::plan::{HttpVersion, Plan};

/// Default request headers that a user header with an empty value leaves out.
const DROPPABLE: [&str; 2] = ["user-agent", "accept"];

/// The request bytes for `path` under `plan`: request line, Host, User-Agent, Accept, Connection,
/// the body's Content-Length/Content-Type, the user's headers (which replace defaults of the same
/// name), the blank line and the body.
///
/// User-Agent and Accept are sent by default because ab sends them (a server's work per request
/// depends on the request's header lines: two more cost lighttpd and h2o a few per cent of their
/// CPU per request, docs/BENCHMARKS.md, "Findings"), so compare generators on one request: wrk's is
/// Host alone. A user header with an empty value for one of those two (`-H 'User-Agent:'`, as curl
/// has it) leaves it out.
pub fn request_bytes(plan: &Plan, path: &str) -> Vec<u8> {
    let version = match plan.http_version {
        HttpVersion::Http10 => "HTTP/1.0",
        HttpVersion::Http11 => "HTTP/1.1",
    };
    let keep_alive = plan.keep_alive || plan.pipeline > 1;
    let mut r = format!("{} {} {}\r\n", plan.method, path, version);
    if !plan.has_header("host") {
        r += &format!("Host: {}\r\n", authority(plan));
    }
    if !plan.has_header("user-agent") {
        r += concat!("User-Agent: webstand/", env!("CARGO_PKG_VERSION"), "\r\n");
    }
    if !plan.has_header("accept") {
        r += "Accept: */*\r\n";
    }
    if !plan.has_header("connection") {
        match (keep_alive, plan.http_version) {
            (true, HttpVersion::Http10) => r += "Connection: keep-alive\r\n",
            (false, HttpVersion::Http11) => r += "Connection: close\r\n",
            _ => {}
        }
    }
    if let Some((body, ctype)) = &plan.body {
        if !plan.has_header("content-type") {
            r += &format!("Content-Type: {ctype}\r\n");
        }
        if !plan.has_header("content-length") {
            r += &format!("Content-Length: {}\r\n", body.len());
        }
    }
    for (n, v) in &plan.headers {
        if v.is_empty() && DROPPABLE.iter().any(|d| n.eq_ignore_ascii_case(d)) {
            continue; // the default left out
        }
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
    use crate::target::parse_url;

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

    #[test]
    fn empty_user_agent_and_accept_leave_the_defaults_out() {
        let (t, p) = parse_url("http://127.0.0.1:8080/x").unwrap();
        let mut plan = Plan::new(t, &p);
        plan.keep_alive = true;
        let r = String::from_utf8(request_bytes(&plan, "/x")).unwrap();
        assert!(r.contains("\r\nUser-Agent: webstand/") && r.contains("\r\nAccept: */*\r\n"));
        plan.headers.push(("user-agent".into(), String::new()));
        plan.headers.push(("Accept".into(), String::new()));
        plan.headers.push(("X-Empty".into(), String::new()));
        let r = String::from_utf8(request_bytes(&plan, "/x")).unwrap();
        // wrk's request: the request line and Host; other empty headers are still sent.
        assert_eq!(
            r,
            "GET /x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-Empty: \r\n\r\n"
        );
    }
}
