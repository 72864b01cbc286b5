//! The report's summary table, first on the page: per series its peak (the fastest level with errors
//! within the run's threshold, and says so when there is none; over a comparison's rounds, the
//! median of the rounds as compare printed it), p99 at the peak, its errors (failed +
//! non-2xx, with how many levels were mostly errors), CPU-µs per request at the peak (the server's
//! where the lab measured it, and the generator's), and each figure as a ratio to the first row.

use crate::chart::escape;
use crate::series::Series;
use std::fmt::Write;

/// One series' figures.
struct Row {
    label: String,
    workload: Option<String>,
    /// How many rounds its figures are the median of (1: a lone sweep).
    rounds: usize,
    /// (clients, hits/s, p99 ms) at the peak.
    peak: Option<(usize, f64, f64)>,
    errors: u64,
    attempted: u64,
    mostly_errors: usize,
    levels: usize,
    server_cpu_us: Option<f64>,
    generator_cpu_us: Option<f64>,
    max_error_pct: f64,
}

fn row(s: &Series) -> Row {
    let quoted = s.row();
    Row {
        label: s.label.clone(),
        workload: s.workload.clone(),
        rounds: s.rounds().len(),
        peak: quoted.measured.then_some((
            quoted.clients_at_peak,
            quoted.peak_hits_per_sec,
            quoted.p99_ms_at_peak,
        )),
        errors: s.levels.iter().map(|l| l.result.errors()).sum(),
        attempted: s.levels.iter().map(|l| l.result.attempted()).sum(),
        mostly_errors: s.levels.iter().filter(|l| l.result.mostly_errors()).count(),
        levels: s.levels.len(),
        server_cpu_us: quoted.server_cpu_us.filter(|_| quoted.measured),
        generator_cpu_us: quoted.generator_cpu_us.filter(|_| quoted.measured),
        max_error_pct: s.max_error_pct,
    }
}

/// What a row over several rounds quotes: the figures `webstand compare` printed.
const MEDIAN_NOTE: &str = "A series measured over several rounds quotes the median of its rounds, \
as compare printed it and webstand show gives it: the round whose peak is the median gives the peak, \
its clients and p99; CPU figures are the medians of the rounds' peaks. ";

fn ratio(v: Option<f64>, first: Option<f64>) -> String {
    match (v, first) {
        (Some(v), Some(f)) if f > 0.0 => format!("{:.2}×", v / f),
        _ => "–".into(),
    }
}

fn opt(v: Option<f64>, places: usize) -> String {
    v.map_or("–".into(), |v| format!("{v:.places$}"))
}

/// The table as HTML (`<table id="summary">`), with a note saying what its columns mean.
pub fn html(series: &[Series]) -> String {
    let rows: Vec<Row> = series.iter().map(row).collect();
    let Some(first) = rows.first() else {
        return String::new();
    };
    let peak_of = |r: &Row| r.peak.map(|p| p.1);
    let p99_of = |r: &Row| r.peak.map(|p| p.2);
    let mut h = String::from("<table id=\"summary\" class=\"summary\">\n<tr><th>Series</th>");
    for th in [
        "Peak hits/s",
        "Clients at peak",
        "p99 at peak (ms)",
        "Errors (failed + non-2xx)",
        "Server CPU-µs/req",
        "Generator CPU-µs/req",
        "Peak ÷ first",
        "p99 ÷ first",
        "Server CPU ÷ first",
    ] {
        let _ = write!(h, "<th>{}</th>", escape(th));
    }
    h.push_str("</tr>\n");
    for r in &rows {
        let mut name = match &r.workload {
            Some(w) => format!("{} ({w})", r.label),
            None => r.label.clone(),
        };
        if r.rounds > 1 {
            name += &format!(", median of {} rounds", r.rounds);
        }
        let errors_pct = r.errors as f64 * 100.0 / r.attempted.max(1) as f64;
        let mostly = match r.mostly_errors {
            0 => String::new(),
            n => format!("; {n} of {} levels mostly errors", r.levels),
        };
        let peak = match r.peak {
            Some((_, hits, _)) => format!("{hits:.0}"),
            None => format!("none: no level within {} % errors", r.max_error_pct),
        };
        let class = if r.peak.is_none() || r.mostly_errors > 0 {
            " class=\"bad\""
        } else {
            ""
        };
        let cells = [
            escape(&name).into_owned(),
            escape(&peak).into_owned(),
            r.peak.map_or("–".into(), |p| p.0.to_string()),
            opt(p99_of(r), 2),
            format!("{} ({errors_pct:.2} %{mostly})", r.errors),
            opt(r.server_cpu_us, 1),
            opt(r.generator_cpu_us, 1),
            ratio(peak_of(r), peak_of(first)),
            ratio(p99_of(r), p99_of(first)),
            ratio(r.server_cpu_us, first.server_cpu_us),
        ];
        let _ = write!(h, "<tr{class}>");
        for c in cells {
            let _ = write!(h, "<td>{c}</td>");
        }
        h.push_str("</tr>\n");
    }
    let _ = writeln!(
        h,
        "</table>\n<p class=\"note\">Peak: each series' fastest level whose errors (failed requests + non-2xx answers) stay within {} % of its attempted requests; p99 and CPU are at that level. {}Ratios divide by the first row ({}). Errors count every level{}.</p>",
        first.max_error_pct,
        if rows.iter().any(|r| r.rounds > 1) { MEDIAN_NOTE } else { "" },
        escape(&first.label),
        if rows.iter().any(|r| r.rounds > 1) { " of every round" } else { "" },
    );
    if rows.len() > 1 && rows.iter().any(|r| r.rounds == 1) {
        h.push_str(ONCE_WARNING);
    }
    h
}

/// Under a summary whose rows compare figures measured once: such ratios are not worth quoting.
const ONCE_WARNING: &str = "<p class=\"warning\">Measured once: a series measured in a single \
round can move by several per cent from one run to the next, so these ratios are not yet worth \
quoting. Quote medians of several rounds: <code>webstand compare --rounds 3</code> (or several runs \
per side in <code>webstand diff</code>).</p>\n";
