//! The HTTP/1 side of a connection: splitting its input into pipelined requests with their bodies
//! (Content-Length or chunked, framed by webstand-http1), "100 Continue", and the answers after
//! which the byte stream cannot be trusted (400, 408, 413, 414, 431: answer, then close). Each
//! complete request goes to `Ctx::respond`.

use crate::config::Config;
use crate::conn::Conn;
use crate::handler::Ctx;
use crate::protocol::Protocol;
use crate::respond;
use std::time::Instant;
use webstand_http1::chunked;
use webstand_http1::framing::RequestBody as Body;
use webstand_http1::request::{parse_head, request_line_of, Head};

/// Answers gathered for one connection before they are written out (pipelining flood guard).
const OUT_HIGH_WATER: usize = 256 << 10;

/// What HTTP/1 keeps about a connection's input between reads.
#[derive(Debug, Default)]
pub struct State {
    /// Unparsed input: a partial request, or pipelined requests left while output was pending.
    pub inbuf: Vec<u8>,
    /// Requests remain in `inbuf` that were not answered because output was pending.
    pub stalled: bool,
    /// When the first byte of the request now being received arrived.
    pub head_started: Option<Instant>,
    /// "100 Continue" was sent for the request being received.
    pub continue_sent: bool,
    /// Its head is in and it waits for the rest of its body.
    pub awaiting_body: bool,
}

impl State {
    /// While a body arrives, the I/O timeout from the last bytes; for a partial head, the header
    /// timeout counted from its first byte.
    pub fn wait_deadline(&self, now: Instant, config: &Config) -> Option<Instant> {
        match self.head_started {
            _ if self.inbuf.is_empty() => None,
            _ if self.awaiting_body => Some(now + config.io_timeout),
            Some(t) => Some(t + config.header_timeout),
            None => None,
        }
    }

    /// A request was answered: what belonged to it is forgotten (the input buffer stays).
    fn next_request(&mut self) {
        self.continue_sent = false;
        self.awaiting_body = false;
    }
}

fn state(conn: &mut Conn) -> &mut State {
    match &mut conn.protocol {
        Protocol::Http1(s) => s,
    }
}

impl Ctx {
    /// Adds freshly read bytes to the connection's input and answers every complete request
    /// (`Ctx::serve_input` for an HTTP/1 connection).
    pub fn serve_bytes(
        &mut self,
        conn: &mut Conn,
        new: &[u8],
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) {
        if let Some(used) = self.feed_fastcgi_body(conn.fcgi.as_deref_mut(), new) {
            // The body of the request in flight; what follows it waits for its answer.
            let state = state(conn);
            state.inbuf.extend_from_slice(&new[used..]);
            state.stalled |= used < new.len();
            return;
        }
        let mut inbuf = std::mem::take(&mut state(conn).inbuf);
        let data: &[u8] = if inbuf.is_empty() {
            new
        } else {
            inbuf.extend_from_slice(new);
            &inbuf
        };
        let total = data.len();
        let used = self.serve(conn, data, out, idx, registry);
        let rest = total - used;
        if rest == 0 {
            inbuf.clear();
        } else if inbuf.is_empty() {
            inbuf.extend_from_slice(&new[used..]);
        } else {
            inbuf.drain(..used);
        }
        let state = state(conn);
        if used > 0 || state.head_started.is_none() {
            state.head_started = (rest > 0).then_some(self.now);
        }
        state.inbuf = inbuf;
    }

