//! `webstand history|show|diff|export|report`: reading saved runs back from the history database
//! (webstand-store) and handing them to the report functions. These commands only read the database.

use super::run_settings;
use super::session::EMBEDDED_TARGET;
use super::stored::{
    backends_cpu_us, compare_rows, describe, details, diagnosis, level_protocols, levels,
    max_error_pct, measured_tables, server_cpu_us, shown_status, tables, when,
};
use crate::Global;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use webstand_diagnosis::render;
use webstand_report::diff::Side;
use webstand_report::export;
use webstand_report::html;
use webstand_report::levels::{self, ReportRun};
use webstand_report::tables::Layout;
use webstand_store::{RunId, RunSummary, Store, StoredRun};

#[derive(clap::Args)]
#[command(after_help = super::help::READING)]
pub struct HistoryArgs {
    /// Show only the newest N runs (0 = all)
    #[arg(short = 'n', long, default_value_t = 30, value_name = "N")]
    limit: usize,
    /// Show only runs of this kind: bench, sweep or compare
    #[arg(long, value_name = "KIND")]
    kind: Option<String>,
}

#[derive(clap::Args)]
#[command(after_help = super::help::READING)]
pub struct ShowArgs {
    /// Run id from `webstand history`, or `last`
    run: String,
    /// Sweep table layout: full, tenon or webstone [default: the run's own `--table`, else full]
    #[arg(long, value_name = "LAYOUT")]
    table: Option<Layout>,
    /// Instead of the tables, the config files and command lines a comparison started each server
    /// with, exactly as written (temporary paths and ports as they were)
    #[arg(long, conflicts_with = "table")]
    configs: bool,
}

