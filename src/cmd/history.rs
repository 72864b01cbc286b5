//! `webstand history|show|diff|export|report`: reading saved runs back from the history database
//! (webstand-store) and handing them to the report functions. These commands only read the database.

use crate::Global;
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use webstand_report::diff::Side;
use webstand_report::export::{self, Level};
use webstand_report::html::{self, ReportRun};
use webstand_report::tables::Layout;
use webstand_store::{RunId, Store, StoredRun};

#[derive(clap::Args)]
pub struct HistoryArgs {
    /// Show only the newest N runs (0 = all)
    #[arg(short = 'n', long, default_value_t = 30, value_name = "N")]
    limit: usize,
    /// Show only runs of this kind: bench, sweep or compare
    #[arg(long, value_name = "KIND")]
    kind: Option<String>,
}

#[derive(clap::Args)]
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

/// "Sun, 22 Nov 2026 21:40:03 GMT" from Unix seconds (the server's HTTP date format).
fn when(unix: f64) -> String {
    String::from_utf8_lossy(&webstand_server::date::format(unix.max(0.0) as i64)).into_owned()
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

fn levels(run: &StoredRun) -> Vec<Level<'_>> {
    run.levels
        .iter()
        .map(|l| Level {
            group: &l.group,
            clients: l.clients,
            server_version: l.server_version.as_deref(),
            result: &l.result,
        })
        .collect()
}

fn describe(run: &StoredRun) -> String {
    format!(
        "Run {}: {} of {} ({}) — {}",
        run.id,
        run.meta.kind,
        run.meta.target,
        when(run.started_unix),
        shown_status(run)
    )
}

/// A run that never finished was cut off without a chance to say so (killed, crashed).
fn shown_status(run: &StoredRun) -> &str {
    if run.status == "running" {
        "unfinished"
    } else {
        &run.status
    }
}

fn details(run: &StoredRun) -> Vec<(String, String)> {
    let m = &run.machine;
    let took = run
        .finished_unix
        .map(|f| format!(" (took {:.1} s)", f - run.started_unix))
        .unwrap_or_default();
    let mut servers: Vec<&str> = run
        .levels
        .iter()
        .filter_map(|l| l.server_version.as_deref())
        .collect();
    servers.dedup();
    let mut d = vec![
        (
            "When".to_string(),
            format!("{}{took}", when(run.started_unix)),
        ),
        ("Command".into(), run.meta.command_line.clone()),
        ("webstand".into(), run.version.clone()),
        (
            "Machine".into(),
            format!(
                "{}, {} cores, {}, host {}",
                m.cpu_model, m.cores, m.kernel, m.hostname
            ),
        ),
        (
            "Status".into(),
            format!(
                "{}, {} level{}",
                shown_status(run),
                run.levels.len(),
                if run.levels.len() == 1 { "" } else { "s" }
            ),
        ),
    ];
    if !servers.is_empty() {
        d.push(("Server".into(), servers.join(", ")));
    }
    d
}

/// ab's report of a bench run, from what the history keeps (the URL, the level's clients and the
/// command line's -k/-l flags).
fn ab_report(run: &StoredRun) -> Option<String> {
    let [level] = run.levels.as_slice() else {
        return None;
    };
    let (target, path) = webstand_engine::parse_url(&run.meta.target).ok()?;
    let flag = |f: &str| run.meta.command_line.split_whitespace().any(|w| w == f);
    let info = webstand_report::ab::AbInfo {
        host: target.host,
        port: target.port,
        path,
        concurrency: level.clients,
        variable_length: flag("-l"),
        keep_alive: flag("-k") || level.result.keep_alive_requests > 0,
        body_sent: flag("-p") || flag("-u"),
    };
    Some(webstand_report::ab::report(&level.result, &info))
}

