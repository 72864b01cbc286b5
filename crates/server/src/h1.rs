//! The HTTP/1 side of a connection: splitting its input into pipelined requests with their bodies
//! (Content-Length or chunked, framed by webstand-http1), "100 Continue", and the answers after
//! which the byte stream cannot be trusted (400, 408, 413, 414, 431: answer, then close). Each
//! complete request goes to `Ctx::respond`. And the way out: a handler's protocol-neutral answer
//! (respond.rs) written as HTTP/1 bytes (`Framing`: status line, Server, Date, Content-Length or
//! chunked, Connection; `prepare` for the heads a file cache keeps ready).

use crate::config::Config;
use crate::conn::Conn;
use crate::handler::Ctx;
use crate::protocol::Channel;
use crate::protocol::Protocol;
use crate::request;
use crate::respond::{self, push_num, reason, Head as Answer, Length};
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
    /// Bytes have arrived (the protocol was chosen: protocol.rs).
    pub started: bool,
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
        Protocol::Http2(_) => unreachable!("h1 serves HTTP/1 connections only"),
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
        if let Some(used) = self.feed_fastcgi_body(conn.fcgi.first_mut().map(|j| &mut **j), new) {
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
                || conn.jobs() > 0
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
                Ok(None) if self.streams_body(&request::Head::from_http1(&head)) => {
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
            let req = request::Head::from_http1(&head);
            let keep = head.keep_alive && !self.draining;
            conn.closing |= !keep;
            let ch = Channel::http1(head.minor, keep);
            if let Some((status, bytes, user)) =
                self.respond(conn, &req, ch, body, out, idx, registry)
            {
                let line = req.request_line();
                self.log(conn.peer, user.as_deref(), line, status, bytes);
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
        if conn.fcgi.is_empty() {
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
        let ch = Channel::http1(minor, false);
        let bytes = respond::simple(out, self.date.line(), ch, status, b"", false);
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

/// How HTTP/1 frames one answer: the request's minor version and whether the connection stays
/// open after it (`protocol::Channel::Http1`).
#[derive(Clone, Copy, Debug)]
pub struct Framing {
    pub minor: u8,
    pub keep: bool,
}

impl Framing {
    /// Writes `head` as HTTP/1.1 bytes: status line, Server, Date, the handler's fields, the body's
    /// framing, Connection, blank line. A streamed body is chunked for HTTP/1.1 and delimited by
    /// the close for HTTP/1.0 (then the connection does not stay open).
    pub fn write_head(&mut self, out: &mut Vec<u8>, date_line: &[u8], head: &Answer) {
        status_line(out, head.status);
        out.extend_from_slice(date_line);
        out.extend_from_slice(head.fields);
        match head.length {
            Length::None => {}
            Length::Known(n) => content_length(out, n),
            Length::Streamed if self.minor > 0 => {
                out.extend_from_slice(b"Transfer-Encoding: chunked\r\n")
            }
            Length::Streamed => self.keep = false,
        }
        self.end_head(out);
    }

    /// Writes a head prepared once (`Prepared`), adding the Date and Connection lines.
    pub fn write_prepared(&self, out: &mut Vec<u8>, date_line: &[u8], prepared: &[u8]) {
        out.extend_from_slice(prepared);
        out.extend_from_slice(date_line);
        self.end_head(out);
    }

    fn end_head(&self, out: &mut Vec<u8>) {
        match (self.keep, self.minor) {
            (true, 0) => out.extend_from_slice(b"Connection: keep-alive\r\n\r\n"),
            (true, _) => out.extend_from_slice(b"\r\n"),
            (false, _) => out.extend_from_slice(b"Connection: close\r\n\r\n"),
        }
    }

    /// A piece of a streamed body: one chunk for HTTP/1.1, the bytes as they are for HTTP/1.0.
    pub fn stream(&self, out: &mut Vec<u8>, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        if self.minor > 0 {
            out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
            out.extend_from_slice(data);
            out.extend_from_slice(b"\r\n");
        } else {
            out.extend_from_slice(data);
        }
    }

    /// The end of a streamed body (the last chunk; for HTTP/1.0 the close that follows).
    pub fn end_stream(&self, out: &mut Vec<u8>) {
        if self.minor > 0 {
            out.extend_from_slice(b"0\r\n\r\n");
        }
    }
}

/// The bytes of a fixed head up to its Date line (status line, Server, fields, framing), made
/// once for a cached file: its answers then cost one copy (`Framing::write_prepared`).
pub fn prepare(head: &Answer) -> Box<[u8]> {
    let mut out = Vec::with_capacity(64 + head.fields.len());
    status_line(&mut out, head.status);
    out.extend_from_slice(head.fields);
    if let Length::Known(n) = head.length {
        content_length(&mut out, n);
    }
    out.into_boxed_slice()
}

/// Appends "HTTP/1.1 NNN Reason\r\nServer: webstand\r\n" (the version the server speaks, whatever
/// the request's: RFC 9110 §6.2).
fn status_line(out: &mut Vec<u8>, status: u16) {
    out.extend_from_slice(b"HTTP/1.1 ");
    push_num(out, u64::from(status));
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\nServer: webstand\r\n");
}

fn content_length(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(b"Content-Length: ");
    push_num(out, n);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head_of(minor: u8, keep: bool, length: Length) -> (String, bool) {
        let mut f = Framing { minor, keep };
        let mut out = Vec::new();
        let head = Answer {
            status: 200,
            fields: b"Content-Type: a\r\n",
            length,
        };
        f.write_head(&mut out, b"Date: x\r\n", &head);
        (String::from_utf8(out).unwrap(), f.keep)
    }

    #[test]
    fn heads_carry_framing_and_connection_by_version() {
        let (h, keep) = head_of(1, true, Length::Known(5));
        assert_eq!(h, "HTTP/1.1 200 OK\r\nServer: webstand\r\nDate: x\r\nContent-Type: a\r\nContent-Length: 5\r\n\r\n");
        assert!(keep);
        let (h, keep) = head_of(0, true, Length::Known(5));
        assert!(h.ends_with("Content-Length: 5\r\nConnection: keep-alive\r\n\r\n") && keep);
        let (h, keep) = head_of(1, true, Length::Streamed);
        assert!(h.ends_with("Transfer-Encoding: chunked\r\n\r\n") && keep);
        let (h, keep) = head_of(0, true, Length::Streamed);
        assert!(h.ends_with("Content-Type: a\r\nConnection: close\r\n\r\n") && !keep);
        let (h, _) = head_of(1, false, Length::None);
        assert!(h.ends_with("Content-Type: a\r\nConnection: close\r\n\r\n"));
    }

    #[test]
    fn streamed_bodies_are_chunked_for_http_1_1_only() {
        let mut out = Vec::new();
        let f = Framing {
            minor: 1,
            keep: true,
        };
        f.stream(&mut out, b"hello");
        f.stream(&mut out, b"");
        f.end_stream(&mut out);
        assert_eq!(out, b"5\r\nhello\r\n0\r\n\r\n");
        out.clear();
        let f = Framing {
            minor: 0,
            keep: false,
        };
        f.stream(&mut out, b"hello");
        f.end_stream(&mut out);
        assert_eq!(out, b"hello");
    }
}
