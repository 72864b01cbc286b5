//! The protocol a connection speaks, behind the small interface the event loop drives: hand it the
//! bytes read (`serve_input`: it answers every complete request into the output buffer), and tell
//! it when the client took too long (`timeout_input`). HTTP/1 (h1.rs) is the only one today;
//! HTTP/2 adds a variant here and a file of its own, not cases in worker.rs or conn.rs.

use crate::conn::Conn;
use crate::h1;
use crate::handler::Ctx;

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
    /// A request's head is in and its body is still arriving (the I/O timeout applies to it).
    pub fn awaiting_body(&self) -> bool {
        match self {
            Protocol::Http1(s) => s.awaiting_body,
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

    /// The header timeout expired on a partial request: answer it (408) and close.
    pub fn timeout_input(&mut self, conn: &mut Conn, out: &mut Vec<u8>) {
        match conn.protocol {
            Protocol::Http1(_) => self.timeout_answer(conn, out),
        }
    }
}
