//! HTTP/1.x for the load generator (`protocol::Protocol::Http1`): the request bytes of a plan's URL
//! (built once per URL) and the response framing a connection's reads go through.
//!
//! The codec is `webstand-http1`'s (the server uses the same one): the header block is scanned by
//! `response::parse_head` only once it is complete (a partial block is carried in a small
//! per-connection buffer), the body framing is `framing::response_body`'s decision, and the body is
//! then counted without copying: Content-Length, chunked (the lenient decoder), close-delimited, or
//! no body at all (HEAD, 1xx, 204, 304). Interim 1xx responses are skipped. Body bytes are
//! optionally hashed for checksum checks.

use crate::response::{count, server_software, Feed, FrameError, ResponseParser, Wire};
use crate::target::Scheme;
use crate::{HttpVersion, Plan};
use webstand_http1::chunked::{self, Decoder, Progress};
use webstand_http1::framing::{self, ResponseBody};
use webstand_http1::response::parse_head;

/// Default request headers that a user header with an empty value leaves out.
const DROPPABLE: [&str; 2] = ["user-agent", "accept"];

/// Largest header block accepted; a bigger one is garbage, not a response.
pub(crate) const MAX_HEAD: usize = 64 * 1024;

#[derive(Debug, Clone)]
enum State {
    Head,
    Fixed { left: u64 },
    Chunked(Decoder),
    UntilClose,
}

/// HTTP/1's framing state for the response being read.
#[derive(Debug)]
pub(crate) struct Framing {
    /// A partial header block carried between reads.
    head: Vec<u8>,
    state: State,
}

impl Default for Framing {
    fn default() -> Self {
        Framing {
            head: Vec::new(),
            state: State::Head,
        }
    }
}

impl Framing {
    pub(crate) fn begin(&mut self) {
        self.head.clear();
        self.state = State::Head;
    }

    /// The body runs to the connection's close.
    pub(crate) fn ends_at_close(&self) -> bool {
        matches!(self.state, State::UntilClose)
    }
}

/// The state of an HTTP/1 reader's wire (a field borrow, so the parser's other fields stay free).
fn http1_state(wire: &mut Wire) -> &mut State {
    match wire {
        Wire::Http1(f) => &mut f.state,
    }
}

impl ResponseParser {
    /// Feeds bytes read from the socket to an HTTP/1 reader (`ResponseParser::feed`).
    pub(crate) fn feed_http1(&mut self, data: &[u8]) -> Result<Feed, FrameError> {
        let mut pos = 0;
        loop {
            match http1_state(&mut self.wire) {
                State::Head => {
                    if pos == data.len() {
                        return Ok(Feed::More);
                    }
                    match self.feed_head(&data[pos..])? {
                        Some(used) => pos += used,
                        None => return Ok(Feed::More),
                    }
                    if matches!(http1_state(&mut self.wire), State::Head) {
                        // Interim response skipped, or a final one without a body.
                        if self.status != 0 {
                            return Ok(Feed::Done(pos));
                        }
                    }
                }
                State::Fixed { left } => {
                    let take = (*left).min((data.len() - pos) as u64) as usize;
                    *left -= take as u64;
                    let done = *left == 0;
                    count(&mut self.body_len, &mut self.hasher, &data[pos..pos + take]);
                    pos += take;
                    return Ok(if done { Feed::Done(pos) } else { Feed::More });
                }
                State::UntilClose => {
                    count(&mut self.body_len, &mut self.hasher, &data[pos..]);
                    return Ok(Feed::More);
                }
                State::Chunked(decoder) => {
                    let (body_len, hasher) = (&mut self.body_len, &mut self.hasher);
                    let progress = decoder
                        .feed(&data[pos..], |bytes| count(body_len, hasher, bytes))
                        .map_err(chunked::ChunkError::message)?;
                    return Ok(match progress {
                        Progress::More => Feed::More,
                        Progress::Done(n) => Feed::Done(pos + n),
                    });
                }
            }
        }
    }

    /// Reads header bytes; `Some(n)` when a head ended after `n` of them (then `status` is set and
    /// the state is the body's, or still `Head` after an interim response, with `status` 0).
    fn feed_head(&mut self, data: &[u8]) -> Result<Option<usize>, FrameError> {
        let Wire::Http1(f) = &mut self.wire;
        let carried = f.head.len();
        if carried > 0 {
            f.head.extend_from_slice(data);
        }
        let buf = if carried == 0 { data } else { &f.head[..] };
        let Some(head) = parse_head(buf, self.capture_server)? else {
            if carried == 0 {
                f.head.extend_from_slice(data);
            }
            if f.head.len() > MAX_HEAD {
                return Err("response head too large");
            }
            return Ok(None);
        };
        // The same limit whether the head came in one read or several.
        if head.len > MAX_HEAD {
            return Err("response head too large");
        }
        let used = head.len - carried;
        if head.status < 100 || head.status > 999 {
            return Err("bad status code");
        }
        if head.status == 101 {
            return Err("unexpected 101 Switching Protocols");
        }
        if framing::is_interim(head.status) {
            f.head.clear();
            return Ok(Some(used)); // the final response follows
        }
        if let Some(server) = head.server {
            self.server = Some(server_software(server));
            self.capture_server = false;
        }
        if self.verbosity >= 2 {
            crate::verbose::head(self.verbosity, &buf[..head.len], head.status);
        }
        self.status = head.status;
        self.keep_alive = head.keep_alive;
        f.state = match framing::response_body(self.head_request, head.status, head.body) {
            ResponseBody::None => State::Head,
            ResponseBody::Length(n) => State::Fixed { left: n },
            ResponseBody::Chunked => State::Chunked(Decoder::new(chunked::Policy::LENIENT)),
            ResponseBody::UntilClose => {
                self.keep_alive = false;
                State::UntilClose
            }
        };
        f.head.clear();
        Ok(Some(used))
    }
}

/// The request bytes for `path` under `plan`: request line, Host, User-Agent, Accept, Connection,
/// the body's Content-Length/Content-Type, the user's headers (which replace defaults of the same
/// name), the blank line and the body.
///
/// User-Agent and Accept are sent by default because ab sends them (a server's work per request
/// depends on the request's header lines: two more cost lighttpd and h2o a few per cent of their
/// CPU per request, docs/BENCHMARKS.md issue 18), so compare generators on one request: wrk's is
/// Host alone. A user header with an empty value for one of those two (`-H 'User-Agent:'`, as curl
/// has it) leaves it out.
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
