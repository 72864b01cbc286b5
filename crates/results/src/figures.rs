//! The figures every report quotes, each defined once (see docs/ARCHITECTURE.md).
//!
//! One definition of an error serves every command and table: **errors = failed requests (ab's
//! classes: connect, receive, length, exceptions) + complete responses that were not 2xx**. A level's
//! error rate, the peak, max users, exit statuses and the history's statuses all count that way.

use crate::result::{CpuTime, RunResult};
use std::time::Duration;

/// The error rate (% of attempted requests) above which a result is not clean, unless a command's
/// `--max-error-pct` says otherwise: the peak skips such levels and a run with one exits `errors`.
pub const DEFAULT_MAX_ERROR_PCT: f64 = 1.0;

/// Above this error rate (% of attempted) a level is "mostly errors", and every layout marks it.
pub const MOSTLY_ERRORS_PCT: f64 = 50.0;

/// The peak of several results: the index of the one with the most hits/s among those that are
/// clean ([`RunResult::is_clean`]); None when none is. A level above the error threshold is never
/// a peak, however fast it failed.
pub fn peak<'a>(
    results: impl IntoIterator<Item = &'a RunResult>,
    max_error_pct: f64,
) -> Option<usize> {
    results
        .into_iter()
        .enumerate()
        .filter(|(_, r)| r.is_clean(max_error_pct))
        .max_by(|a, b| a.1.hits_per_sec().total_cmp(&b.1.hits_per_sec()))
        .map(|(i, _)| i)
}

