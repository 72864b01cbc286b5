//! How a closed-loop thread waits when every request it has is at the server: it polls without
//! blocking for a short window before it blocks in the poller.
//!
//! Why: a thread blocked in `epoll_wait` is woken by the server itself. On loopback the server's
//! `send` runs the receive path of our socket on the server's CPU, and that path wakes us: a
//! `sched_wakeup` and, because our CPU is idle, an inter-processor interrupt, which on a virtual
//! machine whose idle CPUs halt is a trip through the hypervisor, all charged to the server. A
//! generator faster than the server catches up after every pass and blocks, so the server pays that
//! once every few responses and serves fewer (measured in docs/BENCHMARKS.md, "How the generator waits"). wrk, slower
//! per request, rarely catches up and so rarely blocks. Spinning for about one response time
//! takes the next response without a wake-up; it never delays a send, since a poll that finds
//! events ends the spin and the loop sends at once.
//!
//! The window adapts, so a slow server (or one client whose round trip outlasts the window)
//! costs no spinning: a spin that runs out unanswered turns spinning off, and it comes back on when
//! a block ends sooner than a spin would have lasted. A thread spins only on a CPU of its own (the
//! generator pinned to fewer CPUs than the machine has, no more load threads than those CPUs, as the
//! lab, the main job and the bench scripts run it): unpinned, a spin could hold a CPU the server
//! needs. `webstand bench --spin off|MICROS` overrides the rule ([`SpinRule`]), to compare the two
//! ways of waiting or to spin where the rule would not.

use crate::affinity::{allowed_cpus, online_cpus};
use std::time::{Duration, Instant};
use webstand_results::plan::Shape;
use webstand_results::spin_rule::SpinRule;

/// The longest spin: two or more responses of a fast server on loopback (lighttpd, h2o, nginx:
/// 8–10 µs of server CPU each here), so the next response is caught even from a server that answers
/// in bursts (h2o reads a batch of requests before it writes their responses), and a fast server's
/// round trip at two clients is not slept through. 10 µs, the first choice, left h2o waking us once
/// per 15–40 requests at 8–12 connections (3 % of its requests/s) and slept through every round
/// trip at 1–2 clients: 20 µs got 1.37–1.78× the requests/s at two clients (lighttpd, h2o, nginx,
/// builtin; HTTPS too) for 0.73–0.95× the CPU per request, the same from 4 to 64. 40 µs caught
/// one client's round trip as well (1.3–2.1×), but also every response of a server 25–40 µs per
/// request (apache, caddy at 2–8 clients): a saturated server's whole gap spun, 1.6–2.1× wrk's CPU
/// per request. Against a gap that short a block costs both sides: the server's write that wakes
/// our halted CPU takes ~7 µs instead of 0.5, and we spend 5–7 µs of CPU on the wake-up
/// (`scripts/bench/sleep-cost.py`; docs/BENCHMARKS.md, "What a wake-up costs on this machine"). A server slower than
/// the window turns the spin off.
pub(crate) const LIMIT: Duration = Duration::from_micros(20);

/// The spin limit for a run of `threads` load threads under `rule`: zero (never spin) for an open
/// loop or `Off`; with `Auto`, [`LIMIT`] for a closed loop whose threads each have a CPU of their
/// own, unless it is HTTP/2 (`h2`).
pub(crate) fn limit_for(rule: SpinRule, threads: usize, shape: &Shape, h2: bool) -> Duration {
    if matches!(shape, Shape::Open { .. }) {
        return Duration::ZERO; // the pacer decides when to send; waiting is its business
    }
    match rule {
        SpinRule::Off => return Duration::ZERO,
        SpinRule::Window(window) => return window,
        SpinRule::Auto if h2 => return Duration::ZERO,
        SpinRule::Auto => {}
    }
    let allowed = allowed_cpus().len();
    if allowed > 0 && allowed < online_cpus() && threads <= allowed {
        LIMIT
    } else {
        Duration::ZERO
    }
}

pub(crate) struct Spin {
    /// The longest spin (zero: never spin).
    limit: Duration,
    /// The spin now allowed before blocking: `limit`, or zero after a spin ran out.
    allowed: Duration,
    /// When the current spin started and when it ends.
    started: Option<Instant>,
    until: Option<Instant>,
    /// Time spent spinning so far.
    spun: Duration,
    /// When the current block started.
    blocked_at: Option<Instant>,
}

