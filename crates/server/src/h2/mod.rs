//! HTTP/2 on the server (RFC 9113), by ALPN `h2` on TLS listeners and by prior knowledge (h2c,
//! `--h2c`) on plain ones, over the wire syntax of `webstand-h2`. A connection's `State` holds
//! what HTTP/2 keeps between reads: unparsed input, the HPACK contexts, both sides' SETTINGS, the
//! connection's flow-control windows and its open streams. `input.rs` reads frames, `request.rs`
//! turns a header block into the handlers' request, `send.rs` turns their answers into frames,
//! `defence.rs` bounds what a peer may cost. Requests are answered after the whole read is parsed
//! (a stream reset in the same read is never worked on). Each stream that needs a CGI program or
//! FastCGI request gets its own job, up to `MAX_JOBS` at once per connection (streams past that
//! wait, in order, in `deferred`); while jobs run, the loop goes on reading this connection and
//! answering its other streams, and each job's answer is framed on its stream within that
//! stream's window. A stream the client resets (or a connection that closes) ends its job: the
//! program is killed, the backend connection closed. A request body is collected within `--max-body`: past it (or
//! declared past it) the stream is answered 413 at once and then reset with NO_ERROR (RFC 9113
//! §8.1), so the client stops sending while the connection goes on. A body declared larger than
//! `fastcgi::STREAM_OVER` for a FastCGI script is streamed instead: its job starts on the head,
//! takes the body as it arrives (`feed_bodies`), and the stream's window is given back only as
//! the job takes it, so a slow backend holds the client back, each stream by its own window.

mod defence;
mod input;
mod request;
mod send;

use crate::config::Config;
use crate::output::Out;
use crate::protocol::Protocol;
use crate::response::{self, Sink};
use crate::service::{Asked, Moment, Served, Service};
use defence::MAX_JOBS;
use send::{FileRange, Piece, Writer};
use std::collections::{HashMap, VecDeque};
use std::time::Instant;
use webstand_h2::frame::write;
use webstand_h2::hpack::{Decoder, Encoder};
use webstand_h2::settings::{SettingId, DEFAULT_WINDOW};
use webstand_h2::{block, ErrorCode, Settings, Window};

/// Request text buffers kept for reuse: a batch of streams answered in one round.
const SPARE_TEXTS: usize = 32;

/// One stream the client opened.
pub struct Stream {
    /// The request in HTTP/1 text form (request.rs), until it is answered.
    text: Vec<u8>,
    /// Body bytes received and not yet taken: the whole body when it is collected, what its
    /// FastCGI job has not taken yet when it is streamed.
    body: Vec<u8>,
    /// The body goes to a FastCGI job as it arrives (a declared length over `STREAM_OVER`, until
    /// the request turns out to go elsewhere): its window is given back only as the job takes it.
    streaming: bool,
    /// Body bytes a streamed body's job has taken.
    taken: u64,
    /// The request's END_STREAM has arrived.
    received: bool,
    content_length: Option<u64>,
    head_only: bool,
    recv_window: Window,
    send_window: Window,
    /// The body is (or is declared) larger than `--max-body`: answered 413, the rest discarded.
    over_limit: bool,
    /// The throttle rule its answer is paced by, until the answer ends.
    throttle: Option<usize>,
    /// Body bytes still owed after HEADERS (None: a streamed body, until `finished`).
    remaining: Option<u64>,
    finished: bool,
    pieces: VecDeque<Piece>,
}

/// What HTTP/2 keeps about a connection between reads.
pub struct State {
    inbuf: Vec<u8>,
    preface_seen: bool,
    decoder: Decoder,
    encoder: Encoder,
    peer: Settings,
    send_window: Window,
    recv_window: Window,
    streams: HashMap<u32, Stream>,
    /// Streams whose requests are complete (or refused with 413), to answer in order.
    ready: VecDeque<u32>,
    /// Streams that wait for a CGI/FastCGI job (the connection runs `MAX_JOBS`), in order.
    deferred: VecDeque<u32>,
    /// Streams we reset lately: frames the peer had already sent on them are ignored (§5.4.2).
    reset_lately: VecDeque<u32>,
    last_stream: u32,
    pending: Option<(block::Pending, u32)>,
    /// Frames to write before (and with) the answers.
    wire: Vec<u8>,
    block: Vec<u8>,
    lower: Vec<u8>,
    /// The streams `pump` goes through, kept between rounds (no allocation per pump).
    answering: Vec<u32>,
    /// A header block's fields as they are decoded, and answered requests' text buffers for
    /// the next ones: kept so that a request allocates nothing (tests/serve_h2_alloc.rs).
    collect: request::Collect,
    spare_texts: Vec<Vec<u8>>,
    /// The memory of the header block being gathered, handed from block to block.
    block_in: Vec<u8>,
    /// Streams a job answers (their jobs end when they close first).
    with_jobs: Vec<u32>,
    /// File ranges the answers staged this round (send.rs).
    staged: Vec<FileRange>,
    /// A stream's answer was paced by a throttle rule.
    paced: bool,
    /// GOAWAY was sent: no new streams; close once the open ones are answered.
    goaway: bool,
    answered: u64,
    counters: defence::Counters,
    /// When the peer last gave us bytes or window (the slow-read bound counts from it).
    progress: Instant,
    /// `--max-body`: the largest request body taken.
    max_body: u64,
}