#[derive(clap::Args)]
#[command(after_help = super::help::READING)]
pub struct DiffArgs {
    /// Run A (the baseline): an id, `last`, or several repeats of it as `3,4,5` or `3-5`
    run_a: String,
    /// Run B, compared with A (ratios are B/A); same forms as RUN_A
    run_b: String,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// The run and every level with counts, figures and latency percentiles
    Json,
    /// One row per level with every figure (header line first)
    Csv,
    /// HdrHistogram's percentile distribution of one level's latency, in milliseconds
    Hgrm,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Which {
    /// Send to last byte
    Total,
    /// Connection set-up
    Connect,
    /// Request written to first byte
    Waiting,
    /// Total minus connect
    Processing,
}

#[derive(clap::Args)]
#[command(after_help = super::help::READING)]
pub struct ExportArgs {
    /// Run id from `webstand history`, or `last`
    run: String,
    /// Output format
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
    /// Write to FILE instead of standard output
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// hgrm: which level, numbered from 1 as `webstand show` lists them [default: the only one]
    #[arg(long, value_name = "N")]
    level: Option<usize>,
    /// hgrm: which latency histogram
    #[arg(long, value_enum, default_value = "total")]
    histogram: Which,
}

#[derive(clap::Args)]
#[command(after_help = super::help::READING)]
pub struct ReportArgs {
    /// Run ids (or `last`); the charts draw one line per run and group
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<String>,
    /// The HTML file to write
    #[arg(short = 'o', long, value_name = "FILE", default_value = "report.html")]
    output: PathBuf,
    /// Also write each chart as DIR/<chart>.svg
    #[arg(long, value_name = "DIR")]
    svg: Option<PathBuf>,
    /// Also write each chart as DIR/<chart>.png (rendered with resvg, twice the SVG's size)
    #[arg(long, value_name = "DIR")]
    png: Option<PathBuf>,
    /// The page's title [default: "webstand report: runs …"]
    #[arg(long)]
    title: Option<String>,
}

/// Resolves one run reference: an id or `last`.
fn run_id(store: &Store, spec: &str) -> anyhow::Result<RunId> {
    let spec = spec.trim();
    if spec == "last" {
        return store
            .last_run()?
            .with_context(|| format!("no runs saved yet in {}", store.path().display()));
    }
    spec.parse::<RunId>().map_err(|_| {
        anyhow::anyhow!("bad run id {spec:?}: expected a number from `webstand history`, or `last`")
    })
}

/// Resolves `3`, `last`, `3,4,5` or `3-5` to run ids.
fn run_ids(store: &Store, spec: &str) -> anyhow::Result<Vec<RunId>> {
    let mut out = Vec::new();
    for part in spec.split(',') {
        match part.split_once('-') {
            Some((a, b)) if !a.trim().is_empty() => {
                let (a, b) = (run_id(store, a)?, run_id(store, b)?);
                if b < a || b - a > 1000 {
                    bail!("bad run range {part:?}");
                }
                out.extend(a..=b);
            }
            _ => out.push(run_id(store, part)?),
        }
    }
    Ok(out)
}

pub fn history(a: HistoryArgs, g: &Global) -> anyhow::Result<i32> {
    let path = match &g.db {
        Some(p) => p.clone(),
        None => webstand_store::default_path()?,
    };
    if !path.exists() {
        println!("No runs saved yet ({} does not exist).", path.display());
        return Ok(0);
    }
    let store = Store::open_existing(Some(&path))?;
    let mut runs = store.runs()?;
    if let Some(k) = &a.kind {
        runs.retain(|r| &r.kind == k);
    }
    let hidden = if a.limit > 0 && runs.len() > a.limit {
        runs.len() - a.limit
    } else {
        0
    };
    runs.drain(..hidden);
    let rows: Vec<Vec<String>> = runs.iter().map(|r| history_row(&store, r)).collect();
    let mut text = columns(HISTORY_COLUMNS, &rows);
    if runs.is_empty() {
        text += "(no runs)\n";
    }
    if hidden > 0 {
        text += &format!(
            "({hidden} older run{} not shown: `webstand history -n 0` lists every run)\n",
            if hidden == 1 { "" } else { "s" }
        );
    }
    write_out(None, text.as_bytes())?;
    Ok(0)
}

/// `history`'s columns: what tells runs apart at a glance (`run_settings`).
const HISTORY_COLUMNS: &[&str] = &[
    "Id",
    "When (UTC)",
    "Kind",
    "Levels",
    "Status",
    "Clients",
    "KA",
    "Protocol",
    "Result",
    "Target",
];

/// A run's line in `history`. A run that cannot be read back whole (a file damaged under it) keeps
/// what its summary says, with "?" for the rest.
fn history_row(store: &Store, r: &RunSummary) -> Vec<String> {
    let status = if r.status == "running" {
        "unfinished"
    } else {
        &r.status
    };
    let when = jiff::Timestamp::from_second(r.started_unix as i64)
        .map_or_else(|_| "?".into(), |t| t.strftime("%Y-%m-%d %H:%M").to_string());
    let mut row = vec![r.id.to_string(), when, r.kind.clone(), r.levels.to_string()];
    row.push(status.to_string());
    let run = store.load_run(r.id).ok();
    match (&run, r.kind.as_str()) {
        (Some(_), "probe") => {
            let cases = store.probe_cases(r.id).unwrap_or_default();
            let count = |v: &str| cases.iter().filter(|c| c.verdict == v).count();
            row[3] = cases.len().to_string();
            row.extend(["-".into(), "-".into(), "-".into()]);
            row.push(format!(
                "{} unsafe, {} lenient",
                count("unsafe"),
                count("lenient")
            ));
        }
        (Some(run), _) => {
            row.push(run_settings::clients_span(run));
            row.push(
                if run_settings::keep_alive(run) {
                    "yes"
                } else {
                    "no"
                }
                .into(),
            );
            row.push(run_settings::protocol(run));
            row.push(run_settings::headline(run).unwrap_or_else(|| "-".into()));
        }
        (None, _) => row.extend(["?".into(), "?".into(), "?".into(), "?".into()]),
    }
    row.push(match &run {
        Some(run) if run.meta.kind == "compare" => run_settings::target(run),
        _ => shown_target(r).to_string(),
    });
    row
}

/// A table with a header line, each column as wide as its widest cell (numbers right-aligned),
/// the last one unpadded.
fn columns(header: &[&str], rows: &[Vec<String>]) -> String {
    let width = |i: usize| {
        let cells = rows.iter().map(|r| r[i].chars().count());
        cells.chain([header[i].chars().count()]).max().unwrap_or(0)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let line = |cells: &[&str]| {
        let mut out = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            let numeric = i == 0 || (i == 3 && cells[i] != header[i]);
            match (i + 1 == cells.len(), numeric) {
                (true, _) => out += c,
                (false, true) => out += &format!("{c:>w$}  "),
                (false, false) => out += &format!("{c:<w$}  "),
            }
        }
        out + "\n"
    };
    let mut text = line(header);
    for r in rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        text += &line(&cells);
    }
    text
}