impl RunResult {
    /// The run's elapsed seconds as every rate divides by them: never zero, so a run that measured
    /// nothing has rates of zero, not NaN.
    fn secs(&self) -> f64 {
        self.elapsed.as_secs_f64().max(1e-9)
    }
    /// Any count of this run per second of its elapsed time (bytes sent, streams done …).
    pub fn per_sec(&self, count: u64) -> f64 {
        count as f64 / self.secs()
    }
    /// Requests attempted: complete plus failed.
    pub fn attempted(&self) -> u64 {
        self.complete + self.failed.total()
    }
    /// Hits/s = complete ÷ elapsed (ab's "Requests per second").
    pub fn hits_per_sec(&self) -> f64 {
        self.per_sec(self.complete)
    }
    /// ab's first "Time per request" in ms = concurrency × elapsed ÷ complete: the mean latency by
    /// Little's law when each of `concurrency` connections always has one request in flight. None
    /// without a complete request.
    pub fn time_per_request_ms(&self, concurrency: usize) -> Option<f64> {
        self.time_per_request_across_ms()
            .map(|across| across * concurrency as f64)
    }
    /// ab's second "Time per request" in ms = elapsed ÷ complete ("across all concurrent
    /// requests"): the time the run took per complete request. None without a complete request.
    pub fn time_per_request_across_ms(&self) -> Option<f64> {
        (self.complete > 0).then(|| self.secs() * 1000.0 / self.complete as f64)
    }
    /// Connections/s = connections opened ÷ elapsed (equals hits/s without keep-alive).
    pub fn conns_per_sec(&self) -> f64 {
        self.per_sec(self.connections)
    }
    /// KB/s = total bytes ÷ 1024 ÷ elapsed (ab's "Transfer rate").
    pub fn kbytes_per_sec(&self) -> f64 {
        self.per_sec(self.total_bytes) / 1024.0
    }
    /// Throughput in Mbit/s = total bytes × 8 ÷ 10⁶ ÷ elapsed (WebStone's).
    pub fn mbits_per_sec(&self) -> f64 {
        self.per_sec(self.total_bytes) * 8.0 / 1e6
    }
    /// Errors = failed requests + non-2xx responses.
    pub fn errors(&self) -> u64 {
        self.failed.total() + self.non_2xx
    }
    /// Successful requests: complete with a 2xx status.
    pub fn successful(&self) -> u64 {
        self.complete.saturating_sub(self.non_2xx)
    }
    /// Errors/s = errors ÷ elapsed.
    pub fn errors_per_sec(&self) -> f64 {
        self.per_sec(self.errors())
    }
    /// Error rate % = errors ÷ attempted × 100.
    pub fn error_pct(&self) -> f64 {
        let a = self.attempted();
        if a == 0 {
            0.0
        } else {
            self.errors() as f64 * 100.0 / a as f64
        }
    }
    /// More than [`MOSTLY_ERRORS_PCT`] of the attempted requests were errors.
    pub fn mostly_errors(&self) -> bool {
        self.attempted() > 0 && self.error_pct() > MOSTLY_ERRORS_PCT
    }
    /// At least one successful request and errors within `max_error_pct` % of attempted: a level
    /// whose figures describe a working server.
    pub fn is_clean(&self, max_error_pct: f64) -> bool {
        self.successful() > 0 && self.error_pct() <= max_error_pct
    }
    /// Little's load factor = Σ response times ÷ elapsed.
    pub fn littles_load(&self) -> f64 {
        self.latency_sum_us as f64 / 1e6 / self.secs()
    }
    /// Mean latency in milliseconds.
    pub fn mean_latency_ms(&self) -> f64 {
        self.mean_latency_secs() * 1000.0
    }
    /// Mean latency in seconds (WebStone's "Latency").
    pub fn mean_latency_secs(&self) -> f64 {
        if self.complete == 0 {
            0.0
        } else {
            self.latency_sum_us as f64 / 1e6 / self.complete as f64
        }
    }
    /// Latency at quantile `q` (0..=1), in milliseconds.
    pub fn latency_ms(&self, q: f64) -> f64 {
        self.histograms.total.value_at_quantile(q) as f64 / 1000.0
    }
    /// Keep-alive share: keep-alive requests ÷ complete.
    pub fn keep_alive_share(&self) -> f64 {
        if self.complete == 0 {
            0.0
        } else {
            self.keep_alive_requests as f64 / self.complete as f64
        }
    }
    /// The generator's CPU-µs per complete request (user + sys).
    pub fn cpu_us_per_request(&self) -> f64 {
        self.cpu_us_per_request_of(self.cpu).unwrap_or(0.0)
    }
    /// Any process's CPU-µs (user + sys) per complete request of this run: the generator's, the
    /// server's, the server's with its PHP backends'. None without a complete request.
    pub fn cpu_us_per_request_of(&self, cpu: CpuTime) -> Option<f64> {
        (self.complete > 0).then(|| cpu.total().as_secs_f64() * 1e6 / self.complete as f64)
    }
    /// Each load thread's busy fraction: its work (its CPU time less the time it spun waiting for
    /// a response, [`ThreadTime::work`]) ÷ the run's elapsed time. Near 1.0 the generator, not the
    /// server, limits the run: it offered less than it was asked for.
    pub fn thread_busy(&self) -> Vec<f64> {
        let secs = self.secs();
        self.thread_times()
            .iter()
            .map(|t| t.work.as_secs_f64() / secs)
            .collect()
    }
    /// Each load thread's time, split into work and waiting.
    pub fn thread_times(&self) -> Vec<ThreadTime> {
        self.thread_cpu
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let spin = self.thread_spin.get(i).copied().unwrap_or_default();
                let waits = self.thread_waits.get(i).copied().unwrap_or_default();
                ThreadTime {
                    cpu: c.total(),
                    work: c.total().saturating_sub(spin),
                    spin,
                    nap: waits.napped,
                    block: waits.blocked,
                }
            })
            .collect()
    }
    /// The generator's time: its load threads' added up.
    pub fn generator_time(&self) -> ThreadTime {
        self.thread_times()
            .iter()
            .fold(ThreadTime::default(), |a, t| ThreadTime {
                cpu: a.cpu + t.cpu,
                work: a.work + t.work,
                spin: a.spin + t.spin,
                nap: a.nap + t.nap,
                block: a.block + t.block,
            })
    }
    /// The generator's work per complete request in µs: its CPU less its spin (the figure to set
    /// beside the server's CPU per request). None without a complete request, or for a result
    /// that does not carry its load threads (one read back from an older history).
    pub fn work_us_per_request(&self) -> Option<f64> {
        self.generator_us_per_request(|t| t.work)
    }
    /// The generator's spin per complete request in µs (the CPU it spent waiting); None as for
    /// [`RunResult::work_us_per_request`].
    pub fn spin_us_per_request(&self) -> Option<f64> {
        self.generator_us_per_request(|t| t.spin)
    }
    fn generator_us_per_request(&self, part: impl Fn(&ThreadTime) -> Duration) -> Option<f64> {
        let d = part(&self.generator_time());
        (self.complete > 0 && !self.thread_cpu.is_empty())
            .then(|| d.as_secs_f64() * 1e6 / self.complete as f64)
    }
}

