//! One load thread's event loop: a mio poller over the thread's own connections, driving the closed
//! loop (each connection sends its next request as soon as the last one finished) or, with a
//! [`Pacer`], the open loop.
//!
//! The loop never waits on purpose: it blocks in the poller only when no socket is ready (on a CPU
//! of its own it first spins a few microseconds, `spin.rs`, so the server is not charged a wake-up;
//! over keep-alive with a deep queue it blocks on one socket halfway down it, `halfway.rs`),
//! and a response's completion starts the next request on its connection in the same pass, so the
//! server is never left waiting on the generator. Per-request work is kept to one send and one receive
//! system call (edge-triggered polling; a short read ends a socket's read loop instead of a read that
//! would only say "would block"), one clock read for the send time and one kernel arrival stamp for
//! the end time (converted with one clock snapshot per pass). Counters and histograms are per
//! thread and merged at the end; the shared `Live` counters are updated once per pass.

use crate::clock::{thread_cpu, StampClock};
use crate::conn::{Class, Conn, InFlight};
use crate::pacer::Pacer;
use crate::run::{Share, Shared};
use crate::spin::Spin;
use crate::{Pick, RunResult, Shape};
use mio::{Events, Poll};
use rand::distributions::{Distribution, WeightedIndex};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::io::{self, ErrorKind};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The longest a thread blocks in poll, so a stop request is noticed promptly.
const MAX_POLL: Duration = Duration::from_millis(50);
const READ_BUF: usize = 64 * 1024;
/// Events taken from the poller at once (more wait for the next pass).
const EVENTS: usize = 1024;

/// When a loop next looks for requests past `--timeout`: four times per timeout, 1 to 100 ms apart
/// (one schedule for the HTTP/1 and the HTTP/2 loop).
pub(crate) struct TimeoutSweep {
    pub(crate) timeout: Duration,
    every: Duration,
    pub(crate) next: Instant,
}

impl TimeoutSweep {
    pub(crate) fn new(timeout: Duration) -> TimeoutSweep {
        let timeout = timeout.max(Duration::from_millis(1));
        let every = (timeout / 4).clamp(Duration::from_millis(1), Duration::from_millis(100));
        TimeoutSweep {
            timeout,
            every,
            next: Instant::now() + every,
        }
    }

    /// Whether a sweep is due at `now`; if so, the next one is scheduled from `now`.
    pub(crate) fn due(&mut self, now: Instant) -> bool {
        let due = now >= self.next;
        if due {
            self.next = now + self.every;
        }
        due
    }
}

pub(crate) struct Worker<'a> {
    pub sh: &'a Shared<'a>,
    pub poll: Poll,
    pub conns: Vec<Conn>,
    /// The one read buffer of this thread.
    pub buf: Vec<u8>,
    pub r: RunResult,
    /// Requests this thread may still start (None: until the deadline).
    pub budget: Option<u64>,
    /// Requests started and not yet finished (retries do not count twice).
    pub outstanding: u64,
    /// Slots that need their next request started (deferred so failures never recurse).
    pub ready: Vec<usize>,
    ready_batch: Vec<usize>,
    /// Finished connections, closed once their slots' next requests are on their way.
    pub retired: Vec<crate::transport::Transport>,
    /// Open loop: slots with nothing to do.
    pub idle: Vec<usize>,
    pub pacer: Option<Pacer>,
    /// How the loop waits once every request it has is at the server (HTTP/1's and `h2_worker`'s).
    spin: Spin,
    /// Keep-alive under `--spin auto`: the queue at which to wait halfway down it (`halfway.rs`).
    pub halfway: Option<usize>,
    /// HTTP/1 with a halfway wait: naps instead of the block once the pace is known, over
    /// plaintext only below `halfway::NAP_BELOW_PLAIN` in flight (`halfway.rs`).
    pub nap: Option<crate::halfway::Nap>,
    /// How often this thread waited halfway (`halfway.rs`), for the result.
    pub halfway_waits: crate::HalfwayWaits,
    /// Keep-alive connections the server closed, after a response that said so or before the
    /// next one (`halfway.rs` waits only on a server that keeps them open).
    pub server_closes: u64,
    /// `halfway.rs`'s scratch list of the connections waiting on responses.
    pub waiting: Vec<(Instant, std::os::fd::RawFd)>,
    pub rng: SmallRng,
    weighted: Option<WeightedIndex<u32>>,
    pub last_done: Instant,
    /// This pass's clock snapshot for kernel arrival stamps, taken at the first stamp it converts.
    pub stamps: Option<StampClock>,
    /// Requests on reused connections (connect time 0), recorded at the end.
    pub zero_connects: u64,
    // Deltas not yet added to the shared Live counters.
    pub live_complete: u64,
    pub live_failed: u64,
    pub live_non_2xx: u64,
    pub live_bytes: u64,
}

