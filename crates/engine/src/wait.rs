//! How a load thread waits for its sockets: one interface ([`Wait::wait`]) over the three ways it
//! can wait once it has sent what it could.
//!
//! - In the poller, after a short spin when the thread has a CPU of its own (`spin.rs`): the way
//!   every wait ends up when the others do not apply.
//! - Halfway down a deep queue of a closed keep-alive loop on a server that keeps its connections
//!   open: blocked on the one socket whose response is due halfway down it (`halfway.rs`), or, for
//!   HTTP/1 once the server's pace is known, asleep for half the backlog (`nap.rs`).
//!
//! The driver says what it knows of the pass ([`Pass`]); the connections say, each, whether they
//! wait on a response and since when ([`Waiting`]). Whatever the way, the wait ends with the
//! ready events in the poller's list.

use crate::connection::{Connection, Waiting};
use crate::halfway::{kept_open, min_queue, pick, MIN_QUEUE};
use crate::nap::Nap;
use crate::shared::Shared;
use crate::spin::Spin;
use mio::{Events, Poll};
use std::io::{self, ErrorKind};
use std::os::fd::RawFd;
use std::time::{Duration, Instant};
use webstand_results::result::HalfwayWaits;

/// What the loop knows of its pass when it waits.
pub(crate) struct Pass {
    /// The top of the pass, before its sends.
    pub now: Instant,
    /// The longest the wait may block: to the next timeout check, the deadline or a paced send,
    /// and zero while a connection waits to be started.
    pub bound: Duration,
    pub open_loop: bool,
    /// Connections wait to be started at the next pass.
    pub ready: bool,
    /// Requests taken and not finished.
    pub outstanding: u64,
    /// The queue at the server in the halfway rule's unit (`Connection::queue`).
    pub queue: usize,
    /// Complete responses so far, keep-alive connections the server closed, and when the latest
    /// request finished.
    pub complete: u64,
    pub server_closes: u64,
    pub last_done: Instant,
}

pub(crate) struct Wait {
    spin: Spin,
    /// Keep-alive under `--spin auto`: the queue at which to wait halfway down it.
    halfway: Option<usize>,
    /// HTTP/1 with a halfway wait: naps instead of the block once the pace is known.
    nap: Option<Nap>,
    /// How often this thread waited halfway and how long it napped and blocked, for the result.
    waits: HalfwayWaits,
    /// Scratch list of `(sent, fd)` of the connections waiting on responses.
    waiting: Vec<(Instant, RawFd)>,
}

impl Wait {
    /// The wait of a load thread whose connections multiplex requests (HTTP/2) or carry one at a
    /// time (HTTP/1): the former are always kept alive, and never nap (the nap was measured for
    /// HTTP/1 only).
    pub(crate) fn new(sh: &Shared, multiplexed: bool) -> Wait {
        let tls = sh.tls.is_some();
        let keep_alive = sh.keep_alive || multiplexed;
        Wait {
            spin: Spin::new(sh.spin),
            halfway: min_queue(tls, multiplexed, keep_alive, sh.plan.spin),
            nap: (!multiplexed).then(|| Nap::new(tls)),
            waits: HalfwayWaits::default(),
            waiting: Vec::new(),
        }
    }

    /// Waits for events into `events`, as the module says. False when a signal interrupted the
    /// wait: the loop goes round again.
    pub(crate) fn wait<C: Connection>(
        &mut self,
        poll: &mut Poll,
        events: &mut Events,
        conns: &[C],
        pass: &Pass,
    ) -> io::Result<bool> {
        if self.may_wait_halfway(pass) {
            self.wait_halfway(poll, events, conns, pass)
        } else {
            self.wait_for_events(poll, events, pass)
        }
    }

    /// Time spent spinning so far (CPU time, but waiting, not work).
    pub(crate) fn spun(&self) -> Duration {
        self.spin.spun()
    }

    pub(crate) fn halfway_waits(&self) -> HalfwayWaits {
        self.waits
    }

    /// Whether this pass may wait halfway (the rule of `halfway.rs`, but for the queue's readiness,
    /// which [`Wait::wait_halfway`] checks). Counted before the poll that checks costs anything.
    fn may_wait_halfway(&self, p: &Pass) -> bool {
        self.halfway.is_some_and(|min| p.queue >= min)
            && !p.ready
            && !p.open_loop
            && kept_open(p.complete, p.server_closes)
    }