/// The run's target; a sweep run against the embedded server (no URL on its command line), saved by
/// an older webstand with the server's temporary port, shows as the embedded server.
fn shown_target(r: &RunSummary) -> &str {
    let no_url = !r.command_line.contains("http://");
    if r.kind == "sweep" && no_url && r.target.starts_with("http://127.0.0.1:") {
        EMBEDDED_TARGET
    } else {
        &r.target
    }
}

pub fn show(a: ShowArgs, g: &Global) -> anyhow::Result<i32> {
    let store = Store::open_existing(g.db.as_deref())?;
    let run = store.load_run(run_id(&store, &a.run)?)?;
    let mut text = format!("{}\n", describe(&run));
    let script = store
        .script(run.id)?
        .map(|s| ("Script".to_string(), s.to_string()));
    for (k, v) in details(&run).into_iter().chain(script) {
        text += &format!("  {:<9} {v}\n", format!("{k}:"));
    }
    text += "\n";
    text += &match run.meta.kind.as_str() {
        _ if a.configs => configs(&store, &run)?,
        "probe" => super::probe::stored(&store, &run)?,
        _ => tables(&run, a.table),
    };
    text += &super::stored_thresholds::tables(&store, run.id)?;
    write_out(None, webstand_results::text::wrap(&text).as_bytes())?;
    Ok(0)
}

/// Every file saved with a run, each under a `== server: name ==` line.
fn configs(store: &Store, run: &StoredRun) -> anyhow::Result<String> {
    let files = store.configs(run.id)?;
    if files.is_empty() {
        return Ok(format!(
            "(no configs saved with run {}: `webstand compare` saves its servers' since schema 7)\n",
            run.id
        ));
    }
    let mut text = String::new();
    for f in files {
        text += &format!("== {}: {} ==\n{}", f.server, f.name, f.text);
        if !f.text.ends_with('\n') {
            text.push('\n');
        }
        text.push('\n');
    }
    Ok(text)
}

pub fn diff(a: DiffArgs, g: &Global) -> anyhow::Result<i32> {
    let store = Store::open_existing(g.db.as_deref())?;
    let load = |spec: &str| -> anyhow::Result<Vec<StoredRun>> {
        run_ids(&store, spec)?
            .into_iter()
            .map(|id| store.load_run(id))
            .collect()
    };
    let (runs_a, runs_b) = (load(&a.run_a)?, load(&a.run_b)?);
    let side = |runs: &[StoredRun]| -> anyhow::Result<String> {
        let ids: Vec<String> = runs.iter().map(|r| r.id.to_string()).collect();
        let first = runs.first().context("no run given")?;
        Ok(format!(
            "run{} {} ({} of {}{})",
            if ids.len() > 1 { "s" } else { "" },
            ids.join(","),
            first.meta.kind,
            first.meta.target,
            protocols(runs)
                .map(|p| format!(", {p}"))
                .unwrap_or_default()
        ))
    };
    let side_a = Side {
        name: side(&runs_a)?,
        levels: runs_a.iter().flat_map(levels).collect(),
        protocol: protocols(&runs_a),
        settings: side_settings(&store, &runs_a)?,
    };
    let side_b = Side {
        name: side(&runs_b)?,
        levels: runs_b.iter().flat_map(levels).collect(),
        protocol: protocols(&runs_b),
        settings: side_settings(&store, &runs_b)?,
    };
    let (mut text, _) = webstand_report::diff::diff(&side_a, &side_b)?;
    let ids = |runs: &[StoredRun]| runs.iter().map(|r| r.id).collect::<Vec<_>>();
    let (ids_a, ids_b) = (ids(&runs_a), ids(&runs_b));
    let sides = [
        (side_a.name.as_str(), &ids_a[..]),
        (side_b.name.as_str(), &ids_b[..]),
    ];
    text += &super::stored_thresholds::diff(&store, sides)?;
    write_out(None, webstand_results::text::wrap(&text).as_bytes())?;
    Ok(0)
}

