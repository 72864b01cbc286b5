//! A run read back from the history, as text: its heading, its details (with its outcome and why,
//! judged by the same rules as when it ran) and its tables in the layout of the command that
//! measured it. Shared by `show`, `report` and `export`.

use super::sweep_table::Table;
use webstand_diagnosis::{render, Diagnosis};
use webstand_report::compare::WorkloadRow;
use webstand_report::levels::Level;
use webstand_report::tables::{self, Layout};
use webstand_results::sweep::Bounds;
use webstand_results::{Comparison, StopSignal};
use webstand_results::{Judged, Outcome, Verdict};
use webstand_store::StoredRun;

/// "Sun, 22 Nov 2026 21:40:03 GMT" from Unix seconds (HTTP's date format, by httpdate).
pub fn when(unix: f64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix.max(0.0) as u64);
    httpdate::fmt_http_date(at)
}

/// The run's levels as the reports take them, each with its round ([`rounds`]).
pub fn levels(run: &StoredRun) -> Vec<Level<'_>> {
    run.levels
        .iter()
        .zip(run.rounds())
        .map(|(l, round)| Level {
            group: &l.group,
            clients: l.clients,
            round,
            server_version: l.server_version.as_deref(),
            result: &l.result,
        })
        .collect()
}

/// The name a run goes by in a report with others ("#12"): its series' stand-in server when no
/// Server header was seen.
pub fn run_name(run: &StoredRun) -> String {
    format!("#{}", run.id)
}

/// The series of each of the run's levels, named as the report's legends name them.
pub fn level_series(run: &StoredRun) -> Vec<String> {
    webstand_report::series::level_series(&run_name(run), &run.meta.target, &levels(run))
}

pub fn describe(run: &StoredRun) -> String {
    let over = match &run.protocol {
        Some(p) if p.is_h2() => format!(" over {p}"),
        _ => String::new(),
    };
    format!(
        "Run {}: {} of {}{over} ({}) — {}",
        run.id,
        run.meta.kind,
        run.meta.target,
        when(run.started_unix),
        run.shown_status()
    )
}

/// The run judged again from its stored levels: max-users probes do not count their errors.
pub fn verdict(run: &StoredRun) -> Verdict {
    let search = run.meta.command_line.contains("--find-max-users");
    let judged: Vec<Judged> = run
        .levels
        .iter()
        .map(|l| Judged {
            label: match l.group.as_str() {
                "" => format!("{} clients", l.clients),
                g => format!("{g} at {} clients", l.clients),
            },
            result: &l.result,
            counts_errors: !search && !l.group.ends_with("/max-users"),
        })
        .collect();
    webstand_results::judge(
        &judged,
        run.max_error_pct(),
        (run.status == "interrupted").then(StopSignal::default),
    )
}

/// "errors, 6 levels: 32 clients 5.20 % …": the status, and why when it is not complete. A run saved
/// by an older webstand, whose status the rules now judge otherwise, says both.
fn status_line(run: &StoredRun) -> String {
    let n = run.levels.len();
    let mut line = format!(
        "{}, {n} level{}",
        run.shown_status(),
        if n == 1 { "" } else { "s" }
    );
    // Only runs made of levels are judged here (a probe's cases have verdicts of their own).
    if run.status == "running" || !matches!(run.meta.kind.as_str(), "bench" | "sweep" | "compare") {
        return line;
    }
    let v = verdict(run);
    // Thresholds (and a max-rate search's SLO) are judged on top of the levels' own outcome, from
    // what the run saved beside them: a "thresholds" run whose levels are clean is as it was saved.
    let thresholds_on_clean =
        run.status == Outcome::Thresholds.status() && v.outcome == Outcome::Complete;
    if v.outcome.status() != run.status && !thresholds_on_clean {
        line += &format!(
            " (saved so by an older webstand; judged now: {}",
            v.outcome.status()
        );
        line += &if v.reason.is_empty() {
            ")".into()
        } else {
            format!(": {})", v.reason)
        };
    } else if !v.reason.is_empty() {
        line += &format!(": {}", v.reason);
    }
    line
}

/// How long the run took: from its start to its finish, and never less than its levels' own time
/// (older webstands saved a bench run only after it had run).
fn took(run: &StoredRun) -> Option<f64> {
    let measured: f64 = run
        .levels
        .iter()
        .map(|l| l.result.elapsed.as_secs_f64())
        .sum();
    run.finished_unix
        .map(|f| (f - run.started_unix).max(measured))
}

