//! One connection slot's state: its transport, where it is in an exchange, the requests in flight on
//! it, write progress and its response parser.

use crate::h1::response::ResponseParser;
use crate::transport::Transport;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Instant;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Phase {
    /// No socket.
    Free,
    Connecting,
    Sending,
    Receiving,
    /// An open keep-alive connection with nothing to do.
    Idle,
}

#[derive(Clone, Copy)]
pub(crate) struct InFlight {
    pub req: usize,
    /// Send time (closed loop) or intended send time (open loop).
    pub start: Instant,
}

pub(crate) struct Conn {
    pub stream: Option<Transport>,
    /// Where the current (or last) connection went.
    pub to: SocketAddr,
    /// Whether `stream` is registered with the poller, and for writability too.
    pub registered: bool,
    pub want_write: bool,
    pub phase: Phase,
    /// Responses completed on the current socket.
    pub served: u64,
    pub inflight: VecDeque<InFlight>,
    /// Bytes to write when not a single shared request (pipelining, retries).
    pub out: Vec<u8>,
    /// Write straight from the shared request bytes of this request.
    pub out_req: Option<usize>,
    pub written: usize,
    pub conn_start: Instant,
    pub connect_us: u64,
    pub written_at: Instant,
    pub first_byte: Option<Instant>,
    pub last_progress: Instant,
    pub parser: ResponseParser,
}

impl Conn {
    /// A free slot for up to `pipeline` requests in flight.
    pub(crate) fn new(now: Instant, pipeline: usize, to: SocketAddr) -> Conn {
        Conn {
            stream: None,
            to,
            registered: false,
            want_write: false,
            phase: Phase::Free,
            served: 0,
            inflight: VecDeque::with_capacity(pipeline),
            out: Vec::new(),
            out_req: None,
            written: 0,
            conn_start: now,
            connect_us: 0,
            written_at: now,
            first_byte: None,
            last_progress: now,
            parser: ResponseParser::default(),
        }
    }

    /// Drops the socket (closing it) and frees the slot.
    pub(crate) fn close(&mut self) {
        self.stream = None;
        self.phase = Phase::Free;
    }

    /// Whether the slot waits on the network (and so can time out).
    pub(crate) fn busy(&self) -> bool {
        matches!(
            self.phase,
            Phase::Connecting | Phase::Sending | Phase::Receiving
        )
    }
}

/// How a failed request is counted (ab's classes; a failed write counts as an exception too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    Connect,
    Receive,
    Exceptions,
    Write,
}
