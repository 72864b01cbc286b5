//! HTTP/2 on the server (RFC 9113), by ALPN `h2` on TLS listeners and by prior knowledge (h2c,
//! `--h2c`) on plain ones, over the wire syntax of `webstand-h2`: a connection's `State`
//! (state.rs) implements the loop's `Protocol`. input.rs reads frames, request.rs turns a header
//! block into the neutral request, this file answers the complete ones through the `Service`,
//! send.rs turns answers into frames, defence.rs bounds what a peer may cost. Requests are
//! answered after the whole read is parsed (a stream reset in the same read is never worked on).
//! Each stream that needs a job (a CGI program, a FastCGI request) gets its own, up to `MAX_JOBS`
//! at once per connection (streams past that wait their turn, in order: turns.rs); while jobs
//! run, the loop goes on reading this connection and answering its other streams, and each
//! job's answer is framed on its stream within that stream's window. A stream the client resets (or a connection
//! that closes) ends its job (`Service::cancel`). A request body is collected within
//! `--max-body`: past it (or declared past it) the stream is answered 413 at once and then reset
//! with NO_ERROR (RFC 9113 §8.1), so the client stops sending while the connection goes on. A body
//! declared larger than `service::STREAM_OVER` that the server takes as it comes (a FastCGI
//! script's) is streamed instead: its job starts on the head, takes the body as it arrives
//! (`feed_bodies`), and the stream's window is given back only as the job takes it, so a slow
//! backend holds the client back, each stream by its own window.

mod defence;
mod input;
mod request;
mod send;
mod state;

pub use state::State;

use crate::config::Config;
use crate::output::Out;
use crate::protocol::Protocol;
use crate::response::{self, Sink};
use crate::service::{Asked, Moment, Served, Service};
use crate::staged::Writer;
use defence::MAX_JOBS;
use state::Stream;
use std::time::Instant;
use webstand_h2::ErrorCode;

impl State {
    /// Answers the ready streams in order; those that need a CGI/FastCGI job while the
    /// connection runs `MAX_JOBS` wait among the deferred, and go first once one ends. The answers are
    /// staged in `out`; `frame_output` frames them (send.rs).
    fn answer_ready(&mut self, at: &Moment, out: &mut Out, svc: &mut dyn Service) {
        self.turns.begin(svc.jobs() < MAX_JOBS);
        while let Some(id) = self.turns.ready.pop_front() {
            let Some(s) = self.streams.get_mut(&id) else {
                continue;
            };
            if s.streaming && !svc.streams_body(&request::head_of(&s.text, s.content_length)) {
                // Not a body a job takes as it comes: it is collected, and answered once whole.
                s.streaming = false;
                self.grant(id);
                if self.streams.get(&id).is_some_and(|s| s.received) {
                    self.turns.ready.push_front(id);
                }
                continue;
            }
            let had_body = s.content_length.is_some() || !s.body.is_empty();
            let length = match s.streaming {
                true => s.content_length,
                false => had_body.then_some(s.body.len() as u64),
            };
            let head = request::head_of(&s.text, length);
            // A streamed body reaches its job through `feed_bodies` alone, from its first byte.
            let body: &[u8] = if s.streaming { b"" } else { &s.body };
            let mut sink = Writer {
                stream: u64::from(id),
                date_line: at.date_line,
                bytes: out.bytes,
                staged: &mut self.staged,
            };
            let served = match s.over_limit {
                true => {
                    let n = response::simple(&mut sink, 413, b"", s.head_only);
                    svc.log(head.request_line(), 413, n);
                    Served::Answered {
                        status: 413,
                        throttle: None,
                    }
                }
                false => {
                    let asked = Asked {
                        head: &head,
                        body,
                        stream: id,
                        max_jobs: MAX_JOBS,
                    };
                    svc.serve(&asked, &mut sink)
                }
            };
            let Some(throttle) = self.turns.served(id, served) else {
                continue;
            };
            s.throttle = throttle;
            // Answered or handed to a job (which copied what it needs): the request's text
            // buffer goes back to the pool for the next stream's.
            self.turns.keep_text_buffer(std::mem::take(&mut s.text));
            if !s.streaming {
                s.body = Vec::new();
            }
        }
    }

    /// Ends the jobs of streams that closed before their answer: reset by the client, or all of
    /// them after a connection error.
    fn end_jobs_of_closed_streams(&mut self, svc: &mut dyn Service) {
        let streams = &self.streams;
        self.turns
            .end_jobs_of_closed(|id| streams.contains_key(&id), |id| svc.cancel(id));
    }

