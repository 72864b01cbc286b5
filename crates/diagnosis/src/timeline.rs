//! Counts over time: a run's live counters (from the engine's `Live`, which the progress display
//! reads too) as the watch sampled them, grouped into fixed intervals. Two are kept: the errors
//! (failed requests plus non-2xx answers), with the shortest stretch of intervals holding most of
//! them — errors that crowd into a short stretch are an event (a stall, a restart, a moment of
//! shedding load), not the server's steady behaviour; errors spread over the whole run are — and
//! the completed requests, whose rate per interval is wrk's "Req/Sec".

use serde::Serialize;
use std::time::Duration;

/// The narrowest interval: fine enough to date a half-second stall.
const FINEST: Duration = Duration::from_millis(100);
/// At most this many intervals, however long the run (the evidence stays readable).
const MOST_INTERVALS: u32 = 100;
/// A burst holds at least this share of the run's errors …
pub const BURST_SHARE: f64 = 0.8;
/// … within at most this share of its intervals …
pub const BURST_SPAN: f64 = 0.25;
/// … and counts at least this many errors, over a run of at least this many intervals.
pub const BURST_MIN_ERRORS: u64 = 10;
const MIN_INTERVALS: usize = 10;

/// The interval of a timeline spanning `span`: [`FINEST`], or as many times it as keeps the
/// intervals at [`MOST_INTERVALS`] or fewer. It never shrinks as the span grows, so a run that has
/// lasted `span` so far will have intervals this wide or wider.
pub fn interval_for(span: Duration) -> Duration {
    let widths = span
        .as_nanos()
        .div_ceil(FINEST.as_nanos() * u128::from(MOST_INTERVALS));
    FINEST * (widths.max(1) as u32)
}

/// A count per interval since the watch began (errors, or completed requests).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Timeline {
    #[serde(serialize_with = "seconds")]
    pub interval: Duration,
    pub counts: Vec<u64>,
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// The stretch of intervals `first..=last` holding `errors` of the run's errors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Burst {
    pub first: usize,
    pub last: usize,
    pub errors: u64,
}

impl Timeline {
    /// The timeline of a live count sampled at times since the watch began (in order): what it
    /// grew by after the first sample (a counter shared by several runs starts above zero).
    pub fn from_samples(samples: &[(Duration, u64)]) -> Timeline {
        let (Some(&(_, mut before)), Some(&(span, _))) = (samples.first(), samples.last()) else {
            return Timeline::default();
        };
        let interval = interval_for(span);
        let index = |t: Duration| (t.as_nanos() / interval.as_nanos()) as usize;
        let mut counts = vec![0; index(span) + 1];
        for &(t, total) in samples {
            counts[index(t)] += total.saturating_sub(before);
            before = before.max(total);
        }
        Timeline { interval, counts }
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The start of interval `i`, in seconds since the watch began.
    pub fn at(&self, i: usize) -> f64 {
        (self.interval * i as u32).as_secs_f64()
    }

    /// The shortest stretch holding [`BURST_SHARE`] of the errors, when it is a burst: at most
    /// [`BURST_SPAN`] of the run, with [`BURST_MIN_ERRORS`] or more errors in all. It is then
    /// widened over the neighbouring intervals that still hold a tenth of its busiest one's errors,
    /// so that it dates the whole event, not its core.
    pub fn burst(&self) -> Option<Burst> {
        let mut b = self.core()?;
        let c = &self.counts;
        let peak = c[b.first..=b.last].iter().copied().max().unwrap_or(0);
        while b.first > 0 && c[b.first - 1] * 10 >= peak {
            b.first -= 1;
            b.errors += c[b.first];
        }
        while b.last + 1 < c.len() && c[b.last + 1] * 10 >= peak {
            b.last += 1;
            b.errors += c[b.last];
        }
        Some(b)
    }

    fn core(&self) -> Option<Burst> {
        let (c, total) = (&self.counts, self.total());
        if total < BURST_MIN_ERRORS || c.len() < MIN_INTERVALS {
            return None;
        }
        let need = (total as f64 * BURST_SHARE).ceil() as u64;
        let (mut first, mut sum, mut best): (usize, u64, Option<Burst>) = (0, 0, None);
        for (last, n) in c.iter().enumerate() {
            sum += n;
            while sum - c[first] >= need {
                sum -= c[first];
                first += 1;
            }
            let shorter = match best {
                None => true,
                Some(b) => last - first < b.last - b.first,
            };
            if sum >= need && shorter {
                best = Some(Burst {
                    first,
                    last,
                    errors: sum,
                });
            }
        }
        best.filter(|b| (b.last - b.first + 1) as f64 <= c.len() as f64 * BURST_SPAN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn samples_become_counts_per_interval() {
        let t = Timeline::from_samples(&[(ms(20), 3), (ms(150), 7), (ms(180), 12), (ms(420), 12)]);
        assert_eq!(t.interval, ms(100));
        assert_eq!(t.counts, vec![0, 9, 0, 0, 0]);
        // A long run keeps at most 100 intervals, each a whole number of tenths of a second.
        let long = Timeline::from_samples(&[(ms(0), 0), (Duration::from_secs(30), 5)]);
        assert_eq!(long.interval, ms(300));
        assert_eq!(long.counts.len(), 101);
        assert_eq!(Timeline::from_samples(&[]).total(), 0);
        // The width a run has so far only grows (the sampler takes half of it as its period).
        let widths: Vec<u64> = [0, 10_000, 10_001, 25_000]
            .map(|t| interval_for(ms(t)).as_millis() as u64)
            .into();
        assert_eq!(widths, [100, 100, 200, 300]);
    }

    #[test]
    fn most_errors_in_a_short_stretch_are_a_burst_and_spread_ones_are_not() {
        let mut counts = vec![1; 30];
        counts[12..17].copy_from_slice(&[80, 120, 110, 90, 12]);
        let t = Timeline {
            interval: ms(100),
            counts,
        };
        let b = t.burst().unwrap();
        // 80, 120, 110, 90 hold 80 % of the errors; the 12 after them belong to the event too.
        assert_eq!((b.first, b.last, b.errors), (12, 16, 412), "{b:?}");
        assert_eq!(t.at(b.first), 1.2);
        let even = Timeline {
            interval: ms(100),
            counts: vec![15; 30],
        };
        assert_eq!(even.burst(), None);
        let few = Timeline {
            interval: ms(100),
            counts: [vec![0; 20], vec![9]].concat(),
        };
        assert_eq!(few.burst(), None, "nine errors are no evidence of a burst");
    }
}
