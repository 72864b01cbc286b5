//! One load thread's loop, the same for every protocol: it owns the poller and the connections
//! (`connection.rs`: HTTP/1's or HTTP/2's), the clock, the pacing and the wait, and drives the
//! closed loop (each connection starts its next request as soon as the last one finished) or,
//! with a pacer, the open loop.
//!
//! A pass: look for timeouts (a few times per `--timeout`), and wake the connections whose own
//! timers are due (a protocol that keeps timers: QUIC's); start every slot that asked to be
//! started (its response complete, its connection failed or freed) before the next poll, batching
//! only what is already ready, so the server is never left waiting on the generator; then close the
//! finished connections, whose successors' requests are now out; place the open loop's due sends on
//! idle slots; publish the live counters; wait (`wait.rs`: in the poller, after a spin on a CPU of
//! its own, or halfway down a deep queue); and hand each event to its slot's connection.
//!
//! Per-request work is the connection's: one send and one receive system call per keep-alive
//! request, one clock read for the send time and one kernel arrival stamp for the end time,
//! converted with one clock snapshot per pass. Counters and histograms are per thread and merged
//! at the end; the shared `Live` counters are updated once per pass.

use crate::clock::thread_cpu;
use crate::connection::Connection;
use crate::io::{Io, Ready};
use crate::rates::RateSampler;
use crate::record::Record;
use crate::requests::Requests;
use crate::share::Share;
use crate::shared::Shared;
use crate::view::ViewClock;
use crate::wait::{Pass, Wait};
use mio::{Events, Poll};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use webstand_results::result::{CpuTime, RunResult};
use webstand_results::script::ThreadScript;

/// Connections a thread's timeout sweeps look at per second, at most, once sweeps are 100 ms apart.
const SWEPT_PER_SECOND: u32 = 10_000;
/// The longest a thread blocks in poll, so a stop request is noticed promptly.
const MAX_POLL: Duration = Duration::from_millis(50);
const READ_BUF: usize = 64 * 1024;
/// Events taken from the poller at once (more wait for the next pass).
const EVENTS: usize = 1024;
/// Slots started between two looks at the clock while a large batch starts: opening thousands of
/// connections can take longer than the run (seconds, when the server accepts slowly), and the
/// deadline or a stop must end the run even then.
const STARTS_BETWEEN_CLOCK_READS: usize = 64;

pub(crate) struct Driver<'a, C: Connection> {
    io: Io<'a>,
    conns: Vec<C>,
    th: C::Thread,
    wait: Wait,
    /// The slots being started this pass (the ready list's, taken at the top of the pass).
    batch: Vec<usize>,
    /// Open loop: slots that take a send when one is due, most recently idle last, and whether
    /// each is listed.
    idle: Vec<usize>,
    listed: Vec<bool>,
    /// Open loop: slots that still take sends after a pass's due ones, listed again after it.
    refill: Vec<usize>,
    /// A script's `delay()`: slots waiting to start until their instant, and the slots whose wait
    /// is over (started without asking again).
    delayed: Vec<(Instant, usize)>,
    waited: Vec<bool>,
    /// The thread's index, and when it next copies its view for a watcher (`view.rs`).
    index: usize,
    view: ViewClock,
    /// wrk's request-rate samples (`rates.rs`).
    rates: RateSampler,
}

/// What a load thread hands back: its result, when its part of the run ended, its script.
pub(crate) type ThreadEnd = (RunResult, Instant, Option<Box<dyn ThreadScript>>);