/// A load thread's time over a run (or the generator's, added up), split as docs/ARCHITECTURE.md
/// defines the generator's figures: its CPU is **work** (building, sending, reading, parsing,
/// recording) plus **spin** (polling for a response that has not come); off its CPU it **napped**
/// or **blocked** (in the poller or on one socket). Spin, nap and block are waiting: a thread busy
/// only because it spun was not at its limit. The rest of the run it was runnable but waiting for
/// a CPU, or in between.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThreadTime {
    /// User + system CPU time: work + spin.
    pub cpu: Duration,
    pub work: Duration,
    pub spin: Duration,
    pub nap: Duration,
    pub block: Duration,
}

impl ThreadTime {
    /// Spin + nap + block.
    pub fn waiting(&self) -> Duration {
        self.spin + self.nap + self.block
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_follow_their_definitions() {
        let mut r = RunResult {
            elapsed: Duration::from_secs(2),
            complete: 1000,
            total_bytes: 2048 * 1000,
            ..Default::default()
        };
        r.failed.connect = 10;
        r.latency_sum_us = 4_000_000;
        assert_eq!(r.hits_per_sec(), 500.0);
        assert_eq!(r.time_per_request_across_ms(), Some(2.0));
        assert_eq!(r.time_per_request_ms(8), Some(16.0));
        assert_eq!(r.kbytes_per_sec(), 1000.0);
        assert!((r.mbits_per_sec() - 8.192).abs() < 1e-9);
        assert_eq!(r.errors_per_sec(), 5.0);
        assert!((r.error_pct() - 0.990099).abs() < 1e-4);
        assert_eq!(r.littles_load(), 2.0);
        assert_eq!(r.mean_latency_secs(), 0.004);
        r.thread_cpu = vec![
            CpuTime {
                user: Duration::from_millis(500),
                sys: Duration::from_millis(1000),
            },
            CpuTime::default(),
        ];
        assert_eq!(r.thread_busy(), vec![0.75, 0.0]);
        // Time spun waiting for responses is CPU time but not work: not busy.
        r.thread_spin = vec![Duration::from_millis(500)];
        assert_eq!(r.thread_busy(), vec![0.5, 0.0]);
        // Napped and blocked time is waiting off the CPU: neither CPU nor work.
        r.thread_waits = vec![crate::result::HalfwayWaits {
            blocks: 3,
            naps: 2,
            napped: Duration::from_millis(100),
            blocked: Duration::from_millis(200),
        }];
        let g = r.generator_time();
        assert_eq!(
            (g.cpu, g.work, g.spin, g.nap, g.block),
            (
                Duration::from_millis(1500),
                Duration::from_millis(1000),
                Duration::from_millis(500),
                Duration::from_millis(100),
                Duration::from_millis(200)
            )
        );
        assert_eq!(g.waiting(), Duration::from_millis(800));
        assert_eq!(r.work_us_per_request(), Some(1000.0));
        assert_eq!(r.spin_us_per_request(), Some(500.0));
        r.thread_spin.clear();
        r.thread_waits.clear();
        // Non-2xx answers are errors too: 10 failed + 40 non-2xx of 1010 attempted.
        r.non_2xx = 40;
        assert_eq!((r.errors(), r.successful()), (50, 960));
        assert_eq!(r.errors_per_sec(), 25.0);
        assert!((r.error_pct() - 4.950495).abs() < 1e-4);
        assert!(!r.is_clean(DEFAULT_MAX_ERROR_PCT) && r.is_clean(5.0) && !r.mostly_errors());
        r.non_2xx = 1000; // every answer a 404: nothing succeeded
        assert!(r.mostly_errors() && !r.is_clean(100.0));
        // No complete request: no time per request, and rates of zero over no time at all.
        let none = RunResult::default();
        assert_eq!(none.time_per_request_ms(8), None);
        assert_eq!((none.hits_per_sec(), none.error_pct()), (0.0, 0.0));
    }

    #[test]
    fn the_peak_is_the_fastest_clean_level() {
        let level = |complete: u64, non_2xx: u64, connect: u64| {
            let mut r = RunResult {
                elapsed: Duration::from_secs(1),
                complete,
                non_2xx,
                ..Default::default()
            };
            r.failed.connect = connect;
            r
        };
        // The fastest level answered 404s, the next lost 2 % to refused connects.
        let levels = [
            level(100, 0, 0),
            level(900, 900, 0),
            level(500, 0, 10),
            level(300, 1, 0),
        ];
        assert_eq!(peak(&levels, DEFAULT_MAX_ERROR_PCT), Some(3));
        assert_eq!(peak(&levels, 5.0), Some(2));
        assert_eq!(
            peak(&levels[1..2], 100.0),
            None,
            "no successful request, no peak"
        );
        assert_eq!(peak(&[], 1.0), None);
    }
}
