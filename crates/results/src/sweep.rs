//! What a sweep and a max-users search found: the measured levels, the peak, and the largest clean
//! level, and when a max-users probe breaks (its bounds). The lab runs them (`webstand_lab::sweep`,
//! `webstand_lab::maxusers`); this is their result, and `show` rebuilds a saved search with it.

use crate::figures;
use crate::result::RunResult;

/// One measured level.
#[derive(Clone, Debug)]
pub struct Level {
    pub clients: usize,
    pub result: RunResult,
}

#[derive(Clone, Debug)]
pub struct SweepResult {
    /// The workload's name (the history's group).
    pub workload: String,
    pub levels: Vec<Level>,
    /// Stopped early by Ctrl-C: `levels` holds what completed (the last one possibly partial).
    pub interrupted: bool,
    /// The spec's error threshold, which decides the peak.
    pub max_error_pct: f64,
}

impl Default for SweepResult {
    fn default() -> Self {
        SweepResult {
            workload: String::new(),
            levels: Vec::new(),
            interrupted: false,
            max_error_pct: figures::DEFAULT_MAX_ERROR_PCT,
        }
    }
}

impl SweepResult {
    /// The index of the peak level: the most hits/s among the clean ones (`figures::peak`).
    pub fn peak_index(&self) -> Option<usize> {
        figures::peak(self.levels.iter().map(|l| &l.result), self.max_error_pct)
    }
    /// The peak level, if any level was clean.
    pub fn peak(&self) -> Option<&Level> {
        self.peak_index().map(|i| &self.levels[i])
    }
}

/// One level a max-users search tried, and why it broke if it did.
#[derive(Clone, Debug)]
pub struct Probe {
    pub level: Level,
    /// `None` when clean; else the bound it broke ("error level 3.2 % > 1 %").
    pub broke: Option<String>,
}

/// What a max-users search found.
#[derive(Clone, Debug, Default)]
pub struct MaxUsers {
    /// The largest clean level, with its figures (None: even `start` broke).
    pub best: Option<Level>,
    /// The smallest level that broke (None: nothing broke up to `limit`).
    pub first_broken: Option<usize>,
    /// Every probe in the order run.
    pub probes: Vec<Probe>,
    pub interrupted: bool,
}

impl MaxUsers {
    /// Keeps `level` as the search's next probe, judged by `bounds`: the largest clean level so far
    /// is the best, the smallest broken one the first broken. Whether it was clean.
    pub fn record(&mut self, level: Level, bounds: &Bounds) -> bool {
        let broke = check(bounds, &level.result);
        let (clean, clients) = (broke.is_none(), level.clients);
        if clean && self.best.as_ref().is_none_or(|b| b.clients < clients) {
            self.best = Some(level.clone());
        }
        if !clean && self.first_broken.is_none_or(|b| clients < b) {
            self.first_broken = Some(clients);
        }
        self.probes.push(Probe { level, broke });
        clean
    }
}

/// When a level counts as broken.
#[derive(Clone, Debug, PartialEq)]
pub struct Bounds {
    /// Largest clean error level, % of attempted requests (failed, or answered non-2xx).
    pub max_error_pct: f64,
    /// Largest clean 99th-percentile latency, ms.
    pub max_p99_ms: Option<f64>,
}

/// Why `result` breaks `bounds`, if it does. Errors are counted as everywhere else
/// (`figures`: failed + non-2xx).
pub fn check(bounds: &Bounds, result: &RunResult) -> Option<String> {
    match (result.ended, &result.first_error) {
        // The engine's one line naming what the server answered instead of HTTP/2 or HTTP/3
        // (ALPN's choice, its HTTP/1 answer to the preface, a version negotiation, a close), as
        // bench prints it.
        (Some(e), Some(line)) if e.refused_protocol() => return Some(line.clone()),
        (Some(e), _) => return Some(format!("the target was {}", e.name())),
        (None, _) => {}
    }
    if result.successful() == 0 {
        return Some("no successful request".to_string());
    }
    if !result.is_clean(bounds.max_error_pct) {
        return Some(format!(
            "error rate {:.2} % > {} % ({} failed, {} non-2xx)",
            result.error_pct(),
            bounds.max_error_pct,
            result.failed.total(),
            result.non_2xx
        ));
    }
    if let Some(max) = bounds.max_p99_ms {
        let p99 = result.latency_ms(0.99);
        if p99 > max {
            return Some(format!("p99 latency {p99:.1} ms > {max} ms"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn bounds_break_on_errors_non_2xx_latency_and_nothing_done() {
        let b = Bounds {
            max_error_pct: 1.0,
            max_p99_ms: Some(50.0),
        };
        let mut r = RunResult {
            complete: 1000,
            elapsed: Duration::from_secs(1),
            ..Default::default()
        };
        r.histograms.total.record(10_000).unwrap();
        assert_eq!(check(&b, &r), None);
        r.failed.connect = 20;
        assert!(check(&b, &r).unwrap().starts_with("error rate 1.96 %"));
        r.failed.connect = 0;
        r.non_2xx = 50;
        assert_eq!(
            check(&b, &r).unwrap(),
            "error rate 5.00 % > 1 % (0 failed, 50 non-2xx)"
        );
        r.non_2xx = 0;
        r.histograms.total.record(80_000).unwrap();
        assert!(check(&b, &r).unwrap().starts_with("p99"));
        assert_eq!(
            check(&b, &RunResult::default()).unwrap(),
            "no successful request"
        );
    }
}