impl<'a, C: Connection> Driver<'a, C> {
    /// Load thread `index` with its share of the connections.
    pub(crate) fn new(
        sh: &'a Shared<'a>,
        index: usize,
        share: Share,
        script: Option<Box<dyn ThreadScript>>,
    ) -> anyhow::Result<Self> {
        let now = sh.start;
        let th = C::thread(sh);
        let clients = share.clients;
        Ok(Driver {
            io: Io {
                sh,
                poll: Poll::new()?,
                buf: vec![0; READ_BUF],
                clock: Default::default(),
                requests: Requests::new(sh, index, &share, script)?,
                record: Record::new(sh.reqs.len()),
                ready: Ready::new(clients),
                retired: Vec::with_capacity(4),
            },
            conns: (0..clients).map(|_| C::new(sh, &th, now)).collect(),
            th,
            wait: Wait::new(sh, C::MULTIPLEXED),
            batch: Vec::with_capacity(clients),
            idle: Vec::with_capacity(clients),
            listed: vec![false; clients],
            refill: Vec::new(),
            delayed: Vec::new(),
            waited: vec![false; clients],
            index,
            view: ViewClock::new(now),
            rates: RateSampler::new(now),
        })
    }

    /// Runs until the budget is spent, the deadline passes or the run is stopped; returns what this
    /// thread measured and when its part of the run ended.
    pub(crate) fn run(mut self) -> anyhow::Result<ThreadEnd> {
        let cpu0 = thread_cpu();
        let mut events = Events::with_capacity(EVENTS);
        let open_loop = self.io.requests.open_loop();
        for slot in 0..self.conns.len() {
            match open_loop {
                true => self.list(self.conns.len() - 1 - slot),
                false => self.io.ready.push(slot),
            }
        }
        let mut sweep = TimeoutSweep::new(self.io.sh.plan.timeout, self.conns.len());
        let end = loop {
            let now = Instant::now();
            if sweep.due(now) {
                self.check_timeouts(now, sweep.timeout);
            }
            if C::TIMERS {
                self.wake_timers(now);
            }
            if !self.delayed.is_empty() {
                self.wake_delayed(now);
            }
            self.start_ready(now);
            self.io.retired.clear();
            let pace_wait = self.pace(now);
            self.io.record.flush(self.io.sh.live);
            if self.view.due(now) {
                self.publish_view(cpu0, false);
            }
            let r = &mut self.io.record.r;
            self.rates.tick(now, r.complete, &mut r.histograms.requests);
            if let Some(end) = self.finished(now) {
                break end;
            }
            let pass = self.pass(now, sweep.next, pace_wait);
            if !self
                .wait
                .wait(&mut self.io.poll, &mut events, &self.conns, &pass)?
            {
                continue;
            }
            self.io.clock.next_pass();
            for ev in events.iter() {
                let slot = ev.token().0;
                let closed = ev.is_read_closed() || ev.is_error();
                let Some(c) = self.conns.get_mut(slot) else {
                    continue;
                };
                c.on_event(
                    &mut self.io,
                    &mut self.th,
                    slot,
                    ev.is_readable() || closed,
                    closed,
                );
                if open_loop {
                    self.list_if_idle(slot);
                }
            }
        };
        self.finish(cpu0, end)
    }

    /// Copies what the thread measured so far for a watcher, if one watches (a few times a second,
    /// and the `last` time as it ends, so the watcher's last reading is the report's count).
    fn publish_view(&self, cpu0: CpuTime, last: bool) {
        let live = self.io.sh.live;
        if !live.watched() {
            return;
        }
        let open = self.conns.iter().filter(|c| c.connected()).count() as u64;
        let cpu = thread_cpu().total().saturating_sub(cpu0.total());
        let busy = cpu.saturating_sub(self.wait.spun());
        live.publish(self.index, last, |v| {
            self.io.record.fill_view(v, open, busy)
        });
    }

