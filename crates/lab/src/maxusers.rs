//! Max users (thttpd's column): raise the number of clients until the error level or the p99 latency
//! passes a bound, then bisect between the last clean level and the first broken one, and report the
//! largest clean level with its figures.
//!
//! Clients double from `start` until a level breaks or `limit` is reached; bisection then stops when the
//! gap between clean and broken is at most `precision` of the clean level (and at least one client).
//! Every probe is a full sweep level (warm-up, measured run) so its figures are comparable with a sweep's.

use crate::sweep::{self, LevelSpec, Measured, Observer, SweepSpec};
use anyhow::{bail, Result};
use webstand_results::{MaxUsers, Plan, Probe, Stop};

/// When a level counts as broken.
#[derive(Clone, Debug, PartialEq)]
pub struct Bounds {
    /// Largest clean error level, % of attempted requests (failed, or answered non-2xx).
    pub max_error_pct: f64,
    /// Largest clean 99th-percentile latency, ms.
    pub max_p99_ms: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct MaxUsersSpec {
    /// First level tried.
    pub start: usize,
    /// Never try more clients than this (file descriptors, the machine): reaching it cleanly is reported.
    pub limit: usize,
    /// Each probe's measured run.
    pub stop: Stop,
    pub warmup: Option<Stop>,
    pub bounds: Bounds,
    /// Bisection ends when broken − clean ≤ max(1, precision × clean).
    pub precision: f64,
}

/// Why `result` breaks `bounds`, if it does. Errors are counted as everywhere else
/// (`webstand_results::figures`: failed + non-2xx).
pub fn check(bounds: &Bounds, result: &webstand_results::RunResult) -> Option<String> {
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

/// Searches for the largest clean level over `base` (target, requests, options).
pub fn find(spec: &MaxUsersSpec, base: &Plan, obs: &mut dyn Observer) -> Result<MaxUsers> {
    if spec.start == 0 || spec.limit < spec.start {
        bail!(
            "max-users search needs 1 ≤ start ≤ limit (start {}, limit {})",
            spec.start,
            spec.limit
        );
    }
    // Written so that NaN fails too.
    let error_ok = spec.bounds.max_error_pct >= 0.0;
    let p99_ok = spec.bounds.max_p99_ms.is_none_or(|p| p > 0.0);
    if !error_ok || !p99_ok {
        bail!("max-users bounds must be an error level ≥ 0 % and a p99 latency > 0 ms");
    }
    let sweep_spec = SweepSpec {
        levels: Vec::new(),
        warmup: spec.warmup.clone(),
        rate: None,
        max_error_pct: spec.bounds.max_error_pct,
    };
    let mut out = MaxUsers::default();
    // Returns Some(clean?), or None when the search must stop (interrupted, target gone).
    let mut probe = |clients: usize, out: &mut MaxUsers| -> Result<Option<bool>> {
        let level = LevelSpec {
            clients,
            stop: spec.stop.clone(),
        };
        let Measured::Done(l) = sweep::measure_level(&sweep_spec, &level, base, obs)? else {
            out.interrupted = true;
            return Ok(None);
        };
        obs.level_done(&l)?;
        if l.result.interrupted {
            out.interrupted = true;
            return Ok(None);
        }
        let broke = check(&spec.bounds, &l.result);
        let (clean, ended) = (broke.is_none(), l.result.ended.is_some());
        if clean && out.best.as_ref().is_none_or(|b| b.clients < clients) {
            out.best = Some((*l).clone());
        }
        if !clean && out.first_broken.is_none_or(|b| clients < b) {
            out.first_broken = Some(clients);
        }
        out.probes.push(Probe { level: *l, broke });
        // A target unreachable or lost: no later level can be measured either.
        Ok((!ended).then_some(clean))
    };

    // Doubling.
    let mut clients = spec.start;
    loop {
        match probe(clients, &mut out)? {
            None => return Ok(out),
            Some(false) => break,
            Some(true) if clients >= spec.limit => return Ok(out),
            Some(true) => clients = (clients * 2).min(spec.limit),
        }
    }
    // Bisection between the last clean level and the first broken one.
    let Some(mut lo) = out.best.as_ref().map(|b| b.clients) else {
        return Ok(out);
    };
    let mut hi = out.first_broken.expect("a level broke");
    while hi - lo > ((lo as f64 * spec.precision).ceil() as usize).max(1) {
        let mid = lo + (hi - lo) / 2;
        match probe(mid, &mut out)? {
            None => return Ok(out),
            Some(true) => lo = mid,
            Some(false) => hi = mid,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use webstand_results::RunResult;

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
