//! The open loop's clock (`--rate`): each send's intended time, evenly spaced or Poisson, whatever
//! the response times; a request's latency counts from its intended send time (coordinated
//! omission corrected). Which request goes, and on which connection, is `requests.rs`'s and the
//! driver's.

use rand::Rng;
use std::time::{Duration, Instant};

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
        let step = if self.jitter {
            // Poisson arrivals: exponential gaps with the same mean.
            let u: f64 = rng.gen_range(f64::EPSILON..1.0);
            -u.ln() * self.interval
        } else {
            self.interval
        };
        self.next += Duration::from_secs_f64(step);
    }
}
