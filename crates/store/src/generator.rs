//! The generator's side of a level in the history (schema 12, `levels.generator`): each load
//! thread's CPU time split into work and waiting (its spin, and how long it napped and blocked),
//! how long it might spin, the CPUs it ran on, the requests per second each thread sampled every
//! 100 ms (wrk's Req/Sec), an open-loop level's asked rate, and the level's non-2xx answers by
//! status — as one
//! JSON object, so that `show` reprints what the report printed. Levels saved before read without
//! them (no load threads), as results that do not carry them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;
use webstand_results::{CpuTime, HalfwayWaits, RunResult};

/// The step that adds it to an older file, taken only when the column is missing.
pub(crate) const COLUMN: (&str, &str, &str) = ("levels", "generator", "TEXT");

#[derive(Serialize, Deserialize)]
struct Thread {
    user_ns: u64,
    sys_ns: u64,
    spin_ns: u64,
    blocks: u64,
    naps: u64,
    napped_ns: u64,
    blocked_ns: u64,
}

#[derive(Serialize, Deserialize)]
struct Generator {
    threads: Vec<Thread>,
    spin_window_ns: u64,
    load_cpus: Vec<usize>,
    online_cpus: usize,
    #[serde(default)]
    non_2xx_statuses: BTreeMap<u16, u64>,
    /// The load threads' rate samples as (requests per second, how many samples) pairs.
    #[serde(default)]
    rate_samples: Vec<(u64, u64)>,
    /// An open-loop level's asked rate, requests per second.
    #[serde(default)]
    asked_rate: Option<f64>,
}

fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// The column's text for `r`; None for a result without load threads.
pub(crate) fn column(r: &RunResult) -> anyhow::Result<Option<String>> {
    if r.thread_cpu.is_empty() {
        return Ok(None);
    }
    let threads = r
        .thread_cpu
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let w = r.thread_waits.get(i).copied().unwrap_or_default();
            Thread {
                user_ns: ns(c.user),
                sys_ns: ns(c.sys),
                spin_ns: ns(r.thread_spin.get(i).copied().unwrap_or_default()),
                blocks: w.blocks,
                naps: w.naps,
                napped_ns: ns(w.napped),
                blocked_ns: ns(w.blocked),
            }
        })
        .collect();
    let g = Generator {
        threads,
        spin_window_ns: ns(r.spin_window),
        load_cpus: r.load_cpus.clone(),
        online_cpus: r.online_cpus,
        non_2xx_statuses: r.non_2xx_statuses.clone(),
        rate_samples: r
            .histograms
            .requests
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect(),
        asked_rate: r.asked_rate,
    };
    Ok(Some(serde_json::to_string(&g)?))
}

/// Puts what the column holds back into `r`; a column that is empty or does not parse (written
/// by hand, cut short) leaves it without load threads.
pub(crate) fn apply(text: Option<&str>, r: &mut RunResult) {
    let Some(g) = text.and_then(|t| serde_json::from_str::<Generator>(t).ok()) else {
        return;
    };
    let d = Duration::from_nanos;
    for t in &g.threads {
        r.thread_cpu.push(CpuTime {
            user: d(t.user_ns),
            sys: d(t.sys_ns),
        });
        r.thread_spin.push(d(t.spin_ns));
        r.thread_waits.push(HalfwayWaits {
            blocks: t.blocks,
            naps: t.naps,
            napped: d(t.napped_ns),
            blocked: d(t.blocked_ns),
        });
    }
    r.spin_window = d(g.spin_window_ns);
    (r.load_cpus, r.online_cpus) = (g.load_cpus, g.online_cpus);
    r.non_2xx_statuses = g.non_2xx_statuses;
    r.asked_rate = g.asked_rate;
    for (per_second, n) in g.rate_samples {
        // The histogram's bounds cover any rate a thread can sample; a hand-made value beyond
        // them is clamped rather than refused.
        r.histograms.requests.saturating_record_n(per_second, n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generators_figures_come_back_as_they_went_in() {
        let r = RunResult {
            thread_cpu: vec![CpuTime {
                user: Duration::from_millis(300),
                sys: Duration::from_millis(500),
            }],
            thread_spin: vec![Duration::from_millis(120)],
            thread_waits: vec![HalfwayWaits {
                blocks: 4,
                naps: 9,
                napped: Duration::from_millis(30),
                blocked: Duration::from_millis(70),
            }],
            spin_window: Duration::from_micros(20),
            load_cpus: vec![1],
            online_cpus: 2,
            non_2xx_statuses: [(404, 12)].into_iter().collect(),
            asked_rate: Some(2750.0),
            ..Default::default()
        };
        let mut r = r;
        r.histograms.requests.record_n(14_000, 3).unwrap();
        r.histograms.requests.record(31_250).unwrap();
        let text = column(&r).unwrap().unwrap();
        let mut back = RunResult::default();
        apply(Some(&text), &mut back);
        assert_eq!(back.thread_cpu, r.thread_cpu);
        assert_eq!(back.thread_spin, r.thread_spin);
        assert_eq!(back.thread_waits, r.thread_waits);
        assert_eq!(
            (back.spin_window, back.load_cpus, back.online_cpus),
            (r.spin_window, r.load_cpus.clone(), 2)
        );
        assert_eq!(back.non_2xx_statuses, r.non_2xx_statuses);
        assert_eq!(back.histograms.requests, r.histograms.requests);
        assert_eq!(back.asked_rate, Some(2750.0));
        assert_eq!(column(&RunResult::default()).unwrap(), None);
        let mut none = RunResult::default();
        apply(Some("{cut"), &mut none);
        assert!(none.thread_cpu.is_empty());
    }
}
