//! The HTML report: one self-contained page (inline SVG charts, inline CSS, a few lines of inline
//! script; no network fetches) for one or more runs. It opens with a summary table (each series'
//! peak, p99 at the peak, errors, CPU per request and ratios to the first row: [`crate::summary`]),
//! then the charts, then each run's details and seed-style tables. Each chart is also available
//! alone as SVG ([`Report::charts`]) and as PNG ([`png`]).
//!
//! Lines are named by server and workload ([`crate::series`]). Charts: hits/s against clients (seed
//! 003's graph), median and 99th-percentile latency against clients on panels of their own (a p99
//! scale squashes the median), errors (failed + non-2xx) against clients, KB/s against clients, and
//! the latency distribution on HdrHistogram's percentile axis. The clients axis is log 2 for levels
//! that double. A level that was mostly errors is a hollow red-rimmed point on every chart. A
//! comparison over several rounds is quoted as compare printed it: the summary gives the median of
//! the rounds, the charts each client level's median round with a bar over the rounds' range.

use crate::chart::{Chart, Dash, Line, Scale, COLOURS, FONT, PERCENTILE_AXIS_MAX};
use crate::export::latency_ms;
use crate::levels::{Level, ReportRun};
use crate::series::{clients_scale, series, Series};
use std::fmt::Write;
use webstand_results::RunResult;

pub use crate::chart::{escape, png};

/// A chart: its file stem (for --svg/--png), its title and its SVG text.
pub struct ChartSvg {
    pub name: String,
    pub title: String,
    pub svg: String,
}

pub struct Report {
    pub charts: Vec<ChartSvg>,
    pub html: String,
}

/// A level's tooltip mark: says when it was mostly errors.
fn error_mark(r: &RunResult) -> String {
    if r.mostly_errors() {
        format!(
            " — MOSTLY ERRORS ({:.1} % failed or non-2xx)",
            r.error_pct()
        )
    } else {
        String::new()
    }
}

/// One line per series of `figure` against clients.
fn against_clients(
    series: &[&Series],
    figure: impl Fn(&RunResult) -> f64,
    unit: &str,
    dash: Dash,
) -> Vec<Line> {
    series
        .iter()
        .map(|s| series_line(s, &figure, unit, dash))
        .collect()
}

/// A series' line: a point per level; over several rounds, a point per client level at the median
/// round's figure (the lower of the two middle ones), with a bar from the lowest round's to the
/// highest's.
fn series_line(s: &Series, figure: &dyn Fn(&RunResult) -> f64, unit: &str, dash: Dash) -> Line {
    let mut line = Line {
        label: s.label.clone(),
        colour: s.colour,
        dash,
        markers: true,
        points: Vec::new(),
        tips: Vec::new(),
        bad: Vec::new(),
        ranges: Vec::new(),
    };
    let several = s.rounds().len() > 1;
    // Levels are sorted by clients, so a client level's rounds are neighbours.
    for same in s.levels.chunk_by(|a, b| several && a.clients == b.clients) {
        let mut values: Vec<(f64, &RunResult)> =
            same.iter().map(|l| (figure(l.result), l.result)).collect();
        values.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (v, r) = values[(values.len() - 1) / 2];
        let (lo, hi) = (values[0].0, values[values.len() - 1].0);
        let (c, mark) = (same[0].clients, error_mark(r));
        let rounds = match values.len() {
            1 => String::new(),
            n => format!(", median of {n} rounds ({lo:.2} to {hi:.2})"),
        };
        line.points.push((c as f64, v));
        line.tips.push(format!(
            "{}: {c} clients, {v:.2} {unit}{rounds}{mark}",
            s.label
        ));
        line.bad.push(r.mostly_errors());
        line.ranges
            .push(Some((lo, hi)).filter(|_| values.len() > 1));
    }
    line
}

