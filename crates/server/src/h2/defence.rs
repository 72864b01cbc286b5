//! What one HTTP/2 connection may cost before it is told to calm down, and the counters that
//! enforce it. Each limit answers a known attack:
//! - rapid reset (CVE-2023-44487): streams opened and reset at once cost the server a request's
//!   work each while never counting against MAX_CONCURRENT_STREAMS. Requests are dispatched only
//!   after the whole read is parsed, so a reset in the same read cancels the work; past
//!   `RESETS_FREE` resets, a client that resets more streams than it lets finish gets GOAWAY
//!   ENHANCE_YOUR_CALM.
//! - CONTINUATION flood (CVE-2024-27316): a header block is bounded in bytes (`BLOCK_MAX`, by
//!   `block::Pending`) and in frames (`CONTINUATIONS_MAX`: empty CONTINUATIONs cost no bytes).
//! - SETTINGS, PING, PRIORITY, WINDOW_UPDATE, RST_STREAM and empty DATA frames make work or
//!   output without making requests: more than `CONTROL_PER_SECOND` of them within a second is a
//!   flood.
//! - HPACK and header-list bombs: the decoded list is bounded by our SETTINGS_MAX_HEADER_LIST_SIZE
//!   (`hpack::Decoder`), the block by `BLOCK_MAX`.
//! - Too many streams: past MAX_CONCURRENT_STREAMS a new stream is refused (REFUSED_STREAM).
//! - A flood of CGI or FastCGI streams: a connection runs at most `MAX_JOBS` programs or backend
//!   requests at once; its other such streams wait for one to end (FastCGI requests also wait
//!   their turn in the loop's pool, behind other connections': fastcgi/backend.rs).

use std::time::{Duration, Instant};

/// Our SETTINGS_MAX_CONCURRENT_STREAMS.
pub const MAX_STREAMS: u32 = 128;
/// CGI programs and FastCGI requests one connection runs at once.
pub const MAX_JOBS: usize = 16;
/// Our SETTINGS_MAX_HEADER_LIST_SIZE (decoded: names + values + 32 per field).
pub const MAX_HEADER_LIST: u32 = 16 << 10;
/// The largest encoded header block (HEADERS + CONTINUATIONs) taken.
pub const BLOCK_MAX: usize = 32 << 10;
pub const CONTINUATIONS_MAX: u32 = 32;
pub const RESETS_FREE: u64 = 100;
pub const CONTROL_PER_SECOND: u32 = 2000;

#[derive(Debug, Default)]
pub struct Counters {
    pub resets: u64,
    control: u32,
    since: Option<Instant>,
}

impl Counters {
    /// A frame that made no request arrived at `now`: false once they are a flood.
    pub fn control_frame(&mut self, now: Instant) -> bool {
        match self.since {
            Some(t) if now.duration_since(t) < Duration::from_secs(1) => self.control += 1,
            _ => {
                self.since = Some(now);
                self.control = 1;
            }
        }
        self.control <= CONTROL_PER_SECOND
    }

    /// The client reset a stream of its own: false once resets outnumber finished answers.
    pub fn reset(&mut self, answered: u64) -> bool {
        self.resets += 1;
        self.resets <= RESETS_FREE || self.resets <= answered
    }
}
