//! The highest open-loop rate that meets an SLO (`sweep --find-max-rate`): rates double from
//! `start` until one is not met, bisection then narrows the gap to `precision` of the met rate,
//! and a confirmation run at the answer must meet it again (else the answer steps down by
//! `precision` and is confirmed again). Every probe is a full sweep level (warm-up, measured run) at
//! a fixed connection pool, its latency counted from each request's intended send time.
//!
//! Whether a rate is met is the caller's judgement (`judge`: the SLO's thresholds, and whether the
//! generator kept up), so this file knows nothing of thresholds or diagnoses. The search is bounded:
//! at most `max_steps` probes and `budget` of wall time; reaching either ends it with what it found.

use crate::sweep::{self, LevelSpec, Measured, Observer, Rate, SweepSpec};
use anyhow::{bail, Result};
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use webstand_results::{Level, Plan, Stop};

#[derive(Clone, Debug, PartialEq)]
pub struct MaxRateSpec {
    /// The connection pool every probe uses.
    pub clients: usize,
    /// The first rate tried, and the highest ever tried (requests per second).
    pub start: f64,
    pub limit: f64,
    pub jitter: bool,
    pub stop: Stop,
    pub warmup: Option<Stop>,
    /// Bisection ends when unmet − met ≤ precision × met.
    pub precision: f64,
    pub max_steps: usize,
    pub budget: Duration,
}

/// One rate tried.
#[derive(Clone, Debug)]
pub struct Tried {
    pub rate: f64,
    pub level: Level,
    /// None when met; else why not ("p99<20ms was 31.20 ms", "the generator fell behind …").
    pub unmet: Option<String>,
    /// A confirmation run at the answer.
    pub confirmation: bool,
}

#[derive(Clone, Debug, Default)]
pub struct MaxRate {
    /// The highest rate met and confirmed (None: none was).
    pub answer: Option<f64>,
    /// The lowest rate not met (None: every rate up to the limit was met).
    pub first_unmet: Option<f64>,
    pub tried: Vec<Tried>,
    pub interrupted: bool,
    /// Why the search ended before it finished (its step or time bound, a lost target).
    pub cut_short: Option<String>,
}

impl MaxRate {
    /// The answer's measured level (its confirmation run).
    pub fn answer_level(&self) -> Option<&Tried> {
        let answer = self.answer?;
        self.tried
            .iter()
            .rev()
            .find(|t| t.rate == answer && t.unmet.is_none())
    }
}

/// Searches over `base` (target, requests, options); `judge` says why a measured level does not
/// meet the SLO, looking at the observer too (it has just seen the level: its diagnosis).
pub fn find<O: Observer>(
    spec: &MaxRateSpec,
    base: &Plan,
    obs: &mut O,
    judge: impl Fn(&O, &Level, f64) -> Option<String>,
) -> Result<MaxRate> {
    let rates_ok = spec.start > 0.0 && spec.limit >= spec.start && spec.limit.is_finite();
    if !rates_ok || spec.clients == 0 || spec.max_steps == 0 {
        bail!(
            "a max-rate search needs 0 < start rate ≤ max rate, at least 1 connection and 1 step (start {}, max {}, {} connections, {} steps)",
            spec.start, spec.limit, spec.clients, spec.max_steps
        );
    }
    let deadline = Instant::now() + spec.budget;
    walk(spec, |rate, confirmation, out| {
        if stepped_out(spec, out) {
            return Ok(None);
        }
        if Instant::now() >= deadline {
            out.cut_short = Some(out_of_time(spec));
            return Ok(None);
        }
        let sweep_spec = SweepSpec {
            levels: Vec::new(),
            warmup: spec.warmup.clone(),
            rate: Some(Rate {
                rate,
                jitter: spec.jitter,
            }),
            max_error_pct: 100.0,
        };
        let level = LevelSpec {
            clients: spec.clients,
            stop: spec.stop.clone(),
        };
        let Measured::Done(l) = sweep::measure_level(&sweep_spec, &level, base, obs)? else {
            out.interrupted = true;
            return Ok(None);
        };
        obs.level_done(&l)?;
        let unmet = (!l.result.interrupted)
            .then(|| judge(obs, &l, rate))
            .flatten();
        Ok(record(out, rate, confirmation, *l, unmet))
    })
}