/// The latency distribution of one result as (1/(1-p), ms) points, HdrHistogram's plot. The 100 %
/// row has no place on a 1/(1-p) axis; the iteration reaches the maximum before it anyway.
fn distribution(r: &RunResult) -> Vec<(f64, f64)> {
    let h = &r.histograms.total;
    if h.is_empty() {
        return Vec::new();
    }
    crate::export::percentile_rows(h, 5)
        .into_iter()
        .filter(|row| row.quantile < 1.0)
        .map(|row| (1.0 / (1.0 - row.quantile), row.value as f64 / 1000.0))
        .filter(|&(x, _)| x <= PERCENTILE_AXIS_MAX)
        .collect()
}

fn charts(all: &[Series]) -> Vec<Chart> {
    let mut workloads: Vec<Option<String>> = Vec::new();
    for s in all {
        if !workloads.contains(&s.workload) {
            workloads.push(s.workload.clone());
        }
    }
    let mut out = Vec::new();
    for w in workloads {
        let mine: Vec<&Series> = all.iter().filter(|s| s.workload == w).collect();
        out.extend(charts_of(&mine, w.as_deref()));
    }
    out
}

/// A chart against clients; `workload` suffixes its name and title when a comparison has several.
struct Panel<'a> {
    series: &'a [&'a Series<'a>],
    workload: Option<&'a str>,
    x_scale: Scale,
}

impl Panel<'_> {
    fn chart(&self, name: &str, title: &str, y_label: &str, note: &str) -> Chart {
        let (name, title) = match self.workload {
            Some(w) => {
                let safe: String = w
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .collect();
                (format!("{name}-{safe}"), format!("{title}: {w}"))
            }
            None => (name.to_string(), title.to_string()),
        };
        Chart {
            name,
            title,
            note: note.into(),
            x_label: "clients (concurrent connections)".into(),
            y_label: y_label.into(),
            x_scale: self.x_scale,
            lines: Vec::new(),
        }
    }
    fn against(&self, figure: impl Fn(&RunResult) -> f64, unit: &str) -> Vec<Line> {
        against_clients(self.series, figure, unit, Dash::Solid)
    }
}

/// The six charts of a set of series.
fn charts_of(series: &[&Series], workload: Option<&str>) -> Vec<Chart> {
    let p = Panel {
        series,
        workload,
        x_scale: clients_scale(series),
    };
    let rounds = series.iter().map(|s| s.rounds().len()).max().unwrap_or(1);
    let medians = match rounds {
        1 => String::new(),
        n => format!(
            "; over {n} rounds, each point is the median round's, its bar the rounds' range"
        ),
    };
    let hollow = &format!("hollow red points: levels that were mostly errors{medians}");
    let mut hits = p.chart(
        "hits",
        "Hits/s against clients",
        "hits/s (complete responses)",
        hollow,
    );
    hits.lines = p.against(|r| r.hits_per_sec(), "hits/s");
    let mut p50 = p.chart(
        "latency",
        "Median latency (p50) against clients",
        "p50 latency (ms)",
        hollow,
    );
    p50.lines = p.against(|r| latency_ms(r, 0.5), "ms p50");
    let mut p99 = p.chart(
        "latency-p99",
        "99th-percentile latency against clients",
        "p99 latency (ms)",
        hollow,
    );
    p99.lines = p.against(|r| latency_ms(r, 0.99), "ms p99");
    let mut errors = p.chart(
        "errors",
        "Errors against clients",
        "errors (% of attempted requests)",
        &format!("errors = failed requests (connect, receive, length, exceptions) + non-2xx answers{medians}"),
    );
    errors.lines = p.against(|r| r.error_pct(), "% errors");
    let mut kbytes = p.chart(
        "kbytes",
        "KB/s against clients",
        "KB/s (total bytes read ÷ 1024)",
        hollow,
    );
    kbytes.lines = p.against(|r| r.kbytes_per_sec(), "KB/s");
    let mut dist = p.chart("distribution", "Latency by percentile", "latency (ms)", "");
    dist.x_label = "percentile".into();
    dist.x_scale = Scale::Percentile;
    (dist.note, dist.lines) = distribution_lines(series);
    vec![hits, p50, p99, errors, kbytes, dist]
}

