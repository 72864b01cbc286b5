//! What HTTP/3 keeps about a connection between reads (`State`): input records not yet whole, the
//! peer's unidirectional streams (control, QPACK encoder and decoder, ignored others) and its
//! SETTINGS, the QPACK decoder, the request streams (`Stream`) and the queues of requests to
//! answer; and the connection's life cycle: our control stream and SETTINGS first, a graceful
//! GOAWAY, a connection error. Reading records into it is input.rs's, framing answers out of it
//! send.rs's, answering its requests mod.rs's.

use crate::field_list::Collect;
use crate::quic::records::{self, Kind};
use crate::staged::FileRange;
use crate::turns::Turns;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fs::File;
use std::sync::Arc;
use std::time::Instant;
use webstand_h3::frame::write;
use webstand_h3::settings::id;
use webstand_h3::{qpack, stream, ErrorCode, Settings};

/// Our control stream: the first server-initiated unidirectional stream.
pub const CONTROL: u64 = 3;
/// Our SETTINGS_MAX_FIELD_SECTION_SIZE (decoded: names + values + 32 per field).
pub const MAX_FIELD_SECTION: u64 = 16 << 10;
/// The largest encoded field section (a HEADERS frame's payload) taken.
pub const MAX_HEADERS_FRAME: u64 = 32 << 10;
/// The largest frame taken on the peer's control stream (SETTINGS and the rest are small).
pub const MAX_CONTROL_FRAME: u64 = 4 << 10;
/// CGI programs and FastCGI requests one connection runs at once.
pub const MAX_JOBS: usize = 16;

/// A piece of an answer's body waiting for its turn (a file range is read as it is sent).
pub enum Piece {
    Mem(Vec<u8>, usize),
    File(Arc<File>, u64, u64),
}

/// One request stream.
#[derive(Default)]
pub struct Stream {
    /// Frame bytes received and not yet taken (a HEADERS frame in part).
    pub(super) buf: Vec<u8>,
    /// Bytes of the current DATA frame still to come, and of an unknown frame to skip.
    pub(super) data_left: u64,
    pub(super) skip_left: u64,
    /// The request in HTTP/1 text form (field_list.rs), until it is answered.
    pub(super) text: Vec<u8>,
    pub(super) body: Vec<u8>,
    /// HEADERS arrived (and then trailers, after which no DATA may come).
    pub(super) head_seen: bool,
    pub(super) trailers_seen: bool,
    /// The peer ended its side.
    pub(super) received: bool,
    pub(super) content_length: Option<u64>,
    pub(super) head_only: bool,
    /// The body passed `--max-body`: answered 413, the rest discarded.
    pub(super) over_limit: bool,
    /// The field section was larger than we take: answered 431.
    pub(super) too_large: bool,
    /// Handed to the handler (answered, or a job started).
    pub(super) dispatched: bool,
    pub(super) throttle: Option<usize>,
    /// Body bytes still owed after HEADERS (None: a streamed body, until `finished`).
    pub(super) remaining: Option<u64>,
    pub(super) finished: bool,
    pub(super) pieces: VecDeque<Piece>,
}

/// The peer's unidirectional stream.
pub struct Uni {
    pub(super) kind: Option<stream::UniKind>,
    pub(super) buf: Vec<u8>,
    /// Control: SETTINGS came first, as it must.
    pub(super) settings_seen: bool,
}

/// What HTTP/3 keeps about a connection between reads.
pub struct State {
    /// Records received in part (a record never splits across reads today; kept for safety).
    pub(super) inbuf: Vec<u8>,
    pub(super) unis: HashMap<u64, Uni>,
    /// Which of the peer's streams are its control, encoder and decoder streams.
    pub(super) peer_control: Option<u64>,
    pub(super) peer_encoder: Option<u64>,
    pub(super) peer_decoder: Option<u64>,
    pub(super) peer: Option<Settings>,
    pub(super) decoder: qpack::Decoder,
    pub(super) collect: Collect,
    pub(super) streams: BTreeMap<u64, Stream>,
    /// Streams to answer, in order; those waiting for a job slot; those a job answers.
    pub(super) turns: Turns<u64>,
    /// Records to write before (and with) the answers.
    pub(super) wire: Vec<u8>,
    /// Scratch: a field section, lower-cased field lines, stream IDs.
    pub(super) block: Vec<u8>,
    pub(super) lower: Vec<u8>,
    pub(super) ids: Vec<u64>,
    /// File ranges the answers staged this round (send.rs).
    pub(super) staged: Vec<FileRange>,
    /// The first request stream not taken: GOAWAY names it.
    pub(super) next_request: u64,
    /// GOAWAY was sent: later request streams are refused; close once the rest are answered.
    pub(super) goaway: bool,
    /// The client sent GOAWAY (it is done): close once its requests are answered.
    pub(super) peer_goaway: bool,
    /// A connection error was sent: nothing more is read.
    pub(super) failed: bool,
    /// When the peer last gave us bytes (the I/O timeout counts from it).
    pub(super) progress: Instant,
    pub(super) max_body: u64,
}

impl State {
    /// A new connection: our control stream and SETTINGS go out first.
    pub fn new(now: Instant, max_body: u64) -> State {
        let mut opening = vec![stream::CONTROL as u8];
        // A QPACK table capacity of 0 (the default, left out) and no blocked streams.
        write::settings(
            &mut opening,
            &[(id::MAX_FIELD_SECTION_SIZE, MAX_FIELD_SECTION)],
        );
        let mut wire = Vec::with_capacity(64);
        records::push(&mut wire, Kind::Data, CONTROL, &opening);
        State {
            inbuf: Vec::new(),
            unis: HashMap::new(),
            peer_control: None,
            peer_encoder: None,
            peer_decoder: None,
            peer: None,
            decoder: qpack::Decoder::new(MAX_FIELD_SECTION),
            collect: Collect::default(),
            streams: BTreeMap::new(),
            wire,
            block: Vec::new(),
            lower: Vec::new(),
            ids: Vec::new(),
            staged: Vec::new(),
            turns: Turns::new(),
            next_request: 0,
            goaway: false,
            peer_goaway: false,
            failed: false,
            progress: now,
            max_body,
        }
    }

    /// Sends GOAWAY (once) naming the first request stream not taken: the shutdown and the idle
    /// close both end this way.
    pub(super) fn say_goodbye(&mut self) {
        if !self.goaway && !self.failed {
            self.goaway = true;
            let mut frame = Vec::with_capacity(10);
            write::goaway(&mut frame, self.next_request);
            records::push(&mut self.wire, Kind::Data, CONTROL, &frame);
        }
    }

    /// A connection error: the connection closes with `code`; nothing more is read or answered.
    pub(super) fn fail(&mut self, code: ErrorCode) {
        if self.failed {
            return;
        }
        self.failed = true;
        self.goaway = true;
        self.inbuf.clear();
        self.turns.clear();
        self.streams.clear();
        records::push_code(&mut self.wire, Kind::Close, 0, code.to_u64());
    }

    /// A stream error: the request stream is reset and its reading stopped with `code`.
    pub(super) fn refuse_stream(&mut self, id: u64, code: ErrorCode) {
        self.streams.remove(&id);
        records::push_code(&mut self.wire, Kind::Reset, id, code.to_u64());
        records::push_code(&mut self.wire, Kind::Stop, id, code.to_u64());
    }
}
