//! The protocol a connection speaks, behind the small interface the event loop drives: hand it the
//! bytes read (`serve_input`: it answers every complete request into the output buffer), ask it
//! whether it holds a partial request and until when the client may take (`wait_deadline`), and
//! tell it when the client took too long (`timeout_input`). The protocol owns its input state
//! (buffered bytes, pipelined requests held back), so the connection and the loop know none of
//! it. On the way out, every answer goes through the request's `Channel`, which spells the
//! handlers' protocol-neutral answer (respond.rs) in the protocol's bytes. HTTP/1 (h1.rs) is the
//! only one today; HTTP/2 adds a variant to `Protocol` and `Channel` and a file of its own, not
//! cases in worker.rs, conn.rs or the handlers.

use crate::config::Config;
use crate::conn::Conn;
use crate::h1;
use crate::handler::Ctx;
use crate::respond;
use std::time::Instant;

/// A connection's protocol, with the state that protocol keeps between reads.
pub enum Protocol {
    Http1(h1::State),
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
        }
    }

    /// Complete requests are held back until the connection's output is written.
    pub fn stalled(&self) -> bool {
        match self {
            Protocol::Http1(s) => s.stalled,
        }
    }

    /// Until when the client may take to send the rest of what it started (None: nothing is
    /// partly in, the idle timeout applies).
    pub fn wait_deadline(&self, now: Instant, config: &Config) -> Option<Instant> {
        match self {
            Protocol::Http1(s) => s.wait_deadline(now, config),
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
        match conn.protocol {
            Protocol::Http1(_) => self.serve_bytes(conn, new, out, idx, registry),
        }
    }

    /// Answers the requests held back while output was pending, if any (true if there were).
    pub fn resume_input(
        &mut self,
        conn: &mut Conn,
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) -> bool {
        let held = match &mut conn.protocol {
            Protocol::Http1(s) => std::mem::take(&mut s.stalled),
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
        }
    }
}

/// Where one answer goes: the protocol of the connection its request came on, with what that
/// protocol needs to frame it. Handlers hand their protocol-neutral answer (respond.rs) to it and
/// never write wire bytes themselves; HTTP/2 adds a variant (the stream) and its encoder.
#[derive(Clone, Copy, Debug)]
pub enum Channel {
    Http1(h1::Framing),
}

impl Channel {
    pub fn http1(minor: u8, keep: bool) -> Channel {
        Channel::Http1(h1::Framing { minor, keep })
    }

    /// Whether the connection stays open after this answer.
    pub fn keeps_open(&self) -> bool {
        match self {
            Channel::Http1(f) => f.keep,
        }
    }

    /// The connection will not stay open after this answer (the server is draining).
    pub fn close(&mut self) {
        match self {
            Channel::Http1(f) => f.keep = false,
        }
    }

    /// Writes an answer's head (the channel may learn that the connection cannot stay open: an
    /// HTTP/1.0 answer of unknown length ends with the close).
    pub fn write_head(&mut self, out: &mut Vec<u8>, date_line: &[u8], head: &respond::Head) {
        match self {
            Channel::Http1(f) => f.write_head(out, date_line, head),
        }
    }

    /// Writes a head the cache keeps ready for this protocol (`Prepared`).
    pub fn write_prepared(&self, out: &mut Vec<u8>, date_line: &[u8], prepared: &Prepared) {
        match self {
            Channel::Http1(f) => f.write_prepared(out, date_line, &prepared.http1),
        }
    }

    /// Body bytes of a head with a known length.
    pub fn body(&self, out: &mut Vec<u8>, data: &[u8]) {
        match self {
            Channel::Http1(_) => out.extend_from_slice(data),
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
        }
    }

    /// Body bytes of a streamed answer (`Length::Streamed`), and its end.
    pub fn stream(&self, out: &mut Vec<u8>, data: &[u8]) {
        match self {
            Channel::Http1(f) => f.stream(out, data),
        }
    }
    pub fn end_stream(&self, out: &mut Vec<u8>) {
        match self {
            Channel::Http1(f) => f.end_stream(out),
        }
    }
}

/// A fixed head made once in each protocol's bytes (a cached file's 200): the seam still produces
/// the bytes, only earlier. HTTP/2 adds its encoding beside `http1`.
pub struct Prepared {
    http1: Box<[u8]>,
}

impl Prepared {
    pub fn new(head: &respond::Head) -> Prepared {
        Prepared {
            http1: h1::prepare(head),
        }
    }
}
