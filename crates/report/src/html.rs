//! The HTML report: one self-contained page (inline SVG charts drawn here, inline CSS, a few lines of
//! inline script; no network fetches) for one or more runs, with the seed-style tables beneath. Each
//! chart is also available alone as SVG ([`Report::charts`]) and as PNG ([`png`], rendered with resvg).
//!
//! Charts: hits/s against clients with one line per series (seed 003's graph), latency percentiles
//! against clients, errors against clients, KB/s against clients, and the latency distribution on
//! HdrHistogram's percentile axis (log scale of 1/(1-p)).

use crate::export::{latency_ms, Level};
use anyhow::Context;
use std::fmt::Write;
use webstand_engine::RunResult;

/// One run to report: a title line, its details (command line, machine …) and its levels.
pub struct ReportRun<'a> {
    /// Short name used in legends when several runs share a report, e.g. "#12".
    pub name: String,
    /// A heading such as "Run 12 — sweep of http://127.0.0.1:8080/ (2026-11-22 21:40 UTC)".
    pub title: String,
    /// Label/value lines shown under the heading (command line, version, machine, status).
    pub details: Vec<(String, String)>,
    pub levels: Vec<Level<'a>>,
    /// The seed-style text tables of this run, shown beneath the charts as preformatted text.
    pub tables: String,
}

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

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 210.0; // room for the legend
const TOP: f64 = 44.0;
const BOTTOM: f64 = 56.0;
const FONT: &str = "DejaVu Sans, Helvetica, Arial, sans-serif";
/// Colour-blind-friendly palette (Okabe–Ito, then a few more).
const COLOURS: &[&str] = &[
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999933",
    "#882255", "#44AA99",
];
/// The percentile axis ends at 1/(1-p) = 10^6, i.e. 99.9999 %.
const PERCENTILE_AXIS_MAX: f64 = 1e6;

#[derive(Clone, Copy, PartialEq)]
enum Scale {
    Linear,
    /// Log base 2 with power-of-two ticks (client counts that double).
    Log2,
    /// The percentile axis: log10 of 1/(1-p), ticks labelled 0 %, 90 %, 99 % …
    Percentile,
}

#[derive(Clone, Copy, PartialEq)]
enum Dash {
    Solid,
    Dashed,
}

struct Line {
    label: String,
    colour: &'static str,
    dash: Dash,
    /// Draw a marker per point (levels), or not (dense distributions).
    markers: bool,
    points: Vec<(f64, f64)>,
    /// Tooltip per point.
    tips: Vec<String>,
}

struct Chart {
    name: String,
    title: String,
    note: String,
    x_label: String,
    y_label: String,
    x_scale: Scale,
    lines: Vec<Line>,
}

/// Escapes text for HTML and SVG.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// "Nice" linear ticks (1, 2, 5 × 10^k) covering 0..=max.
fn linear_ticks(max: f64) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| raw <= *s)
        .unwrap_or(10.0 * mag);
    let n = (max / step).ceil() as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

fn format_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if v.abs() >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn percentile_label(x: f64) -> String {
    // x = 1/(1-p): 1 → 0 %, 10 → 90 %, 100 → 99 % …
    let p = 100.0 * (1.0 - 1.0 / x);
    let decimals = (x.log10().round() as usize).saturating_sub(2);
    format!("{p:.decimals$}%")
}