pub fn details(run: &StoredRun) -> Vec<(String, String)> {
    let took = took(run)
        .map(|t| format!(" (took {t:.1} s)"))
        .unwrap_or_default();
    let mut d = vec![
        ("When".into(), format!("{}{took}", when(run.started_unix))),
        ("Command".into(), run.meta.command_line.clone()),
        ("webstand".into(), run.version.clone()),
        ("Machine".into(), run.machine.to_string()),
        ("Status".into(), status_line(run)),
    ];
    d.extend(
        run.servers()
            .into_iter()
            .map(|v| ("Server".into(), v.to_string())),
    );
    // Each series once, named as the report's legends and the export's `series` name it.
    let mut series: Vec<String> = Vec::new();
    for s in level_series(run) {
        if !series.contains(&s) {
            series.push(s);
        }
    }
    if !series.is_empty() {
        d.push(("Series".into(), series.join(", ")));
    }
    if let Some(line) = rounds_line(run) {
        d.push(("Rounds".into(), line));
    }
    match &run.protocol {
        Some(p) => d.push(("Protocol".into(), protocol_line(run, p))),
        None if run.meta.kind == "compare" && !run.levels.is_empty() => {
            d.push(("Protocol".into(), run.protocols_spoken().join(", ")))
        }
        None => {}
    }
    d
}

/// A comparison's rounds and how they are known: each level's round as saved, or (a run saved
/// before the history kept them) told from the order its levels were saved.
fn rounds_line(run: &StoredRun) -> Option<String> {
    if run.meta.kind != "compare" || run.levels.is_empty() {
        return None;
    }
    let n = run.round_count();
    Some(if run.rounds_inferred() {
        format!(
            "{n}, told from the order the levels were saved (saved before the history kept each \
             level's round)"
        )
    } else {
        format!("{n}, each level's round as saved")
    })
}

/// "h2c, -m 16 streams per connection asked (the server allowed 8)", or the HTTP/1 version (over
/// TLS when it was).
fn protocol_line(run: &StoredRun, p: &webstand_store::Protocol) -> String {
    let Some(m) = p.h2_streams else {
        return run
            .protocols_spoken()
            .into_iter()
            .next()
            .unwrap_or_else(|| p.name.clone());
    };
    let mut allowed: Vec<u32> = run
        .levels
        .iter()
        .filter_map(|l| Some(l.result.h2.as_ref()?.max_streams))
        .filter(|&a| a != m)
        .collect();
    allowed.dedup();
    let mut line = format!("{}, -m {m} streams per connection asked", p.name);
    if let Some(a) = allowed.first() {
        line += &format!(" (the server allowed {a})");
    }
    line
}

/// ab's report of a bench run, from what the history keeps (the URL, the level's clients and the
/// command line's -k, -l, -p, --pipeline and --rate).
fn ab_report(run: &StoredRun) -> Option<String> {
    let [level] = run.levels.as_slice() else {
        return None;
    };
    ab_level(run, level)
}

/// ab's report of one level of a run aimed at a URL (a bench run, or a sweep's level as `sweep
/// --table ab` printed it); None when the run's target is not a URL.
fn ab_level(run: &StoredRun, level: &webstand_store::StoredLevel) -> Option<String> {
    let (target, path, _) = webstand_engine::parse_web_url(&run.meta.target).ok()?;
    let flag = |f: &str| run.option_given(f);
    let info = webstand_report::ab::AbInfo {
        host: target.host,
        port: target.port,
        path,
        concurrency: level.clients,
        variable_length: flag("-l"),
        keep_alive: flag("-k") || level.result.keep_alive_requests > 0,
        body_sent: flag("-p") || flag("-u"),
        pipeline: run
            .option("--pipeline")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1),
        rate: run.option("--rate").and_then(|v| v.parse().ok()),
        hide_percentiles: false,
        hide_confidence: flag("-S"),
    };
    let r = &level.result;
    let mut text = webstand_report::ab::report(r, &info)
        + &webstand_report::wrk::fine_percentiles(r)
        + &webstand_report::h2load::summary(r, None)
        + &webstand_report::quic::summary(r)
        + &webstand_report::generator::lines(r);
    if flag("--latency") {
        let rates = level
            .diagnosis
            .as_ref()
            .and_then(|d| completions(&d["evidence"]["completions_per_interval"]));
        text += &webstand_report::wrk::thread_stats(r, rates.as_ref());
        text += &webstand_report::ab::latency_spectrum(r);
    }
    Some(text)
}