impl State {
    /// A new connection: our SETTINGS go out first.
    pub fn new(now: Instant, max_body: u64) -> State {
        let mut wire = Vec::with_capacity(64);
        let ours = [
            (SettingId::MaxConcurrentStreams, defence::MAX_STREAMS),
            (SettingId::MaxHeaderListSize, defence::MAX_HEADER_LIST),
            (SettingId::EnablePush, 0),
        ];
        write::settings(&mut wire, &ours);
        State {
            inbuf: Vec::new(),
            preface_seen: false,
            decoder: Decoder::new(4096, defence::MAX_HEADER_LIST),
            encoder: Encoder::new(),
            peer: Settings::default(),
            send_window: Window::new(DEFAULT_WINDOW),
            recv_window: Window::new(DEFAULT_WINDOW),
            streams: HashMap::new(),
            ready: VecDeque::new(),
            deferred: VecDeque::new(),
            reset_lately: VecDeque::new(),
            last_stream: 0,
            pending: None,
            wire,
            block: Vec::new(),
            lower: Vec::new(),
            answering: Vec::new(),
            collect: request::Collect::default(),
            spare_texts: Vec::new(),
            block_in: Vec::new(),
            goaway: false,
            answered: 0,
            counters: defence::Counters::default(),
            progress: now,
            max_body,
            with_jobs: Vec::new(),
            staged: Vec::new(),
            paced: false,
        }
    }

    /// Streams wait for a CGI/FastCGI job (routed again once one of the running ones ends).
    fn waits_for_job(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// Queues a graceful GOAWAY (NO_ERROR, the last stream taken) unless one side already said
    /// goodbye: shutdown and the idle close both end this way.
    fn say_goodbye(&mut self) {
        if !self.goaway {
            self.goaway = true;
            write::goaway(&mut self.wire, self.last_stream, ErrorCode::NoError, b"");
        }
    }

    /// A connection error: GOAWAY with `code`; nothing more is read.
    fn fail(&mut self, code: ErrorCode, why: &str) {
        self.inbuf.clear();
        self.ready.clear();
        self.deferred.clear();
        self.streams.clear();
        self.goaway = true;
        write::goaway(&mut self.wire, self.last_stream, code, why.as_bytes());
    }
}

impl State {
    /// Answers the ready streams in order; those that need a CGI/FastCGI job while the
    /// connection runs `MAX_JOBS` wait in `deferred`, and go first once one ends. The answers are
    /// staged in `out`; `frame_output` frames them (send.rs).
    fn answer_ready(&mut self, at: &Moment, out: &mut Out, svc: &mut dyn Service) {
        if svc.jobs() < MAX_JOBS && !self.deferred.is_empty() {
            let mut queue = std::mem::take(&mut self.deferred);
            queue.append(&mut self.ready);
            self.ready = queue;
        }
        while let Some(id) = self.ready.pop_front() {
            let Some(s) = self.streams.get_mut(&id) else {
                continue;
            };
            if s.streaming && !svc.streams_body(&request::head_of(&s.text, s.content_length)) {
                // Not a body a job takes as it comes: it is collected, and answered once whole.
                s.streaming = false;
                self.grant(id);
                if self.streams.get(&id).is_some_and(|s| s.received) {
                    self.ready.push_front(id);
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
                stream: id,
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
            match served {
                Served::Answered { throttle, .. } => {
                    s.throttle = throttle;
                    self.paced |= throttle.is_some();
                }
                Served::Started => self.with_jobs.push(id),
                Served::Busy => {
                    self.deferred.push_back(id);
                    continue;
                }
            }
            // Answered or handed to a job (which copied what it needs): the request's text
            // buffer goes back to the pool for the next stream's.
            let mut text = std::mem::take(&mut s.text);
            if !s.streaming {
                s.body = Vec::new();
            }
            if self.spare_texts.len() < SPARE_TEXTS {
                text.clear();
                self.spare_texts.push(text);
            }
        }
    }

    /// Ends the jobs of streams that closed before their answer: reset by the client, or all of
    /// them after a connection error.
    fn end_jobs_of_closed_streams(&mut self, svc: &mut dyn Service) {
        let streams = &self.streams;
        self.with_jobs.retain(|&id| {
            let open = streams.contains_key(&id);
            if !open {
                svc.cancel(id);
            }
            open
        });
    }

    /// Hands streamed request bodies to the jobs that have written all they were given, and
    /// gives each stream back the window its job took. A stream's body is thus held twice at most:
    /// one window (64 KiB) received and not yet taken, and one taken into its job and not yet
    /// written to the backend — 128 KiB per stream however large the body and however slowly the
    /// backend reads. True when a job took some.
    fn feed_bodies(&mut self, svc: &mut dyn Service) -> bool {
        let mut fed = false;
        for i in 0..self.with_jobs.len() {
            let id = self.with_jobs[i];
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
        if out.outbox.throttle.is_none() && self.paced {
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
        let held = self.stalled() || self.has_output() || (self.waits_for_job() && slot_free);
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
            stream,
            date_line: at.date_line,
            bytes: out.bytes,
            staged: &mut self.staged,
        });
    }

    /// A stream's job ended (its answer's end is framed with the stream's other output).
    fn answered(&mut self, stream: u32, _: u16, _: bool, _: &Moment, _: &mut Out) {
        self.with_jobs.retain(|&id| id != stream);
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
        !self.ready.is_empty()
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