impl Chart {
    fn render(&self) -> String {
        let plot_w = WIDTH - LEFT - RIGHT;
        let plot_h = HEIGHT - TOP - BOTTOM;
        let points = self.lines.iter().flat_map(|l| l.points.iter());
        let (mut x_min, mut x_max, mut y_max) = (f64::INFINITY, f64::NEG_INFINITY, 0f64);
        for &(x, y) in points {
            x_min = x_min.min(x);
            x_max = x_max.max(x);
            y_max = y_max.max(y);
        }
        if !x_min.is_finite() {
            (x_min, x_max) = (1.0, 2.0);
        }
        let y_ticks = linear_ticks(y_max);
        let y_top = *y_ticks.last().unwrap();
        // X axis: ticks and a mapping to [0, 1].
        let (x_ticks, x_lo, x_hi): (Vec<(f64, String)>, f64, f64) = match self.x_scale {
            Scale::Linear => {
                let t = linear_ticks(x_max);
                let hi = *t.last().unwrap();
                (
                    t.into_iter().map(|v| (v, format_tick(v))).collect(),
                    0.0,
                    hi,
                )
            }
            Scale::Log2 => {
                let lo = x_min.max(1.0).log2().floor();
                let hi = x_max.max(2.0).log2().ceil().max(lo + 1.0);
                let every = ((hi - lo) / 10.0).ceil().max(1.0) as usize;
                let t = (lo as i64..=hi as i64)
                    .step_by(every)
                    .map(|e| (2f64.powi(e as i32), format_tick(2f64.powi(e as i32))))
                    .collect();
                (t, lo, hi)
            }
            Scale::Percentile => {
                let hi = x_max.clamp(10.0, PERCENTILE_AXIS_MAX).log10().ceil();
                let t = (0..=hi as i32)
                    .map(|e| (10f64.powi(e), percentile_label(10f64.powi(e))))
                    .collect();
                (t, 0.0, hi)
            }
        };
        let fx = |x: f64| -> f64 {
            let u = match self.x_scale {
                Scale::Linear => x,
                Scale::Log2 => x.max(1e-9).log2(),
                Scale::Percentile => x.max(1.0).log10(),
            };
            LEFT + (u - x_lo) / (x_hi - x_lo).max(1e-12) * plot_w
        };
        let fy = |y: f64| -> f64 { TOP + plot_h - y / y_top.max(1e-12) * plot_h };

        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="{name}" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="{FONT}" font-size="12">"#,
            name = self.name
        );
        let _ = write!(
            s,
            r##"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>"##
        );
        let _ = write!(
            s,
            r#"<text x="{LEFT}" y="20" font-size="15" font-weight="bold">{}</text>"#,
            escape(&self.title)
        );
        if !self.note.is_empty() {
            let _ = write!(
                s,
                r##"<text x="{LEFT}" y="36" font-size="11" fill="#555555">{}</text>"##,
                escape(&self.note)
            );
        }
        // Grid and tick labels.
        for &v in &y_ticks {
            let y = fy(v);
            let _ = write!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e4e4e4"/>"##,
                LEFT + plot_w
            );
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                LEFT - 6.0,
                y + 4.0,
                format_tick(v)
            );
        }
        for (v, label) in &x_ticks {
            let x = fx(*v);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#e4e4e4"/>"##,
                TOP + plot_h
            );
            let _ = write!(
                s,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                TOP + plot_h + 16.0,
                escape(label)
            );
        }
        let _ = write!(
            s,
            r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#888888"/>"##
        );
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + plot_w / 2.0,
            HEIGHT - 14.0,
            escape(&self.x_label)
        );
        let _ = write!(
            s,
            r#"<text x="16" y="{:.1}" text-anchor="middle" transform="rotate(-90 16 {:.1})">{}</text>"#,
            TOP + plot_h / 2.0,
            TOP + plot_h / 2.0,
            escape(&self.y_label)
        );
        // Lines, markers with tooltips.
        for line in &self.lines {
            let pts: Vec<String> = line
                .points
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", fx(x), fy(y)))
                .collect();
            let dash = if line.dash == Dash::Dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            if pts.len() > 1 {
                let _ = write!(
                    s,
                    r#"<polyline class="series" fill="none" stroke="{}" stroke-width="2"{dash} points="{}"/>"#,
                    line.colour,
                    pts.join(" ")
                );
            }
            if line.markers || line.points.len() == 1 {
                for (i, &(x, y)) in line.points.iter().enumerate() {
                    let tip = line.tips.get(i).map(String::as_str).unwrap_or("");
                    let _ = write!(
                        s,
                        r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{}"><title>{}</title></circle>"#,
                        fx(x),
                        fy(y),
                        line.colour,
                        escape(tip)
                    );
                }
            }
        }
        // Legend: one entry per line with a distinct label.
        let mut y = TOP + 8.0;
        let lx = LEFT + plot_w + 14.0;
        let mut seen: Vec<&str> = Vec::new();
        for line in &self.lines {
            if seen.contains(&line.label.as_str()) {
                continue;
            }
            seen.push(&line.label);
            let dash = if line.dash == Dash::Dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let _ = write!(
                s,
                r#"<line x1="{lx}" y1="{y}" x2="{}" y2="{y}" stroke="{}" stroke-width="2"{dash}/>"#,
                lx + 22.0,
                line.colour
            );
            let label = if line.label.chars().count() > 26 {
                format!("{}…", line.label.chars().take(25).collect::<String>())
            } else {
                line.label.clone()
            };
            let _ = write!(
                s,
                r#"<text x="{}" y="{}">{}</text>"#,
                lx + 28.0,
                y + 4.0,
                escape(&label)
            );
            y += 18.0;
        }
        s.push_str("</svg>");
        s
    }
}

