//! wrk's request-rate samples (a script's `done()` gets them as `requests`): every 100 ms each
//! load thread records the requests per second it completed since its last sample, as wrk's
//! threads do; an interval in which nothing completed stretches until something does.

use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

/// How often a thread samples its rate (wrk's interval).
const EVERY: Duration = Duration::from_millis(100);

/// One thread's sampling: when its last sample was taken and its count then.
pub(crate) struct RateSampler {
    since: Instant,
    complete: u64,
}

impl RateSampler {
    pub(crate) fn new(now: Instant) -> RateSampler {
        RateSampler {
            since: now,
            complete: 0,
        }
    }

    /// At a pass at `now` with `complete` requests done so far: records a sample into `rates`
    /// once the interval is over and a request completed in it.
    pub(crate) fn tick(&mut self, now: Instant, complete: u64, rates: &mut Histogram<u64>) {
        let elapsed = now.saturating_duration_since(self.since);
        let done = complete.saturating_sub(self.complete);
        if elapsed < EVERY || done == 0 {
            return;
        }
        let per_second = done as f64 / elapsed.as_secs_f64();
        rates.saturating_record(per_second.round() as u64);
        (self.since, self.complete) = (now, complete);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_per_interval_with_completions() {
        let t0 = Instant::now();
        let mut h = Histogram::<u64>::new(3).unwrap();
        let mut s = RateSampler::new(t0);
        s.tick(t0 + Duration::from_millis(50), 10, &mut h);
        assert_eq!(h.len(), 0, "the interval is not over");
        s.tick(t0 + Duration::from_millis(100), 20, &mut h);
        assert_eq!((h.len(), h.max()), (1, 200));
        // Nothing completed for 300 ms: no sample until something does, then over the whole span.
        s.tick(t0 + Duration::from_millis(400), 20, &mut h);
        assert_eq!(h.len(), 1);
        s.tick(t0 + Duration::from_millis(500), 60, &mut h);
        assert_eq!((h.len(), h.min()), (2, 100));
    }
}
