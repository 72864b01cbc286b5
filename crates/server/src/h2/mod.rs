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

pub use defence::MAX_JOBS;
pub use send::{prepare, Channel, FileRange};

use crate::conn::Conn;
use crate::handler::Ctx;
use crate::protocol::Protocol;
use send::Piece;
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
    /// The throttle rule its answer is paced by (static_file.rs), until the answer ends.
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
    pub fn new(now: Instant, max_body: u64) -> Box<State> {
        let mut wire = Vec::with_capacity(64);
        let ours = [
            (SettingId::MaxConcurrentStreams, defence::MAX_STREAMS),
            (SettingId::MaxHeaderListSize, defence::MAX_HEADER_LIST),
            (SettingId::EnablePush, 0),
        ];
        write::settings(&mut wire, &ours);
        Box::new(State {
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
        })
    }

    /// Something is in flight: a partial frame or header block, or open streams.
    pub fn partial_input(&self) -> bool {
        !self.inbuf.is_empty() || self.pending.is_some() || !self.streams.is_empty()
    }

    /// Requests complete but not answered yet.
    pub fn stalled(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Streams wait for a CGI/FastCGI job (routed again once one of the running ones ends).
    pub fn waits_for_job(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// Frames to write, or body that the windows let out (`Conn::flush` pumps it).
    pub fn has_output(&self) -> bool {
        !self.wire.is_empty()
            || (self.send_window.available() > 0 && self.streams.values().any(Stream::sendable))
    }

    /// While anything is in flight the peer must make progress within the I/O timeout (a peer
    /// that never opens its window is dropped then); idle, the idle timeout applies.
    pub fn wait_deadline(&self, config: &crate::config::Config) -> Option<Instant> {
        self.partial_input()
            .then_some(self.progress + config.io_timeout)
    }

    /// The GOAWAY a closing connection sends (idle timeout, shutdown).
    pub fn farewell(&mut self) -> Vec<u8> {
        self.say_goodbye();
        std::mem::take(&mut self.wire)
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

fn state(conn: &mut Conn) -> Option<Box<State>> {
    match std::mem::take(&mut conn.protocol) {
        Protocol::Http2(s) => Some(s),
        other => {
            conn.protocol = other;
            None
        }
    }
}

impl Ctx {
    /// Reads frames from freshly read bytes, then answers every complete request
    /// (`Ctx::serve_input` for an HTTP/2 connection).
    pub fn serve_h2(
        &mut self,
        conn: &mut Conn,
        new: &[u8],
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) {
        let Some(mut st) = state(conn) else {
            return;
        };
        if !new.is_empty() {
            st.progress = self.now;
            st.read(new, self.now);
            self.end_jobs_of_closed_streams(conn, &st, idx, registry);
        }
        if self.draining {
            st.say_goodbye();
        }
        self.answer_ready(&mut st, conn, out, idx, registry);
        self.feed_bodies(&mut st, &mut conn.fcgi);
        if conn.throttle.is_none() && !self.shared.throttles.is_empty() {
            // The connection writes paced while a paced answer is under way: its body goes out
            // over many flushes, and each flush's drain ends the pacing (conn.rs).
            conn.throttle = st.streams.values().find_map(|s| s.throttle);
        }
        if st.goaway && st.streams.is_empty() {
            conn.closing = true;
        }
        conn.protocol = Protocol::Http2(st);
    }

    /// Ends the jobs of streams that closed before their answer: reset by the client, or all of
    /// them after a connection error.
    fn end_jobs_of_closed_streams(
        &mut self,
        conn: &mut Conn,
        st: &State,
        idx: usize,
        registry: &mio::Registry,
    ) {
        let running = conn.cgi.iter().map(|j| j.stream());
        let closed: Vec<u32> = running
            .chain(conn.fcgi.iter().map(|j| j.stream()))
            .flatten()
            .filter(|id| !st.streams.contains_key(id))
            .collect();
        for id in closed {
            self.end_cgi(conn, Some(id), registry);
            self.end_fastcgi(conn, idx, Some(id));
        }
    }

    /// Answers the ready streams in order; those that need a CGI/FastCGI job while the
    /// connection runs `MAX_JOBS` wait in `deferred`, and go first once one ends. The answers are
    /// staged in `out`; `Conn::flush` frames them (send.rs).
    fn answer_ready(
        &mut self,
        st: &mut State,
        conn: &mut Conn,
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) {
        if conn.jobs() < MAX_JOBS && !st.deferred.is_empty() {
            let mut queue = std::mem::take(&mut st.deferred);
            queue.append(&mut st.ready);
            st.ready = queue;
        }
        while let Some(id) = st.ready.pop_front() {
            let Some(s) = st.streams.get_mut(&id) else {
                continue;
            };
            let ch = crate::protocol::Channel::Http2(Channel { stream: id });
            if s.streaming && !self.streams_body(&request::head_of(&s.text, s.content_length)) {
                // Not a FastCGI script's: the body is collected, and answered once it is whole.
                s.streaming = false;
                st.grant(id);
                if st.streams.get(&id).is_some_and(|s| s.received) {
                    st.ready.push_front(id);
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
            let earlier = conn.throttle.take();
            let answer = match s.over_limit {
                true => Some(self.simple_answer(out, &head, ch, 413, b"")),
                false => self.respond(conn, &head, ch, body, out, idx, registry),
            };
            s.throttle = conn.throttle;
            conn.throttle = conn.throttle.or(earlier);
            if let Some((status, bytes, user)) = answer {
                self.log(
                    conn.peer,
                    user.as_deref(),
                    head.request_line(),
                    status,
                    bytes,
                );
            }
            if std::mem::take(&mut self.waits_for_job) {
                st.deferred.push_back(id);
            } else {
                // Answered or handed to a job (which copied what it needs): the request's text
                // buffer goes back to the pool for the next stream's.
                let mut text = std::mem::take(&mut s.text);
                if !s.streaming {
                    s.body = Vec::new();
                }
                if st.spare_texts.len() < SPARE_TEXTS {
                    text.clear();
                    st.spare_texts.push(text);
                }
            }
        }
    }

    /// Hands streamed request bodies to the FastCGI jobs that have written all they were given
    /// (`FcgiJob::wants_body`), and gives each stream back the window its job took. A stream's body
    /// is thus held twice at most: one window (64 KiB) received and not yet taken, and one taken
    /// into its job's STDIN records and not yet written to the backend — 128 KiB per stream
    /// however large the body and however slowly the backend reads. True when a job took some.
    fn feed_bodies(&mut self, st: &mut State, jobs: &mut [Box<crate::fastcgi::FcgiJob>]) -> bool {
        let mut fed = false;
        for job in jobs.iter_mut() {
            let Some(id) = job.stream() else {
                continue;
            };
            let Some(s) = st.streams.get_mut(&id).filter(|s| s.streaming) else {
                continue;
            };
            if !job.wants_body() {
                continue;
            }
            let Some(used) = self.feed_fastcgi_body(Some(&mut **job), &s.body) else {
                continue;
            };
            s.body.drain(..used);
            s.taken += used as u64;
            st.grant(id);
            fed = true;
        }
        fed
    }

    /// `feed_bodies` for the loop, once a job has written all it had (`Pump::Body`): true when
    /// a job took more, to be written before the client is read again.
    pub fn feed_h2_bodies(&mut self, conn: &mut Conn) -> bool {
        let Protocol::Http2(st) = &mut conn.protocol else {
            return false;
        };
        self.feed_bodies(st, &mut conn.fcgi)
    }

    /// The peer took too long (the I/O timeout while a stream was in flight): GOAWAY and close.
    pub fn h2_timeout(&mut self, conn: &mut Conn) {
        if let Protocol::Http2(st) = &mut conn.protocol {
            st.fail(ErrorCode::NoError, "timeout");
        }
        conn.closing = true;
    }
}