impl Spin {
    pub(crate) fn new(limit: Duration) -> Spin {
        Spin {
            limit,
            allowed: limit,
            started: None,
            until: None,
            spun: Duration::ZERO,
            blocked_at: None,
        }
    }

    /// Whether this thread ever spins (not with a zero limit: `--spin off`, `--rate`, or `auto`
    /// unpinned or for `--h2`).
    pub(crate) fn enabled(&self) -> bool {
        !self.limit.is_zero()
    }

    /// Time spent spinning so far (part of the thread's CPU time, but waiting, not work).
    pub(crate) fn spun(&self) -> Duration {
        self.spun
    }

    /// The current spin (if any) ended at `now`.
    fn end_spin(&mut self, now: Instant) {
        self.until = None;
        if let Some(at) = self.started.take() {
            self.spun += now.saturating_duration_since(at);
        }
    }

    /// The next poll's timeout: zero while spinning, else `wait` (the loop's own bound; zero when
    /// work is ready). `may_spin`: requests are at the server and nothing is paced.
    ///
    /// Two instants: the window runs from `pass_start`, the top of the loop's pass that sent the
    /// requests, so a pass whose sends outlasted it polls once without blocking and then blocks
    /// (a window counted from the end of the sends measured 0.95× the requests/s against lighttpd
    /// at 8–16 connections: the server's sends take the poller's lock that every empty poll takes
    /// too; docs/BENCHMARKS.md, "Tried, not kept"); the time spun runs from `waiting_since`,
    /// when the thread began to wait, so the pass's own work is never counted as spun.
    pub(crate) fn timeout(
        &mut self,
        pass_start: Instant,
        waiting_since: Instant,
        wait: Duration,
        may_spin: bool,
    ) -> Duration {
        if wait.is_zero() {
            self.end_spin(waiting_since);
            return wait;
        }
        if may_spin && !self.allowed.is_zero() {
            if self.until.is_none() {
                self.started = Some(waiting_since);
            }
            let until = *self.until.get_or_insert(pass_start + self.allowed);
            if pass_start < until {
                return Duration::ZERO;
            }
            self.allowed = Duration::ZERO; // the server is slower than a spin: block from now on
        }
        self.end_spin(waiting_since);
        self.blocked_at = Some(waiting_since);
        wait
    }