/// The distribution chart's lines: a lone series shows its levels (up to eight; over several
/// rounds, the median round's); several series show each at its peak (the fastest clean level;
/// over several rounds, the median round's).
fn distribution_lines(series: &[&Series]) -> (String, Vec<Line>) {
    let line = |label: String, colour, r: &RunResult| Line {
        label,
        colour,
        dash: Dash::Solid,
        markers: false,
        points: distribution(r),
        tips: Vec::new(),
        bad: Vec::new(),
        ranges: Vec::new(),
    };
    if let [one] = series {
        // Over several rounds, the levels of the round whose peak is quoted.
        let round = match one.rounds().len() {
            1 => None,
            _ => one.peak().map(|i| one.levels[i].round),
        };
        let levels: Vec<&Level> = (one.levels.iter())
            .filter(|l| round.is_none_or(|r| l.round == r))
            .collect();
        if levels.len() > 1 {
            let step = levels.len().div_ceil(8);
            let lines = levels
                .iter()
                .enumerate()
                .filter(|(i, _)| i % step == 0 || *i == levels.len() - 1)
                .map(|(i, l)| {
                    let s = if l.clients == 1 { "" } else { "s" };
                    let colour = COLOURS[(i / step) % COLOURS.len()];
                    line(format!("{} client{s}", l.clients), colour, l.result)
                })
                .collect();
            let of_round = round.map_or(String::new(), |r| {
                format!(" of round {r} (its peak is the median of the rounds')")
            });
            return (format!("one line per client level{of_round}"), lines);
        }
    }
    let lines = series
        .iter()
        .filter_map(|s| {
            let best = &s.levels[s.peak()?];
            Some(line(
                format!("{} @{}", s.label, best.clients),
                s.colour,
                best.result,
            ))
        })
        .collect();
    (
        "each series at its peak (fastest level within its error threshold)".into(),
        lines,
    )
}

/// A run's text tables as one preformatted block whose font is sized so that its widest table row
/// fits the page's width (12 px at most): the columns stay lined up on a narrow page, and the
/// prose lines among them (notes, the peak line) wrap instead of running off the right edge.
fn tables_block(text: &str) -> String {
    // DejaVu Sans Mono and its kin advance 0.6 em per character; a little more keeps a margin.
    const EM_PER_CHAR: f64 = 0.61;
    let widest = text
        .lines()
        .filter(|l| webstand_results::text::is_table_row(l))
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(80);
    format!(
        "<pre class=\"tables\" style=\"font-size: min(12px, calc((100cqi - 20px) / {:.1}))\">{}</pre>\n",
        widest as f64 * EM_PER_CHAR,
        escape(text)
    )
}

/// Prose lines (a Diagnosis) that wrap within the page, each keeping its indent and a hanging
/// indent under its "- ".
fn prose_block(text: &str) -> String {
    let text = text.trim_matches('\n');
    if text.is_empty() {
        return String::new();
    }
    let mut h = String::from("<div class=\"diagnosis\">\n");
    for line in text.lines() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        let hang = if body.starts_with("- ") { 2 } else { 0 };
        let _ = writeln!(
            h,
            "<div style=\"padding-left: {}ch; text-indent: -{hang}ch\">{}</div>",
            indent + hang,
            escape(body)
        );
    }
    h.push_str("</div>\n");
    h
}

