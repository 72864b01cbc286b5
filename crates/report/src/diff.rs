//! `webstand diff`: two sets of measured levels side by side, metric by metric, with the ratio B/A and
//! a warning wherever the difference is smaller than the runs' own spread.
//!
//! Spread is how much a figure moves between measurements of the same thing. Levels with the same
//! group and clients (repeats within a run, or the same level in several runs given to one side) are
//! samples: the value shown is their median and the spread their relative range, (max − min) ÷ median.
//! A level measured once has no repeats; its spread is then estimated from its latency histogram as
//! the relative standard error of the mean latency, stdev ÷ mean ÷ √n. That estimate is a lower bound
//! (it ignores run-to-run drift), which is why diffs of single runs say so and suggest repeating.

use crate::export::{latency_ms as q, Level};
use std::fmt::Write;
use webstand_engine::RunResult;

/// One side of a diff: a name ("run 3", "runs 3,4,5") and the levels of its run(s).
pub struct Side<'a> {
    pub name: String,
    pub levels: Vec<Level<'a>>,
}

struct Metric {
    name: &'static str,
    value: fn(&RunResult) -> f64,
}

const METRICS: &[Metric] = &[
    Metric {
        name: "Hits/s",
        value: |r| r.hits_per_sec(),
    },
    Metric {
        name: "KB/s",
        value: |r| r.kbytes_per_sec(),
    },
    Metric {
        name: "Mean latency ms",
        value: |r| r.mean_latency_secs() * 1000.0,
    },
    Metric {
        name: "p50 ms",
        value: |r| q(r, 0.5),
    },
    Metric {
        name: "p90 ms",
        value: |r| q(r, 0.9),
    },
    Metric {
        name: "p99 ms",
        value: |r| q(r, 0.99),
    },
    Metric {
        name: "p99.9 ms",
        value: |r| q(r, 0.999),
    },
    Metric {
        name: "Max ms",
        value: |r| r.histograms.total.max() as f64 / 1000.0,
    },
    Metric {
        name: "Error %",
        value: |r| r.error_pct(),
    },
    Metric {
        name: "Little's load",
        value: |r| r.littles_load(),
    },
    Metric {
        name: "Client CPU-µs/req",
        value: |r| r.cpu_us_per_request(),
    },
];

/// A figure over a level's samples: the median, and the spread as defined in the module doc.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figure {
    pub value: f64,
    /// Relative spread (0.05 = ±5 %), None when it cannot be told (no samples with requests).
    pub spread: Option<f64>,
    /// True when the spread is the one-sample histogram estimate rather than measured repeats.
    pub estimated: bool,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The relative standard error of a result's mean latency: stdev ÷ mean ÷ √n.
fn histogram_spread(r: &RunResult) -> Option<f64> {
    let h = &r.histograms.total;
    if h.is_empty() || h.mean() <= 0.0 {
        return None;
    }
    Some(h.stdev() / h.mean() / (h.len() as f64).sqrt())
}

pub fn figure(samples: &[&RunResult], value: fn(&RunResult) -> f64) -> Figure {
    let values: Vec<f64> = samples.iter().map(|r| value(r)).collect();
    let m = median(values.clone());
    if samples.len() >= 2 {
        let (lo, hi) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        let spread = if m.abs() > 0.0 {
            Some((hi - lo) / m.abs())
        } else if hi == lo {
            Some(0.0)
        } else {
            None
        };
        Figure {
            value: m,
            spread,
            estimated: false,
        }
    } else {
        Figure {
            value: m,
            spread: samples.first().and_then(|r| histogram_spread(r)),
            estimated: true,
        }
    }
}

/// Level key: (group, clients).
type Key<'a> = (&'a str, usize);

fn samples<'a, 'b>(levels: &'b [Level<'a>]) -> Vec<(Key<'a>, Vec<&'a RunResult>)> {
    let mut out: Vec<(Key<'a>, Vec<&'a RunResult>)> = Vec::new();
    for l in levels {
        let key = (l.group, l.clients);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(l.result),
            None => out.push((key, vec![l.result])),
        }
    }
    out
}

