//! A threshold judged against a run: the figure it names, taken from the same place the report
//! prints it (`webstand_results::figures`, the latency histogram), and whether it holds.

use crate::expr::{Metric, Threshold, Unit};
use webstand_results::RunResult;

/// One threshold's verdict on one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// The threshold as written, without spaces ("p99<20ms").
    pub threshold: String,
    /// The figure in the threshold's unit; None when the run has none (no complete response for a
    /// latency), which fails the threshold.
    pub actual: Option<f64>,
    /// The unit `actual` is in ("ms", "%", "" for a count).
    pub unit: String,
    pub passed: bool,
}

impl Check {
    /// "25.31 ms", or "none" without a figure.
    pub fn shown(&self) -> String {
        match self.actual {
            None => "none".to_string(),
            Some(v) if self.unit.is_empty() => format_number(v),
            Some(v) => format!("{} {}", format_number(v), self.unit),
        }
    }
    /// A check as [`Check::json`] wrote it (the history keeps them so); None for anything else.
    pub fn from_json(v: &serde_json::Value) -> Option<Check> {
        Some(Check {
            threshold: v.get("threshold")?.as_str()?.to_string(),
            actual: v.get("actual").and_then(serde_json::Value::as_f64),
            unit: v.get("unit")?.as_str()?.to_string(),
            passed: v.get("passed")?.as_bool()?,
        })
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "threshold": self.threshold,
            "actual": self.actual,
            "unit": self.unit,
            "passed": self.passed,
        })
    }
}

/// Counts as integers, other figures with two decimals.
fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Judges every threshold against `result`.
pub fn check_all(thresholds: &[Threshold], result: &RunResult) -> Vec<Check> {
    thresholds.iter().map(|t| check(t, result)).collect()
}

pub fn check(t: &Threshold, result: &RunResult) -> Check {
    let actual = figure(t.metric, t.unit, result);
    Check {
        threshold: t.text.clone(),
        actual,
        unit: t.unit.suffix().to_string(),
        passed: actual.is_some_and(|a| t.op.holds(a, t.bound)),
    }
}

/// The figure `metric` names, in `unit`.
pub fn figure(metric: Metric, unit: Unit, r: &RunResult) -> Option<f64> {
    let per_cent = |count: u64| {
        let attempted = r.attempted();
        (attempted > 0).then(|| count as f64 * 100.0 / attempted as f64)
    };
    let count_or_share = |count: u64| match unit {
        Unit::Percent => per_cent(count),
        _ => Some(count as f64),
    };
    let h = &r.histograms.total;
    let latency_us = match metric {
        _ if r.complete == 0 || h.is_empty() => None,
        Metric::Percentile(p) => Some(h.value_at_quantile(p / 100.0) as f64),
        Metric::Min => Some(h.min() as f64),
        Metric::Max => Some(h.max() as f64),
        Metric::Mean => Some(r.mean_latency_ms() * 1000.0),
        _ => None,
    };
    match metric {
        Metric::Percentile(_) | Metric::Min | Metric::Max | Metric::Mean => {
            latency_us.map(|us| match unit {
                Unit::Micros => us,
                Unit::Secs => us / 1e6,
                _ => us / 1e3,
            })
        }
        Metric::Errors => count_or_share(r.errors()),
        Metric::Status(2) => count_or_share(r.successful()),
        Metric::Status(class) => count_or_share(
            r.non_2xx_statuses
                .iter()
                .filter(|(code, _)| **code / 100 == u16::from(class))
                .map(|(_, n)| n)
                .sum(),
        ),
        Metric::Rps => Some(r.hits_per_sec()),
        Metric::Transfer => Some(match unit {
            Unit::MbPerSec => r.kbytes_per_sec() / 1024.0,
            _ => r.kbytes_per_sec(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::parse_list;
    use std::time::Duration;

    fn run() -> RunResult {
        let mut r = RunResult {
            elapsed: Duration::from_secs(2),
            complete: 1000,
            non_2xx: 10,
            total_bytes: 2 * 1024 * 1000,
            ..Default::default()
        };
        r.non_2xx_statuses.insert(503, 6);
        r.non_2xx_statuses.insert(404, 4);
        r.failed.connect = 0;
        for us in 1..=1000u64 {
            r.histograms.total.record(us * 10).unwrap();
            r.latency_sum_us += u128::from(us * 10);
        }
        r
    }

    fn verdicts(text: &str) -> Vec<(Option<f64>, bool)> {
        let t = parse_list(text).unwrap();
        check_all(&t, &run())
            .iter()
            .map(|c| (c.actual, c.passed))
            .collect()
    }

    #[test]
    fn each_kind_reads_its_figure_and_holds_or_not() {
        let p99 = verdicts("p99<9.95ms,p99<9.9ms");
        assert!(p99[0].1 && !p99[1].1, "{p99:?}");
        assert!((p99[0].0.unwrap() - 9.9).abs() < 0.02);
        assert_eq!(verdicts("max<=10000us")[0], (Some(10007.0), false));
        assert!(verdicts("min<1s")[0].1);
        assert_eq!(verdicts("mean>5ms")[0], (Some(5.005), true));
        assert_eq!(verdicts("errors==10")[0], (Some(10.0), true));
        assert_eq!(verdicts("errors<1%")[0], (Some(1.0), false));
        assert_eq!(
            verdicts("status_5xx==6,status_4xx<=4,status_2xx==990,status_3xx==0"),
            vec![
                (Some(6.0), true),
                (Some(4.0), true),
                (Some(990.0), true),
                (Some(0.0), true)
            ]
        );
        assert_eq!(verdicts("status_5xx<0.5%")[0], (Some(0.6), false));
        assert_eq!(verdicts("rps>=500")[0], (Some(500.0), true));
        assert_eq!(
            verdicts("transfer>1000KB/s,transfer<1MB/s")[0],
            (Some(1000.0), false)
        );
    }

    #[test]
    fn a_run_without_responses_fails_latency_thresholds() {
        let t = parse_list("p50<1s").unwrap();
        let c = check(&t[0], &RunResult::default());
        assert_eq!(
            (c.actual, c.passed, c.shown().as_str()),
            (None, false, "none")
        );
    }
}
