//! Max users (thttpd's column): raise the number of clients until the error level or the p99 latency
//! passes a bound, then bisect between the last clean level and the first broken one, and report the
//! largest clean level with its figures.
//!
//! Clients double from `start` until a level breaks or `limit` is reached; bisection then stops when the
//! gap between clean and broken is at most `precision` of the clean level (and at least one client).
//! Every probe is a full sweep level (warm-up, measured run) so its figures are comparable with a sweep's.

use crate::sweep::{self, LevelSpec, Measured, Observer, SweepSpec};
use anyhow::{bail, Result};
pub use webstand_results::sweep::{check, Bounds};
use webstand_results::{MaxUsers, Plan, Stop};

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
        let ended = l.result.ended.is_some();
        let clean = out.record(*l, &spec.bounds);
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
