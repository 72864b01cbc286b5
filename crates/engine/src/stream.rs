//! A request stream of the generator's multiplexed connections (HTTP/2's `h2/session.rs`, HTTP/3's
//! `h3/conn.rs`): what a request in flight carries (its times, its status, its body's length and
//! hash, HTTP/2's windows), how it ended and what that counts, what a response head's fields say,
//! what a connection's frames add to the thread's figures (h2load's summary, the same for both),
//! and how many new streams a closed loop opens at once ([`batch_room`]).

use crate::h1::response::Kept;
use crate::io::Io;
use crate::record::{Class, Response};
use crate::script_mux::Encoded;
use sha2::{Digest, Sha256};
use std::time::Instant;
use webstand_h2::Window;
use webstand_results::result::{H2Summary, RunResult};

/// One request in flight.
pub(crate) struct Stream {
    /// HTTP/2's stream ID (HTTP/3 keeps its QUIC stream beside the stream: 0 here).
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
    /// HTTP/2's flow-control windows (QUIC keeps its own).
    pub recv: Window,
    pub send: Window,
    /// Request body bytes sent so far; `None` once END_STREAM went out.
    pub body_sent: Option<usize>,
    /// A script's request (its body sent instead of the plan's), kept to send again should the
    /// server not take it.
    pub own: Option<Encoded>,
    /// The response's head (its fields written as HTTP/1's) and body, kept for a script's
    /// `response()`.
    pub kept: Option<Box<Kept>>,
}

impl Stream {
    /// A field of the final response head, kept for the script.
    pub(crate) fn keep_field(&mut self, name: &[u8], value: &[u8]) {
        if let Some(k) = self.kept.as_mut().filter(|_| self.status == 0) {
            if name.first() != Some(&b':') {
                k.head.extend_from_slice(name);
                k.head.extend_from_slice(b": ");
                k.head.extend_from_slice(value);
                k.head.extend_from_slice(b"\r\n");
            }
        }
    }

    /// A head's status came: an interim head's kept fields are dropped, the final head gets its
    /// status line and its end.
    fn keep_status(&mut self, status: u16) {
        if let Some(k) = self.kept.as_mut() {
            if status < 200 {
                return k.head.clear();
            }
            let fields = std::mem::take(&mut k.head);
            k.head = format!("HTTP/1.1 {status} \r\n").into_bytes();
            k.head.extend_from_slice(&fields);
            k.head.extend_from_slice(b"\r\n");
        }
    }

    /// A response head's `:status` (RFC 9113 §8.1, RFC 9114 §4.1): an interim 1xx (not 101) is
    /// passed over, unless it `ends` the stream; a well-formed head's 2xx to 5xx is the final
    /// status, counted; anything else is malformed.
    pub(crate) fn take_status(&mut self, head: &ResponseHead, ends: bool, t: &mut Tally) -> Status {
        match head.status {
            Some(status) if (100..200).contains(&status) && status != 101 && !ends => {
                self.keep_status(status);
                Status::Interim
            }
            Some(status) if (200..600).contains(&status) && !head.malformed => {
                self.keep_status(status);
                self.status = status;
                t.sum.status[status as usize / 100] += 1;
                Status::Final
            }
            _ => Status::Malformed,
        }
    }

