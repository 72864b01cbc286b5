//! The contract between a load thread's loop (`driver.rs`) and the connections of one protocol
//! (`h1/conn.rs`, `h2/conn.rs`): what the protocol builds once per run, and the connection slot as
//! a state machine that the driver starts, wakes on its socket's events and checks for timeouts.
//! A connection opens its own socket, registers it under its slot's token, sends, reads, and
//! records through the thread's [`Io`]; the driver knows nothing of the protocol, and the protocol
//! nothing of the loop, the pacing or the wait.
//!
//! A connection with timers of its own (QUIC's) says so ([`Connection::TIMERS`]): the driver then
//! wakes it at its [`Connection::timer`], and never blocks past the earliest.
//!
//! The driver calls [`Connection::start`] for a slot the slot itself put on the ready list (it
//! finished, failed, or was freed) and, in an open loop, for a slot that
//! [`Connection::takes_more`] when a send is due. A connection takes its requests from
//! `io.requests` (which says what is due) as far as its room allows, so the driver never has to
//! know a connection's room; one that gains room outside `start` (a response read) either fills it
//! at once (HTTP/2) or puts itself on the ready list (HTTP/1).

use crate::io::Io;
use crate::shared::Shared;
use crate::transport::tls_config::TlsSetup;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};
use webstand_results::plan::Plan;
use webstand_results::result::RunResult;

/// A connection's part in the halfway wait (`halfway.rs`).
pub(crate) enum Waiting {
    /// Nothing at the server: its readiness does not matter.
    Idle,
    /// Connecting, or with something to write: its readiness matters, so no halfway wait.
    Busy,
    /// Waiting on a response to the request sent at this instant (its oldest), on this socket.
    On(Instant, RawFd),
}

pub(crate) trait Connection: Sized {
    /// What a load thread's connections of this protocol share (HTTP/2: what every connection
    /// starts from, and the thread's frame counts).
    type Thread;

    /// Connections carry many requests at once (HTTP/2's streams): they are always kept alive, and
    /// the wait counts its queue in connections (`wait.rs`).
    const MULTIPLEXED: bool;

    /// Connections keep timers of their own (QUIC's loss recovery and idle timers): the driver
    /// wakes each at its [`Connection::timer`]. HTTP/1 and HTTP/2 keep none (their timeouts are the
    /// driver's sweep), and their loop then never asks.
    const TIMERS: bool = false;

    /// The bytes that ask for `path` under `plan` in this protocol, built once per URL.
    fn request(plan: &Plan, path: &str) -> Vec<u8>;

    /// The run's TLS set up for this protocol (its ALPN).
    fn tls(setup: TlsSetup) -> TlsSetup {
        setup
    }

    /// What thread's connections share, made before its loop starts.
    fn thread(sh: &Shared) -> Self::Thread;

    /// A free slot.
    fn new(sh: &Shared, th: &Self::Thread, now: Instant) -> Self;

    /// Puts work on the slot at `now` (the top of the pass): what it must send again first, then
    /// requests from `io.requests` as far as its room allows, connecting if it has none; writes.
    fn start(&mut self, io: &mut Io, th: &mut Self::Thread, slot: usize, now: Instant);

    /// Open loop: whether [`Connection::start`] would put a due send on it now.
    fn takes_more(&self, th: &Self::Thread) -> bool;

    /// Whether it holds an open connection (the watched view's count, read a few times a second).
    fn connected(&self) -> bool;

    /// Its socket is readable (`readable`), or writable, or the peer closed it (`closed`: reading
    /// must go on until it sees the close).
    fn on_event(
        &mut self,
        io: &mut Io,
        th: &mut Self::Thread,
        slot: usize,
        readable: bool,
        closed: bool,
    );

    /// Fails what waited on the network for longer than `timeout` (no progress) at `now`.
    fn check_timeout(
        &mut self,
        io: &mut Io,
        th: &mut Self::Thread,
        slot: usize,
        now: Instant,
        timeout: Duration,
    );

    /// With [`Connection::TIMERS`]: the instant it must next be woken at, if any.
    fn timer(&self) -> Option<Instant> {
        None
    }

    /// With [`Connection::TIMERS`]: its timer is due at `now`.
    fn on_timer(&mut self, _io: &mut Io, _th: &mut Self::Thread, _slot: usize, _now: Instant) {}

    /// Its part in the halfway wait.
    fn waiting(&self) -> Waiting;

    /// The queue at the server in the unit the halfway rule counts: HTTP/1's requests outstanding,
    /// HTTP/2's connections with streams in flight.
    fn queue(conns: &[Self], outstanding: u64) -> usize;

    /// The thread's loop ended: what the protocol adds to its result (HTTP/2: h2load's summary).
    fn finish(conns: &mut [Self], th: Self::Thread, r: &mut RunResult);
}
