//! What HTTP/2 keeps about a connection between reads (`State`): unparsed input, the HPACK
//! contexts, both sides' SETTINGS, the connection's flow-control windows, its open streams
//! (`Stream`) and the queues of requests to answer; and the connection's life cycle: our SETTINGS
//! first, a graceful GOAWAY, a connection error. Reading frames into it is input.rs's, framing
//! answers out of it send.rs's, answering its requests mod.rs's.

use super::defence;
use crate::field_list::Collect;
use crate::staged::FileRange;
use crate::turns::Turns;
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::sync::Arc;
use std::time::Instant;
use webstand_h2::frame::write;
use webstand_h2::hpack::{Decoder, Encoder};
use webstand_h2::settings::{SettingId, DEFAULT_WINDOW};
use webstand_h2::{block, ErrorCode, Settings, Window};

/// A piece of a stream's body waiting for its window.
pub enum Piece {
    Mem(Vec<u8>, usize),
    File(Arc<File>, u64, u64),
}

/// One stream the client opened.
pub struct Stream {
    /// The request in HTTP/1 text form (request.rs), until it is answered.
    pub(super) text: Vec<u8>,
    /// Body bytes received and not yet taken: the whole body when it is collected, what its
    /// FastCGI job has not taken yet when it is streamed.
    pub(super) body: Vec<u8>,
    /// The body goes to a FastCGI job as it arrives (a declared length over `STREAM_OVER`, until
    /// the request turns out to go elsewhere): its window is given back only as the job takes it.
    pub(super) streaming: bool,
    /// Body bytes a streamed body's job has taken.
    pub(super) taken: u64,
    /// The request's END_STREAM has arrived.
    pub(super) received: bool,
    pub(super) content_length: Option<u64>,
    pub(super) head_only: bool,
    pub(super) recv_window: Window,
    pub(super) send_window: Window,
    /// The body is (or is declared) larger than `--max-body`: answered 413, the rest discarded.
    pub(super) over_limit: bool,
    /// The throttle rule its answer is paced by, until the answer ends.
    pub(super) throttle: Option<usize>,
    /// Body bytes still owed after HEADERS (None: a streamed body, until `finished`).
    pub(super) remaining: Option<u64>,
    pub(super) finished: bool,
    pub(super) pieces: VecDeque<Piece>,
}

/// What HTTP/2 keeps about a connection between reads.
pub struct State {
    pub(super) inbuf: Vec<u8>,
    pub(super) preface_seen: bool,
    pub(super) decoder: Decoder,
    pub(super) encoder: Encoder,
    pub(super) peer: Settings,
    pub(super) send_window: Window,
    pub(super) recv_window: Window,
    pub(super) streams: HashMap<u32, Stream>,
    /// Streams to answer, in order; those waiting for a job slot; those a job answers.
    pub(super) turns: Turns<u32>,
    /// Streams we reset lately: frames the peer had already sent on them are ignored (§5.4.2).
    pub(super) reset_lately: VecDeque<u32>,
    pub(super) last_stream: u32,
    pub(super) pending: Option<(block::Pending, u32)>,
    /// Frames to write before (and with) the answers.
    pub(super) wire: Vec<u8>,
    pub(super) block: Vec<u8>,
    pub(super) lower: Vec<u8>,
    /// The streams `pump` goes through, kept between rounds (no allocation per pump).
    pub(super) answering: Vec<u32>,
    /// A header block's fields as they are decoded, kept so that a request allocates nothing
    /// (tests/serve_h2_alloc.rs).
    pub(super) collect: Collect,
    /// The memory of the header block being gathered, handed from block to block.
    pub(super) block_in: Vec<u8>,
    /// File ranges the answers staged this round (send.rs).
    pub(super) staged: Vec<FileRange>,
    /// GOAWAY was sent: no new streams; close once the open ones are answered.
    pub(super) goaway: bool,
    pub(super) answered: u64,
    pub(super) counters: defence::Counters,
    /// When the peer last gave us bytes or window (the slow-read bound counts from it).
    pub(super) progress: Instant,
    /// `--max-body`: the largest request body taken.
    pub(super) max_body: u64,
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
            turns: Turns::new(),
            reset_lately: VecDeque::new(),
            last_stream: 0,
            pending: None,
            wire,
            block: Vec::new(),
            lower: Vec::new(),
            answering: Vec::new(),
            collect: Collect::default(),
            block_in: Vec::new(),
            goaway: false,
            answered: 0,
            counters: defence::Counters::default(),
            progress: now,
            max_body,
            staged: Vec::new(),
        }
    }

    /// Queues a graceful GOAWAY (NO_ERROR, the last stream taken) unless one side already said
    /// goodbye: shutdown and the idle close both end this way.
    pub(super) fn say_goodbye(&mut self) {
        if !self.goaway {
            self.goaway = true;
            write::goaway(&mut self.wire, self.last_stream, ErrorCode::NoError, b"");
        }
    }

    /// A connection error: GOAWAY with `code`; nothing more is read.
    pub(super) fn fail(&mut self, code: ErrorCode, why: &str) {
        self.inbuf.clear();
        self.turns.clear();
        self.streams.clear();
        self.goaway = true;
        write::goaway(&mut self.wire, self.last_stream, code, why.as_bytes());
    }
}