    /// Response body bytes, kept for the script.
    pub(crate) fn keep_body(&mut self, data: &[u8]) {
        if let Some(k) = self.kept.as_mut() {
            k.body.extend_from_slice(data);
        }
    }
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

impl Ended {
    /// What the stream's end counts: a complete response recorded as HTTP/1's is, a failed request
    /// of its class, or (above a GOAWAY's last stream) the request sent again.
    pub(crate) fn count(self, io: &mut Io, sum: &mut H2Summary) {
        let mut s = self.stream;
        let class = match self.end {
            End::Retry => return io.requests.again(s.req, s.start, s.own.take()),
            End::Complete => {
                io.requests.done(self.at);
                sum.done += 1;
                sum.succeeded += u64::from((200..400).contains(&s.status));
                let response = Response {
                    req: s.req,
                    start: s.start,
                    end: self.at,
                    connect_us: s.connect_us,
                    written: s.sent_at,
                    first_byte: s.first_byte,
                    status: s.status,
                    body_len: s.body_len,
                    digest: s.hasher.take().map(|h| h.finalize().into()),
                };
                let counted = match (io.requests.response_reader(), s.kept.as_ref()) {
                    (Some(script), Some(k)) => io
                        .record
                        .scripted_response(io.sh, &response, script, &k.head, &k.body),
                    _ => Ok(io.record.response(io.sh, &response)),
                };
                let counted = counted.unwrap_or_else(|e| {
                    io.requests.script_failed(e);
                    false
                });
                if counted {
                    io.record.r.keep_alive_requests += 1;
                }
                return;
            }
            End::Failed(class, why) => {
                sum.errored += 1;
                io.record.error(None, || why.to_string());
                class
            }
            End::TimedOut => {
                sum.errored += 1;
                sum.timeout += 1;
                Class::Exceptions
            }
        };
        io.requests.done(self.at);
        sum.done += 1;
        io.record.failure(class);
    }
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
    /// A script reads responses: each stream keeps its head and body ([`Stream::kept`]).
    pub keep: bool,
    pub server: Option<String>,
}

impl Tally {
    /// Nothing counted yet; `want_server` while no response has named its server, `keep` when a
    /// script reads the responses.
    pub(crate) fn new(want_server: bool, keep: bool) -> Tally {
        Tally {
            ended: Vec::new(),
            sum: H2Summary::new(0),
            data_bytes: 0,
            want_server,
            keep,
            server: None,
        }
    }

    /// The thread's figures into the run's result: the summary, with the stream limit its
    /// connections ran under and each connection's rate, and the bodies' bytes.
    pub(crate) fn into_result(self, max_streams: u32, client_rps: Vec<f64>, r: &mut RunResult) {
        r.h2 = Some(H2Summary {
            max_streams,
            client_rps,
            ..self.sum
        });
        r.body_bytes = self.data_bytes;
    }
}

/// What a response head's status made of its stream ([`Stream::take_status`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Interim,
    Final,
    Malformed,
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

/// A connection failed before any stream was on it: as an HTTP/1 request would have, one request
/// fails for it, so a server that never answers ends the run rather than looping.
pub(crate) fn charge_one(io: &mut Io, sum: &mut H2Summary, class: Class) {
    if io.requests.take(1) == 1 {
        io.requests.done(Instant::now());
        io.record.failure(class);
        sum.done += 1;
        sum.errored += 1;
    }
}

/// Closed loop: how many of a connection's `free` streams (of `limit`) to open now. None while
/// fewer than half its limit are free and some are still at the server, so new requests leave in
/// batches (one TLS record, one write, one read and decryption for the server) rather than one per
/// response, as h2load's do (docs/BENCHMARKS.md, "How the generator waits": without a spin, nginx's CPU
/// per request fell by a quarter and requests/s rose from 0.68× h2load's to 0.91–0.95×). The
/// streams at the server answer, so the rest always comes free; a connection with none in flight
/// fills at once.
pub(crate) fn batch_room(free: usize, in_flight: usize, limit: usize) -> usize {
    if in_flight > 0 && free < (limit / 2).max(1) {
        0
    } else {
        free
    }
}

#[cfg(test)]
mod tests {
    use super::batch_room;

    #[test]
    fn new_streams_wait_for_half_the_limit_to_be_free() {
        // -m 16: nothing for 1 to 7 free, all of them from 8.
        assert_eq!(batch_room(1, 15, 16), 0);
        assert_eq!(batch_room(7, 9, 16), 0);
        assert_eq!(batch_room(8, 8, 16), 8);
        assert_eq!(batch_room(16, 0, 16), 16);
        // An idle connection (a new one, or the run's last requests) fills at once.
        assert_eq!(batch_room(3, 0, 16), 3);
        // -m 1 and -m 2: one free stream is a batch, as before.
        assert_eq!(batch_room(1, 0, 1), 1);
        assert_eq!(batch_room(1, 1, 2), 1);
        // A server's lower limit (SETTINGS_MAX_CONCURRENT_STREAMS 4): batches of 2.
        assert_eq!(batch_room(1, 3, 4), 0);
        assert_eq!(batch_room(2, 2, 4), 2);
    }
}
