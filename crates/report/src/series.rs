//! The report's series: one per run and group, each named by what was measured — the server and the
//! workload, as the history stores them — rather than by run number, with its levels sorted by
//! clients, its peak (the fastest clean level, `webstand_results::figures::peak`; over a
//! comparison's rounds, the median round's, as compare quotes it) and the clients axis that suits
//! its levels.

use crate::chart::{Scale, COLOURS};
use crate::compare::WorkloadRow;
use crate::comparison::{median_round, median_row, peak_row};
use crate::levels::Level;
use crate::levels::ReportRun;
use webstand_results::url::split_url;

/// A series: one line on the against-clients charts, one row of the summary.
pub struct Series<'a> {
    pub label: String,
    pub colour: &'static str,
    /// The workload, when a comparison measured several: each gets its own charts.
    pub workload: Option<String>,
    pub levels: Vec<Level<'a>>,
    /// Server CPU-µs per request of each level (in `levels`' order), where the lab measured it.
    pub server_cpu_us: Vec<Option<f64>>,
    /// The run's error threshold: a level above it is never the peak.
    pub max_error_pct: f64,
}

impl Series<'_> {
    /// The rounds its levels were measured in, in order (`[1]` unless a comparison ran several).
    pub fn rounds(&self) -> Vec<usize> {
        let mut rounds: Vec<usize> = self.levels.iter().map(|l| l.round).collect();
        rounds.sort_unstable();
        rounds.dedup();
        rounds
    }

    /// Each round's row (`comparison::peak_row`: figures at its peak) and its peak's index in
    /// `levels`.
    fn round_rows(&self) -> Vec<(WorkloadRow, Option<usize>)> {
        let of_round = |round: usize| -> Vec<usize> {
            (0..self.levels.len())
                .filter(|&i| self.levels[i].round == round)
                .collect()
        };
        self.rounds()
            .into_iter()
            .map(|round| {
                let idx = of_round(round);
                let levels: Vec<Level> = idx.iter().map(|&i| self.levels[i]).collect();
                let cpu: Vec<Option<f64>> = idx
                    .iter()
                    .map(|&i| self.server_cpu_us.get(i).copied().flatten())
                    .collect();
                let (row, peak) = peak_row(&levels, &cpu, self.max_error_pct);
                (row, peak.map(|p| idx[p]))
            })
            .collect()
    }

    /// The figures the summary quotes: its peak's (the fastest clean level) and, over several
    /// rounds, the median of the rounds by the lab's rule (`comparison::median_row`), as compare
    /// printed them and `webstand show` gives them.
    pub fn row(&self) -> WorkloadRow {
        median_row(self.round_rows().into_iter().map(|(row, _)| row).collect())
    }

    /// Index in `levels` of the peak the figures quote: over several rounds, the peak of the round
    /// whose peak is the median.
    pub fn peak(&self) -> Option<usize> {
        let rounds = self.round_rows();
        let rows: Vec<WorkloadRow> = rounds.iter().map(|(row, _)| row.clone()).collect();
        median_round(&rows).and_then(|i| rounds[i].1)
    }
}

/// A group's server and workload: "nginx/small-files" from a comparison, else the Server header the
/// levels saw and the group (a sweep's workload) or, for a bench run, the URL's path (`target`).
/// HTTP/2 and HTTP/3 levels say so after the workload, with the streams per connection they were
/// allowed (no comma: the name is a CSV cell too). Without a Server header, `run_name` stands in.
fn names(run_name: &str, target: &str, group: &str, levels: &[Level]) -> (String, String) {
    let (server, workload) = names_of(run_name, target, group, levels);
    let protocol = match levels.iter().any(|l| l.result.quic.is_some()) {
        true => "HTTP/3",
        false => "HTTP/2",
    };
    match levels.iter().find_map(|l| l.result.h2.as_ref()) {
        Some(h2) => (
            server,
            format!("{workload} ({protocol}: {} streams/conn)", h2.max_streams),
        ),
        None => (server, workload),
    }
}

fn names_of(run_name: &str, target: &str, group: &str, levels: &[Level]) -> (String, String) {
    match group.split_once('/') {
        Some((server, w)) if !server.is_empty() => (server.to_string(), w.to_string()),
        _ => {
            // No Server header seen: the run's name stands in, so the label still says which run.
            let server = levels
                .iter()
                .find_map(|l| l.server_version)
                .unwrap_or(run_name);
            let workload = if group.is_empty() {
                path_of(target)
            } else {
                group.to_string()
            };
            (server.to_string(), workload)
        }
    }
}

/// "/2k.html" from "http://127.0.0.1:8080/2k.html"; anything but a URL as it is.
fn path_of(target: &str) -> String {
    split_url(target).map_or_else(|_| target.to_string(), |(_, _, path, _)| path)
}

/// A series' name: "server · workload", or the workload alone when no server is known.
fn series_name(server: &str, workload: &str) -> String {
    match server.is_empty() {
        true => workload.to_string(),
        false => format!("{server} · {workload}"),
    }
}

