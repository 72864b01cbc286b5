//! `webstand diff`: two sets of measured levels side by side, metric by metric, with the ratio B/A and
//! a warning wherever the difference is within the runs' own noise.
//!
//! Spread is how much a figure moves between measurements of the same thing, per metric. Levels with
//! the same group and clients (repeats within a run, or the same level in several runs given to one
//! side) are samples: the value shown is their median and the spread their relative *range*,
//! (max − min) ÷ median, labelled as a range (it is not a ±). A level measured once has no repeats;
//! each metric's spread is then one relative *standard error* estimated from that measurement, shown
//! as ±…SE*: stdev ÷ mean ÷ √n for the mean latency (and hits/s and KB/s, which follow it in a
//! closed loop), the spread of the sample quantile for p50 … p99.9, the binomial error for the error
//! rate, and none for the rest. Such estimates are lower bounds (they ignore run-to-run drift),
//! which is why diffs of single runs say so and suggest repeating.

use crate::diff_cells::{median, num, ratio, ratio_cell};
use crate::export::latency_ms as q;
use crate::levels::Level;
use std::fmt::Write;
use webstand_results::RunResult;

/// One side of a diff: a name ("run 3", "runs 3,4,5") and the levels of its run(s).
pub struct Side<'a> {
    pub name: String,
    pub levels: Vec<Level<'a>>,
    /// What the side's runs spoke ("HTTP/1.1", "h2c -m 16"), where known: sides that differ are
    /// flagged, since their ratios then compare two protocols.
    pub protocol: Option<String>,
    /// What the side's runs were asked to do and where they ran, as (setting, value): the target,
    /// clients, keep-alive, options, versions, machine. Those that differ are named first.
    pub settings: Vec<(String, String)>,
}

/// A side's name: "run 3 (bench of URL)", "runs 3,4,5 (sweep of URL, h2c -m 16)", from its runs'
/// ids and its first run's kind and target.
pub fn side_name(ids: &[i64], kind: &str, target: &str, protocol: Option<&str>) -> String {
    let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
    format!(
        "run{} {} ({kind} of {target}{})",
        if ids.len() > 1 { "s" } else { "" },
        ids.join(","),
        protocol.map(|p| format!(", {p}")).unwrap_or_default()
    )
}

/// A side's settings from each of its runs' settings: each setting's values over the runs, each
/// once ("1 | 2" when its runs differ), a setting some runs lack counting as "-".
pub fn side_settings(each: &[Vec<(String, String)>]) -> Vec<(String, String)> {
    let mut names: Vec<&str> = Vec::new();
    for (k, _) in each.iter().flatten() {
        if !names.contains(&k.as_str()) {
            names.push(k);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let mut values: Vec<&str> = Vec::new();
            for settings in each {
                let v = settings
                    .iter()
                    .find(|(k, _)| k == name)
                    .map_or("-", |(_, v)| v);
                if !values.contains(&v) {
                    values.push(v);
                }
            }
            (name.to_string(), values.join(" | "))
        })
        .collect()
}

struct Metric {
    name: &'static str,
    /// None where the figure does not exist: a latency (or CPU per request) of a level without a
    /// response, which is "-" rather than 0.
    value: fn(&RunResult) -> Option<f64>,
    /// From one measurement: the figure's relative standard error, where the histogram or the
    /// counts can tell it (see the module doc); None where nothing can.
    estimate: fn(&RunResult) -> Option<f64>,
}

