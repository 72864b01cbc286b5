//! The figures every report quotes, each defined once (see docs/ARCHITECTURE.md).

use crate::RunResult;

impl RunResult {
    fn secs(&self) -> f64 {
        self.elapsed.as_secs_f64().max(1e-9)
    }
    /// Requests attempted: complete plus failed.
    pub fn attempted(&self) -> u64 {
        self.complete + self.failed.total()
    }
    /// Hits/s = complete ÷ elapsed.
    pub fn hits_per_sec(&self) -> f64 {
        self.complete as f64 / self.secs()
    }
    /// Connections/s = connections opened ÷ elapsed (equals hits/s without keep-alive).
    pub fn conns_per_sec(&self) -> f64 {
        self.connections as f64 / self.secs()
    }
    /// KB/s = total bytes ÷ 1024 ÷ elapsed (ab's "Transfer rate").
    pub fn kbytes_per_sec(&self) -> f64 {
        self.total_bytes as f64 / 1024.0 / self.secs()
    }
    /// Throughput in Mbit/s = total bytes × 8 ÷ 10⁶ ÷ elapsed (WebStone's).
    pub fn mbits_per_sec(&self) -> f64 {
        self.total_bytes as f64 * 8.0 / 1e6 / self.secs()
    }
    /// Errors/s = failed ÷ elapsed.
    pub fn errors_per_sec(&self) -> f64 {
        self.failed.total() as f64 / self.secs()
    }
    /// Error level % = failed ÷ attempted × 100.
    pub fn error_pct(&self) -> f64 {
        let a = self.attempted();
        if a == 0 {
            0.0
        } else {
            self.failed.total() as f64 * 100.0 / a as f64
        }
    }
    /// Little's load factor = Σ response times ÷ elapsed.
    pub fn littles_load(&self) -> f64 {
        self.latency_sum_us as f64 / 1e6 / self.secs()
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
        if self.complete == 0 {
            0.0
        } else {
            self.cpu.total().as_secs_f64() * 1e6 / self.complete as f64
        }
    }
    /// Each load thread's busy fraction: its own CPU time (user + sys) ÷ the run's elapsed time. Near
    /// 1.0 the generator, not the server, limits the run: it offered less than it was asked for.
    pub fn thread_busy(&self) -> Vec<f64> {
        let secs = self.secs();
        self.thread_cpu
            .iter()
            .map(|c| c.total().as_secs_f64() / secs)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
        assert_eq!(r.kbytes_per_sec(), 1000.0);
        assert!((r.mbits_per_sec() - 8.192).abs() < 1e-9);
        assert_eq!(r.errors_per_sec(), 5.0);
        assert!((r.error_pct() - 0.990099).abs() < 1e-4);
        assert_eq!(r.littles_load(), 2.0);
        assert_eq!(r.mean_latency_secs(), 0.004);
        r.thread_cpu = vec![
            crate::CpuTime {
                user: Duration::from_millis(500),
                sys: Duration::from_millis(1000),
            },
            crate::CpuTime::default(),
        ];
        assert_eq!(r.thread_busy(), vec![0.75, 0.0]);
    }
}