/// A series: one line on the against-clients charts.
struct Series<'a> {
    label: String,
    colour: &'static str,
    /// The workload, when a comparison measured several: each gets its own charts.
    workload: Option<String>,
    levels: Vec<Level<'a>>,
}

/// Groups every run's levels into series (one per run and group), sorted by clients. When every
/// group is "server/workload" and there are several workloads, the workload moves from the label to
/// the series' `workload`, so each workload's charts draw one line per server (seed 003's graph).
/// A server keeps its colour on every chart.
fn series<'a>(runs: &[ReportRun<'a>]) -> Vec<Series<'a>> {
    let all_groups: Vec<&str> = runs
        .iter()
        .flat_map(|r| r.levels.iter().map(|l| l.group))
        .collect();
    let mut workloads: Vec<&str> = Vec::new();
    for g in &all_groups {
        if let Some((_, w)) = g.split_once('/') {
            if !workloads.contains(&w) {
                workloads.push(w);
            }
        }
    }
    let split = workloads.len() > 1 && all_groups.iter().all(|g| g.contains('/'));
    let mut colours: Vec<String> = Vec::new();
    let mut out: Vec<Series<'a>> = Vec::new();
    for run in runs {
        let mut groups: Vec<&str> = Vec::new();
        for l in &run.levels {
            if !groups.contains(&l.group) {
                groups.push(l.group);
            }
        }
        for g in groups {
            let (name, workload) = match g.split_once('/') {
                Some((server, w)) if split => (server, Some(w.to_string())),
                _ => (g, None),
            };
            let label = match (runs.len() > 1, name.is_empty()) {
                (false, false) => name.to_string(),
                (_, true) => run.name.clone(),
                (true, false) => format!("{} {name}", run.name),
            };
            let colour_index = colours.iter().position(|c| *c == label).unwrap_or_else(|| {
                colours.push(label.clone());
                colours.len() - 1
            });
            let mut levels: Vec<Level<'a>> = run
                .levels
                .iter()
                .filter(|l| l.group == g)
                .copied()
                .collect();
            levels.sort_by_key(|l| l.clients);
            out.push(Series {
                label,
                colour: COLOURS[colour_index % COLOURS.len()],
                workload,
                levels,
            });
        }
    }
    out
}

fn clients_scale(series: &[&Series]) -> Scale {
    let xs = series
        .iter()
        .flat_map(|s| s.levels.iter().map(|l| l.clients.max(1) as f64));
    let (lo, hi) = xs.fold((f64::INFINITY, 0f64), |(a, b), x| (a.min(x), b.max(x)));
    // Client counts that double (1, 2, 4 … 1024) crowd the left of a linear axis.
    if hi / lo >= 32.0 {
        Scale::Log2
    } else {
        Scale::Linear
    }
}