    /// Polls for events, blocking no longer than the pass's bound and, once every request is at
    /// the server in a closed loop, spinning first as `spin.rs` decides.
    fn wait_for_events(
        &mut self,
        poll: &mut Poll,
        events: &mut Events,
        p: &Pass,
    ) -> io::Result<bool> {
        let may_spin = !p.open_loop && p.outstanding > 0;
        // `now` was read at the top of the pass, before its sends: a spin's wait begins here.
        let spins = may_spin && self.spin.enabled();
        let waiting_since = if spins { Instant::now() } else { p.now };
        let wait = self.spin.timeout(p.now, waiting_since, p.bound, may_spin);
        // A poll that may block is waiting off the CPU, timed (a spin's zero-timeout polls are the
        // spin's own time).
        let blocking = (!wait.is_zero()).then(Instant::now);
        let polled = poll.poll(events, Some(wait));
        if let Some(t0) = blocking {
            self.waits.blocked += t0.elapsed();
        }
        match polled {
            Err(e) if e.kind() == ErrorKind::Interrupted => return Ok(false),
            Err(e) => return Err(e),
            Ok(()) => {}
        }
        self.spin.polled(!events.is_empty());
        Ok(true)
    }

    /// First takes what is ready without blocking, then naps or blocks on the halfway socket (at
    /// most until the pass's bound), then takes what is ready. Falls back to
    /// [`Wait::wait_for_events`] when the connections do not make a queue.
    fn wait_halfway<C: Connection>(
        &mut self,
        poll: &mut Poll,
        events: &mut Events,
        conns: &[C],
        p: &Pass,
    ) -> io::Result<bool> {
        // Edge-triggered readiness that arrived while the last pass ran is in the poller already.
        if !poll_now(poll, events)? || !events.is_empty() {
            return Ok(true);
        }
        if let Some(nap) = self.deep_nap(p) {
            return self.nap_then_poll(nap, poll, events);
        }
        let Some((fd, bound)) = self.halfway_socket(conns, p.bound) else {
            return self.wait_for_events(poll, events, p);
        };
        if let Some(nap) = self.nap_length(bound, p) {
            return self.nap_then_poll(nap, poll, events);
        }
        let queue = p.outstanding as usize;
        if self.nap.as_ref().is_some_and(|n| queue < n.block_from()) {
            return self.wait_for_events(poll, events, p);
        }
        self.waits.blocks += 1;
        let t0 = Instant::now();
        let blocked = block_on(fd, bound);
        self.waits.blocked += t0.elapsed();
        match blocked {
            Err(e) if e.kind() == ErrorKind::Interrupted => return Ok(false),
            Err(e) => return Err(e),
            Ok(()) => {}
        }
        poll_now(poll, events)
    }

    /// Naps for `nap`, then takes what is ready.
    fn nap_then_poll(
        &mut self,
        nap: Duration,
        poll: &mut Poll,
        events: &mut Events,
    ) -> io::Result<bool> {
        self.waits.naps += 1;
        if let Some(n) = self.nap.as_mut() {
            let t0 = Instant::now();
            n.sleep(nap);
            self.waits.napped += t0.elapsed();
        }
        poll_now(poll, events)
    }

    /// At a deep queue, the nap of a fixed number of responses (`nap.rs`, `DEEP_QUEUE`), at most
    /// the pass's bound: taken before any socket is picked, so a deep queue costs no look at every
    /// connection. A connection still connecting or writing waits at most that nap.
    fn deep_nap(&mut self, p: &Pass) -> Option<Duration> {
        let nap = self.nap.as_mut()?;
        nap.measure(p.last_done, p.complete);
        nap.deep_length(p.outstanding as usize, p.bound)
    }

    /// How long to nap instead of blocking on the halfway socket (at most `bound`), if at all.
    fn nap_length(&mut self, bound: Duration, p: &Pass) -> Option<Duration> {
        let nap = self.nap.as_mut()?;
        nap.measure(p.last_done, p.complete);
        nap.length(p.outstanding as usize, bound)
    }

    /// The socket to block on and for how long (at most `most`); None if some connection's
    /// readiness matters (connecting, or with something to write) or the queue is short.
    fn halfway_socket<C: Connection>(
        &mut self,
        conns: &[C],
        most: Duration,
    ) -> Option<(RawFd, Duration)> {
        self.waiting.clear();
        for c in conns {
            match c.waiting() {
                Waiting::Busy => return None,
                Waiting::Idle => {}
                Waiting::On(sent, fd) => self.waiting.push((sent, fd)),
            }
        }
        pick(&mut self.waiting, most, self.halfway.unwrap_or(MIN_QUEUE))
    }
}

/// Takes the events that are ready without blocking; false when a signal interrupted it.
fn poll_now(poll: &mut Poll, events: &mut Events) -> io::Result<bool> {
    match poll.poll(events, Some(Duration::ZERO)) {
        Err(e) if e.kind() == ErrorKind::Interrupted => Ok(false),
        Err(e) => Err(e),
        Ok(()) => Ok(true),
    }
}

/// Blocks until `fd` is readable (or closed) or `wait` passed.
fn block_on(fd: RawFd, wait: Duration) -> io::Result<()> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: wait.as_secs() as libc::time_t,
        tv_nsec: wait.subsec_nanos() as libc::c_long,
    };
    // SAFETY: one valid pollfd and a valid timespec, both alive across the call; no signal mask.
    let r = unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