/// The table layout the run's command line asked for (`--table X` or `--table=X`), else the full one.
fn layout_of(run: &StoredRun) -> Layout {
    let words: Vec<&str> = run.meta.command_line.split_whitespace().collect();
    words
        .iter()
        .enumerate()
        .find_map(|(i, w)| match w.strip_prefix("--table") {
            Some("") => words.get(i + 1).and_then(|v| v.parse().ok()),
            Some(v) => v.strip_prefix('=').and_then(|v| v.parse().ok()),
            None => None,
        })
        .unwrap_or(Layout::Full)
}

/// A comparison's per-workload tables (a row per server) from its "server/workload" groups, with the
/// server's CPU and memory where the lab saved them.
fn compare_tables(run: &StoredRun) -> String {
    let all = levels(run);
    let split = |g: &'_ str| -> (String, String) {
        match g.split_once('/') {
            Some((s, w)) => (s.to_string(), w.to_string()),
            None => (g.to_string(), String::new()),
        }
    };
    let mut workloads: Vec<String> = Vec::new();
    for g in run.groups() {
        let w = split(g).1;
        if !workloads.contains(&w) {
            workloads.push(w);
        }
    }
    let mut out = String::new();
    for w in &workloads {
        let rows: Vec<webstand_report::compare::WorkloadRow> = run
            .groups()
            .into_iter()
            .filter(|g| &split(g).1 == w)
            .filter_map(|g| {
                let lv: Vec<Level> = all.iter().copied().filter(|l| l.group == g).collect();
                let peak = webstand_report::tables::peak(&lv)?;
                let stored: Vec<&webstand_store::StoredLevel> =
                    run.levels.iter().filter(|l| l.group == g).collect();
                let at_peak = stored
                    .iter()
                    .find(|l| std::ptr::eq(&l.result, peak.result))
                    .and_then(|l| l.server);
                let peak_rss_kib = stored
                    .iter()
                    .filter_map(|l| l.server.and_then(|s| s.peak_rss_kib))
                    .max();
                let r = peak.result;
                let server = split(g).0;
                // The lab records "nginx 1.22.1"; the table has its own server column.
                let version = peak.server_version.unwrap_or("");
                let version = version
                    .strip_prefix(&format!("{server} "))
                    .unwrap_or(version)
                    .to_string();
                Some(webstand_report::compare::WorkloadRow {
                    server,
                    version,
                    measured: true,
                    peak_hits_per_sec: r.hits_per_sec(),
                    clients_at_peak: peak.clients,
                    p99_ms_at_peak: export::latency_ms(r, 0.99),
                    errors: lv.iter().map(|l| l.result.failed.total()).sum(),
                    generator_cpu_us: Some(r.cpu_us_per_request()),
                    server_cpu_us: at_peak.map(|s| s.cpu_us_per_request(r)),
                    peak_rss_kib,
                    ..Default::default()
                })
            })
            .collect();
        out.push_str(&webstand_report::compare::workload_table(w, &rows));
        out.push('\n');
    }
    out
}

/// A run's tables, in the layout of the command that measured it: ab's report for a bench run, the
/// per-workload comparison for a compare run, then one full sweep table per group.
fn tables(run: &StoredRun, layout: Option<Layout>) -> String {
    if run.meta.kind == "bench" {
        if let Some(text) = ab_report(run) {
            return text.trim_start_matches('\n').to_string();
        }
    }
    let all = levels(run);
    let mut out = String::new();
    if run.meta.kind == "compare" {
        out.push_str(&compare_tables(run));
    }
    for group in run.groups() {
        let lv: Vec<Level> = all.iter().copied().filter(|l| l.group == group).collect();
        if !group.is_empty() {
            out.push_str(&format!("{group}\n"));
        }
        out.push_str(&webstand_report::tables::render(
            layout.unwrap_or_else(|| layout_of(run)),
            &lv,
        ));
        out.push('\n');
    }
    if run.levels.is_empty() {
        out.push_str("(no level completed)\n");
    }
    out
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
    if a.limit > 0 && runs.len() > a.limit {
        runs.drain(..runs.len() - a.limit);
    }
    let mut text = format!(
        "{:>5}  {:<29}  {:<8} {:>6}  {:<11}  Target\n",
        "Id", "When", "Kind", "Levels", "Status"
    );
    for r in &runs {
        let status = if r.status == "running" {
            "unfinished"
        } else {
            &r.status
        };
        text += &format!(
            "{:>5}  {:<29}  {:<8} {:>6}  {:<11}  {}\n",
            r.id,
            when(r.started_unix),
            r.kind,
            r.levels,
            status,
            r.target
        );
    }
    if runs.is_empty() {
        text += "(no runs)\n";
    }
    write_out(None, text.as_bytes())?;
    Ok(0)
}

