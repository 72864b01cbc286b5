//! The entry points of the coverage-guided fuzz targets (fuzz/, built with the `fuzzing` feature;
//! nothing here is in the generator): the response side of HTTP/2 (`h2.rs`) and HTTP/3 (`h3.rs`)
//! fed a server's bytes with no socket, through the same protocol state the load threads drive,
//! and what came of it reported as plain data for the targets to check.

pub mod h2;
pub mod h3;

use crate::stream::{End, Ended};

/// One request stream as it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamEnd {
    /// HTTP/2's stream ID, or HTTP/3's QUIC stream ID.
    pub id: u64,
    /// The whole response arrived.
    pub complete: bool,
    /// Above a GOAWAY's last stream: to be sent again.
    pub retry: bool,
    /// Why it failed, if it did.
    pub why: Option<&'static str>,
    pub status: u16,
    pub body_len: u64,
    /// The body a script would get (`keep`), its length.
    pub kept_body: Option<usize>,
}

impl StreamEnd {
    fn of(e: &Ended, id: u64) -> StreamEnd {
        StreamEnd {
            id,
            complete: e.end == End::Complete,
            retry: e.end == End::Retry,
            why: match e.end {
                End::Failed(_, why) => Some(why),
                End::TimedOut => Some("timed out"),
                _ => None,
            },
            status: e.stream.status,
            body_len: e.stream.body_len,
            kept_body: e.stream.kept.as_ref().map(|k| k.body.len()),
        }
    }
}