/// The name of each level's series, in `levels`' order: what the report's legends and summary call
/// it (`series`; without the run's name, which tells apart two runs in one report), so that the
/// export's rows name their series as the report does. `run_name` ("#12") stands in for a server
/// that sent no Server header; `target` gives a bench run's workload (its URL's path).
pub fn level_series(run_name: &str, target: &str, levels: &[Level]) -> Vec<String> {
    let mut named: Vec<(&str, String)> = Vec::new();
    levels
        .iter()
        .map(|l| {
            if let Some((_, name)) = named.iter().find(|(g, _)| *g == l.group) {
                return name.clone();
            }
            let mine: Vec<Level> = levels
                .iter()
                .filter(|m| m.group == l.group)
                .copied()
                .collect();
            let (server, workload) = names(run_name, target, l.group, &mine);
            let name = series_name(&server, &workload);
            named.push((l.group, name.clone()));
            name
        })
        .collect()
}

/// Groups every run's levels into series, sorted by clients. When every group is "server/workload"
/// and there are several workloads, the workload moves from the label to the series' `workload`, so
/// each workload's charts draw one line per server (seed 003's graph); the labels keep the workload
/// (the names `level_series` gives the export), and a server keeps its colour on every workload's
/// charts. Two series that would carry the same name (the same server and workload in two runs)
/// are told apart by their run's name. A label keeps its colour on every chart.
pub fn series<'a>(runs: &[ReportRun<'a>]) -> Vec<Series<'a>> {
    let mut found: Vec<(usize, &'a str, String, String)> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        for l in &run.levels {
            if !found.iter().any(|f| f.0 == i && f.1 == l.group) {
                let mine: Vec<Level> = run
                    .levels
                    .iter()
                    .filter(|m| m.group == l.group)
                    .copied()
                    .collect();
                let (server, workload) = names(&run.name, &run.target, l.group, &mine);
                found.push((i, l.group, server, workload));
            }
        }
    }
    let compare = found
        .iter()
        .all(|f| f.1.split_once('/').is_some_and(|(s, _)| !s.is_empty()));
    let split = compare && found.iter().any(|f| f.3 != found[0].3);
    let base: Vec<String> = found
        .iter()
        .map(|(_, _, server, workload)| series_name(server, workload))
        .collect();
    let mut colours: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (k, (i, group, _, workload)) in found.iter().enumerate() {
        let run = &runs[*i];
        // In split mode each workload has its own charts: a clash is within one workload only.
        let same = |j: usize| base[j] == base[k] && (!split || found[j].3 == *workload);
        let clash = (0..found.len()).filter(|&j| same(j)).count() > 1;
        let label = if clash {
            format!("{} {}", run.name, base[k])
        } else {
            base[k].clone()
        };
        // Split by workload, a server's lines share its colour on each workload's charts.
        let key = match (split, clash) {
            (true, false) => found[k].2.clone(),
            (true, true) => format!("{} {}", run.name, found[k].2),
            (false, _) => label.clone(),
        };
        let colour_index = colours.iter().position(|c| *c == key).unwrap_or_else(|| {
            colours.push(key.clone());
            colours.len() - 1
        });
        let mut levels: Vec<(Level<'a>, Option<f64>)> = run
            .levels
            .iter()
            .enumerate()
            .filter(|(_, l)| l.group == *group)
            .map(|(j, l)| (*l, run.server_cpu_us.get(j).copied().flatten()))
            .collect();
        levels.sort_by_key(|(l, _)| (l.clients, l.round));
        out.push(Series {
            label,
            colour: COLOURS[colour_index % COLOURS.len()],
            workload: split.then(|| workload.clone()),
            server_cpu_us: levels.iter().map(|(_, c)| *c).collect(),
            levels: levels.into_iter().map(|(l, _)| l).collect(),
            max_error_pct: run.max_error_pct,
        });
    }
    out
}