impl<'a> Worker<'a> {
    pub(crate) fn new(
        sh: &'a Shared<'a>,
        index: usize,
        share: Share,
    ) -> anyhow::Result<Worker<'a>> {
        let now = sh.start;
        let seed = match &sh.plan.pick {
            Pick::Single => 0,
            Pick::Uniform { seed } | Pick::Weighted { seed, .. } => *seed,
        };
        let weighted = match &sh.plan.pick {
            Pick::Weighted { weights, .. } => Some(WeightedIndex::new(weights.iter().copied())?),
            _ => None,
        };
        let pacer = match sh.plan.shape {
            Shape::Open { jitter, .. } if share.rate > 0.0 => {
                Some(Pacer::new(now, share.rate, jitter))
            }
            _ => None,
        };
        Ok(Worker {
            sh,
            poll: Poll::new()?,
            conns: (0..share.clients)
                .map(|_| {
                    let mut c = Conn::new(now, sh.pipeline, sh.reach.addr());
                    c.parser = sh.protocol.reader();
                    c.parser.verbosity = sh.plan.verbosity;
                    c
                })
                .collect(),
            buf: vec![0; READ_BUF],
            r: RunResult {
                per_request: vec![0; sh.reqs.len()],
                ..Default::default()
            },
            budget: share.requests,
            outstanding: 0,
            ready: Vec::with_capacity(share.clients),
            ready_batch: Vec::with_capacity(share.clients),
            retired: Vec::with_capacity(4),
            idle: Vec::with_capacity(share.clients),
            pacer,
            spin: Spin::new(sh.spin),
            halfway: crate::halfway::min_queue(
                sh.tls.is_some(),
                false,
                sh.keep_alive,
                sh.plan.spin,
            ),
            nap: Some(crate::halfway::Nap::new(sh.tls.is_some())),
            halfway_waits: crate::HalfwayWaits::default(),
            server_closes: 0,
            waiting: Vec::new(),
            rng: SmallRng::seed_from_u64(seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            weighted,
            last_done: now,
            stamps: None,
            zero_connects: 0,
            live_complete: 0,
            live_failed: 0,
            live_non_2xx: 0,
            live_bytes: 0,
        })
    }

    /// Runs until the budget is spent, the deadline passes or the run is stopped; returns what this
    /// thread measured and when its part of the run ended.
    pub(crate) fn run(mut self) -> anyhow::Result<(RunResult, Instant)> {
        let cpu0 = thread_cpu();
        let mut events = Events::with_capacity(EVENTS);
        if self.pacer.is_some() {
            self.idle.extend((0..self.conns.len()).rev());
        } else {
            self.ready.extend(0..self.conns.len());
        }
        let mut sweep = TimeoutSweep::new(self.sh.plan.timeout);
        let end = loop {
            let now = Instant::now();
            if sweep.due(now) {
                self.check_timeouts(now, sweep.timeout);
            }
            // Every slot this poll's events completed starts its next request now, before the next
            // poll (batching only what is already ready; nothing waits). Closing the finished
            // connections after that gets their successors' requests to the server a close() sooner.
            self.start_ready();
            self.retired.clear();
            let pace_wait = self.pace(now);
            self.flush_live();
            if let Some(end) = self.finished(now) {
                break end;
            }
            let waited = if self.may_wait_halfway(self.outstanding as usize) {
                self.wait_halfway(&mut events, now, sweep.next, Self::receiving)?
            } else {
                self.wait_for_events(&mut events, now, sweep.next, pace_wait)?
            };
            if !waited {
                continue;
            }
            self.stamps = None;
            for ev in events.iter() {
                let slot = ev.token().0;
                let closed = ev.is_read_closed() || ev.is_error();
                self.on_event(slot, ev.is_readable() || closed, closed);
            }
        };
        Ok(self.finish(cpu0, end))
    }

    /// When this thread's part of the run is over: the moment it ended.
    pub(crate) fn finished(&self, now: Instant) -> Option<Instant> {
        if self.sh.live.stop.load(Ordering::Relaxed) || self.sh.reach.ended().is_some() {
            return Some(now);
        }
        if let Some(deadline) = self.sh.deadline.filter(|d| now >= *d) {
            return Some(deadline);
        }
        (self.budget == Some(0) && self.outstanding == 0).then_some(self.last_done)
    }

    /// Polls for events, blocking no longer than [`Worker::poll_wait`] allows and, once every request
    /// is at the server in a closed loop, spinning first as `spin.rs` decides (HTTP/1's loop and
    /// `h2_worker`'s). False when a signal interrupted the poll: the caller's loop goes round again.
    pub(crate) fn wait_for_events(
        &mut self,
        events: &mut Events,
        now: Instant,
        next_check: Instant,
        pace_wait: Option<Duration>,
    ) -> io::Result<bool> {
        let wait = self.poll_wait(now, next_check, pace_wait);
        let may_spin = self.pacer.is_none() && self.outstanding > 0;
        // `now` was read at the top of the pass, before its sends: a spin's wait begins here.
        let spins = may_spin && self.spin.enabled();
        let waiting_since = if spins { Instant::now() } else { now };
        let wait = self.spin.timeout(now, waiting_since, wait, may_spin);
        // A poll that may block is waiting off the CPU: timed (a spin's polls are the spin's).
        let blocking = (!wait.is_zero()).then(Instant::now);
        let polled = self.poll.poll(events, Some(wait));
        if let Some(t0) = blocking {
            self.halfway_waits.blocked += t0.elapsed();
        }
        match polled {
            Err(e) if e.kind() == ErrorKind::Interrupted => return Ok(false),
            Err(e) => return Err(e),
            Ok(()) => {}
        }
        self.spin.polled(!events.is_empty());
        Ok(true)
    }