fn against_clients(
    series: &[&Series],
    figure: impl Fn(&RunResult) -> f64,
    unit: &str,
) -> Vec<Line> {
    series
        .iter()
        .map(|s| Line {
            label: s.label.clone(),
            colour: s.colour,
            dash: Dash::Solid,
            markers: true,
            points: s
                .levels
                .iter()
                .map(|l| (l.clients as f64, figure(l.result)))
                .collect(),
            tips: s
                .levels
                .iter()
                .map(|l| {
                    format!(
                        "{}: {} clients, {:.2} {unit}",
                        s.label,
                        l.clients,
                        figure(l.result)
                    )
                })
                .collect(),
        })
        .collect()
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

fn charts(runs: &[ReportRun]) -> Vec<Chart> {
    let all = series(runs);
    let mut workloads: Vec<Option<String>> = Vec::new();
    for s in &all {
        if !workloads.contains(&s.workload) {
            workloads.push(s.workload.clone());
        }
    }
    let mut out = Vec::new();
    for w in workloads {
        let (mine, _): (Vec<&Series>, Vec<&Series>) = all.iter().partition(|s| s.workload == w);
        out.extend(charts_of(&mine, w.as_deref()));
    }
    out
}

/// The five charts of a set of series; `workload` names them when a comparison has several.
fn charts_of(series: &[&Series], workload: Option<&str>) -> Vec<Chart> {
    let x_scale = clients_scale(series);
    let x_label = "clients (concurrent requests)".to_string();
    let named = |name: &str| match workload {
        Some(w) => {
            format!(
                "{name}-{}",
                w.chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .collect::<String>()
            )
        }
        None => name.to_string(),
    };
    let titled = |title: &str| match workload {
        Some(w) => format!("{title}: {w}"),
        None => title.to_string(),
    };
    let make = |name: &str,
                title: &str,
                y_label: &str,
                note: &str,
                figure: &dyn Fn(&RunResult) -> f64,
                unit: &str| Chart {
        name: named(name),
        title: titled(title),
        note: note.into(),
        x_label: x_label.clone(),
        y_label: y_label.into(),
        x_scale,
        lines: against_clients(series, figure, unit),
    };
    let mut out = vec![make(
        "hits",
        "Hits/s against clients",
        "hits/s",
        "one line per server or workload",
        &|r| r.hits_per_sec(),
        "hits/s",
    )];

    let mut latency = make(
        "latency",
        "Latency percentiles against clients",
        "latency (ms)",
        "solid: median (p50), dashed: 99th percentile",
        &|r| latency_ms(r, 0.5),
        "ms p50",
    );
    for s in series {
        latency.lines.push(Line {
            label: s.label.clone(),
            colour: s.colour,
            dash: Dash::Dashed,
            markers: true,
            points: s
                .levels
                .iter()
                .map(|l| (l.clients as f64, latency_ms(l.result, 0.99)))
                .collect(),
            tips: s
                .levels
                .iter()
                .map(|l| {
                    format!(
                        "{}: {} clients, p99 {:.2} ms",
                        s.label,
                        l.clients,
                        latency_ms(l.result, 0.99)
                    )
                })
                .collect(),
        });
    }
    out.push(latency);
    out.push(make(
        "errors",
        "Errors against clients",
        "failed requests (% of attempted)",
        "connect, receive, length and exception failures",
        &|r| r.error_pct(),
        "% failed",
    ));
    out.push(make(
        "kbytes",
        "KB/s against clients",
        "KB/s (total bytes read ÷ 1024)",
        "",
        &|r| r.kbytes_per_sec(),
        "KB/s",
    ));

    // The distribution: each series at its busiest level; a lone series shows each of its levels.
    let mut dist = Chart {
        name: named("distribution"),
        title: titled("Latency by percentile"),
        note: String::new(),
        x_label: "percentile".into(),
        y_label: "latency (ms)".into(),
        x_scale: Scale::Percentile,
        lines: Vec::new(),
    };
    if series.len() == 1 && series[0].levels.len() > 1 {
        dist.note = "one line per client level".into();
        let levels = &series[0].levels;
        let step = levels.len().div_ceil(8);
        for (i, l) in levels
            .iter()
            .enumerate()
            .filter(|(i, _)| i % step == 0 || *i == levels.len() - 1)
        {
            dist.lines.push(Line {
                label: format!(
                    "{} client{}",
                    l.clients,
                    if l.clients == 1 { "" } else { "s" }
                ),
                colour: COLOURS[(i / step) % COLOURS.len()],
                dash: Dash::Solid,
                markers: false,
                points: distribution(l.result),
                tips: Vec::new(),
            });
        }
    } else {
        dist.note = "each series at its highest-throughput level".into();
        for s in series {
            let Some(best) = s
                .levels
                .iter()
                .max_by(|a, b| a.result.hits_per_sec().total_cmp(&b.result.hits_per_sec()))
            else {
                continue;
            };
            dist.lines.push(Line {
                label: format!("{} @{}", s.label, best.clients),
                colour: s.colour,
                dash: Dash::Solid,
                markers: false,
                points: distribution(best.result),
                tips: Vec::new(),
            });
        }
    }
    out.push(dist);
    out
}

/// Builds the report page and its charts.
pub fn render(page_title: &str, runs: &[ReportRun]) -> Report {
    let charts: Vec<ChartSvg> = charts(runs)
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
body {{ font-family: {FONT}; margin: 2em auto; max-width: 1600px; color: #222; }}
h1 {{ font-size: 1.5em; }} h2 {{ font-size: 1.2em; margin-top: 2em; }}
.charts {{ display: flex; flex-wrap: wrap; gap: 16px; }}
.charts figure {{ margin: 0; border: 1px solid #ddd; }}
svg.chart {{ display: block; max-width: 100%; height: auto; }}
table.details td {{ padding: 1px 12px 1px 0; vertical-align: top; }}
table.details td:first-child {{ color: #666; }}
pre {{ background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 12px; }}
</style></head>
<body>
<h1>{t}</h1>
<div class="charts">
"#,
        t = escape(page_title)
    );
    for c in &charts {
        let _ = writeln!(h, r#"<figure id="chart-{}">{}</figure>"#, c.name, c.svg);
    }
    h.push_str("</div>\n");
    for run in runs {
        let _ = writeln!(
            h,
            "<h2>{}</h2>\n<table class=\"details\">",
            escape(&run.title)
        );
        for (k, v) in &run.details {
            let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", escape(k), escape(v));
        }
        let _ = writeln!(h, "</table>\n<pre>{}</pre>", escape(&run.tables));
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

/// Renders one chart's SVG to PNG (with the system's fonts for the labels).
pub fn png(svg: &str) -> anyhow::Result<Vec<u8>> {
    use resvg::{tiny_skia, usvg};
    let mut opt = usvg::Options::default();
    opt.fontdb_mut().load_system_fonts();
    let tree = usvg::Tree::from_str(svg, &opt).context("parsing a chart's SVG")?;
    let size = tree.size().to_int_size();
    // Twice the SVG size: crisp in a README on high-density screens.
    let mut pixmap = tiny_skia::Pixmap::new(size.width() * 2, size.height() * 2)
        .context("allocating the PNG")?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(2.0, 2.0),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().context("encoding the PNG")
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

    #[test]
    fn ticks_are_round_and_cover_the_data() {
        assert_eq!(linear_ticks(9.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(linear_ticks(730.0).last(), Some(&800.0));
        assert_eq!(percentile_label(1.0), "0%");
        assert_eq!(percentile_label(100.0), "99%");
        assert_eq!(percentile_label(10_000.0), "99.99%");
        assert_eq!(format_tick(25_000.0), "25k");
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
                server_version: None,
                result: r,
            })
            .collect();
        let run = ReportRun {
            name: "#1".into(),
            title: "Run 1".into(),
            details: vec![("command".into(), "webstand compare".into())],
            levels,
            tables: "a | b".into(),
        };
        let report = render("webstand report", &[run]);
        let names: Vec<&str> = report.charts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["hits", "latency", "errors", "kbytes", "distribution"]
        );
        let hits = &report.charts[0].svg;
        assert_eq!(hits.matches("<polyline").count(), 2, "one line per server");
        assert_eq!(hits.matches("<circle").count(), 14);
        assert!(hits.contains("&lt;webstand&gt;") && !hits.contains("<webstand>"));
        assert!(
            report.charts[1].svg.matches("<polyline").count() == 4,
            "p50 and p99 per series"
        );
        assert!(
            report.charts[4].svg.contains(">99%<"),
            "percentile axis labels"
        );
        assert_eq!(report.html.matches("<svg").count(), 5);
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
                server_version: None,
                result: r,
            })
            .collect();
        let run = ReportRun {
            name: "#3".into(),
            title: "Run 3".into(),
            details: vec![],
            levels,
            tables: String::new(),
        };
        let report = render("t", &[run]);
        let names: Vec<&str> = report.charts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names.len(), 10);
        assert!(
            names.contains(&"hits-small")
                && names.contains(&"hits-cgi")
                && names.contains(&"distribution-cgi"),
            "{names:?}"
        );
        let hits_cgi = &report.charts.iter().find(|c| c.name == "hits-cgi").unwrap();
        assert_eq!(hits_cgi.svg.matches("<polyline").count(), 2);
        assert!(
            hits_cgi.title.ends_with(": cgi") && hits_cgi.svg.contains(">nginx</text>"),
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
        let runs = [
            ReportRun {
                name: "#4".into(),
                title: "Run 4".into(),
                details: vec![],
                levels: vec![],
                tables: String::new(),
            },
            ReportRun {
                name: "#5".into(),
                title: "Run 5".into(),
                details: vec![],
                levels: vec![Level {
                    group: "",
                    clients: 1,
                    server_version: None,
                    result: &empty,
                }],
                tables: String::new(),
            },
        ];
        let report = render("t", &runs);
        assert_eq!(report.charts.len(), 5);
        assert!(report
            .charts
            .iter()
            .all(|c| !c.svg.contains("NaN") && !c.svg.contains("inf")));
    }

    #[test]
    fn png_renders_a_chart() {
        let r = result(4, 400);
        let run = ReportRun {
            name: "#2".into(),
            title: "Run 2".into(),
            details: vec![],
            levels: vec![Level {
                group: "",
                clients: 4,
                server_version: None,
                result: &r,
            }],
            tables: String::new(),
        };
        let report = render("t", &[run]);
        let png = png(&report.charts[0].svg).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert!(
            png.len() > 2000,
            "a blank image would be tiny: {} bytes",
            png.len()
        );
    }
}