/// A search read back from the levels it measured, in order, each with why it did not meet the SLO
/// (None: met), judged again by the caller: the same steps walked over them tell which runs were
/// confirmations, the answer, and why the search ended. Takes the levels of one search from the
/// front of `measured` (none when the first is not the rate a search starts with).
pub fn replay(spec: &MaxRateSpec, measured: &mut VecDeque<(Level, Option<String>)>) -> MaxRate {
    let replayed = walk(spec, |rate, confirmation, out| {
        if stepped_out(spec, out) {
            return Ok(None);
        }
        // The next level is another rate's (or none is left): the search ran out of time here.
        let ours = |(l, _): &(Level, _)| l.result.asked_rate == Some(rate);
        let Some((level, unmet)) = measured
            .front()
            .is_some_and(ours)
            .then(|| measured.pop_front())
            .flatten()
        else {
            out.cut_short = Some(out_of_time(spec));
            return Ok(None);
        };
        Ok(record(out, rate, confirmation, level, unmet))
    });
    replayed.unwrap_or_default()
}

/// The search's steps, however a rate is measured: doubling from `start`, then bisection between
/// the highest rate met and the lowest not, then confirmation. `probe(rate, confirmation, found)`
/// measures one rate into `found`: Some(met?), or None when the search must stop.
fn walk(
    spec: &MaxRateSpec,
    mut probe: impl FnMut(f64, bool, &mut MaxRate) -> Result<Option<bool>>,
) -> Result<MaxRate> {
    let mut out = MaxRate::default();
    let (mut met, mut rate) = (None::<f64>, spec.start);
    let unmet = loop {
        match probe(rate, false, &mut out)? {
            None => return Ok(out),
            Some(false) => break Some(rate),
            Some(true) if rate >= spec.limit => {
                met = Some(rate);
                break None;
            }
            Some(true) => {
                met = Some(rate);
                rate = (rate * 2.0).min(spec.limit);
            }
        }
    };
    let Some(mut lo) = met else {
        return Ok(out);
    };
    if let Some(mut hi) = unmet {
        while hi - lo > spec.precision * lo {
            let mid = round_rate((lo + hi) / 2.0);
            if mid <= lo || mid >= hi {
                break;
            }
            match probe(mid, false, &mut out)? {
                None => return Ok(out),
                Some(true) => lo = mid,
                Some(false) => hi = mid,
            }
        }
    }
    // Confirmation: the answer must be met twice; a rate that is not steps down.
    loop {
        match probe(lo, true, &mut out)? {
            None => return Ok(out),
            Some(true) => {
                out.answer = Some(lo);
                return Ok(out);
            }
            Some(false) => lo = round_rate(lo * (1.0 - spec.precision)),
        }
        if lo < spec.start * (1.0 - spec.precision) {
            return Ok(out);
        }
    }
}

/// Whether the search has taken its `max_steps` (and says so in `out`).
fn stepped_out(spec: &MaxRateSpec, out: &mut MaxRate) -> bool {
    let done = out.tried.len() >= spec.max_steps;
    if done {
        out.cut_short = Some(format!(
            "stopped after {} steps (--max-steps)",
            spec.max_steps
        ));
    }
    done
}

fn out_of_time(spec: &MaxRateSpec) -> String {
    format!(
        "stopped after {} (--search-time)",
        humantime_secs(spec.budget)
    )
}

/// One measured rate into `out`: Some(met?), or None when the search must stop (the level was
/// interrupted, or the target was lost).
fn record(
    out: &mut MaxRate,
    rate: f64,
    confirmation: bool,
    level: Level,
    unmet: Option<String>,
) -> Option<bool> {
    if level.result.interrupted {
        out.interrupted = true;
        return None;
    }
    let (met, ended) = (unmet.is_none(), level.result.ended);
    if !met && out.first_unmet.is_none_or(|u| rate < u) {
        out.first_unmet = Some(rate);
    }
    out.tried.push(Tried {
        rate,
        level,
        unmet,
        confirmation,
    });
    if let Some(e) = ended {
        out.cut_short = Some(format!("the target was {}", e.name()));
        return None;
    }
    Some(met)
}

/// Rates tried are whole requests per second above 100/s, for tables a reader can follow.
fn round_rate(r: f64) -> f64 {
    if r >= 100.0 {
        r.round()
    } else {
        (r * 100.0).round() / 100.0
    }
}