/// A diff side's settings (`run_settings::settings`): each setting's values over the side's runs,
/// each once ("1 | 2" when its runs differ), a setting some runs lack counting as "-".
fn side_settings(store: &Store, runs: &[StoredRun]) -> anyhow::Result<Vec<(String, String)>> {
    let mut each: Vec<Vec<(String, String)>> = runs.iter().map(run_settings::settings).collect();
    // The wrk script a run ran with (its name and the start of its digest), from the history.
    for (settings, run) in each.iter_mut().zip(runs) {
        if let Some(s) = store.script(run.id)? {
            let short = s.sha256.get(..12).unwrap_or(&s.sha256);
            settings.push(("script".into(), format!("{} {short}", s.name)));
        }
    }
    let mut names: Vec<&str> = Vec::new();
    for (k, _) in each.iter().flatten() {
        if !names.contains(&k.as_str()) {
            names.push(k);
        }
    }
    Ok(names
        .into_iter()
        .map(|name| {
            let mut values: Vec<&str> = Vec::new();
            for settings in &each {
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
        .collect())
}

/// What a diff side's runs spoke ("h2c -m 16", "HTTP/1.1"; several joined by " + "), as saved, or
/// as their levels tell (h2 figures or none) for runs saved before the history kept it.
fn protocols(runs: &[StoredRun]) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    for r in runs {
        let name = match (&r.protocol, r.levels.iter().any(|l| l.result.h2.is_some())) {
            (Some(p), _) => p.to_string(),
            (None, true) => "HTTP/2".to_string(),
            (None, false) if r.meta.kind == "compare" => continue,
            (None, false) => "HTTP/1".to_string(),
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    (!names.is_empty()).then(|| names.join(" + "))
}

/// Writes `bytes` to `path`, or to standard output when there is none.
fn write_out(path: Option<&Path>, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    match path {
        Some(p) => {
            std::fs::write(p, bytes).with_context(|| format!("cannot write {}", p.display()))
        }
        // A reader that stopped early (`| head`) is not an error.
        None => match std::io::stdout().lock().write_all(bytes) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => other.context("writing to standard output"),
        },
    }
}

pub fn export(a: ExportArgs, g: &Global) -> anyhow::Result<i32> {
    let store = Store::open_existing(g.db.as_deref())?;
    let run = store.load_run(run_id(&store, &a.run)?)?;
    let lv = levels(&run);
    let text = match a.format {
        Format::Json => export_json(&run, &lv)?,
        Format::Csv => export::csv(&lv, &recorded(&run)),
        Format::Hgrm => {
            let n = match (a.level, lv.len()) {
                (_, 0) => bail!("run {} has no measured level", run.id),
                (None, 1) => 1,
                (None, k) => bail!(
                    "run {} has {k} levels; choose one with --level N (1..={k}, as `webstand show {}` lists them)",
                    run.id,
                    run.id
                ),
                (Some(n), k) if n == 0 || n > k => bail!("--level {n} is out of range: run {} has {k} levels", run.id),
                (Some(n), _) => n,
            };
            let r = lv[n - 1].result;
            if r.successful() == 0 {
                bail!(
                    "run {} level {n} has no successful response ({} failed, {} non-2xx): no latency histogram to export",
                    run.id,
                    r.failed.total(),
                    r.non_2xx
                );
            }
            let h = &r.histograms;
            export::hgrm(match a.histogram {
                Which::Total => &h.total,
                Which::Connect => &h.connect,
                Which::Waiting => &h.waiting,
                Which::Processing => &h.processing,
            })
        }
    };
    write_out(a.output.as_deref(), text.as_bytes())?;
    Ok(0)
}

/// What the history recorded of each level besides its result, for the CSV: what it spoke, the
/// server's CPU (alone and with its PHP backends') where the lab measured it, and its Diagnosis.
fn recorded(run: &StoredRun) -> Vec<export::Recorded> {
    let cpu = server_cpu_us(run).into_iter().zip(backends_cpu_us(run));
    let each = run.levels.iter().zip(level_protocols(run)).zip(cpu);
    each.map(|((l, protocol), (server, with_backends))| {
        let diagnosis = l.diagnosis.as_ref().and_then(render::from_json);
        export::Recorded {
            protocol: Some(protocol),
            server_cpu: export::ServerCpu {
                server,
                with_backends,
            },
            bound_by: diagnosis
                .as_ref()
                .map(|d| render::bound_cell(d).to_string()),
            diagnosis: diagnosis.as_ref().map(render::headline),
        }
    })
    .collect()
}

/// `export --format json`: the run's metadata, each level's figures with what it spoke, its
/// server's side where the lab measured it and its diagnosis, and a comparison's rows.
fn export_json(run: &StoredRun, lv: &[levels::Level]) -> anyhow::Result<String> {
    let m = &run.machine;
    let mut doc = serde_json::json!({
        "run": {
            "id": run.id,
            "kind": run.meta.kind,
            "command_line": run.meta.command_line,
            "target": run.meta.target,
            "started_unix": run.started_unix,
            "started": when(run.started_unix),
            "finished_unix": run.finished_unix,
            "status": shown_status(run),
            "webstand_version": run.version,
            "protocol": run.protocol.as_ref().map(|p| &p.name),
            "h2_streams": run.protocol.as_ref().and_then(|p| p.h2_streams),
            "machine": { "cpu_model": m.cpu_model, "cores": m.cores, "kernel": m.kernel, "hostname": m.hostname },
        },
        "levels": export::levels_json(lv),
    });
    // The server's side of each level, where the lab measured it, and its diagnosis.
    if let Some(levels) = doc["levels"].as_array_mut() {
        let spoke = level_protocols(run);
        for ((j, l), p) in levels.iter_mut().zip(&run.levels).zip(spoke) {
            j["protocol"] = p.into();
            if let Some(d) = &l.diagnosis {
                j["diagnosis"] = d.clone();
            }
            if let Some(s) = l.server {
                j["server"] = serde_json::json!({
                    "cpu_user_secs": s.cpu.user.as_secs_f64(),
                    "cpu_sys_secs": s.cpu.sys.as_secs_f64(),
                    "cpu_us_per_request": s.cpu_us_per_request(&l.result),
                    "peak_rss_kib": s.peak_rss_kib,
                });
                if let Some(b) = s.backends_cpu {
                    j["server"]["backends_cpu_user_secs"] = b.user.as_secs_f64().into();
                    j["server"]["backends_cpu_sys_secs"] = b.sys.as_secs_f64().into();
                    j["server"]["with_backends_cpu_us_per_request"] =
                        s.with_backends_cpu_us_per_request(&l.result).into();
                }
            }
        }
    }
    if run.meta.kind == "compare" {
        doc["comparison"] = comparison_json(run);
    }
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

/// A saved comparison's rows as compare's `--json` gave them (`rounds`, and per workload its rows,
/// each the median over the rounds); each round's own levels stay in `levels`, with their `round`
/// (`rounds_inferred`: told from the saved order, for a run saved before the history kept them).
fn comparison_json(run: &StoredRun) -> serde_json::Value {
    let workloads: Vec<serde_json::Value> = compare_rows(run)
        .into_iter()
        .map(|(name, rows)| serde_json::json!({ "workload": name, "rows": rows }))
        .collect();
    serde_json::json!({
        "rounds": run.round_count(),
        "rounds_inferred": run.rounds_inferred(),
        "workloads": workloads,
    })
}

pub fn report(a: ReportArgs, g: &Global) -> anyhow::Result<i32> {
    let store = Store::open_existing(g.db.as_deref())?;
    let mut runs = Vec::new();
    for spec in &a.runs {
        for id in run_ids(&store, spec)? {
            runs.push(store.load_run(id)?);
        }
    }
    let mut thresholds = Vec::new();
    for r in &runs {
        thresholds.push(super::stored_thresholds::html_levels(&store, r.id)?);
    }
    let report_runs: Vec<ReportRun> = runs
        .iter()
        .zip(&thresholds)
        .map(|(r, thresholds)| ReportRun {
            name: format!("#{}", r.id),
            title: describe(r),
            details: details(r),
            levels: levels(r),
            tables: measured_tables(r, None),
            diagnosis: diagnosis(r),
            target: r.meta.target.clone(),
            max_error_pct: max_error_pct(r),
            server_cpu_us: server_cpu_us(r),
            thresholds: thresholds.clone(),
        })
        .collect();
    let ids: Vec<String> = runs.iter().map(|r| r.id.to_string()).collect();
    let title = a.title.clone().unwrap_or_else(|| {
        format!(
            "webstand report: run{} {}",
            if ids.len() > 1 { "s" } else { "" },
            ids.join(", ")
        )
    });
    let page = html::render(&title, &report_runs);
    write_out(Some(&a.output), page.html.as_bytes())?;
    for (dir, ext) in [(&a.svg, "svg"), (&a.png, "png")] {
        let Some(dir) = dir else { continue };
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for c in &page.charts {
            let bytes = if ext == "svg" {
                c.svg.clone().into_bytes()
            } else {
                html::png(&c.svg)?
            };
            write_out(Some(&dir.join(format!("{}.{ext}", c.name))), &bytes)?;
        }
    }
    eprintln!(
        "webstand: wrote {} ({} charts)",
        a.output.display(),
        page.charts.len()
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::when;

    #[test]
    fn times_read_as_http_dates() {
        assert_eq!(when(1_795_383_603.5), "Sun, 22 Nov 2026 21:40:03 GMT");
    }
}