    /// Starts every slot that asked to be (closed loop), or lists it as idle for the pacer's sends
    /// (open loop; one that holds requests of its own to send again is started).
    fn start_ready(&mut self, now: Instant) {
        // A script that stopped the thread (or failed) sends nothing more.
        if self.io.ready.is_empty() || self.io.requests.script_ended() {
            return;
        }
        // Only the slots ready now: one that fails at once (refused) waits for the next round.
        let mut batch = std::mem::take(&mut self.batch);
        self.io.ready.take(&mut batch);
        let open_loop = self.io.requests.open_loop();
        let delays = self.io.requests.delays();
        for (i, &slot) in batch.iter().enumerate() {
            if i % STARTS_BETWEEN_CLOCK_READS == 0
                && batch.len() > STARTS_BETWEEN_CLOCK_READS
                && self.finished(Instant::now()).is_some()
            {
                // The rest wait, listed, for a pass that will not come: the run is over.
                for &rest in &batch[i..] {
                    self.io.ready.push(rest);
                }
                break;
            }
            if delays && !std::mem::take(&mut self.waited[slot]) {
                let wait = self.io.requests.delay();
                if !wait.is_zero() {
                    self.delayed.push((now + wait, slot));
                    continue;
                }
            }
            if !(open_loop && self.conns[slot].takes_more(&self.th)) {
                self.conns[slot].start(&mut self.io, &mut self.th, slot, now);
            }
            if open_loop {
                self.list_if_idle(slot);
            }
        }
        batch.clear();
        self.batch = batch;
    }

    /// Open loop: puts every send that is due on an idle slot; returns how long until the next one,
    /// or None while no slot is idle (a freed connection's event ends the wait).
    fn pace(&mut self, now: Instant) -> Option<Duration> {
        if !self.io.requests.open_loop() {
            return None;
        }
        while self.io.requests.due(now) {
            let Some(slot) = self.idle.pop() else { break };
            self.listed[slot] = false;
            self.conns[slot].start(&mut self.io, &mut self.th, slot, now);
            if self.conns[slot].takes_more(&self.th) {
                self.refill.push(slot);
            }
        }
        while let Some(slot) = self.refill.pop() {
            self.list_if_idle(slot);
        }
        if self.idle.is_empty() {
            return None; // waiting for a connection to free up (or for the last responses)
        }
        self.io.requests.pace_wait(now)
    }

    fn list(&mut self, slot: usize) {
        self.listed[slot] = true;
        self.idle.push(slot);
    }

    fn list_if_idle(&mut self, slot: usize) {
        if !self.listed[slot] && self.conns[slot].takes_more(&self.th) {
            self.list(slot);
        }
    }

    fn check_timeouts(&mut self, now: Instant, timeout: Duration) {
        for slot in 0..self.conns.len() {
            self.conns[slot].check_timeout(&mut self.io, &mut self.th, slot, now, timeout);
        }
    }

    /// Wakes every connection whose own timer is due (`Connection::TIMERS`).
    fn wake_timers(&mut self, now: Instant) {
        for slot in 0..self.conns.len() {
            if self.conns[slot].timer().is_some_and(|t| t <= now) {
                self.conns[slot].on_timer(&mut self.io, &mut self.th, slot, now);
            }
        }
    }

    /// A script's `delay()`: the slots whose wait is over are started at this pass.
    fn wake_delayed(&mut self, now: Instant) {
        let (ready, waited) = (&mut self.io.ready, &mut self.waited);
        self.delayed.retain(|&(at, slot)| {
            let due = at <= now;
            if due {
                waited[slot] = true;
                ready.push(slot);
            }
            !due
        });
    }

    /// When this thread's part of the run is over: the moment it ended.
    fn finished(&self, now: Instant) -> Option<Instant> {
        let sh = self.io.sh;
        if sh.live.stop.load(Ordering::Relaxed) || sh.reach.ended().is_some() {
            return Some(now);
        }
        if self.io.requests.script_ended() {
            return Some(now);
        }
        if let Some(deadline) = sh.deadline.filter(|d| now >= *d) {
            return Some(deadline);
        }
        let r = &self.io.requests;
        r.spent().then(|| r.last_done())
    }