/// Builds the report page and its charts.
pub fn render(page_title: &str, runs: &[ReportRun]) -> Report {
    let all = series(runs);
    let charts: Vec<ChartSvg> = charts(&all)
        .into_iter()
        .map(|c| ChartSvg {
            svg: c.render(),
            name: c.name,
            title: c.title,
        })
        .collect();
    let mut h = String::new();
    let _ = write!(
        h,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{t}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
* {{ box-sizing: border-box; }}
body {{ font-family: {FONT}; margin: 2em auto; padding: 0 1em; max-width: 1600px; color: #222; }}
h1 {{ font-size: 1.5em; overflow-wrap: anywhere; }} h2 {{ font-size: 1.2em; margin-top: 2em; overflow-wrap: anywhere; }}
.charts {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 560px), 1fr)); gap: 16px; }}
.charts figure {{ margin: 0; min-width: 0; border: 1px solid #ddd; }}
svg.chart {{ display: block; width: 100%; height: auto; }}
table.details td {{ padding: 1px 12px 1px 0; vertical-align: top; overflow-wrap: anywhere; }}
table.details td:first-child {{ color: #666; white-space: nowrap; }}
.wide {{ overflow-x: auto; }}
table.summary {{ border-collapse: collapse; font-size: 0.9em; }}
table.summary th, table.summary td {{ border: 1px solid #ccc; padding: 3px 6px; text-align: right; }}
table.summary th:first-child, table.summary td:first-child {{ text-align: left; }}
table.summary tr.bad td {{ color: #a00; }}
p.note {{ color: #555; font-size: 0.9em; }}
p.warning {{ color: #8a4b00; background: #fff6e5; border-left: 4px solid #e0a030; padding: 0.5em 0.8em; }}
.run {{ container-type: inline-size; }}
pre {{ background: #f7f7f7; padding: 10px; margin: 1em 0; white-space: pre-wrap; overflow-wrap: anywhere; }}
.diagnosis {{ background: #f7f7f7; padding: 10px; font-size: 0.9em; }}
.diagnosis div {{ overflow-wrap: anywhere; }}
</style></head>
<body>
<h1>{t}</h1>
<h2>Summary</h2>
<div class="wide">{summary}</div><div class="charts">
"#,
        t = escape(page_title),
        summary = crate::summary::html(&all)
    );
    for c in &charts {
        let _ = writeln!(h, r#"<figure id="chart-{}">{}</figure>"#, c.name, c.svg);
    }
    h.push_str("</div>\n");
    for run in runs {
        let _ = writeln!(
            h,
            "<section class=\"run\">\n<h2>{}</h2>\n<table class=\"details\">",
            escape(&run.title)
        );
        for (k, v) in &run.details {
            let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", escape(k), escape(v));
        }
        h.push_str("</table>\n");
        h.push_str(&crate::thresholds_html::section(&run.thresholds));
        h.push_str(&tables_block(&run.tables));
        h.push_str(&crate::quic_html::section(&run.levels));
        h.push_str(&prose_block(&run.diagnosis));
        h.push_str("</section>\n");
    }
    // The marker tests and tools wait for: every chart is in the document.
    h.push_str(
        r#"<script>
document.body.setAttribute("data-charts", String(document.querySelectorAll("svg.chart").length));
document.body.setAttribute("data-rendered", "yes");
</script>
</body></html>
"#,
    );
    Report { charts, html: h }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn result(clients: usize, hits: u64) -> RunResult {
        let mut r = RunResult {
            elapsed: Duration::from_secs(1),
            complete: hits,
            total_bytes: hits * 1200,
            ..Default::default()
        };
        r.failed.connect = (clients / 16) as u64;
        for i in 0..hits {
            r.histograms
                .total
                .record(200 * clients as u64 + i % 500)
                .unwrap();
        }
        r
    }

    fn report_run<'a>(name: &str, levels: Vec<Level<'a>>) -> ReportRun<'a> {
        ReportRun {
            name: name.into(),
            title: format!("Run {name}"),
            details: vec![("command".into(), "webstand compare".into())],
            levels,
            tables: "a | b".into(),
            diagnosis: String::new(),
            target: "lab".into(),
            max_error_pct: 1.0,
            server_cpu_us: vec![],
            thresholds: vec![],
        }
    }

    #[test]
    fn the_page_has_every_chart_one_line_per_series_and_escapes_names() {
        let data: Vec<(String, usize, RunResult)> = ["nginx", "<webstand>"]
            .iter()
            .flat_map(|g| {
                [1usize, 2, 4, 8, 16, 32, 64].map(|c| (g.to_string(), c, result(c, 100 * c as u64)))
            })
            .collect();
        let levels: Vec<Level> = data
            .iter()
            .map(|(g, c, r)| Level {
                group: g,
                clients: *c,
                round: 1,
                server_version: None,
                result: r,
            })
            .collect();
        let report = render("webstand report", &[report_run("#1", levels)]);
        let names: Vec<&str> = report.charts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "hits",
                "latency",
                "latency-p99",
                "errors",
                "kbytes",
                "distribution"
            ]
        );
        let hits = &report.charts[0].svg;
        assert_eq!(hits.matches("<polyline").count(), 2, "one line per server");
        assert_eq!(hits.matches("<circle").count(), 14);
        assert!(hits.contains("&lt;webstand&gt;") && !hits.contains("<webstand>"));
        assert!(hits.contains(r#"data-x-scale="Log2""#), "doubling levels");
        assert_eq!(
            report.charts[1].svg.matches("<polyline").count(),
            2,
            "p50 alone"
        );
        assert!(
            report.charts[5].svg.contains(">99%<"),
            "percentile axis labels"
        );
        assert_eq!(report.html.matches("<svg").count(), 6);
        let summary = report.html.find("id=\"summary\"").unwrap();
        assert!(
            summary < report.html.find("<svg").unwrap(),
            "the summary comes first"
        );
        assert!(
            !report.html.contains("src=") && !report.html.contains("href="),
            "nothing to fetch"
        );
    }

    #[test]
    fn a_comparison_of_several_workloads_gets_charts_per_workload_with_a_line_per_server() {
        let data: Vec<(String, usize, RunResult)> =
            ["nginx/small", "webstand/small", "nginx/cgi", "webstand/cgi"]
                .iter()
                .flat_map(|g| [1usize, 4, 16].map(|c| (g.to_string(), c, result(c, 50 * c as u64))))
                .collect();
        let levels: Vec<Level> = data
            .iter()
            .map(|(g, c, r)| Level {
                group: g,
                clients: *c,
                round: 1,
                server_version: None,
                result: r,
            })
            .collect();
        let report = render("t", &[report_run("#3", levels)]);
        let names: Vec<&str> = report.charts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names.len(), 12);
        assert!(
            names.contains(&"hits-small")
                && names.contains(&"hits-cgi")
                && names.contains(&"distribution-cgi"),
            "{names:?}"
        );
        let hits_cgi = &report.charts.iter().find(|c| c.name == "hits-cgi").unwrap();
        assert_eq!(hits_cgi.svg.matches("<polyline").count(), 2);
        assert!(
            hits_cgi.title.ends_with(": cgi") && hits_cgi.svg.contains(">nginx · cgi</text>"),
            "{}",
            hits_cgi.svg
        );
        // nginx has the same colour on both workloads' charts.
        let colour_of = |svg: &str| {
            svg.split("<polyline")
                .nth(1)
                .unwrap()
                .split("stroke=\"")
                .nth(1)
                .unwrap()[..7]
                .to_string()
        };
        let hits_small = &report
            .charts
            .iter()
            .find(|c| c.name == "hits-small")
            .unwrap();
        assert_eq!(colour_of(&hits_small.svg), colour_of(&hits_cgi.svg));
    }

    #[test]
    fn the_distribution_rises_left_to_right_and_reaches_the_maximum() {
        let r = result(8, 200);
        let d = distribution(&r);
        assert!(d.len() > 10);
        assert!(
            d.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
            "{d:?}"
        );
        assert_eq!(
            d.last().unwrap().1,
            r.histograms.total.max() as f64 / 1000.0
        );
        assert_eq!(d[0].0, 1.0);
    }

    #[test]
    fn a_run_without_levels_or_requests_still_renders() {
        let empty = RunResult::default();
        let one = Level {
            group: "",
            clients: 1,
            round: 1,
            server_version: None,
            result: &empty,
        };
        let runs = [report_run("#4", vec![]), report_run("#5", vec![one])];
        let report = render("t", &runs);
        assert_eq!(report.charts.len(), 6);
        assert!(report
            .charts
            .iter()
            .all(|c| !c.svg.contains("NaN") && !c.svg.contains("inf")));
    }

    #[test]
    fn png_renders_a_chart() {
        let r = result(4, 400);
        let one = Level {
            group: "",
            clients: 4,
            round: 1,
            server_version: None,
            result: &r,
        };
        let report = render("t", &[report_run("#2", vec![one])]);
        let png = png(&report.charts[0].svg).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert!(
            png.len() > 2000,
            "a blank image would be tiny: {} bytes",
            png.len()
        );
    }

    /// Levels of `groups` at 1, 4 and 16 clients, each measured in `rounds` rounds.
    fn measured(groups: &[&str], rounds: usize) -> Vec<(String, usize, usize, RunResult)> {
        let mut out = Vec::new();
        for round in 1..=rounds {
            for g in groups {
                for c in [1usize, 4, 16] {
                    out.push((
                        g.to_string(),
                        c,
                        round,
                        result(c, 50 * c as u64 + round as u64),
                    ));
                }
            }
        }
        out
    }

    fn page_of(data: &[(String, usize, usize, RunResult)]) -> String {
        let levels: Vec<Level> = data
            .iter()
            .map(|(g, c, round, r)| Level {
                group: g,
                clients: *c,
                round: *round,
                server_version: None,
                result: r,
            })
            .collect();
        render("t", &[report_run("#1", levels)]).html
    }

    #[test]
    fn a_comparison_measured_once_warns_that_its_ratios_are_not_worth_quoting() {
        let warning = "Measured once";
        let once = page_of(&measured(&["nginx/2k", "builtin/2k"], 1));
        assert!(
            once.contains(warning) && once.contains("webstand compare --rounds 3"),
            "{once}"
        );
        let medians = page_of(&measured(&["nginx/2k", "builtin/2k"], 3));
        assert!(!medians.contains(warning), "medians of 3 rounds");
        let alone = page_of(&measured(&["builtin/2k"], 1));
        assert!(!alone.contains(warning), "no ratios to quote");
    }

    #[test]
    fn tables_keep_their_columns_and_the_diagnosis_wraps() {
        let row = format!("{:>7} {:>9} {:>9} {:>9} {:>9}", 8, 1000, 2.5, 3.5, 4.5);
        let tables = format!("{row}\n{}\n", "a long prose note ".repeat(20));
        let block = tables_block(&tables);
        // 80 characters at least: a narrow table keeps the page's usual size.
        assert!(block.contains("/ 48.8))"), "{block}");
        let wide = format!("{}{row}", " ".repeat(150));
        assert!(
            tables_block(&wide).contains(&format!("/ {:.1}))", (150 + row.len()) as f64 * 0.61))
        );
        let prose = prose_block(
            "\nDiagnosis:\n  8 clients: generator-bound\n    - the busiest thread: pin it\n",
        );
        assert!(
            prose.contains("<div style=\"padding-left: 6ch; text-indent: -2ch\">- the busiest thread: pin it</div>")
                && prose.contains("<div style=\"padding-left: 2ch; text-indent: -0ch\">8 clients: generator-bound</div>"),
            "{prose}"
        );
        assert_eq!(prose_block("\n"), "");
    }
}