/// The completed requests per interval a diagnosis kept (`{"interval": SECONDS, "counts": [...]}`).
fn completions(v: &serde_json::Value) -> Option<webstand_report::wrk::Rates> {
    Some(webstand_report::wrk::Rates {
        interval: std::time::Duration::try_from_secs_f64(v["interval"].as_f64()?).ok()?,
        counts: v["counts"]
            .as_array()?
            .iter()
            .filter_map(|c| c.as_u64())
            .collect(),
    })
}

/// The table layout the run's command line asked for, else the full one.
fn table_of(run: &StoredRun) -> Table {
    run.option("--table")
        .and_then(|v| v.parse().ok())
        .unwrap_or(Table::Sweep(Layout::Full))
}

/// A sweep as `sweep --table ab` printed it: ab's report for each level, then the peak line; None
/// when its target is not a URL.
fn ab_per_level(run: &StoredRun) -> Option<String> {
    let mut out = String::new();
    for level in &run.levels {
        out += &ab_level(run, level)?;
        out.push('\n');
    }
    Some(out + &tables::summary(&levels(run), run.max_error_pct()))
}

/// Server CPU-µs per request of each level, where the lab measured it.
pub fn server_cpu_us(run: &StoredRun) -> Vec<Option<f64>> {
    run.levels
        .iter()
        .map(|l| l.server.map(|s| s.cpu_us_per_request(&l.result)))
        .collect()
}

/// Each level's server and PHP backends' CPU-µs per request together (the compare table's
/// srv+php), where the lab measured the backends (php and wordpress levels, schema 11 on).
pub fn backends_cpu_us(run: &StoredRun) -> Vec<Option<f64>> {
    run.levels
        .iter()
        .map(|l| l.server?.with_backends_cpu_us_per_request(&l.result))
        .collect()
}

/// A stored comparison as compare had it (`StoredRun::comparison`), each round's peak marked by
/// its saved diagnosis as compare marked it, its max-users searches judged by the bounds its
/// command line gave.
pub fn comparison(run: &StoredRun) -> Comparison {
    let max_p99_ms = run.option("--max-p99-ms").and_then(|v| v.parse().ok());
    let max_users = Bounds {
        max_error_pct: run.max_error_pct(),
        max_p99_ms: Some(max_p99_ms.unwrap_or(super::compare::MAX_P99_MS)),
    };
    run.comparison(run.max_error_pct(), &max_users, &|w, saved| {
        if let Some(d) = render::from_json(saved) {
            render::mark_peak(w, &d);
        }
    })
}

/// A comparison's rows per workload, built as compare built them
/// (`webstand_report::comparison::comparison_rows`): a row per server, each the median over the
/// rounds, with the server's CPU, memory and notes where the lab saved them.
pub fn compare_rows(run: &StoredRun) -> Vec<(String, Vec<WorkloadRow>)> {
    webstand_report::comparison::comparison_rows(&comparison(run))
}

/// A comparison's per-workload tables, saying when each row is a median of rounds.
fn compare_tables(run: &StoredRun) -> String {
    let n = run.round_count();
    let mut out = String::new();
    if n > 1 {
        out.push_str(&format!(
            "Medians of {n} rounds, as compare printed them: the round with the median peak gives \
             the peak, clients and p99; CPU figures are their own medians, errors the sum, RSS the \
             largest. Each round's sweep follows.\n\n"
        ));
    }
    for (w, rows) in compare_rows(run) {
        out.push_str(&webstand_report::compare::workload_table(&w, &rows));
        out.push('\n');
    }
    out
}