const METRICS: &[Metric] = &[
    Metric {
        name: "Hits/s",
        value: |r| Some(r.hits_per_sec()),
        estimate: mean_latency_se,
    },
    Metric {
        name: "KB/s",
        value: |r| Some(r.kbytes_per_sec()),
        estimate: mean_latency_se,
    },
    Metric {
        name: "Mean latency ms",
        value: |r| answered(r).then(|| r.mean_latency_ms()),
        estimate: mean_latency_se,
    },
    Metric {
        name: "p50 ms",
        value: |r| answered(r).then(|| q(r, 0.5)),
        estimate: |r| quantile_se(r, 0.5),
    },
    Metric {
        name: "p90 ms",
        value: |r| answered(r).then(|| q(r, 0.9)),
        estimate: |r| quantile_se(r, 0.9),
    },
    Metric {
        name: "p99 ms",
        value: |r| answered(r).then(|| q(r, 0.99)),
        estimate: |r| quantile_se(r, 0.99),
    },
    Metric {
        name: "p99.9 ms",
        value: |r| answered(r).then(|| q(r, 0.999)),
        estimate: |r| quantile_se(r, 0.999),
    },
    Metric {
        name: "Max ms",
        value: |r| answered(r).then(|| r.histograms.total.max() as f64 / 1000.0),
        estimate: |_| None,
    },
    Metric {
        name: "Error %",
        value: |r| Some(r.error_pct()),
        estimate: error_rate_se,
    },
    Metric {
        name: "Little's load",
        value: |r| answered(r).then(|| r.littles_load()),
        estimate: |_| None,
    },
    Metric {
        name: "Client CPU-µs/req",
        value: |r| r.cpu_us_per_request_of(r.cpu),
        estimate: |_| None,
    },
];

/// Whether a level had a response to time: without one it has no latency.
fn answered(r: &RunResult) -> bool {
    !r.histograms.total.is_empty()
}

/// How a spread was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpreadKind {
    /// (max − min) ÷ median over repeated measurements.
    Range,
    /// One relative standard error, estimated from a single measurement.
    StdErr,
}

/// A figure over a level's samples: the median, and the spread as defined in the module doc.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figure {
    /// None when no sample has the figure (no response, no latency).
    pub value: Option<f64>,
    /// Relative spread (0.05 = 5 %), None when it cannot be told.
    pub spread: Option<f64>,
    pub kind: SpreadKind,
}

impl Figure {
    /// How far a ratio may stray from 1 by noise alone: the range, or twice the standard error.
    fn noise(&self) -> f64 {
        match self.kind {
            SpreadKind::Range => self.spread.unwrap_or(0.0),
            SpreadKind::StdErr => 2.0 * self.spread.unwrap_or(0.0),
        }
    }
    fn cell(&self) -> String {
        match (self.spread, self.kind) {
            (None, _) => "-".into(),
            (Some(s), SpreadKind::Range) => format!("{:.1}% range", s * 100.0),
            (Some(s), SpreadKind::StdErr) => format!("±{:.1}% SE*", s * 100.0),
        }
    }
}

/// The relative standard error of a result's mean latency: stdev ÷ mean ÷ √n. Hits/s and KB/s
/// share it: in a closed loop they are clients ÷ mean latency (Little's law).
fn mean_latency_se(r: &RunResult) -> Option<f64> {
    let h = &r.histograms.total;
    if h.is_empty() || h.mean() <= 0.0 {
        return None;
    }
    Some(h.stdev() / h.mean() / (h.len() as f64).sqrt())
}

/// The relative standard error of the latency at quantile `p`: the rank of a sample quantile moves
/// by √(n·p·(1−p)), so the error is half the distance between the latencies at p ± √(p(1−p)/n).
fn quantile_se(r: &RunResult, p: f64) -> Option<f64> {
    let h = &r.histograms.total;
    let v = q(r, p);
    if h.is_empty() || v <= 0.0 {
        return None;
    }
    let d = (p * (1.0 - p) / h.len() as f64).sqrt();
    let (lo, hi) = (q(r, (p - d).max(0.0)), q(r, (p + d).min(1.0)));
    Some((hi - lo) / 2.0 / v)
}

/// The relative standard error of an error rate p over n attempts (binomial): √(p(1−p)/n) ÷ p.
fn error_rate_se(r: &RunResult) -> Option<f64> {
    let (n, p) = (r.attempted() as f64, r.error_pct() / 100.0);
    (n > 0.0 && p > 0.0).then(|| (p * (1.0 - p) / n).sqrt() / p)
}

