//! One connection slot's state: its socket, where it is in an exchange, the requests in flight on it,
//! write progress and its response parser; and the socket options a load connection gets.

use crate::response::ResponseParser;
use mio::net::TcpStream;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
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
    pub stream: Option<TcpStream>,
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
#[derive(Clone, Copy)]
pub(crate) enum Class {
    Connect,
    Receive,
    Exceptions,
    Write,
}

/// Reno instead of the system default (often BBR, which paces from a timer without an fq qdisc): a
/// generator's sends are requests of a few hundred bytes, for which congestion control is only cost
/// (about 1 % of the generator's CPU per keep-alive request here). Not used for request bodies.
pub(crate) fn simple_congestion_control(s: &TcpStream) {
    const RENO: &[u8] = b"reno";
    // SAFETY: setsockopt with a valid fd and a byte string of the given length; failure is harmless.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            RENO.as_ptr().cast(),
            RENO.len() as libc::socklen_t,
        );
    }
}
