//! The protocol a connection slot speaks, behind one small interface: what a plan's requests
//! become on the wire (`Protocol::request_bytes`, built once per URL before the run) and the reader
//! a connection feeds its reads to (`Protocol::reader`: a `ResponseParser` whose framing state is
//! the protocol's). HTTP/1 (h1.rs) is the only one today; `--h2` adds a variant here, a `Wire`
//! variant in response.rs and a file of its own, not cases in exchange.rs or worker.rs.

use crate::h1;
use crate::response::ResponseParser;
use crate::Plan;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protocol {
    Http1,
}

impl Protocol {
    /// The protocol a plan asks for (HTTP/1.0 or 1.1, as `plan.http_version` says).
    pub(crate) fn of(_plan: &Plan) -> Protocol {
        Protocol::Http1
    }

    /// The bytes that ask for `path` under `plan`.
    pub(crate) fn request_bytes(self, plan: &Plan, path: &str) -> Vec<u8> {
        match self {
            Protocol::Http1 => h1::request_bytes(plan, path),
        }
    }

    /// A fresh response reader for a connection speaking this protocol.
    pub(crate) fn reader(self) -> ResponseParser {
        match self {
            Protocol::Http1 => ResponseParser::default(),
        }
    }
}