/// A figure over the samples that have it (`value` is None for the others).
pub fn figure(
    samples: &[&RunResult],
    value: fn(&RunResult) -> Option<f64>,
    estimate: fn(&RunResult) -> Option<f64>,
) -> Figure {
    let having: Vec<&RunResult> = samples
        .iter()
        .copied()
        .filter(|r| value(r).is_some())
        .collect();
    let values: Vec<f64> = having.iter().filter_map(|r| value(r)).collect();
    if values.is_empty() {
        return Figure {
            value: None,
            spread: None,
            kind: SpreadKind::StdErr,
        };
    }
    let m = median(values.clone());
    if having.len() < 2 {
        return Figure {
            value: Some(m),
            spread: having.first().and_then(|r| estimate(r)),
            kind: SpreadKind::StdErr,
        };
    }
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
        value: Some(m),
        spread,
        kind: SpreadKind::Range,
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

/// Pairs the two sides' levels: by (group, clients); failing that, by clients alone, so a
/// comparison's "nginx/2k @ 8 clients" meets a bench run's "8 clients" (every A level with every B
/// level of the same clients); failing that, equal numbers of levels pair up in order. Errors when
/// nothing pairs.
fn pairs<'a>(
    a: &[(Key<'a>, Vec<&'a RunResult>)],
    b: &[(Key<'a>, Vec<&'a RunResult>)],
) -> anyhow::Result<Vec<(usize, usize)>> {
    let matching = |same: &dyn Fn(Key, Key) -> bool| -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (i, (ka, _)) in a.iter().enumerate() {
            for (j, (kb, _)) in b.iter().enumerate() {
                if same(*ka, *kb) {
                    out.push((i, j));
                }
            }
        }
        out
    };
    let exact = matching(&|x, y| x == y);
    if !exact.is_empty() {
        return Ok(exact);
    }
    let by_clients = matching(&|x, y| x.1 == y.1);
    if !by_clients.is_empty() {
        return Ok(by_clients);
    }
    if a.len() == b.len() && !a.is_empty() {
        return Ok((0..a.len()).map(|i| (i, i)).collect());
    }
    let names = |s: &[(Key, Vec<&RunResult>)]| {
        s.iter()
            .map(|(k, _)| key_name(*k))
            .collect::<Vec<_>>()
            .join(", ")
    };
    anyhow::bail!(
        "the runs share no level to compare (A has {}, B has {}; levels pair by group and clients, else by clients)",
        names(a),
        names(b)
    )
}

/// A side's note under a pair's title when one of its samples was mostly errors.
fn errors_note(side: &str, samples: &[&RunResult]) -> String {
    match samples.iter().find(|r| r.mostly_errors()) {
        Some(r) => format!(
            "  {side}: MOSTLY ERRORS ({:.1} % failed or non-2xx): its figures do not describe a working server\n",
            r.error_pct()
        ),
        None => String::new(),
    }
}

/// Counts over the compared metrics.
#[derive(Default)]
struct Counts {
    within: usize,
    compared: usize,
    estimated: bool,
}

/// One pair's table: every metric, A, B, B/A and each side's spread.
fn pair_table(out: &mut String, ra: &[&RunResult], rb: &[&RunResult], n: &mut Counts) {
    let _ = writeln!(
        out,
        "{:<18} {:>12} {:>12} {:>8} {:>13} {:>13}",
        "Metric", "A", "B", "B/A", "A spread", "B spread"
    );
    for m in METRICS {
        let fa = figure(ra, m.value, m.estimate);
        let fb = figure(rb, m.value, m.estimate);
        n.estimated |= [fa, fb]
            .iter()
            .any(|f| f.kind == SpreadKind::StdErr && f.spread.is_some());
        let ratio = fa.value.zip(fb.value).and_then(|(a, b)| ratio(a, b));
        let noise = fa.noise().max(fb.noise());
        let note = match ratio {
            Some(r) if (r - 1.0).abs() > 0.0 && (r - 1.0).abs() <= noise => {
                n.within += 1;
                "  ~ within noise"
            }
            _ => "",
        };
        n.compared += ratio.is_some() as usize;
        let ratio = ratio_cell(ratio);
        let _ = writeln!(
            out,
            "{:<18} {:>12} {:>12} {:>8} {:>13} {:>13}{note}",
            m.name,
            fa.value.map_or_else(|| "-".into(), num),
            fb.value.map_or_else(|| "-".into(), num),
            ratio,
            fa.cell(),
            fb.cell()
        );
    }
}