pub fn show(a: ShowArgs, g: &Global) -> anyhow::Result<i32> {
    let store = Store::open_existing(g.db.as_deref())?;
    let run = store.load_run(run_id(&store, &a.run)?)?;
    let mut text = format!("{}\n", describe(&run));
    for (k, v) in details(&run) {
        text += &format!("  {:<9} {v}\n", format!("{k}:"));
    }
    text += "\n";
    text += &match run.meta.kind.as_str() {
        _ if a.configs => configs(&store, &run)?,
        "probe" => super::probe::stored(&store, &run)?,
        _ => tables(&run, a.table),
    };
    write_out(None, text.as_bytes())?;
    Ok(0)
}

/// Every file saved with a run, each under a `== server: name ==` line.
fn configs(store: &Store, run: &StoredRun) -> anyhow::Result<String> {
    let files = store.configs(run.id)?;
    if files.is_empty() {
        return Ok(format!(
            "(no configs saved with run {}: `webstand compare` saves its servers' since schema 6)\n",
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
            "run{} {} ({} of {})",
            if ids.len() > 1 { "s" } else { "" },
            ids.join(","),
            first.meta.kind,
            first.meta.target
        ))
    };
    let side_a = Side {
        name: side(&runs_a)?,
        levels: runs_a.iter().flat_map(levels).collect(),
    };
    let side_b = Side {
        name: side(&runs_b)?,
        levels: runs_b.iter().flat_map(levels).collect(),
    };
    let (text, _) = webstand_report::diff::diff(&side_a, &side_b)?;
    write_out(None, text.as_bytes())?;
    Ok(0)
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
        Format::Json => {
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
                    "status": shown_status(&run),
                    "webstand_version": run.version,
                    "machine": { "cpu_model": m.cpu_model, "cores": m.cores, "kernel": m.kernel, "hostname": m.hostname },
                },
                "levels": export::levels_json(&lv),
            });
            // The server's side of each level, where the lab measured it.
            if let Some(levels) = doc["levels"].as_array_mut() {
                for (j, l) in levels.iter_mut().zip(&run.levels) {
                    if let Some(s) = l.server {
                        j["server"] = serde_json::json!({
                            "cpu_user_secs": s.cpu.user.as_secs_f64(),
                            "cpu_sys_secs": s.cpu.sys.as_secs_f64(),
                            "cpu_us_per_request": s.cpu_us_per_request(&l.result),
                            "peak_rss_kib": s.peak_rss_kib,
                        });
                    }
                }
            }
            serde_json::to_string_pretty(&doc)? + "\n"
        }
        Format::Csv => export::csv(&lv),
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
            let h = &lv[n - 1].result.histograms;
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

pub fn report(a: ReportArgs, g: &Global) -> anyhow::Result<i32> {
    let store = Store::open_existing(g.db.as_deref())?;
    let mut runs = Vec::new();
    for spec in &a.runs {
        for id in run_ids(&store, spec)? {
            runs.push(store.load_run(id)?);
        }
    }
    let report_runs: Vec<ReportRun> = runs
        .iter()
        .map(|r| ReportRun {
            name: format!("#{}", r.id),
            title: describe(r),
            details: details(r),
            levels: levels(r),
            tables: tables(r, None),
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
