//! `webstand history|show|diff|export|report`: reading saved runs back from the history database
//! (webstand-store) and handing them to the report functions. These commands only read the database.

use super::stored::{
    backends_cpu_us, compare_rows, describe, details, diagnosis, level_series, levels,
    measured_tables, run_name, server_cpu_us, tables, when,
};
use super::sweep_table::Table;
use crate::Global;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use webstand_diagnosis::render;
use webstand_report::diff::{side_name, side_settings, Side};
use webstand_report::export;
use webstand_report::history::{self as listing, Facts, HistoryLine};
use webstand_report::html;
use webstand_report::levels::{self, ReportRun};
use webstand_store::{RunSummary, Store, StoredRun};

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
    /// Sweep table layout: full, tenon, webstone or ab (ab's report for each level of a sweep, as
    /// `sweep --table ab` prints it) [default: the run's own `--table`, else full]
    #[arg(long, value_name = "LAYOUT")]
    table: Option<Table>,
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
    let lines: Vec<HistoryLine> = runs.iter().map(|r| history_line(&store, r)).collect();
    write_out(None, listing::listing(&lines, hidden).as_bytes())?;
    Ok(0)
}

/// A run's line in `history`. A run that cannot be read back whole (a file damaged under it) keeps
/// what its summary says.
fn history_line(store: &Store, r: &RunSummary) -> HistoryLine {
    let run = store.load_run(r.id).ok();
    let facts = match (&run, r.kind.as_str()) {
        (Some(_), "probe") => Facts::Probe {
            verdicts: (store.probe_cases(r.id).unwrap_or_default())
                .into_iter()
                .map(|c| c.verdict)
                .collect(),
        },
        (Some(run), _) => Facts::Levels {
            clients: run.clients_span(),
            keep_alive: run.keep_alive(),
            protocol: run.protocol_spoken(),
            headline: headline(run),
        },
        (None, _) => Facts::Unreadable,
    };
    HistoryLine {
        id: r.id,
        started_unix: r.started_unix,
        kind: r.kind.clone(),
        status: webstand_store::shown_status(&r.status).to_string(),
        facts,
        target: match &run {
            Some(run) if run.meta.kind == "compare" => run.measured(),
            _ => r.shown_target().to_string(),
        },
    }
}

/// The figure a run is quoted by (`history::headline`): a comparison's from its rows as compare
/// printed them.
fn headline(run: &StoredRun) -> Option<String> {
    let rows = (run.meta.kind == "compare").then(|| compare_rows(run));
    listing::headline(&levels(run), run.max_error_pct(), rows.as_deref())
}

pub fn show(a: ShowArgs, g: &Global) -> anyhow::Result<i32> {
    let store = Store::open_existing(g.db.as_deref())?;
    let run = store.load_run(store.run_id(&a.run)?)?;
    if a.table == Some(Table::Ab) && !["bench", "sweep"].contains(&run.meta.kind.as_str()) {
        bail!(
            "--table ab prints ab's report for each level of a sweep (a bench run's is ab's already); run {} is a {}: use --table full, tenon or webstone",
            run.id,
            run.meta.kind
        );
    }
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
    super::print(&text);
    Ok(0)
}

/// Every file saved with a run, as `history::configs` prints them.
fn configs(store: &Store, run: &StoredRun) -> anyhow::Result<String> {
    let files = store.configs(run.id)?;
    let each = files
        .iter()
        .map(|f| (f.server.as_str(), f.name.as_str(), f.text.as_str()));
    Ok(listing::configs(run.id, each))
}

pub fn diff(a: DiffArgs, g: &Global) -> anyhow::Result<i32> {
    let store = Store::open_existing(g.db.as_deref())?;
    let load = |spec: &str| -> anyhow::Result<Vec<StoredRun>> {
        store
            .run_ids(spec)?
            .into_iter()
            .map(|id| store.load_run(id))
            .collect()
    };
    let (runs_a, runs_b) = (load(&a.run_a)?, load(&a.run_b)?);
    let (side_a, side_b) = (side(&store, &runs_a)?, side(&store, &runs_b)?);
    let (mut text, _) = webstand_report::diff::diff(&side_a, &side_b)?;
    let ids = |runs: &[StoredRun]| runs.iter().map(|r| r.id).collect::<Vec<_>>();
    let (ids_a, ids_b) = (ids(&runs_a), ids(&runs_b));
    let sides = [
        (side_a.name.as_str(), &ids_a[..]),
        (side_b.name.as_str(), &ids_b[..]),
    ];
    text += &super::stored_thresholds::diff(&store, sides)?;
    super::print(&text);
    Ok(0)
}

/// A diff side: its runs' name, levels, protocol and settings, as `store` reads them back.
fn side<'a>(store: &Store, runs: &'a [StoredRun]) -> anyhow::Result<Side<'a>> {
    let first = runs.first().context("no run given")?;
    let ids: Vec<i64> = runs.iter().map(|r| r.id).collect();
    let protocol = webstand_store::protocols(runs);
    let settings: Vec<Vec<(String, String)>> = runs
        .iter()
        .map(|r| store.run_settings(r))
        .collect::<anyhow::Result<_>>()?;
    Ok(Side {
        name: side_name(
            &ids,
            &first.meta.kind,
            &first.meta.target,
            protocol.as_deref(),
        ),
        levels: runs.iter().flat_map(levels).collect(),
        protocol,
        settings: side_settings(&settings),
    })
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
    let run = store.load_run(store.run_id(&a.run)?)?;
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
    let each = run.levels.iter().zip(run.level_protocols()).zip(cpu);
    let each = each.zip(level_series(run));
    each.map(|(((l, protocol), (server, with_backends)), series)| {
        let diagnosis = l.diagnosis.as_ref().and_then(render::from_json);
        export::Recorded {
            series,
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
            "status": run.shown_status(),
            "webstand_version": run.version,
            "protocol": run.protocol.as_ref().map(|p| &p.name),
            "h2_streams": run.protocol.as_ref().and_then(|p| p.h2_streams),
            "machine": { "cpu_model": m.cpu_model, "cores": m.cores, "kernel": m.kernel, "hostname": m.hostname },
        },
        "levels": export::levels_json(lv),
    });
    // The server's side of each level, where the lab measured it, and its diagnosis.
    if let Some(levels) = doc["levels"].as_array_mut() {
        let spoke = run.level_protocols();
        let each = levels.iter_mut().zip(&run.levels).zip(spoke);
        for (((j, l), p), series) in each.zip(level_series(run)) {
            j["protocol"] = p.into();
            j["series"] = series.into();
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
    if let Some(search) = super::max_rate_stored::stored_json(run) {
        doc["max_rate_search"] = search;
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
        for id in store.run_ids(spec)? {
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
            name: run_name(r),
            title: describe(r),
            details: details(r),
            levels: levels(r),
            tables: measured_tables(r, None),
            diagnosis: diagnosis(r),
            target: r.meta.target.clone(),
            max_error_pct: r.max_error_pct(),
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
