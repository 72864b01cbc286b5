//! The protocol a connection speaks, behind the small interface the event loop drives: hand it the
//! bytes read (`serve_input`: it answers every complete request into the output buffer), ask it
//! whether it holds a partial request and until when the client may take (`wait_deadline`), and
//! tell it when the client took too long (`timeout_input`). The protocol owns its input state
//! (buffered bytes, pipelined requests held back), so the connection and the loop know none of
//! it. On the way out, every answer goes through the request's `Channel`, which spells the
//! handlers' protocol-neutral answer (respond.rs) in the protocol's bytes. HTTP/1 (h1.rs) and
//! HTTP/2 (h2/) are the variants; which one a connection speaks is decided by its first bytes
//! (`choose`: ALPN `h2` on TLS, the HTTP/2 preface on a plain listener with `--h2c`).

use crate::config::Config;
use crate::conn::Conn;
use crate::h1;
use crate::h2;
use crate::handler::Ctx;
use crate::respond;
use std::time::Instant;

/// A connection's protocol, with the state that protocol keeps between reads.
pub enum Protocol {
    Http1(h1::State),
    Http2(Box<h2::State>),
}

impl Default for Protocol {
    fn default() -> Self {
        Protocol::Http1(h1::State::default())
    }
}

impl Protocol {
    /// Input is held that is not a complete request yet (or requests held back).
    pub fn partial_input(&self) -> bool {
        match self {
            Protocol::Http1(s) => !s.inbuf.is_empty(),
            Protocol::Http2(s) => s.partial_input(),
        }
    }

    /// Several requests are in flight at once (HTTP/2's streams): the connection is read and
    /// answered while one of them waits for a CGI program or FastCGI job.
    pub fn multiplexed(&self) -> bool {
        matches!(self, Protocol::Http2(_))
    }

    /// Output the protocol holds itself (HTTP/2's control frames), not yet given to the writer.
    pub fn has_output(&self) -> bool {
        match self {
            Protocol::Http1(_) => false,
            Protocol::Http2(s) => s.has_output(),
        }
    }

    /// Makes the round's answers (`out`) into the bytes to write (HTTP/2 frames staged records).
    pub fn frame_output(&mut self, out: &mut Vec<u8>, files: &mut Vec<h2::FileRange>) {
        if let Protocol::Http2(s) = self {
            s.frame_output(out, files);
        }
    }

    /// Last bytes for a connection closed by the server (HTTP/2's GOAWAY).
    pub fn farewell(&mut self) -> Vec<u8> {
        match self {
            Protocol::Http1(_) => Vec::new(),
            Protocol::Http2(s) => s.farewell(),
        }
    }

    /// Complete requests are held back until the connection's output is written.
    pub fn stalled(&self) -> bool {
        match self {
            Protocol::Http1(s) => s.stalled,
            Protocol::Http2(s) => s.stalled(),
        }
    }

    /// Until when the client may take to send the rest of what it started (None: nothing is
    /// partly in, the idle timeout applies).
    pub fn wait_deadline(&self, now: Instant, config: &Config) -> Option<Instant> {
        match self {
            Protocol::Http1(s) => s.wait_deadline(now, config),
            Protocol::Http2(s) => s.wait_deadline(config),
        }
    }
}

impl Ctx {
    /// Adds freshly read bytes to the connection's input and answers every complete request.
    pub fn serve_input(
        &mut self,
        conn: &mut Conn,
        new: &[u8],
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) {
        if let Protocol::Http1(s) = &mut conn.protocol {
            if !s.started {
                s.started = true;
                if self.speaks_h2(conn, new) {
                    let max_body = self.shared.config.max_body;
                    conn.protocol = Protocol::Http2(h2::State::new(self.now, max_body));
                }
            }
        }
        match conn.protocol {
            Protocol::Http1(_) => self.serve_bytes(conn, new, out, idx, registry),
            Protocol::Http2(_) => self.serve_h2(conn, new, out, idx, registry),
        }
    }

    /// A connection's first bytes: HTTP/2 when TLS negotiated `h2`, or when a plain connection
    /// opens with the HTTP/2 preface and `--h2c` allows it.
    fn speaks_h2(&self, conn: &Conn, first: &[u8]) -> bool {
        if conn.transport.is_tls() {
            return conn.transport.alpn_h2();
        }
        let n = first.len().min(webstand_h2::PREFACE.len());
        self.shared.config.h2c && n >= 3 && first[..n] == webstand_h2::PREFACE[..n]
    }

    /// Answers the requests held back while output was pending, if any (true if there were).
    pub fn resume_input(
        &mut self,
        conn: &mut Conn,
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) -> bool {
        let slot_free = conn.jobs() < h2::MAX_JOBS;
        let held = match &mut conn.protocol {
            Protocol::Http1(s) => std::mem::take(&mut s.stalled),
            // Body the windows let out is pumped by the next flush: go round again; streams that
            // waited for the CGI/FastCGI slot go once it is free.
            Protocol::Http2(s) => s.stalled() || s.has_output() || (s.waits_for_job() && slot_free),
        };
        if held {
            self.serve_input(conn, &[], out, idx, registry);
        }
        held
    }

