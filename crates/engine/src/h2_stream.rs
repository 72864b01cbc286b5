//! A stream of the generator's HTTP/2 connections (`h2_conn.rs`): what a request in flight
//! carries (its times, its status, its body's length and hash, its windows), how it ended, what a
//! response head's fields say, and what a connection's frames add to the thread's figures.

use crate::conn::Class;
use crate::H2Summary;
use sha2::Sha256;
use std::time::Instant;
use webstand_h2::Window;

/// One request in flight.
pub(crate) struct Stream {
    pub id: u32,
    pub req: usize,
    /// Send time (closed loop) or intended send time (open loop).
    pub start: Instant,
    pub sent_at: Instant,
    pub first_byte: Option<Instant>,
    /// The final status, once the response head arrived.
    pub status: u16,
    pub body_len: u64,
    pub hasher: Option<Sha256>,
    /// The connection's connect time on its first stream (as ab's first request carries it), else 0.
    pub connect_us: u64,
    pub recv: Window,
    pub send: Window,
    /// Request body bytes sent so far; `None` once END_STREAM went out.
    pub body_sent: Option<usize>,
}

/// How a stream ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// The whole response arrived (END_STREAM).
    Complete,
    /// Reset, refused, or lost with its connection: a failed request of this class.
    Failed(Class, &'static str),
    /// Nothing arrived for the timeout.
    TimedOut,
    /// Above a GOAWAY's last stream: the server did not process it, send it again.
    Retry,
}

pub(crate) struct Ended {
    pub stream: Stream,
    pub end: End,
    pub at: Instant,
}

/// One connection slot's life as h2load counts a client's: from its first connect to its last
/// stream's end (or its connection's close), and the streams that ended whole on it (any status:
/// h2load's `req_success`, a stream closed without error). Kept across the slot's reconnections.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct ClientSpan {
    pub start: Option<Instant>,
    pub end: Option<Instant>,
    pub whole: u64,
}

impl ClientSpan {
    /// A connection of the slot begins: the span starts at the slot's first.
    pub(crate) fn started(self, now: Instant) -> ClientSpan {
        ClientSpan {
            start: self.start.or(Some(now)),
            ..self
        }
    }

    /// A stream of the slot ended, whole or not.
    pub(crate) fn ended(&mut self, now: Instant, whole: bool) {
        self.end = Some(now);
        self.whole += u64::from(whole);
    }

    /// The slot's connection closed (`open`: it had one).
    pub(crate) fn closed(&mut self, open: bool) {
        if open {
            self.end = Some(Instant::now());
        }
    }

    /// h2load's per-client "req/s": whole streams over the active time, if it had any time.
    pub(crate) fn rate(&self) -> Option<f64> {
        let secs = self
            .end?
            .saturating_duration_since(self.start?)
            .as_secs_f64();
        (secs > 1e-9).then(|| self.whole as f64 / secs)
    }
}

/// What the connection's frames add to the thread's figures.
pub(crate) struct Tally {
    pub ended: Vec<Ended>,
    pub sum: H2Summary,
    pub data_bytes: u64,
    /// Set to capture the first response's `server` value (ab's "Server Software").
    pub want_server: bool,
    pub server: Option<String>,
}

/// What a response head's fields say.
#[derive(Default)]
pub(crate) struct ResponseHead {
    pub status: Option<u16>,
    /// A pseudo-header other than :status, or one after a regular field (§8.3).
    pub malformed: bool,
    regular_seen: bool,
    pub decoded: u64,
    pub server: Option<String>,
}

impl ResponseHead {
    pub(crate) fn field(&mut self, name: &[u8], value: &[u8], want_server: bool) {
        self.decoded += (name.len() + value.len()) as u64;
        if name == b":status" && !self.regular_seen && self.status.is_none() {
            self.status = std::str::from_utf8(value)
                .ok()
                .filter(|v| v.len() == 3)
                .and_then(|v| v.parse().ok());
            self.malformed |= self.status.is_none();
        } else if name.first() == Some(&b':') {
            self.malformed = true;
        } else {
            self.regular_seen = true;
            if want_server && name == b"server" {
                self.server = Some(String::from_utf8_lossy(value).into_owned());
            }
        }
    }
}
