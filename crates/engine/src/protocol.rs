//! The protocol a connection slot speaks, behind one small interface: what a plan's requests
//! become on the wire (`Protocol::request_bytes`, built once per URL before the run) and the reader
//! a connection feeds its reads to (`Protocol::reader`: a `ResponseParser` whose framing state is
//! the protocol's), and the load thread that drives it (`Protocol::run_thread`). HTTP/1 (h1.rs) runs
//! one response at a time per connection in exchange.rs and worker.rs; HTTP/2 (h2.rs) multiplexes
//! streams in its own loop (h2_worker.rs, h2_conn.rs), which shares the worker's bookkeeping.

use crate::h1;
use crate::h1::response::ResponseParser;
use crate::h2_worker::H2Worker;
use crate::run::{Share, Shared};
use crate::worker::Worker;
use crate::{Plan, RunResult};
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protocol {
    Http1,
    Http2,
}

impl Protocol {
    /// The protocol a plan asks for (HTTP/2 with `plan.h2`, else HTTP/1.0 or 1.1 as
    /// `plan.http_version` says).
    pub(crate) fn of(plan: &Plan) -> Protocol {
        match plan.h2 {
            Some(_) => Protocol::Http2,
            None => Protocol::Http1,
        }
    }

    /// The bytes that ask for `path` under `plan`.
    pub(crate) fn request_bytes(self, plan: &Plan, path: &str) -> Vec<u8> {
        match self {
            Protocol::Http1 => h1::request::request_bytes(plan, path),
            Protocol::Http2 => crate::h2::request_block(plan, path),
        }
    }

    /// Runs load thread `index` with its share of the connections.
    pub(crate) fn run_thread(
        self,
        shared: &Shared,
        index: usize,
        share: Share,
    ) -> anyhow::Result<(RunResult, Instant)> {
        match self {
            Protocol::Http1 => Worker::new(shared, index, share)?.run(),
            Protocol::Http2 => H2Worker::new(shared, index, share)?.run(),
        }
    }

    /// A fresh response reader for a connection speaking this protocol.
    pub(crate) fn reader(self) -> ResponseParser {
        match self {
            // HTTP/2's streams are read by h2_conn.rs; its worker has no HTTP/1 slots to read.
            Protocol::Http1 | Protocol::Http2 => ResponseParser::default(),
        }
    }
}