    /// Answers the complete requests at the start of `data`; returns how many bytes they took.
    fn serve(
        &mut self,
        conn: &mut Conn,
        data: &[u8],
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) -> usize {
        let limits = self.shared.limits;
        let max_body = self.shared.config.max_body;
        let mut pos = 0;
        while pos < data.len() {
            if conn.closing {
                return data.len();
            }
            if conn.has_output()
                || conn.cgi.is_some()
                || conn.fcgi.is_some()
                || conn.throttle.is_some()
                || out.len() >= OUT_HIGH_WATER
            {
                state(conn).stalled = true;
                break;
            }
            let head = match parse_head(&data[pos..], &limits) {
                Ok(Some(h)) => h,
                Ok(None) => break,
                Err(status) => {
                    self.refuse(conn, out, status, 1, request_line_of(&data[pos..]));
                    return data.len();
                }
            };
            let body_start = pos + head.len;
            let mut decoded = std::mem::take(&mut self.body_buf);
            decoded.clear();
            let mut streamed = false;
            let end = match body_end(&head, data, body_start, max_body, &mut decoded) {
                Ok(Some(end)) => end,
                // FastCGI takes the rest of this body as it comes (fastcgi/body.rs).
                Ok(None) if self.streams_body(&head) => {
                    streamed = true;
                    data.len()
                }
                Ok(None) => {
                    self.body_pending(conn, &head, out);
                    self.body_buf = decoded;
                    break;
                }
                Err(status) => {
                    self.refuse(conn, out, status, head.minor, head.request_line());
                    self.body_buf = decoded;
                    return data.len();
                }
            };
            state(conn).next_request();
            let body: &[u8] = match head.body {
                Body::Chunked => &decoded,
                _ => &data[body_start..end],
            };
            if let Some((status, bytes, user)) = self.respond(conn, &head, body, out, idx, registry)
            {
                self.log(
                    conn.peer,
                    user.as_deref(),
                    head.request_line(),
                    status,
                    bytes,
                );
            }
            if streamed {
                self.body_streams(conn, &head, out);
            }
            self.body_buf = decoded;
            pos = end;
        }
        pos
    }

    /// A request whose body is still arriving: send "100 Continue" once if the client waits for it.
    fn body_pending(&mut self, conn: &mut Conn, head: &Head, out: &mut Vec<u8>) {
        let state = state(conn);
        state.awaiting_body = true;
        if head.expect_continue && head.minor == 1 && !state.continue_sent {
            state.continue_sent = true;
            out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
    }

    /// A request whose body is being streamed was dispatched: "100 Continue" if a job now waits for
    /// the body and the client for the go-ahead; if it was answered at once instead (404, 401…),
    /// the unread rest of the body is swallowed by a lingering close.
    fn body_streams(&mut self, conn: &mut Conn, head: &Head, out: &mut Vec<u8>) {
        if conn.fcgi.is_none() {
            conn.closing = true;
            conn.linger = true;
        } else if head.expect_continue && head.minor == 1 && !state(conn).continue_sent {
            out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
    }

    /// Answers `status` and closes the connection: its input can no longer be framed.
    fn refuse(
        &mut self,
        conn: &mut Conn,
        out: &mut Vec<u8>,
        status: u16,
        minor: u8,
        request_line: &[u8],
    ) {
        let bytes = respond::simple(out, self.date.line(), status, minor, false, b"", false);
        conn.closing = true;
        conn.linger = true;
        self.log(conn.peer, None, request_line, status, bytes);
    }

    /// The header timeout expired on a partial request: 408, then close.
    pub fn timeout_answer(&mut self, conn: &mut Conn, out: &mut Vec<u8>) {
        let inbuf = std::mem::take(&mut state(conn).inbuf);
        self.refuse(conn, out, 408, 1, request_line_of(&inbuf));
    }
}

/// Where the body of a request whose head ends at `body_start` ends in `data` (a chunked body is
/// decoded into `decoded`): `Ok(None)` while it is still arriving, `Err(status)` when it cannot be
/// taken (413 over `max_body`, 400 malformed).
fn body_end(
    head: &Head,
    data: &[u8],
    body_start: usize,
    max_body: u64,
    decoded: &mut Vec<u8>,
) -> Result<Option<usize>, u16> {
    let arrived = &data[body_start..];
    match head.body {
        Body::None => Ok(Some(body_start)),
        Body::Length(n) if n > max_body => Err(413),
        Body::Length(n) if (arrived.len() as u64) < n => Ok(None),
        Body::Length(n) => Ok(Some(body_start + n as usize)),
        Body::Chunked => {
            let policy = chunked::Policy::strict(max_body);
            match chunked::decode_all(arrived, policy, decoded) {
                Ok(k) => Ok(k.map(|k| body_start + k)),
                Err(e) => Err(e.status()),
            }
        }
    }
}