    /// The header timeout expired on a partial request: answer it (408) and close.
    pub fn timeout_input(&mut self, conn: &mut Conn, out: &mut Vec<u8>) {
        match conn.protocol {
            Protocol::Http1(_) => self.timeout_answer(conn, out),
            Protocol::Http2(_) => self.h2_timeout(conn),
        }
    }
}

/// Where one answer goes: the protocol of the connection its request came on, with what that
/// protocol needs to frame it. Handlers hand their protocol-neutral answer (respond.rs) to it and
/// never write wire bytes themselves; HTTP/2's is the stream (h2/send.rs).
#[derive(Clone, Copy, Debug)]
pub enum Channel {
    Http1(h1::Framing),
    Http2(h2::Channel),
}

impl Channel {
    pub fn http1(minor: u8, keep: bool) -> Channel {
        Channel::Http1(h1::Framing { minor, keep })
    }

    /// Whether the connection stays open after this answer.
    pub fn keeps_open(&self) -> bool {
        match self {
            Channel::Http1(f) => f.keep,
            Channel::Http2(_) => true,
        }
    }

    /// The connection must close after answering `status` on this channel: HTTP/1's when it is
    /// not kept open or the status says its byte stream cannot be trusted; never an HTTP/2
    /// stream's (the connection's other streams go on).
    pub fn ends_connection(&self, status: u16) -> bool {
        match self {
            Channel::Http1(f) => !f.keep || !respond::keeps_connection(status),
            Channel::Http2(_) => false,
        }
    }

    /// The HTTP/2 stream an answer goes to (None for HTTP/1).
    pub fn stream_id(&self) -> Option<u32> {
        match self {
            Channel::Http1(_) => None,
            Channel::Http2(s) => Some(s.stream),
        }
    }

    /// The connection will not stay open after this answer (the server is draining).
    pub fn close(&mut self) {
        match self {
            Channel::Http1(f) => f.keep = false,
            Channel::Http2(_) => {}
        }
    }

    /// Writes an answer's head (the channel may learn that the connection cannot stay open: an
    /// HTTP/1.0 answer of unknown length ends with the close).
    pub fn write_head(&mut self, out: &mut Vec<u8>, date_line: &[u8], head: &respond::Head) {
        match self {
            Channel::Http1(f) => f.write_head(out, date_line, head),
            Channel::Http2(s) => s.write_head(out, date_line, head),
        }
    }

    /// Writes a head the cache keeps ready for this protocol (`Prepared`).
    pub fn write_prepared(&self, out: &mut Vec<u8>, date_line: &[u8], prepared: &Prepared) {
        match self {
            Channel::Http1(f) => f.write_prepared(out, date_line, &prepared.http1),
            Channel::Http2(s) => s.write_prepared(out, date_line, &prepared.http2),
        }
    }

    /// Body bytes of a head with a known length.
    pub fn body(&self, out: &mut Vec<u8>, data: &[u8]) {
        match self {
            Channel::Http1(_) => out.extend_from_slice(data),
            Channel::Http2(s) => s.body(out, data),
        }
    }

    /// A byte range [start, end) of a file as body bytes of a known length (sendfile).
    pub fn body_file(
        &self,
        conn: &mut Conn,
        out: &mut Vec<u8>,
        file: std::sync::Arc<std::fs::File>,
        range: (u64, u64),
    ) {
        match self {
            Channel::Http1(_) => conn.push_file(out, file, range.0, range.1),
            Channel::Http2(s) => s.body_file(&mut conn.staged_files, out, (file, range.0, range.1)),
        }
    }

    /// Body bytes of a streamed answer (`Length::Streamed`), and its end.
    pub fn stream(&self, out: &mut Vec<u8>, data: &[u8]) {
        match self {
            Channel::Http1(f) => f.stream(out, data),
            Channel::Http2(s) => s.body(out, data),
        }
    }
    pub fn end_stream(&self, out: &mut Vec<u8>) {
        match self {
            Channel::Http1(f) => f.end_stream(out),
            Channel::Http2(s) => s.end_stream(out),
        }
    }

    /// An answer whose head is sent cannot be finished: HTTP/2 resets its stream (true); HTTP/1
    /// cannot say so but by closing the connection (false: the caller closes it).
    pub fn abort(&self, out: &mut Vec<u8>) -> bool {
        match self {
            Channel::Http1(_) => false,
            Channel::Http2(s) => {
                s.abort(out);
                true
            }
        }
    }
}

/// A fixed head made once in each protocol's bytes (a cached file's 200): the seam still produces
/// the bytes, only earlier.
pub struct Prepared {
    http1: Box<[u8]>,
    http2: Box<[u8]>,
}

impl Prepared {
    pub fn new(head: &respond::Head) -> Prepared {
        Prepared {
            http1: h1::prepare(head),
            http2: h2::prepare(head),
        }
    }
}