fn humantime_secs(d: Duration) -> String {
    format!("{} s", d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use webstand_results::{RunResult, Target};

    /// A fake observer whose "server" serves at most `capacity` requests per second: a level meets
    /// the SLO when its rate is within capacity. The runs are the engine's results, made up here.
    struct Capacity {
        runs: usize,
    }
    impl Observer for Capacity {
        fn execute(
            &mut self,
            plan: &Plan,
            _: std::sync::Arc<webstand_results::Live>,
        ) -> Result<RunResult> {
            self.runs += 1;
            let webstand_results::Shape::Open { rate, .. } = plan.shape else {
                bail!("not open")
            };
            Ok(RunResult {
                complete: rate as u64,
                elapsed: Duration::from_secs(1),
                ..Default::default()
            })
        }
    }

    fn spec() -> MaxRateSpec {
        MaxRateSpec {
            clients: 4,
            start: 100.0,
            limit: 1e6,
            jitter: false,
            stop: Stop {
                requests: None,
                duration: Some(Duration::from_secs(1)),
            },
            warmup: None,
            precision: 0.02,
            max_steps: 30,
            budget: Duration::from_secs(60),
        }
    }

    /// A plan the searches start from (nothing is sent: the observer answers).
    fn base() -> Plan {
        Plan::new(
            Target {
                host: "127.0.0.1".into(),
                port: 1,
                addrs: Vec::new(),
            },
            "/",
        )
    }

    #[test]
    fn the_search_brackets_the_capacity_and_confirms_it() {
        let base = base();
        let mut obs = Capacity { runs: 0 };
        let judge =
            |_: &Capacity, l: &Level, _| (l.result.complete > 1234).then(|| "over".to_string());
        let found = find(&spec(), &base, &mut obs, judge).unwrap();
        let answer = found.answer.unwrap();
        assert!((1234.0 * 0.98..=1234.0).contains(&answer), "{answer}");
        assert_eq!(
            found.first_unmet,
            Some(
                found
                    .tried
                    .iter()
                    .filter(|t| t.unmet.is_some())
                    .map(|t| t.rate)
                    .fold(f64::MAX, f64::min)
            )
        );
        assert!(found.tried.last().unwrap().confirmation);
        assert_eq!(obs.runs, found.tried.len());

        let mut short = spec();
        short.max_steps = 3;
        let found = find(&short, &base, &mut Capacity { runs: 0 }, judge).unwrap();
        assert_eq!((found.tried.len(), found.answer), (3, None));
        assert!(found.cut_short.unwrap().contains("3 steps"));
    }

    /// Each rate's level as the history keeps it: the rate it asked, and its verdict.
    fn saved(found: &MaxRate) -> VecDeque<(Level, Option<String>)> {
        let asked = |t: &Tried| {
            let mut level = t.level.clone();
            level.result.asked_rate = Some(t.rate);
            (level, t.unmet.clone())
        };
        found.tried.iter().map(asked).collect()
    }

    #[test]
    fn a_search_read_back_finds_its_confirmations_answer_and_end_again() {
        let base = base();
        let judge =
            |_: &Capacity, l: &Level, _| (l.result.complete > 1234).then(|| "over".to_string());
        let full = find(&spec(), &base, &mut Capacity { runs: 0 }, judge).unwrap();
        let mut short_spec = spec();
        short_spec.max_steps = 3;
        let short = find(&short_spec, &base, &mut Capacity { runs: 0 }, judge).unwrap();
        // Two searches one after the other, as two rounds are saved.
        let mut levels = saved(&full);
        levels.extend(saved(&short));
        let steps = |r: &MaxRate| -> Vec<(f64, bool, bool)> {
            r.tried
                .iter()
                .map(|t| (t.rate, t.unmet.is_none(), t.confirmation))
                .collect()
        };
        let again = replay(&spec(), &mut levels);
        assert_eq!(steps(&again), steps(&full));
        assert_eq!(
            (again.answer, again.first_unmet, again.cut_short),
            (full.answer, full.first_unmet, None)
        );
        let again = replay(&short_spec, &mut levels);
        assert_eq!(steps(&again), steps(&short));
        assert_eq!(again.cut_short, short.cut_short);
        assert!(levels.is_empty());
        // A search whose levels stop before its steps did ran out of time.
        let mut cut = saved(&full);
        cut.truncate(2);
        let again = replay(&spec(), &mut cut);
        assert_eq!(again.tried.len(), 2);
        assert_eq!(
            again.cut_short.as_deref(),
            Some("stopped after 60 s (--search-time)")
        );
    }
}