    /// How long the next poll may block: not past a timeout check, the deadline or a paced send, and
    /// not at all while a slot waits to be started.
    pub(crate) fn poll_wait(
        &self,
        now: Instant,
        next_check: Instant,
        pace_wait: Option<Duration>,
    ) -> Duration {
        if !self.ready.is_empty() {
            return Duration::ZERO;
        }
        let mut wait = MAX_POLL.min(next_check.saturating_duration_since(now));
        if let Some(d) = self.sh.deadline {
            wait = wait.min(d.saturating_duration_since(now));
        }
        pace_wait.map_or(wait, |p| wait.min(p))
    }

    /// The thread's result: what it counted, its own CPU time, its connections closed.
    pub(crate) fn finish(mut self, cpu0: crate::CpuTime, end: Instant) -> (RunResult, Instant) {
        self.flush_live();
        self.r
            .histograms
            .connect
            .saturating_record_n(0, self.zero_connects);
        let cpu = thread_cpu();
        self.r.cpu = crate::CpuTime {
            user: cpu.user.saturating_sub(cpu0.user),
            sys: cpu.sys.saturating_sub(cpu0.sys),
        };
        self.r.thread_cpu = vec![self.r.cpu];
        self.r.thread_spin = vec![self.spin.spun()];
        self.r.thread_waits = vec![self.halfway_waits];
        // Whatever is still in flight is abandoned: the result covers what finished.
        for c in &mut self.conns {
            c.stream = None;
        }
        (self.r, end)
    }

    pub(crate) fn flush_live(&mut self) {
        let l = self.sh.live;
        if self.live_complete > 0 {
            l.complete
                .fetch_add(std::mem::take(&mut self.live_complete), Ordering::Relaxed);
        }
        if self.live_failed > 0 {
            l.failed
                .fetch_add(std::mem::take(&mut self.live_failed), Ordering::Relaxed);
        }
        if self.live_non_2xx > 0 {
            l.non_2xx
                .fetch_add(std::mem::take(&mut self.live_non_2xx), Ordering::Relaxed);
        }
        if self.live_bytes > 0 {
            l.bytes
                .fetch_add(std::mem::take(&mut self.live_bytes), Ordering::Relaxed);
        }
    }

    /// Takes up to `n` requests from the budget; returns how many were granted.
    pub(crate) fn take_budget(&mut self, n: u64) -> u64 {
        let n = match &mut self.budget {
            None => n,
            Some(left) => {
                let k = n.min(*left);
                *left -= k;
                k
            }
        };
        self.outstanding += n;
        n
    }

    pub(crate) fn pick(&mut self) -> usize {
        match &self.sh.plan.pick {
            Pick::Single => 0,
            Pick::Uniform { .. } => self.rng.gen_range(0..self.sh.reqs.len()),
            Pick::Weighted { .. } => self
                .weighted
                .as_ref()
                .map_or(0, |w| w.sample(&mut self.rng)),
        }
    }

    /// Starts the next request(s) on every slot that finished (closed loop) or parks it (open loop).
    fn start_ready(&mut self) {
        if self.ready.is_empty() {
            return;
        }
        // Only the slots ready now: one that fails at once (refused) waits for the next round.
        let mut batch = std::mem::replace(&mut self.ready, std::mem::take(&mut self.ready_batch));
        for slot in batch.drain(..) {
            if !self.conns[slot].inflight.is_empty() {
                self.send(slot, Instant::now()); // retry what a closed keep-alive connection left unanswered
            } else if self.pacer.is_some() {
                self.idle.push(slot);
            } else {
                let n = self.take_budget(self.sh.pipeline as u64);
                if n > 0 {
                    let now = Instant::now();
                    for _ in 0..n {
                        let req = self.pick();
                        self.conns[slot]
                            .inflight
                            .push_back(InFlight { req, start: now });
                    }
                    self.send(slot, now);
                }
            }
        }
        self.ready_batch = batch;
    }

    fn check_timeouts(&mut self, now: Instant, timeout: Duration) {
        for slot in 0..self.conns.len() {
            let c = &self.conns[slot];
            if c.busy() && now.saturating_duration_since(c.last_progress) > timeout {
                let (class, msg) = match c.phase {
                    crate::conn::Phase::Connecting => (Class::Connect, "connect timed out"),
                    _ => (Class::Exceptions, "timed out waiting for the response"),
                };
                self.fail(slot, class, &io::Error::new(ErrorKind::TimedOut, msg));
            }
        }
    }
}
