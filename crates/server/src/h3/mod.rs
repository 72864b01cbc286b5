//! HTTP/3 on the server (RFC 9114), over QUIC connections (quic/) and the wire syntax of
//! `webstand-h3`: a connection's `State` (state.rs) implements the loop's `Protocol`, reading the
//! records of its QUIC streams (input.rs) and answering through a `Sink` per request stream
//! (send.rs), exactly as HTTP/2 does over a byte stream: the handler, the jobs and the access log
//! see the same neutral request and write the same neutral answer. Requests are answered after
//! the whole read is taken (a stream the client reset in the same read is never worked on), in
//! stream order. A stream that needs a job (a CGI program, a FastCGI request) gets its own, up to
//! `MAX_JOBS` at once per connection (later ones wait their turn, in order: turns.rs); a stream
//! the client resets ends its job. A request body is collected whole within `--max-body` (past it, or
//! declared past it, the stream is answered 413 at once and the client asked to stop sending),
//! QUIC's stream and connection windows bounding what a client sends ahead of our reading.
//! GOAWAY names the first stream not taken; streams opened after it are refused with
//! H3_REQUEST_REJECTED.

mod input;
mod send;
mod state;

pub use state::State;

use crate::config::Config;
use crate::output::Out;
use crate::protocol::Protocol;
use crate::response::{self, Sink};
use crate::service::{Asked, Moment, Served, Service};
use crate::staged::Writer;
use state::MAX_JOBS;
use std::time::Instant;

/// The `Asked::stream` of a QUIC request stream (client bidirectional IDs are 0, 4, 8, …), and
/// back: jobs name a request by a u32.
fn index_of(id: u64) -> u32 {
    (id >> 2) as u32
}

fn id_of(index: u32) -> u64 {
    u64::from(index) << 2
}

impl State {
    /// Answers the ready streams in order; those that need a job while the connection runs
    /// `MAX_JOBS` wait among the deferred, and go first once one ends.
    fn answer_ready(&mut self, at: &Moment, out: &mut Out, svc: &mut dyn Service) {
        self.turns.begin(svc.jobs() < MAX_JOBS);
        while let Some(id) = self.turns.ready.pop_front() {
            let Some(s) = self.streams.get_mut(&id) else {
                continue;
            };
            let mut sink = Writer {
                stream: id,
                date_line: at.date_line,
                bytes: out.bytes,
                staged: &mut self.staged,
            };
            let refusal = match (s.too_large, s.over_limit) {
                (true, _) => Some(431),
                (_, true) => Some(413),
                _ => None,
            };
            let length =
                (s.content_length.is_some() || !s.body.is_empty()).then_some(s.body.len() as u64);
            let head = crate::field_list::head_of(&s.text, length, crate::request::Version::Http3);
            let served = match refusal {
                Some(status) => {
                    let n = response::simple(&mut sink, status, b"", s.head_only);
                    let line = match s.text.is_empty() {
                        true => &b"- - HTTP/3.0"[..],
                        false => head.request_line(),
                    };
                    svc.log(line, status, n);
                    Served::Answered {
                        status,
                        throttle: None,
                    }
                }
                None => {
                    let asked = Asked {
                        head: &head,
                        body: &s.body,
                        stream: index_of(id),
                        max_jobs: MAX_JOBS,
                    };
                    svc.serve(&asked, &mut sink)
                }
            };
            let Some(throttle) = self.turns.served(id, served) else {
                continue;
            };
            s.throttle = throttle;
            // Answered or handed to a job (which copied what it needs): the buffers go back.
            self.turns.keep_text_buffer(std::mem::take(&mut s.text));
            s.body = Vec::new();
        }
    }

    /// Either side's GOAWAY ends the connection once its requests are answered (RFC 9114 §5.2;
    /// a client that is done says so, and oha waits for the close). A stream counts as answered
    /// once its last bytes are framed (`frame_staged`), which comes after the `receive` that
    /// answered it: `resume` looks again then.
    fn answered_after_goaway(&self) -> bool {
        (self.goaway || self.peer_goaway) && self.streams.is_empty() && self.turns.ready.is_empty()
    }

    /// Ends the jobs of streams that closed before their answer.
    fn end_jobs_of_closed_streams(&mut self, svc: &mut dyn Service) {
        let streams = &self.streams;
        self.turns.end_jobs_of_closed(
            |id| streams.contains_key(&id),
            |id| svc.cancel(index_of(id)),
        );
    }
}

impl Protocol for State {
    /// Takes the records of a read, then answers every complete request.
    fn receive(&mut self, new: &[u8], at: &Moment, out: &mut Out, svc: &mut dyn Service) {
        if !new.is_empty() {
            self.read(new, at.now);
            self.end_jobs_of_closed_streams(svc);
        }
        if at.draining {
            self.say_goodbye();
        }
        if !self.failed {
            self.answer_ready(at, out, svc);
        }
        if !out.backed_up() {
            self.pump();
        }
        if out.outbox.throttle.is_none() && self.turns.paced {
            out.outbox.throttle = self.streams.values().find_map(|s| s.throttle);
        }
        if self.failed || self.answered_after_goaway() {
            out.outbox.closing = true;
        }
    }

    /// Body pieces go out once the last ones are written; streams that waited for a job slot go
    /// once one is free; a server that began draining says GOAWAY at once; a connection told
    /// GOAWAY closes once its last answer is framed.
    fn resume(&mut self, at: &Moment, out: &mut Out, svc: &mut dyn Service) -> bool {
        let slot_free = svc.jobs() < MAX_JOBS;
        let held = self.stalled()
            || self.has_pieces()
            || (self.turns.waits_for_job() && slot_free)
            || (at.draining && !self.goaway)
            || (self.answered_after_goaway() && !out.outbox.closing);
        if held {
            self.receive(&[], at, out, svc);
        }
        held
    }

    /// The peer took too long with a request it started: GOAWAY, and close.
    fn timeout(&mut self, _: &Moment, out: &mut Out, _: &mut dyn Service) {
        self.say_goodbye();
        out.outbox.closing = true;
    }

    fn answer(
        &mut self,
        stream: u32,
        at: &Moment,
        out: &mut Out,
        f: &mut dyn FnMut(&mut dyn Sink),
    ) {
        f(&mut Writer {
            stream: id_of(stream),
            date_line: at.date_line,
            bytes: out.bytes,
            staged: &mut self.staged,
        });
    }

    fn answered(&mut self, stream: u32, _: u16, _: bool, _: &Moment, _: &mut Out) {
        self.turns.job_ended(id_of(stream));
    }

    /// Bodies are collected whole before their request is served: nothing to pass on.
    fn pass_bodies(&mut self, _: &mut dyn Service) -> bool {
        false
    }

    fn partial_input(&self) -> bool {
        !self.inbuf.is_empty() || !self.streams.is_empty()
    }

    fn stalled(&self) -> bool {
        !self.turns.ready.is_empty()
    }

    fn has_output(&self) -> bool {
        !self.wire.is_empty()
    }

    fn multiplexed(&self) -> bool {
        true
    }

    fn wait_deadline(&self, _now: Instant, config: &Config) -> Option<Instant> {
        self.partial_input()
            .then_some(self.progress + config.io_timeout)
    }

    fn frame_output(&mut self, bytes: &mut Vec<u8>) {
        self.frame_staged(bytes);
    }

    /// GOAWAY before the connection closes (idle timeout, shutdown).
    fn farewell(&mut self) -> Vec<u8> {
        self.say_goodbye();
        std::mem::take(&mut self.wire)
    }
}
