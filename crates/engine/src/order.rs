//! With a new connection per request, the order in which a pass opens its connections and writes
//! their requests, chosen per run by measuring both (issue 18; docs/BENCHMARKS.md, session 11).
//!
//! Why both: a server that wakes on a request's arrival (TCP_DEFER_ACCEPT, as `webstand serve`)
//! costs the generator less when a pass's requests leave together after all its connects (they
//! find it awake); a server that accepts at the handshake (nginx) is then woken a second time for
//! each request, and costs the generator 17–30 % more that way. A generator cannot tell the kinds
//! apart without measuring, so each load thread runs short windows of each order, keeps the one
//! with the lower CPU per completed request unless it completes fewer per second, and re-checks it
//! about once a second, so a run whose server changes behaviour follows it.
//!
//! [`Chooser`] is the decision alone (fed each window's CPU time, completions and length, it answers
//! the next window's order: no clock, unit-tested); [`Windows`] cuts a load thread's run into them.

use std::time::{Duration, Instant};

/// How a pass opens its new connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// Each request written right after its connection's connect (wrk's and ab's order).
    Paired,
    /// All of the pass's connects first, then all its requests (over TLS, their ClientHellos: the
    /// request itself always waits for the handshake).
    Split,
}

impl Order {
    fn other(self) -> Order {
        match self {
            Order::Paired => Order::Split,
            Order::Split => Order::Paired,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One window's length. The orders differ by 10–30 % in CPU per request; a 1 s window's noise here
/// is 2–12 %, so several short windows of each, alternated, are compared rather than one long one.
pub(crate) const WINDOW: Duration = Duration::from_millis(20);
/// Windows of the kept order between two re-checks (about a second).
const SETTLED: u32 = 50;
/// The first trial's blocks at most, each paired, split, split, paired (drift cancels within one).
const TRIAL_BLOCKS: u32 = 4;
const BLOCK: [Order; 4] = [Order::Paired, Order::Split, Order::Split, Order::Paired];
/// Windows of the kept order summed to watch it against the order it beat: an order whose cost
/// builds up only after a while (split against nginx at 256 connections: cheap for its first 60 ms,
/// then 30 % dearer) is re-checked as soon as it is seen, not a second later.
const WATCH: u32 = 3;
/// A gap of this share of the dearer order's figure is clear: enough to decide before the trial's
/// end, or to switch at a re-check (one window of the other order is noisier than a trial).
const CLEAR: f64 = 0.05;

/// What the windows of one order added up to.
#[derive(Clone, Copy, Debug, Default)]
struct Sums {
    cpu: Duration,
    completions: u64,
    wall: Duration,
}

impl Sums {
    fn cpu_per_completion(&self) -> f64 {
        self.cpu.as_secs_f64() / self.completions.max(1) as f64
    }

    fn rate(&self) -> f64 {
        self.completions as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// The run's first window, paired and not compared: it opens every connection at once.
    WarmUp,
    /// Alternating windows: `step` into [`BLOCK`], `blocks` finished.
    Trial { step: usize, blocks: u32 },
    /// The kept order, for `left` more windows before a re-check.
    Settled { left: u32 },
    /// A re-check: the kept order's last window is measured, then one window of the other order
    /// (`step` 0), then one of the kept order again (`step` 1).
    Probe { step: u32 },
}

/// The decision: which order the next window runs.
#[derive(Debug)]
pub(crate) struct Chooser {
    stage: Stage,
    /// The order the current window runs.
    current: Order,
    /// The order kept after the last decision (paired until the first one).
    kept: Order,
    sums: [Sums; 2],
    /// What the order not kept measured when it lost.
    rival: Sums,
    /// Windows of the kept order in `sums` since the last watch.
    watched: u32,
    /// Windows run in each order, for the result.
    ran: [u64; 2],
}

impl Default for Chooser {
    fn default() -> Chooser {
        Chooser {
            stage: Stage::WarmUp,
            current: Order::Paired,
            kept: Order::Paired,
            sums: [Sums::default(); 2],
            rival: Sums::default(),
            watched: 0,
            ran: [0; 2],
        }
    }
}

impl Chooser {
    /// The order the current window runs.
    pub(crate) fn order(&self) -> Order {
        self.current
    }

    /// Windows run so far: (paired, split).
    pub(crate) fn ran(&self) -> (u64, u64) {
        (self.ran[0], self.ran[1])
    }

    /// The current window ended, having used `cpu` of the thread's time for `completions` requests
    /// over `wall`; answers the order of the next window.
    pub(crate) fn window(&mut self, cpu: Duration, completions: u64, wall: Duration) -> Order {
        let ran = self.current;
        self.ran[ran.index()] += 1;
        let measured = Sums {
            cpu,
            completions,
            wall,
        };
        match self.stage {
            Stage::WarmUp => self.trial(0, 0),
            Stage::Trial { step, blocks } => {
                self.add(ran, measured);
                if step + 1 < BLOCK.len() {
                    self.trial(step + 1, blocks);
                } else {
                    let blocks = blocks + 1;
                    match verdict(&self.sums, blocks == TRIAL_BLOCKS) {
                        Some(order) => self.keep(order),
                        None => self.trial(0, blocks),
                    }
                }
            }
            Stage::Settled { left } => {
                self.add(ran, measured);
                self.watched += 1;
                if left > 1 && !self.drifted() {
                    self.stage = Stage::Settled { left: left - 1 };
                    if self.watched == WATCH {
                        (self.sums, self.watched) = ([Sums::default(); 2], 0);
                    }
                } else {
                    // The kept order's last window is the re-check's first.
                    self.sums = [Sums::default(); 2];
                    self.add(ran, measured);
                    self.stage = Stage::Probe { step: 0 };
                    self.current = self.kept.other();
                }
            }
            Stage::Probe { step: 0 } => {
                self.add(ran, measured);
                self.stage = Stage::Probe { step: 1 };
                self.current = self.kept;
            }
            Stage::Probe { .. } => {
                self.add(ran, measured);
                self.keep(verdict(&self.sums, false).unwrap_or(self.kept));
            }
        }
        self.current
    }

    fn trial(&mut self, step: usize, blocks: u32) {
        if step == 0 && blocks == 0 {
            self.sums = [Sums::default(); 2];
        }
        self.stage = Stage::Trial { step, blocks };
        self.current = BLOCK[step];
    }

    fn keep(&mut self, order: Order) {
        self.rival = self.sums[order.other().index()];
        (self.sums, self.watched) = ([Sums::default(); 2], 0);
        self.kept = order;
        self.current = order;
        self.stage = Stage::Settled { left: SETTLED };
    }

    /// Whether the kept order's last [`WATCH`] windows cost clearly more per completion than the
    /// order it beat did.
    fn drifted(&self) -> bool {
        let kept = &self.sums[self.kept.index()];
        self.watched == WATCH
            && self.rival.completions > 0
            && self.rival.cpu_per_completion() < kept.cpu_per_completion() * (1.0 - CLEAR)
    }

    fn add(&mut self, order: Order, w: Sums) {
        let s = &mut self.sums[order.index()];
        s.cpu += w.cpu;
        s.completions += w.completions;
        s.wall += w.wall;
    }
}

/// The order the measurements favour: the one with the lower CPU per completion, unless it
/// completes clearly fewer per second (requests/s must not drop for CPU), then the faster one. None
/// when the gap is not clear and `last` does not force a decision. Completions per window are the
/// noisier figure (a window holds a few rounds of the connections, cut anywhere), so a lower rate
/// never decides before the trial's end, and a gap within [`CLEAR`] counts as not lower.
fn verdict(sums: &[Sums; 2], last: bool) -> Option<Order> {
    let [paired, split] = sums;
    let (cheap, dear) = if split.cpu_per_completion() < paired.cpu_per_completion() {
        (Order::Split, Order::Paired)
    } else {
        (Order::Paired, Order::Split)
    };
    let (c, d) = (&sums[cheap.index()], &sums[dear.index()]);
    if c.rate() < d.rate() * (1.0 - CLEAR) {
        return last.then_some(dear);
    }
    (last || c.cpu_per_completion() < d.cpu_per_completion() * (1.0 - CLEAR)).then_some(cheap)
}

/// A load thread's run cut into [`WINDOW`]s for its [`Chooser`]: each measured by the thread's own
/// CPU clock and completion count when it ends. After the run's start and after each change of
/// order, a round of the connections (one completion each, or a window's time if they stall) runs
/// unmeasured first: requests sent in the old order complete in it, and its CPU is the change's.
pub(crate) struct Windows {
    chooser: Chooser,
    clients: u64,
    /// Unmeasured until the thread's completions reach this count (or `end` passes).
    settling: Option<u64>,
    started: Instant,
    end: Instant,
    cpu0: Duration,
    completions0: u64,
}

impl Windows {
    pub(crate) fn new(now: Instant, clients: usize) -> Windows {
        Windows {
            chooser: Chooser::default(),
            clients: clients as u64,
            settling: Some(clients as u64),
            started: now,
            end: now + WINDOW,
            cpu0: Duration::ZERO,
            completions0: 0,
        }
    }

    fn measure_from(&mut self, now: Instant, cpu: Duration, completions: u64) {
        (self.started, self.end, self.cpu0) = (now, now + WINDOW, cpu);
        self.completions0 = completions;
    }

    /// The order this pass opens its connections in.
    pub(crate) fn order(&self) -> Order {
        self.chooser.order()
    }

    /// At a pass's start (`now`), with `completions` the thread's count so far: ends the window if
    /// its time is up and starts the next.
    pub(crate) fn tick(&mut self, now: Instant, completions: u64) {
        if let Some(until) = self.settling {
            if completions >= until || now >= self.end {
                self.settling = None;
                self.measure_from(now, crate::clock::thread_cpu_now(), completions);
            }
            return;
        }
        if now < self.end {
            return;
        }
        let cpu = crate::clock::thread_cpu_now();
        let was = self.chooser.order();
        let next = self.chooser.window(
            cpu.saturating_sub(self.cpu0),
            completions - self.completions0,
            now - self.started,
        );
        self.measure_from(now, cpu, completions);
        if next != was {
            self.settling = Some(completions + self.clients);
        }
    }

    /// Windows run in each order, for the result.
    pub(crate) fn ran(&self) -> crate::OrderWindows {
        let (paired, split) = self.chooser.ran();
        crate::OrderWindows { paired, split }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS20: Duration = WINDOW;

    /// Feeds windows in which paired costs `paired_us` and split `split_us` per completion, with
    /// `paired_n` and `split_n` completions per window, until `windows` have run; returns the
    /// orders the windows ran.
    fn drive(
        c: &mut Chooser,
        windows: usize,
        (paired_us, paired_n): (u64, u64),
        (split_us, split_n): (u64, u64),
    ) -> Vec<Order> {
        let mut ran = Vec::new();
        for _ in 0..windows {
            let order = c.order();
            ran.push(order);
            let (us, n) = match order {
                Order::Paired => (paired_us, paired_n),
                Order::Split => (split_us, split_n),
            };
            c.window(Duration::from_micros(us * n), n, MS20);
        }
        ran
    }

    fn settles_on(c: &Chooser) -> Option<Order> {
        matches!(c.stage, Stage::Settled { .. }).then_some(c.kept)
    }

    #[test]
    fn a_clear_gap_decides_after_one_block() {
        // Split 10 % cheaper at the same pace: one warm-up and one block, then split is kept.
        let mut c = Chooser::default();
        let ran = drive(&mut c, 5, (20, 1000), (18, 1000));
        let block = [Order::Split, Order::Split, Order::Paired];
        assert_eq!(ran, [&[Order::Paired, Order::Paired][..], &block].concat());
        assert_eq!(settles_on(&c), Some(Order::Split));
        // And the other way round (nginx's case): paired is kept.
        let mut c = Chooser::default();
        drive(&mut c, 5, (16, 1000), (20, 1000));
        assert_eq!(settles_on(&c), Some(Order::Paired));
    }

    #[test]
    fn a_cheaper_order_that_completes_fewer_is_not_kept() {
        // Split costs less per request but completes 20 % fewer per second: paired stays, decided
        // at the trial's end (a window's completions are too noisy to decide on sooner).
        let mut c = Chooser::default();
        let trial = 1 + BLOCK.len() * TRIAL_BLOCKS as usize;
        drive(&mut c, trial - 1, (20, 1000), (18, 800));
        assert_eq!(settles_on(&c), None);
        drive(&mut c, 1, (20, 1000), (18, 800));
        assert_eq!(settles_on(&c), Some(Order::Paired));
        // Within 5 % is not lower: the cheaper order is kept after one block.
        let mut c = Chooser::default();
        drive(&mut c, 5, (20, 1000), (18, 970));
        assert_eq!(settles_on(&c), Some(Order::Split));
    }

    #[test]
    fn no_clear_gap_runs_every_block_then_takes_the_cheaper() {
        let mut c = Chooser::default();
        let trial = 1 + BLOCK.len() * TRIAL_BLOCKS as usize;
        drive(&mut c, trial - 1, (40, 1000), (39, 995));
        assert_eq!(
            settles_on(&c),
            None,
            "decided on a 2.5 % gap before the trial's end"
        );
        drive(&mut c, 1, (40, 1000), (39, 995));
        assert_eq!(settles_on(&c), Some(Order::Split));
        let (paired, split) = c.ran();
        assert_eq!(
            (paired, split),
            (1 + 2 * TRIAL_BLOCKS as u64, 2 * TRIAL_BLOCKS as u64)
        );
    }

    #[test]
    fn a_recheck_follows_a_server_that_changed() {
        let mut c = Chooser::default();
        drive(&mut c, 5, (20, 1000), (17, 1000));
        assert_eq!(settles_on(&c), Some(Order::Split));
        // A second later split has become the dearer order: the re-check's one paired window
        // between two split ones switches back.
        let ran = drive(&mut c, SETTLED as usize + 2, (16, 1000), (20, 1000));
        assert_eq!(ran[SETTLED as usize], Order::Paired, "{ran:?}");
        assert_eq!(settles_on(&c), Some(Order::Paired));
        // A server that did not change keeps the order through its re-checks.
        let ran = drive(&mut c, 3 * (SETTLED as usize + 2), (16, 1000), (20, 1000));
        assert_eq!(ran.iter().filter(|&&o| o == Order::Split).count(), 3);
        assert_eq!(settles_on(&c), Some(Order::Paired));
    }

    #[test]
    fn a_kept_order_that_grows_dear_is_rechecked_at_once() {
        // Split wins the first block, then costs 30 % more (nginx at 256 connections): the watch
        // sees it after WATCH windows, one paired window re-checks, and paired is kept.
        let mut c = Chooser::default();
        drive(&mut c, 5, (20, 1000), (18, 1000));
        assert_eq!(settles_on(&c), Some(Order::Split));
        let ran = drive(&mut c, WATCH as usize + 2, (20, 1000), (26, 1000));
        assert_eq!(ran[WATCH as usize], Order::Paired, "{ran:?}");
        assert_eq!(settles_on(&c), Some(Order::Paired));
        // A kept order as cheap as it was is not re-checked before its second.
        let ran = drive(&mut c, SETTLED as usize - 1, (20, 1000), (26, 1000));
        assert!(ran.iter().all(|&o| o == Order::Paired), "{ran:?}");
    }

    #[test]
    fn a_window_without_completions_is_dear_not_a_fault() {
        // A server that stalls while split is tried: nothing completes, so paired is kept.
        let mut c = Chooser::default();
        drive(
            &mut c,
            1 + BLOCK.len() * TRIAL_BLOCKS as usize,
            (20, 1000),
            (0, 0),
        );
        assert_eq!(settles_on(&c), Some(Order::Paired));
        // Nothing completes at all: no panic, an order is still chosen by the trial's end.
        let mut c = Chooser::default();
        drive(
            &mut c,
            1 + BLOCK.len() * TRIAL_BLOCKS as usize,
            (0, 0),
            (0, 0),
        );
        assert!(settles_on(&c).is_some());
    }
}