/// Log 2 when the client counts grow by factors (1, 4, 16 or 1 … 1024, which crowd the left of a
/// linear axis); linear for even steps (16, 32, 48 …).
pub fn clients_scale(series: &[&Series]) -> Scale {
    let mut xs: Vec<usize> = series
        .iter()
        .flat_map(|s| s.levels.iter().map(|l| l.clients.max(1)))
        .collect();
    xs.sort_unstable();
    xs.dedup();
    let (Some(&lo), Some(&hi)) = (xs.first(), xs.last()) else {
        return Scale::Linear;
    };
    let by_factors = xs.len() >= 3 && xs.windows(2).all(|w| w[1] as f64 >= 1.9 * w[0] as f64);
    if by_factors || hi as f64 / lo as f64 >= 32.0 {
        Scale::Log2
    } else {
        Scale::Linear
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use webstand_results::RunResult;

    fn run<'a>(name: &str, target: &str, levels: Vec<Level<'a>>) -> ReportRun<'a> {
        ReportRun {
            name: name.into(),
            title: String::new(),
            details: vec![],
            levels,
            tables: String::new(),
            diagnosis: String::new(),
            target: target.into(),
            max_error_pct: 1.0,
            server_cpu_us: vec![],
            thresholds: vec![],
        }
    }

    #[test]
    fn series_are_named_by_server_and_workload() {
        let r = RunResult::default();
        let lv = |group, clients, server| Level {
            group,
            clients,
            round: 1,
            server_version: server,
            result: &r,
        };
        let ours = run(
            "#26",
            "http://127.0.0.1:8080/2k.html",
            vec![lv("", 8, Some("webstand"))],
        );
        let theirs = run(
            "#27",
            "http://127.0.0.1:8081/2k.html",
            vec![lv("", 8, Some("nginx/1.22.1"))],
        );
        let labels: Vec<String> = series(&[ours, theirs])
            .into_iter()
            .map(|s| s.label)
            .collect();
        assert_eq!(labels, ["webstand · /2k.html", "nginx/1.22.1 · /2k.html"]);
        // The same server and workload twice: the runs tell them apart.
        let a = run("#3", "sweep", vec![lv("/2k.html", 1, Some("nginx"))]);
        let b = run("#4", "sweep", vec![lv("/2k.html", 1, Some("nginx"))]);
        let labels: Vec<String> = series(&[a, b]).into_iter().map(|s| s.label).collect();
        assert_eq!(labels, ["#3 nginx · /2k.html", "#4 nginx · /2k.html"]);
        // A comparison: server/workload groups.
        let c = run(
            "#5",
            "lab",
            vec![lv("nginx/2k", 1, None), lv("builtin/2k", 1, None)],
        );
        let labels: Vec<String> = series(&[c]).into_iter().map(|s| s.label).collect();
        assert_eq!(labels, ["nginx · 2k", "builtin · 2k"]);
    }

    #[test]
    fn doubling_levels_get_a_log_2_axis_and_even_steps_a_linear_one() {
        let r = RunResult::default();
        let scale = |clients: &[usize]| {
            let levels = clients
                .iter()
                .map(|&c| Level {
                    group: "w",
                    clients: c,
                    round: 1,
                    server_version: None,
                    result: &r,
                })
                .collect();
            let all = series(&[run("#1", "t", levels)]);
            clients_scale(&all.iter().collect::<Vec<_>>())
        };
        assert_eq!(scale(&[1, 4, 16]), Scale::Log2);
        assert_eq!(scale(&[1, 2, 4, 8]), Scale::Log2);
        assert_eq!(scale(&[16, 32, 48, 64]), Scale::Linear);
        assert_eq!(scale(&[8]), Scale::Linear);
    }

    /// `n` complete requests in 1 s, each taking 1 ms.
    fn hits(n: u64) -> RunResult {
        let mut r = RunResult {
            elapsed: std::time::Duration::from_secs(1),
            complete: n,
            ..Default::default()
        };
        for _ in 0..n {
            r.histograms.total.record(1000).unwrap();
        }
        r
    }

    #[test]
    fn a_comparison_over_rounds_quotes_the_median_round_not_the_best() {
        // Three rounds at 1 and 2 clients; the rounds' peaks (at 2 clients): 3000, 1000, 2000 hits/s.
        let data: Vec<(usize, usize, RunResult)> = [3000, 1000, 2000]
            .into_iter()
            .enumerate()
            .flat_map(|(i, peak)| [(i + 1, 1, hits(peak / 2)), (i + 1, 2, hits(peak))])
            .collect();
        let levels: Vec<Level> = data
            .iter()
            .map(|(round, c, r)| Level {
                group: "builtin/2k",
                clients: *c,
                round: *round,
                server_version: None,
                result: r,
            })
            .collect();
        let report = crate::html::render("t", &[run("#1", "lab", levels)]);
        assert!(
            report
                .html
                .contains("<td>builtin · 2k, median of 3 rounds</td><td>2000</td><td>2</td>"),
            "{}",
            report.html
        );
        assert!(
            !report.html.contains("<td>3000</td>"),
            "not the best round's"
        );
        assert!(report.html.contains("quotes the median of its rounds"));
        // The hits chart: a point per client level at the median round's figure, a bar over the
        // rounds' range.
        let hits = &report.charts[0].svg;
        assert_eq!(hits.matches("<circle").count(), 2, "{hits}");
        assert_eq!(hits.matches("class=\"round-range\"").count(), 2);
        assert!(hits.contains("2 clients, 2000.00 hits/s, median of 3 rounds (1000.00 to 3000.00)"));
        // The distribution chart draws the median round's levels.
        let dist = &report.charts[5];
        assert_eq!(
            dist.svg.matches("class=\"legend\"").count(),
            2,
            "{}",
            dist.svg
        );
        assert!(dist.svg.contains("of round 3"), "{}", dist.svg);
    }
}