/// One sweep table per group, and per round where a comparison ran several (each with its own
/// peak line: a table over every round's levels would name the best round's peak), each level
/// numbered as `export --level` takes it.
fn sweep_tables(run: &StoredRun, layout: Layout, diagnoses: &[Option<Diagnosis>]) -> String {
    let (all, n) = (levels(run), run.round_count());
    let mut out = String::new();
    for group in run.groups() {
        // Each round apart where the group has several (an older run's max-users searches are
        // all in its round 1).
        let split = all.iter().any(|l| l.group == group && l.round > 1);
        for round in 1..=n {
            let (mut lv, mut bound, mut numbers) = (Vec::new(), Vec::new(), Vec::new());
            let mine = (all.iter().zip(diagnoses).enumerate())
                .filter(|(_, (l, _))| l.group == group && l.round == round);
            for (i, (l, d)) in mine {
                lv.push(*l);
                bound.push(d.as_ref().map_or("?", render::bound_cell));
                numbers.push(i + 1);
            }
            if lv.is_empty() {
                continue;
            }
            match (group, split) {
                ("", _) => {}
                (g, false) => out.push_str(&format!("{g}\n")),
                (g, true) => out.push_str(&format!("{g}, round {round} of {n}\n")),
            }
            // Levels saved before the history kept diagnoses get no column.
            let bound = if bound.iter().all(|b| *b == "?") {
                &[][..]
            } else {
                &bound[..]
            };
            let table = tables::render(layout, &lv, run.max_error_pct(), bound);
            out.push_str(&tables::numbered(&table, &numbers));
            out.push('\n');
            let h2 = webstand_report::h2_table::table(&lv);
            if !h2.is_empty() {
                out.push_str(&h2);
                out.push('\n');
            }
        }
    }
    out
}

/// A run's tables, in the layout of the command that measured it, then the Diagnosis it printed
/// ([`measured_tables`], [`diagnosis`]).
pub fn tables(run: &StoredRun, table: Option<Table>) -> String {
    let text = measured_tables(run, table);
    match run.meta.kind.as_str() {
        // ab's report is followed by its Diagnosis as bench printed it.
        "bench" if !run.levels.is_empty() => text + &diagnosis(run),
        _ => text + diagnosis(run).trim_start_matches('\n'),
    }
}

/// Each level's diagnosis as saved (None for a level saved without one).
fn diagnoses(run: &StoredRun) -> Vec<Option<Diagnosis>> {
    run.levels
        .iter()
        .map(|l| l.diagnosis.as_ref().and_then(render::from_json))
        .collect()
}

/// A run's measured tables: ab's report for a bench run, the per-workload comparison for a
/// compare run, then one sweep table per group (with a "Bound by" column where the levels were
/// diagnosed).
pub fn measured_tables(run: &StoredRun, table: Option<Table>) -> String {
    if run.meta.kind == "bench" {
        if let Some(text) = ab_report(run) {
            return text.trim_start_matches('\n').to_string();
        }
    }
    // A max-rate search's levels are the rates it tried, not a sweep with a peak.
    if let Some(text) = super::max_rate_stored::stored_table(run) {
        return text;
    }
    let mut out = String::new();
    if run.meta.kind == "compare" {
        out.push_str(&compare_tables(run));
    }
    let layout = match table.unwrap_or_else(|| table_of(run)) {
        Table::Ab if run.meta.kind == "sweep" => {
            if let Some(text) = ab_per_level(run) {
                return text;
            }
            Layout::Full
        }
        Table::Ab => Layout::Full,
        Table::Sweep(layout) => layout,
    };
    out.push_str(&sweep_tables(run, layout, &diagnoses(run)));
    if run.levels.is_empty() {
        out.push_str("(no level completed)\n");
    }
    out
}

/// The Diagnosis the run printed, from the history: a bench's section, or a line per diagnosed
/// level with its findings; empty when no level was diagnosed.
pub fn diagnosis(run: &StoredRun) -> String {
    let diagnoses = diagnoses(run);
    if run.meta.kind == "bench" && run.levels.len() == 1 {
        return diagnoses[0]
            .as_ref()
            .map(render::section)
            .unwrap_or_default();
    }
    let diagnosed: Vec<_> = run
        .levels
        .iter()
        .zip(&diagnoses)
        .filter_map(|(l, d)| {
            let mut label = match l.group.as_str() {
                "" => format!("{} clients", l.clients),
                g => format!("{g} at {} clients", l.clients),
            };
            // Open-loop levels at one pool of connections differ by the rate they asked.
            if let Some(rate) = l.result.asked_rate {
                label += &format!(", {rate}/s asked");
            }
            Some((label, d.as_ref()?))
        })
        .collect();
    if diagnosed.is_empty() {
        return String::new();
    }
    render::levels_section(diagnosed)
}