    /// What the wait needs to know of this pass; its bound is not past a timeout check, the
    /// deadline, a paced send or a connection's own timer, and zero while a slot waits to be
    /// started.
    fn pass(&self, now: Instant, next_check: Instant, pace_wait: Option<Duration>) -> Pass {
        let ready = !self.io.ready.is_empty();
        let bound = if ready {
            Duration::ZERO
        } else {
            let mut wait = MAX_POLL.min(next_check.saturating_duration_since(now));
            if let Some(d) = self.io.sh.deadline {
                wait = wait.min(d.saturating_duration_since(now));
            }
            if C::TIMERS {
                if let Some(t) = self.conns.iter().filter_map(C::timer).min() {
                    wait = wait.min(t.saturating_duration_since(now));
                }
            }
            if let Some(&(at, _)) = self.delayed.iter().min() {
                wait = wait.min(at.saturating_duration_since(now));
            }
            pace_wait.map_or(wait, |p| wait.min(p))
        };
        let outstanding = self.io.requests.outstanding();
        Pass {
            now,
            bound,
            open_loop: self.io.requests.open_loop(),
            ready,
            outstanding,
            queue: C::queue(&self.conns, outstanding),
            complete: self.io.record.r.complete,
            server_closes: self.io.record.server_closes,
            last_done: self.io.requests.last_done(),
        }
    }

    /// The thread's result: what it counted, its own CPU time, its connections closed (whatever is
    /// still in flight is abandoned: the result covers what finished).
    fn finish(mut self, cpu0: CpuTime, end: Instant) -> anyhow::Result<ThreadEnd> {
        self.publish_view(cpu0, true);
        C::finish(&mut self.conns, self.th, &mut self.io.record.r);
        let r = self.io.record.finish(
            self.io.sh.live,
            cpu0,
            self.wait.spun(),
            self.wait.halfway_waits(),
            self.io.requests.late_sends(),
        );
        let script = self.io.requests.finish_script()?;
        Ok((r, end, script))
    }
}

/// When the loop next looks for requests past `--timeout`: four times per timeout, 1 to 100 ms
/// apart, and further apart with more than [`SWEPT_PER_SECOND`]'s worth of connections, so that a
/// thread's sweeps cost the same whatever its crowd (each looks at every connection: at 15,000
/// connections ten sweeps a second were most of the thread's cache misses but the kernel's). A
/// request past its timeout is still failed within a quarter of the timeout.
struct TimeoutSweep {
    timeout: Duration,
    every: Duration,
    next: Instant,
}

impl TimeoutSweep {
    fn new(timeout: Duration, conns: usize) -> TimeoutSweep {
        let timeout = timeout.max(Duration::from_millis(1));
        let crowd =
            Duration::from_secs(1) * u32::try_from(conns).unwrap_or(u32::MAX) / SWEPT_PER_SECOND;
        let longest = crowd.max(Duration::from_millis(100));
        let every = (timeout / 4).clamp(Duration::from_millis(1), longest);
        TimeoutSweep {
            timeout,
            every,
            next: Instant::now() + every,
        }
    }

    /// Whether a sweep is due at `now`; if so, the next one is scheduled from `now`.
    fn due(&mut self, now: Instant) -> bool {
        let due = now >= self.next;
        if due {
            self.next = now + self.every;
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_come_four_per_timeout_and_further_apart_for_a_crowd() {
        let (ms, secs) = (Duration::from_millis, Duration::from_secs);
        assert_eq!(TimeoutSweep::new(secs(30), 32).every, ms(100));
        assert_eq!(TimeoutSweep::new(secs(30), 1000).every, ms(100));
        assert_eq!(TimeoutSweep::new(secs(30), 15_000).every, ms(1500));
        assert_eq!(
            TimeoutSweep::new(secs(2), 15_000).every,
            ms(500),
            "a quarter"
        );
        assert_eq!(TimeoutSweep::new(ms(2), 15_000).every, ms(1));
    }
}