    /// After a poll that returned `events` (any): a spin that found them ends; a block that ended
    /// within the limit shows a spin would have caught them, so spinning comes back on.
    pub(crate) fn polled(&mut self, events: bool) {
        if !events {
            self.blocked_at = None;
            return;
        }
        if self.started.is_some() {
            self.end_spin(Instant::now());
        }
        if let Some(at) = self.blocked_at.take() {
            if at.elapsed() < self.limit {
                self.allowed = self.limit;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::affinity::pin_current;

    const CLOSED: Shape = Shape::Closed { clients: 1 };
    const WAIT: Duration = Duration::from_millis(50);

    #[test]
    fn spins_then_blocks_and_comes_back_after_a_short_block() {
        let mut s = Spin::new(LIMIT);
        let t0 = Instant::now();
        assert_eq!(s.timeout(t0, t0, WAIT, true), Duration::ZERO);
        s.polled(false);
        assert_eq!(
            s.timeout(t0 + LIMIT / 2, t0 + LIMIT / 2, WAIT, true),
            Duration::ZERO
        );
        s.polled(false);
        // The spin ran out: block, and keep blocking.
        assert_eq!(s.timeout(t0 + LIMIT, t0 + LIMIT, WAIT, true), WAIT);
        s.polled(false);
        assert_eq!(s.timeout(t0 + LIMIT * 2, t0 + LIMIT * 2, WAIT, true), WAIT);
        // A block that ends at once (events within the limit) turns spinning back on.
        s.polled(true);
        let now = Instant::now();
        assert_eq!(s.timeout(now, now, WAIT, true), Duration::ZERO);
    }

    #[test]
    fn never_spins_when_not_allowed_or_when_work_is_ready() {
        let mut s = Spin::new(LIMIT);
        let now = Instant::now();
        assert_eq!(s.timeout(now, now, WAIT, false), WAIT);
        assert_eq!(s.timeout(now, now, Duration::ZERO, true), Duration::ZERO);
        let mut off = Spin::new(Duration::ZERO);
        assert_eq!(off.timeout(now, now, WAIT, true), WAIT);
    }

    #[test]
    fn spins_only_on_a_cpu_of_its_own() {
        let online = online_cpus();
        assert!(online >= 2, "a CPU of its own needs 2 CPUs, found {online}");
        if allowed_cpus().len() == online {
            assert_eq!(
                limit_for(SpinRule::Auto, 1, &CLOSED, false),
                Duration::ZERO,
                "unpinned: never spin"
            );
        }
        // Affinity is per thread: pin a fresh one.
        std::thread::spawn(|| {
            let first = allowed_cpus()[0];
            assert!(pin_current(&[first]));
            assert_eq!(allowed_cpus(), vec![first]);
            assert_eq!(limit_for(SpinRule::Auto, 1, &CLOSED, false), LIMIT);
            assert_eq!(
                limit_for(SpinRule::Auto, 1, &CLOSED, true),
                Duration::ZERO,
                "--h2 never spins by default"
            );
            let micros = SpinRule::Window(LIMIT);
            assert_eq!(limit_for(micros, 1, &CLOSED, true), LIMIT);
            assert_eq!(
                limit_for(SpinRule::Auto, 2, &CLOSED, false),
                Duration::ZERO,
                "two load threads, one CPU"
            );
            let open = Shape::Open {
                clients: 1,
                rate: 100.0,
                jitter: false,
            };
            assert_eq!(
                limit_for(SpinRule::Auto, 1, &open, false),
                Duration::ZERO,
                "--rate never spins"
            );
            assert_eq!(limit_for(SpinRule::Off, 1, &CLOSED, false), Duration::ZERO);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_spin_that_runs_out_counts_its_whole_window_as_spun() {
        let mut s = Spin::new(LIMIT);
        let t0 = Instant::now();
        assert_eq!(s.timeout(t0, t0, WAIT, true), Duration::ZERO);
        s.polled(false);
        assert_eq!(s.timeout(t0 + LIMIT, t0 + LIMIT, WAIT, true), WAIT);
        assert_eq!(s.spun(), LIMIT);
    }

    #[test]
    fn the_passs_own_sends_are_not_counted_as_spun() {
        // The pass began at t0 and its sends took 4 µs: the spin waited from then to the window's
        // end, and only that is spun.
        let mut s = Spin::new(LIMIT);
        let t0 = Instant::now();
        let sent = t0 + Duration::from_micros(4);
        assert_eq!(s.timeout(t0, sent, WAIT, true), Duration::ZERO);
        s.polled(false);
        assert_eq!(s.timeout(t0 + LIMIT, t0 + LIMIT, WAIT, true), WAIT);
        assert_eq!(s.spun(), LIMIT - Duration::from_micros(4));
    }

    #[test]
    fn a_pass_whose_sends_outlast_the_window_polls_once_then_blocks() {
        let mut s = Spin::new(LIMIT);
        let t0 = Instant::now();
        let sent = t0 + LIMIT * 3;
        assert_eq!(s.timeout(t0, sent, WAIT, true), Duration::ZERO);
        s.polled(false);
        let next = sent + Duration::from_micros(1);
        assert_eq!(s.timeout(next, next, WAIT, true), WAIT);
        assert_eq!(
            s.spun(),
            Duration::from_micros(1),
            "spun from the end of the sends"
        );
    }

    #[test]
    fn a_spin_that_finds_events_starts_a_fresh_window_next_time() {
        let mut s = Spin::new(LIMIT);
        let t0 = Instant::now();
        assert_eq!(s.timeout(t0, t0, WAIT, true), Duration::ZERO);
        s.polled(true);
        // A new wait later than the old window's end spins again for a whole window.
        assert_eq!(
            s.timeout(t0 + LIMIT * 3, t0 + LIMIT * 3, WAIT, true),
            Duration::ZERO
        );
    }

    #[test]
    fn a_window_spins_whatever_the_pinning_but_never_in_an_open_loop() {
        let window = SpinRule::Window(Duration::from_micros(40));
        assert_eq!(
            limit_for(window, 64, &CLOSED, false),
            Duration::from_micros(40)
        );
        let open = Shape::Open {
            clients: 1,
            rate: 100.0,
            jitter: false,
        };
        assert_eq!(limit_for(window, 1, &open, false), Duration::ZERO);
    }
}