/// The diff as text, and how many differences fell within the noise.
/// The settings whose values differ between the sides, one per line ("  -n  2000 → 5000"); a
/// setting only one side has is "-" on the other. Says so when every setting is the same.
fn settings_note(a: &Side, b: &Side) -> String {
    if a.settings.is_empty() && b.settings.is_empty() {
        return String::new();
    }
    let value = |s: &Side, k: &str| {
        s.settings
            .iter()
            .find(|(name, _)| name == k)
            .map_or("-".to_string(), |(_, v)| v.clone())
    };
    let mut names: Vec<&str> = Vec::new();
    for (k, _) in a.settings.iter().chain(&b.settings) {
        if !names.contains(&k.as_str()) {
            names.push(k);
        }
    }
    let differ: Vec<(&str, String, String)> = names
        .into_iter()
        .map(|k| (k, value(a, k), value(b, k)))
        .filter(|(_, va, vb)| va != vb)
        .collect();
    if differ.is_empty() {
        return "Settings: the same on both sides (target, clients, keep-alive, protocol, options, versions, machine)\n".into();
    }
    let w = differ
        .iter()
        .map(|(k, ..)| k.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::from("Settings that differ (A → B):\n");
    for (k, va, vb) in differ {
        let _ = writeln!(out, "  {k:<w$}  {va} → {vb}");
    }
    out
}

pub fn diff(a: &Side, b: &Side) -> anyhow::Result<(String, usize)> {
    let sa = samples(&a.levels);
    let sb = samples(&b.levels);
    let pairs = pairs(&sa, &sb)?;
    let mut out = format!("A = {}\nB = {}\n", a.name, b.name);
    if let (Some(pa), Some(pb)) = (&a.protocol, &b.protocol) {
        if pa != pb {
            let _ = writeln!(
                out,
                "warning: A spoke {pa} and B spoke {pb}: the ratios compare two protocols, not two runs of one"
            );
        }
    }
    out.push_str(&settings_note(a, b));
    let mut n = Counts::default();
    for (i, j) in pairs {
        let (ka, ra) = &sa[i];
        let (kb, rb) = &sb[j];
        let title = if ka == kb {
            key_name(*ka)
        } else {
            format!("A: {}  vs  B: {}", key_name(*ka), key_name(*kb))
        };
        let _ = writeln!(out, "\n{title}   (samples: A {}, B {})", ra.len(), rb.len());
        out.push_str(&errors_note("A", ra));
        out.push_str(&errors_note("B", rb));
        pair_table(&mut out, ra, rb, &mut n);
        out.push_str(&crate::quic_diff::table(ra, rb));
    }
    out.push_str("\nError %: failed requests + non-2xx answers, % of attempted.\n");
    out.push_str("range: (max - min) / median over repeated measurements of a level (same group and clients, or several runs per side).\n");
    if n.estimated {
        out.push_str(
            "±SE*: measured once, so one standard error estimated from that measurement (latency histogram, or the error count),\n  a lower bound: it ignores run-to-run drift; give several runs per side (e.g. `webstand diff 3,4,5 6,7,8`) for a\n  measured range.\n",
        );
    }
    if n.within > 0 {
        let _ = writeln!(
            out,
            "warning: {} of {} differences are within the noise (the range, or twice the standard error; marked ~): they may be noise",
            n.within, n.compared
        );
    }
    Ok((out, n.within))
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
        let f = figure(&[&a, &b, &c], |r| Some(r.hits_per_sec()), mean_latency_se);
        assert_eq!(f.value, Some(1000.0));
        assert!((f.spread.unwrap() - 0.2).abs() < 1e-9);
        assert_eq!(
            (f.kind, f.cell().as_str()),
            (SpreadKind::Range, "20.0% range")
        );
    }

    #[test]
    fn one_sample_spread_comes_from_the_histogram() {
        let lat: Vec<u64> = (0..100)
            .map(|i| if i % 2 == 0 { 1000 } else { 3000 })
            .collect();
        let r = result(100, 1.0, &lat);
        let f = figure(&[&r], |r| Some(r.hits_per_sec()), mean_latency_se);
        // stdev 1000, mean 2000, n 100 → 0.05
        assert!((f.spread.unwrap() - 0.05).abs() < 0.002, "{f:?}");
        assert_eq!(
            (f.kind, f.cell().as_str()),
            (SpreadKind::StdErr, "±5.0% SE*")
        );
        // Each metric its own: the median sits in the 1 ms half, well inside it.
        let p50 = figure(&[&r], |r| Some(q(r, 0.5)), |r| quantile_se(r, 0.5));
        assert_ne!(p50.spread, f.spread);
        let max = figure(&[&r], |r| Some(r.histograms.total.max() as f64), |_| None);
        assert_eq!(max.cell(), "-");
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
            round: 1,
            server_version: None,
            result: r,
        };
        let a = Side {
            name: "runs 1,2".into(),
            levels: vec![lv(&a1), lv(&a2)],
            protocol: None,
            settings: Vec::new(),
        };
        let b = Side {
            name: "runs 3,4".into(),
            levels: vec![lv(&b1), lv(&b2)],
            protocol: None,
            settings: Vec::new(),
        };
        let (text, within) = diff(&a, &b).unwrap();
        let hits = text.lines().find(|l| l.starts_with("Hits/s")).unwrap();
        assert!(
            hits.contains("~ within noise") && hits.contains("% range"),
            "{text}"
        );
        assert!(!text.contains('±'), "repeats give ranges, never ±: {text}");
        assert!(within >= 1 && text.contains("warning:"), "{text}");

        let fast = result(5000, 1.0, &[200, 220]);
        let c = Side {
            name: "run 5".into(),
            levels: vec![lv(&fast)],
            protocol: None,
            settings: Vec::new(),
        };
        let (text, _) = diff(&a, &c).unwrap();
        let hits = text.lines().find(|l| l.starts_with("Hits/s")).unwrap();
        assert!(hits.contains("4.762") && !hits.contains('~'), "{text}");
    }

    #[test]
    fn a_side_without_a_response_has_no_latency_and_no_ratio() {
        let answered = result(1000, 1.0, &[1000, 1100]);
        let mut refused = result(0, 1.0, &[]);
        refused.failed.connect = 20;
        let side = |name: &str, r| Side {
            name: name.into(),
            levels: vec![Level {
                group: "",
                clients: 2,
                round: 1,
                server_version: None,
                result: r,
            }],
            protocol: None,
            settings: Vec::new(),
        };
        let (text, _) = diff(&side("run 1", &answered), &side("run 2", &refused)).unwrap();
        let cells = |metric: &str| -> Vec<String> {
            let line = text.lines().find(|l| l.starts_with(metric)).unwrap();
            line[metric.len()..]
                .split_whitespace()
                .map(String::from)
                .collect()
        };
        for metric in [
            "Mean latency ms",
            "p50 ms",
            "p99.9 ms",
            "Max ms",
            "Little's load",
            "Client CPU-µs/req",
        ] {
            let c = cells(metric);
            assert_eq!(
                (c[1].as_str(), c[2].as_str()),
                ("-", "-"),
                "{metric} of B, B/A: {text}"
            );
        }
        // Its hits/s and errors were measured: zero hits/s and 100 % errors are figures.
        assert_eq!(cells("Hits/s")[1], "0.000", "{text}");
        assert_eq!(cells("Error %")[1], "100.0", "{text}");
        assert!(!text.contains("0.000 ms"), "{text}");
    }

    #[test]
    fn a_comparison_meets_a_bench_at_the_same_clients() {
        let r = result(1000, 1.0, &[1000, 1100]);
        let lv = |group, clients| Level {
            group,
            clients,
            round: 1,
            server_version: None,
            result: &r,
        };
        let compare = Side {
            name: "run 34".into(),
            levels: vec![lv("builtin/2k", 1), lv("builtin/2k", 8), lv("nginx/2k", 8)],
            protocol: None,
            settings: Vec::new(),
        };
        let bench = Side {
            name: "run 26".into(),
            levels: vec![lv("", 8)],
            protocol: None,
            settings: Vec::new(),
        };
        let (text, _) = diff(&compare, &bench).unwrap();
        assert!(
            text.contains("A: builtin/2k @ 8 clients  vs  B: 8 clients"),
            "{text}"
        );
        assert!(
            text.contains("A: nginx/2k @ 8 clients  vs  B: 8 clients"),
            "{text}"
        );
        assert!(!text.contains("@ 1 clients"), "{text}");
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
                    round: 1,
                    server_version: None,
                    result: &r,
                },
                Level {
                    group: "x",
                    clients: 2,
                    round: 1,
                    server_version: None,
                    result: &r,
                },
            ],
            protocol: None,
            settings: Vec::new(),
        };
        let b = Side {
            name: "b".into(),
            levels: vec![Level {
                group: "y",
                clients: 4,
                round: 1,
                server_version: None,
                result: &r,
            }],
            protocol: None,
            settings: Vec::new(),
        };
        let e = diff(&a, &b).err().unwrap().to_string();
        assert!(e.contains("share no level"), "{e}");
    }

    #[test]
    fn sides_that_spoke_different_protocols_are_flagged() {
        let r = result(1000, 1.0, &[1000, 1100]);
        let side = |protocol: Option<&str>| Side {
            name: "run".into(),
            levels: vec![Level {
                group: "2k",
                clients: 8,
                round: 1,
                server_version: None,
                result: &r,
            }],
            protocol: protocol.map(str::to_string),
            settings: Vec::new(),
        };
        let flag =
            "warning: A spoke HTTP/1.1 and B spoke h2c -m 16: the ratios compare two protocols";
        let (text, _) = diff(&side(Some("HTTP/1.1")), &side(Some("h2c -m 16"))).unwrap();
        assert!(text.lines().nth(2).unwrap().starts_with(flag), "{text}");
        for (a, b) in [
            (Some("h2c -m 16"), Some("h2c -m 16")),
            (None, Some("h2 -m 4")),
        ] {
            let (text, _) = diff(&side(a), &side(b)).unwrap();
            assert!(!text.contains("spoke"), "{text}");
        }
    }

    #[test]
    fn the_settings_the_sides_differ_in_are_named_and_no_others() {
        let r = result(1000, 1.0, &[1000, 1100]);
        let side = |settings: &[(&str, &str)]| Side {
            name: "run".into(),
            levels: vec![Level {
                group: "",
                clients: 8,
                round: 1,
                server_version: None,
                result: &r,
            }],
            protocol: None,
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        let a = side(&[("clients", "4"), ("keep-alive", "no"), ("-n", "2000")]);
        let b = side(&[("clients", "4"), ("keep-alive", "yes"), ("--threads", "1")]);
        let (text, _) = diff(&a, &b).unwrap();
        let block: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("Settings that differ"))
            .take_while(|l| !l.is_empty())
            .collect();
        assert_eq!(
            block,
            [
                "Settings that differ (A → B):",
                "  keep-alive  no → yes",
                "  -n          2000 → -",
                "  --threads   - → 1",
            ],
            "{text}"
        );
        let (same, _) = diff(&a, &a).unwrap();
        assert!(
            same.contains("Settings: the same on both sides") && !same.contains("differ ("),
            "{same}"
        );
    }
}
