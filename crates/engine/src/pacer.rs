//! The open loop (`--rate`): sends at intended times, evenly spaced or Poisson, whatever the response
//! times; each request's latency counts from its intended send time (coordinated omission corrected).

use crate::conn::InFlight;
use crate::worker::Worker;
use rand::Rng;
use std::time::{Duration, Instant};

/// A send later than its intended time by more than this counts as late; poll wakes with
/// millisecond resolution, so anything closer is timer noise.
pub const LATE: Duration = Duration::from_millis(2);

/// Open-loop pacing: the next intended send time of this thread.
pub(crate) struct Pacer {
    next: Instant,
    interval: f64,
    jitter: bool,
}

impl Pacer {
    /// Pacing at `rate` requests per second from `start`.
    pub(crate) fn new(start: Instant, rate: f64, jitter: bool) -> Pacer {
        Pacer {
            next: start,
            interval: 1.0 / rate,
            jitter,
        }
    }

    /// Whether a send is due at `now`.
    pub(crate) fn due(&self, now: Instant) -> bool {
        self.next <= now
    }

    /// The next send's intended time.
    pub(crate) fn next(&self) -> Instant {
        self.next
    }

    /// Moves to the send after the next one.
    pub(crate) fn advance(&mut self, rng: &mut impl Rng) {
        self.next += self.step(rng);
    }

    fn step(&self, rng: &mut impl Rng) -> Duration {
        let step = if self.jitter {
            // Poisson arrivals: exponential gaps with the same mean.
            let u: f64 = rng.gen_range(f64::EPSILON..1.0);
            -u.ln() * self.interval
        } else {
            self.interval
        };
        Duration::from_secs_f64(step)
    }
}

impl Worker<'_> {
    /// Open loop: issues every send that is due on an idle slot; returns how long until the next one.
    pub(crate) fn pace(&mut self, now: Instant) -> Option<Duration> {
        let pacer = self.pacer.as_ref()?;
        let mut next = pacer.next;
        while next <= now && self.budget != Some(0) {
            let Some(slot) = self.idle.pop() else { break };
            if self.take_budget(1) == 0 {
                break;
            }
            let req = self.pick();
            if now.saturating_duration_since(next) > LATE {
                self.r.late_sends += 1;
            }
            self.conns[slot]
                .inflight
                .push_back(InFlight { req, start: next });
            self.send(slot, Instant::now());
            if let Some(p) = self.pacer.as_ref() {
                next += p.step(&mut self.rng);
            }
        }
        if let Some(p) = self.pacer.as_mut() {
            p.next = next;
        }
        if self.idle.is_empty() || self.budget == Some(0) {
            None // waiting for a connection to free up (or for the last responses)
        } else {
            Some(next.saturating_duration_since(now))
        }
    }
}