    /// Hands streamed request bodies to the jobs that have written all they were given, and
    /// gives each stream back the window its job took. A stream's body is thus held twice at most:
    /// one window (64 KiB) received and not yet taken, and one taken into its job and not yet
    /// written to the backend — 128 KiB per stream however large the body and however slowly the
    /// backend reads. True when a job took some.
    fn feed_bodies(&mut self, svc: &mut dyn Service) -> bool {
        let mut fed = false;
        for i in 0..self.turns.with_jobs().len() {
            let id = self.turns.with_jobs()[i];
            let Some(s) = self.streams.get_mut(&id).filter(|s| s.streaming) else {
                continue;
            };
            if s.body.is_empty() || !svc.takes_body(id) {
                continue;
            }
            let Some(used) = svc.feed_body(id, &s.body) else {
                continue;
            };
            s.body.drain(..used);
            s.taken += used as u64;
            self.grant(id);
            fed = true;
        }
        fed
    }
}

impl Protocol for State {
    /// Reads frames from freshly read bytes, then answers every complete request.
    fn receive(&mut self, new: &[u8], at: &Moment, out: &mut Out, svc: &mut dyn Service) {
        if !new.is_empty() {
            self.progress = at.now;
            self.read(new, at.now);
            self.end_jobs_of_closed_streams(svc);
        }
        if at.draining {
            self.say_goodbye();
        }
        self.answer_ready(at, out, svc);
        self.feed_bodies(svc);
        if out.outbox.throttle.is_none() && self.turns.paced {
            // The connection writes paced while a paced answer is under way: its body goes out
            // over many flushes, and each flush's drain ends the pacing (conn.rs).
            out.outbox.throttle = self.streams.values().find_map(|s| s.throttle);
        }
        if self.goaway && self.streams.is_empty() {
            out.outbox.closing = true;
        }
    }

    /// Body the windows let out is pumped by the next flush: go round again; streams that
    /// waited for a job slot go once one is free.
    fn resume(&mut self, at: &Moment, out: &mut Out, svc: &mut dyn Service) -> bool {
        let slot_free = svc.jobs() < MAX_JOBS;
        let held = self.stalled() || self.has_output() || (self.turns.waits_for_job() && slot_free);
        if held {
            self.receive(&[], at, out, svc);
        }
        held
    }

    /// The peer took too long (the I/O timeout while a stream was in flight): GOAWAY and close.
    fn timeout(&mut self, _: &Moment, out: &mut Out, _: &mut dyn Service) {
        self.fail(ErrorCode::NoError, "timeout");
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
            stream: u64::from(stream),
            date_line: at.date_line,
            bytes: out.bytes,
            staged: &mut self.staged,
        });
    }

    /// A stream's job ended (its answer's end is framed with the stream's other output).
    fn answered(&mut self, stream: u32, _: u16, _: bool, _: &Moment, _: &mut Out) {
        self.turns.job_ended(stream);
    }

    fn pass_bodies(&mut self, svc: &mut dyn Service) -> bool {
        self.feed_bodies(svc)
    }

    /// Something is in flight: a partial frame or header block, or open streams.
    fn partial_input(&self) -> bool {
        !self.inbuf.is_empty() || self.pending.is_some() || !self.streams.is_empty()
    }

    /// Requests complete but not answered yet.
    fn stalled(&self) -> bool {
        !self.turns.ready.is_empty()
    }

    /// Frames to write, or body that the windows let out (the next flush pumps it).
    fn has_output(&self) -> bool {
        !self.wire.is_empty()
            || (self.send_window.available() > 0 && self.streams.values().any(Stream::sendable))
    }

    fn multiplexed(&self) -> bool {
        true
    }

    /// While anything is in flight the peer must make progress within the I/O timeout (a peer
    /// that never opens its window is dropped then); idle, the idle timeout applies.
    fn wait_deadline(&self, _: Instant, config: &Config) -> Option<Instant> {
        self.partial_input()
            .then_some(self.progress + config.io_timeout)
    }

    fn frame_output(&mut self, bytes: &mut Vec<u8>) {
        self.frame_staged(bytes);
    }

    /// The GOAWAY a closing connection sends (idle timeout, shutdown).
    fn farewell(&mut self) -> Vec<u8> {
        self.say_goodbye();
        std::mem::take(&mut self.wire)
    }
}