fn key_name(k: Key) -> String {
    if k.0.is_empty() {
        format!("{} clients", k.1)
    } else {
        format!("{} @ {} clients", k.0, k.1)
    }
}

/// Pairs the two sides' levels: by (group, clients); failing any match, one level each or equal
/// numbers of levels pair up in order. Errors when nothing pairs.
fn pairs<'a>(
    a: &[(Key<'a>, Vec<&'a RunResult>)],
    b: &[(Key<'a>, Vec<&'a RunResult>)],
) -> anyhow::Result<Vec<(usize, usize)>> {
    let matched: Vec<(usize, usize)> = a
        .iter()
        .enumerate()
        .filter_map(|(i, (k, _))| b.iter().position(|(kb, _)| kb == k).map(|j| (i, j)))
        .collect();
    if !matched.is_empty() {
        return Ok(matched);
    }
    if a.len() == b.len() && !a.is_empty() {
        return Ok((0..a.len()).map(|i| (i, i)).collect());
    }
    anyhow::bail!(
        "the runs share no level to compare (A has {}, B has {}; levels pair by group and clients)",
        a.iter()
            .map(|(k, _)| key_name(*k))
            .collect::<Vec<_>>()
            .join(", "),
        b.iter()
            .map(|(k, _)| key_name(*k))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn pct(s: Option<f64>, estimated: bool) -> String {
    match s {
        Some(s) => format!("±{:.1}%{}", s * 100.0, if estimated { "*" } else { "" }),
        None => "-".into(),
    }
}

fn num(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The diff as text, and how many differences fell within the spread.
pub fn diff(a: &Side, b: &Side) -> anyhow::Result<(String, usize)> {
    let sa = samples(&a.levels);
    let sb = samples(&b.levels);
    let pairs = pairs(&sa, &sb)?;
    let mut out = format!("A = {}\nB = {}\n", a.name, b.name);
    let (mut within, mut compared, mut any_estimated) = (0usize, 0usize, false);
    for (i, j) in pairs {
        let (ka, ra) = &sa[i];
        let (kb, rb) = &sb[j];
        let title = if ka == kb {
            key_name(*ka)
        } else {
            format!("A: {}  vs  B: {}", key_name(*ka), key_name(*kb))
        };
        let _ = writeln!(out, "\n{title}   (samples: A {}, B {})", ra.len(), rb.len());
        let _ = writeln!(
            out,
            "{:<18} {:>12} {:>12} {:>8} {:>10} {:>10}",
            "Metric", "A", "B", "B/A", "Spread A", "Spread B"
        );
        for m in METRICS {
            let fa = figure(ra, m.value);
            let fb = figure(rb, m.value);
            any_estimated |= fa.estimated || fb.estimated;
            let ratio = if fa.value != 0.0 {
                Some(fb.value / fa.value)
            } else {
                None
            };
            let noise = fa.spread.unwrap_or(0.0).max(fb.spread.unwrap_or(0.0));
            let note = match ratio {
                Some(r) if (r - 1.0).abs() > 0.0 && (r - 1.0).abs() <= noise => {
                    within += 1;
                    "  ~ within spread"
                }
                _ => "",
            };
            if ratio.is_some() {
                compared += 1;
            }
            let ratio = ratio
                .map(|r| format!("{r:.3}"))
                .unwrap_or_else(|| "-".into());
            let _ = writeln!(
                out,
                "{:<18} {:>12} {:>12} {:>8} {:>10} {:>10}{note}",
                m.name,
                num(fa.value),
                num(fb.value),
                ratio,
                pct(fa.spread, fa.estimated),
                pct(fb.spread, fb.estimated)
            );
        }
    }
    out.push_str("\nSpread: (max - min) / median over repeated measurements of a level (same group and clients).\n");
    if any_estimated {
        out.push_str(
            "* measured once: spread estimated from the latency histogram (stdev / mean / sqrt(n)), a lower bound;\n  give several runs per side (e.g. `webstand diff 3,4,5 6,7,8`) for a measured spread.\n",
        );
    }
    if within > 0 {
        let _ = writeln!(
            out,
            "warning: {within} of {compared} differences are smaller than the runs' own spread (marked ~): they may be noise"
        );
    }
    Ok((out, within))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn result(complete: u64, secs: f64, latency_us: &[u64]) -> RunResult {
        let mut r = RunResult {
            elapsed: Duration::from_secs_f64(secs),
            complete,
            ..Default::default()
        };
        for &v in latency_us {
            r.histograms.total.record(v).unwrap();
            r.latency_sum_us += v as u128;
        }
        r
    }

    #[test]
    fn repeats_give_median_and_relative_range() {
        let (a, b, c) = (
            result(900, 1.0, &[1000]),
            result(1000, 1.0, &[1000]),
            result(1100, 1.0, &[1000]),
        );
        let f = figure(&[&a, &b, &c], |r| r.hits_per_sec());
        assert_eq!(f.value, 1000.0);
        assert!((f.spread.unwrap() - 0.2).abs() < 1e-9);
        assert!(!f.estimated);
    }

    #[test]
    fn one_sample_spread_comes_from_the_histogram() {
        let lat: Vec<u64> = (0..100)
            .map(|i| if i % 2 == 0 { 1000 } else { 3000 })
            .collect();
        let f = figure(&[&result(100, 1.0, &lat)], |r| r.hits_per_sec());
        // stdev 1000, mean 2000, n 100 → 0.05
        assert!((f.spread.unwrap() - 0.05).abs() < 0.002, "{f:?}");
        assert!(f.estimated);
    }

    #[test]
    fn a_small_difference_within_spread_is_flagged_and_a_large_one_is_not() {
        let a1 = result(1000, 1.0, &[1000, 1100]);
        let a2 = result(1100, 1.0, &[1000, 1100]);
        let b1 = result(1050, 1.0, &[1000, 1100]);
        let b2 = result(1060, 1.0, &[1000, 1100]);
        let lv = |r| Level {
            group: "2k",
            clients: 8,
            server_version: None,
            result: r,
        };
        let a = Side {
            name: "runs 1,2".into(),
            levels: vec![lv(&a1), lv(&a2)],
        };
        let b = Side {
            name: "runs 3,4".into(),
            levels: vec![lv(&b1), lv(&b2)],
        };
        let (text, within) = diff(&a, &b).unwrap();
        let hits = text.lines().find(|l| l.starts_with("Hits/s")).unwrap();
        assert!(hits.contains("~ within spread"), "{text}");
        assert!(within >= 1 && text.contains("warning:"), "{text}");

        let fast = result(5000, 1.0, &[200, 220]);
        let c = Side {
            name: "run 5".into(),
            levels: vec![lv(&fast)],
        };
        let (text, _) = diff(&a, &c).unwrap();
        let hits = text.lines().find(|l| l.starts_with("Hits/s")).unwrap();
        assert!(hits.contains("4.762") && !hits.contains('~'), "{text}");
    }

    #[test]
    fn levels_that_do_not_pair_are_an_error() {
        let r = result(10, 1.0, &[1000]);
        let a = Side {
            name: "a".into(),
            levels: vec![
                Level {
                    group: "x",
                    clients: 1,
                    server_version: None,
                    result: &r,
                },
                Level {
                    group: "x",
                    clients: 2,
                    server_version: None,
                    result: &r,
                },
            ],
        };
        let b = Side {
            name: "b".into(),
            levels: vec![Level {
                group: "y",
                clients: 4,
                server_version: None,
                result: &r,
            }],
        };
        let e = diff(&a, &b).err().unwrap().to_string();
        assert!(e.contains("share no level"), "{e}");
    }
}
