//! The protocol a connection speaks, behind the small interface the event loop drives: hand it the
//! bytes read (`serve_input`: it answers every complete request into the output buffer), ask it
//! whether it holds a partial request and until when the client may take (`wait_deadline`), and
//! tell it when the client took too long (`timeout_input`). The protocol owns its input state
//! (buffered bytes, pipelined requests held back), so the connection and the loop know none of
//! it. HTTP/1 (h1.rs) is the only one today; HTTP/2 adds a variant here and a file of its own,
//! not cases in worker.rs or conn.rs.

use crate::config::Config;
use crate::conn::Conn;
use crate::h1;
use crate::handler::Ctx;
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
