//! A saved `sweep --find-max-rate` search read back (`show`, `report`, `export`): its levels judged
//! again from the saved --slo and each level's Diagnosis, and walked through the search's steps
//! again (`maxrate::replay`) for its rounds, confirmations and answers, so that it reads as the
//! search printed it.

use super::max_rate::{
    search_json, text, unmet_by, Search, DEFAULT_MAX_RATE, DEFAULT_MAX_STEPS, DEFAULT_POOL,
    DEFAULT_SEARCH_TIME, DEFAULT_START_RATE, PRECISION,
};
use std::collections::VecDeque;
use webstand_lab::maxrate::{self, MaxRate, MaxRateSpec};
use webstand_results::{Level, Stop};
use webstand_store::StoredRun;
use webstand_thresholds::Threshold;

/// A saved `sweep --find-max-rate` run as the search printed it. None for any other run.
pub fn stored_table(run: &StoredRun) -> Option<String> {
    let workload = workload(run);
    Some(match read_back(run)? {
        Err(slo) => format!(
            "Max-rate search on {workload}: its --slo {slo:?} does not read back; its levels are in `webstand export`\n"
        ),
        Ok((search, rounds, 0)) => text(&search, workload, &rounds) + "\n",
        Ok((search, rounds, left)) => {
            text(&search, workload, &rounds)
                + &format!("({left} saved levels are not steps of the search: see `webstand export`)\n\n")
        }
    })
}

/// A saved `sweep --find-max-rate` run as its `--json` gave it, but its outcome (`export`). None
/// for any other run, or one whose --slo does not read back.
pub fn stored_json(run: &StoredRun) -> Option<serde_json::Value> {
    let (search, rounds, _) = read_back(run)?.ok()?;
    Some(search_json(&search, workload(run), &rounds))
}

fn workload(run: &StoredRun) -> &str {
    run.levels.first().map_or("", |l| l.group.as_str())
}

/// The search's settings and rounds, and how many saved levels were not steps of it; Err(the saved
/// --slo) when that does not read back; None for a run that was not a max-rate search.
type ReadBack = Result<(Search, Vec<MaxRate>, usize), String>;

fn read_back(run: &StoredRun) -> Option<ReadBack> {
    if !run
        .meta
        .command_line
        .split_whitespace()
        .any(|w| w == "--find-max-rate")
    {
        return None;
    }
    let slo_text = run.option("--slo").unwrap_or_default();
    let Ok(slo) = webstand_thresholds::parse_list(slo_text) else {
        return Some(Err(slo_text.to_string()));
    };
    let search = saved_search(run, slo);
    let mut rounds = Vec::new();
    let mut left = 0;
    for round in 1..=run.levels.iter().filter_map(|l| l.round).max().unwrap_or(1) {
        let mut measured: VecDeque<(Level, Option<String>)> = run
            .levels
            .iter()
            .filter(|l| l.round.unwrap_or(1) == round)
            .map(|l| {
                let level = Level {
                    clients: l.clients,
                    result: l.result.clone(),
                };
                let verdict = l
                    .diagnosis
                    .as_ref()
                    .and_then(webstand_diagnosis::render::from_json)
                    .and_then(|d| d.verdict);
                let rate = l.result.asked_rate.unwrap_or_default();
                let unmet = unmet_by(&search.slo, &level, verdict, rate);
                (level, unmet)
            })
            .collect();
        // A search saved before its rounds were: every round is round 1, one after the other.
        while !measured.is_empty() {
            let before = measured.len();
            let found = maxrate::replay(&search.spec, &mut measured);
            if measured.len() == before {
                break;
            }
            rounds.push(found);
        }
        left += measured.len();
    }
    Some(Ok((search, rounds, left)))
}

/// The search as the saved command line set it: its options, else their defaults.
fn saved_search(run: &StoredRun, slo: Vec<Threshold>) -> Search {
    let number = |name: &str, default: f64| {
        run.option(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let budget = run
        .option("--search-time")
        .and_then(|t| webstand_duration::positive(t).ok())
        .or_else(|| webstand_duration::positive(DEFAULT_SEARCH_TIME).ok())
        .unwrap_or_default();
    Search {
        spec: MaxRateSpec {
            clients: run.levels.first().map_or(DEFAULT_POOL, |l| l.clients),
            start: number("--start-rate", DEFAULT_START_RATE),
            limit: number("--max-rate", DEFAULT_MAX_RATE),
            jitter: false,
            stop: Stop::default(),
            warmup: None,
            precision: PRECISION,
            max_steps: number("--max-steps", DEFAULT_MAX_STEPS as f64) as usize,
            budget,
        },
        slo,
        rounds: number("--rounds", 1.0) as usize,
    }
}
