//! `webstand sweep`: a workload at rising concurrency (or an open-loop rate, or a max-users search),
//! printed in the seeds' tables and saved to the history. Also [`Session`]: the wiring of Ctrl-C,
//! progress and the history around the lab's sweeps, shared with the main job.

use super::main_job::Embedded;
use super::workload_args::WorkloadArgs;
use crate::progress::{self, Progress};
use crate::Global;
use anyhow::{bail, Result};
use std::sync::Arc;
use std::time::Duration;
use webstand_engine::{Live, Plan, Stop};
use webstand_lab::maxusers::{self, Bounds, MaxUsers, MaxUsersSpec};
use webstand_lab::sweep::{
    self as lab_sweep, Level, LevelSpec, Observer, Rate, SweepResult, SweepSpec,
};
use webstand_report::ab::AbInfo;
use webstand_report::tables::{self, Layout};
use webstand_store::{RunId, RunMeta, ServerFigures, Store};

#[derive(clap::Args)]
pub struct Args {
    /// Target URL, e.g. http://127.0.0.1:8080/2k.html. Without one (and no URL file naming one), the
    /// sweep runs against the embedded server on fresh fixtures, as `webstand` alone does. With
    /// --preset only its host:port is used
    #[arg(value_name = "URL")]
    pub url: Option<String>,

    /// Client levels: a list (1,2,4,8), a range with a step (16..128/16) or a factor (1..1024*2), or a
    /// mix [default: 1,2,4,8,16,32, or the preset's; 16 connections with --rate]
    #[arg(short = 'c', long, value_name = "LEVELS")]
    pub clients: Option<String>,

    /// Requests per level; with -d as well, the first reached ends the level
    #[arg(short = 'n', long, value_name = "N")]
    pub requests: Option<u64>,

    /// Time per level: 30, 500ms, 10s, 2m [default: 5s when -n is not given]
    #[arg(short = 'd', long, value_name = "DURATION")]
    pub duration: Option<String>,

    /// Warm-up run before each level, not measured; 0 for none
    #[arg(long, value_name = "DURATION", default_value = "1s")]
    pub warmup: String,

    /// Table: full (every figure per level), tenon (Clients, Hits/Sec, Kbytes/Sec), webstone
    /// (Clients, Conn/second, Errors/second, Latency, Little's Law, Throughput) or ab (ab's report for
    /// each level) [default: full, or the preset's]
    #[arg(long, value_name = "LAYOUT")]
    pub table: Option<Table>,

    /// Print the sweep as one JSON document on stdout instead of tables
    #[arg(long)]
    pub json: bool,

    /// A seed experiment: tenon (1..32 clients, /2k.html), webstone1 (16..128/16, Silicon Surf page
    /// classes), webstone2 (10..200/10, WebStone 2.0.1 list), thttpd-small (1..256*2, 1000 random
    /// 1 KiB files, checksummed), ab-duel (-n 100 -c 5 then -n 10000 -c 100 on /file6k.html)
    #[arg(long, value_enum, value_name = "NAME")]
    pub preset: Option<Preset>,

    /// With --preset: the seed's own lengths (tenon 1,000,000 requests per level, webstone1 5 min,
    /// webstone2 10 min, thttpd-small 1 min)
    #[arg(long, requires = "preset")]
    pub full: bool,

    /// Keep connections alive between requests (off by default, as in the seeds)
    #[arg(short = 'k', long)]
    pub keep_alive: bool,

    /// Per-request timeout: a request with no progress for this long fails
    #[arg(short = 's', long, value_name = "DURATION", default_value = "30s")]
    pub timeout: String,

    /// Load-generator threads [default: 0 = one per CPU the generator may use]
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,

    /// Find max users: double the clients from --start-clients until a bound breaks
    /// (--max-error-pct, --max-p99-ms), then bisect; report the largest clean level
    #[arg(long, conflicts_with_all = ["rate", "clients"])]
    pub find_max_users: bool,

    /// Max users: a level breaks above this error level (failed or non-2xx, % of requests)
    #[arg(long, value_name = "PCT", default_value_t = 1.0)]
    pub max_error_pct: f64,

    /// Max users: a level breaks above this 99th-percentile latency in ms [default: no bound]
    #[arg(long, value_name = "MS")]
    pub max_p99_ms: Option<f64>,

    /// Max users: the first level tried
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub start_clients: usize,

    /// Max users: never more clients than this
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_clients: usize,

    /// Open loop: R requests per second in total, paced across the connections (--clients); latency
    /// counts from each request's intended send time, and sends that left late are reported
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    pub rate: Option<String>,

    /// With --rate: random (exponential) gaps between sends at the same mean rate
    #[arg(long, requires = "rate")]
    pub jitter: bool,

    /// No progress display
    #[arg(short = 'q', long)]
    pub quiet: bool,

    #[command(flatten)]
    pub workload: WorkloadArgs,
}

// Values are parsed here rather than by clap so that bad input gets one line (`webstand: error: …`).
fn parse_warmup(s: &str) -> Result<Duration> {
    if s.trim() == "0" {
        return Ok(Duration::ZERO);
    }
    lab_sweep::parse_duration(s).map_err(|e| anyhow::anyhow!("--warmup: {e}"))
}
fn parse_rate(s: &str) -> Result<f64> {
    match s.trim().parse::<f64>() {
        Ok(r) if r > 0.0 && r.is_finite() => Ok(r),
        _ => bail!("bad rate {s:?}: expected requests per second, more than 0"),
    }
}

/// `--table`: one of the seeds' sweep layouts, or ab's report per level (seed 001's comparison).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Sweep(Layout),
    Ab,
}

impl std::str::FromStr for Table {
    type Err = String;
    fn from_str(s: &str) -> Result<Table, String> {
        match s {
            "ab" => Ok(Table::Ab),
            _ => s
                .parse()
                .map(Table::Sweep)
                .map_err(|_| format!("unknown table {s:?}: expected full, tenon, webstone or ab")),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Preset {
    Tenon,
    Webstone1,
    Webstone2,
    ThttpdSmall,
    AbDuel,
}

/// What a preset sets unless the command line says otherwise.
struct PresetDefaults {
    clients: Vec<usize>,
    path: &'static str,
    filelist: Option<&'static str>,
    small_files: bool,
    table: Table,
    /// The seed's own length per level (--full).
    full: Stop,
    /// Levels with their own lengths, used whatever --full says (ab-duel's two ab runs).
    fixed_levels: Option<Vec<LevelSpec>>,
}

fn preset_defaults(p: Preset) -> PresetDefaults {
    let secs = |s| Stop {
        requests: None,
        duration: Some(Duration::from_secs(s)),
    };
    let reqs = |n| Stop {
        requests: Some(n),
        duration: None,
    };
    let d = |clients: Vec<usize>, path, filelist, small_files, table, full| PresetDefaults {
        clients,
        path,
        filelist,
        small_files,
        table,
        full,
        fixed_levels: None,
    };
    match p {
        Preset::Tenon => d(
            vec![1, 2, 4, 8, 16, 32],
            "/2k.html",
            None,
            false,
            Table::Sweep(Layout::Tenon),
            reqs(1_000_000),
        ),
        Preset::Webstone1 => d(
            (1..=8).map(|i| i * 16).collect(),
            "/",
            Some("webstone1"),
            false,
            Table::Sweep(Layout::WebStone),
            secs(300),
        ),
        Preset::Webstone2 => d(
            (1..=20).map(|i| i * 10).collect(),
            "/",
            Some("webstone2"),
            false,
            Table::Sweep(Layout::WebStone),
            secs(600),
        ),
        Preset::ThttpdSmall => d(
            vec![1, 2, 4, 8, 16, 32, 64, 128, 256],
            "/",
            None,
            true,
            Table::Sweep(Layout::Full),
            secs(60),
        ),
        Preset::AbDuel => PresetDefaults {
            fixed_levels: Some(vec![
                LevelSpec {
                    clients: 5,
                    stop: Stop {
                        requests: Some(100),
                        duration: Some(Duration::from_secs(60)),
                    },
                },
                LevelSpec {
                    clients: 100,
                    stop: Stop {
                        requests: Some(10_000),
                        duration: Some(Duration::from_secs(60)),
                    },
                },
            ]),
            ..d(
                vec![5, 100],
                "/file6k.html",
                None,
                false,
                Table::Ab,
                reqs(10_000),
            )
        },
    }
}

pub fn run(args: Args, global: &Global) -> Result<i32> {
    let preset = args.preset.map(preset_defaults);
    let clients_arg = args
        .clients
        .as_deref()
        .map(lab_sweep::parse_clients)
        .transpose()?;
    let duration = args
        .duration
        .as_deref()
        .map(lab_sweep::parse_duration)
        .transpose()?;
    let warmup = parse_warmup(&args.warmup)?;
    let timeout =
        lab_sweep::parse_duration(&args.timeout).map_err(|e| anyhow::anyhow!("--timeout: {e}"))?;
    let rate = args.rate.as_deref().map(parse_rate).transpose()?;
    if args.requests == Some(0) {
        bail!("-n must be at least 1 request per level");
    }
    if args.find_max_users && (args.max_error_pct.is_nan() || args.max_error_pct < 0.0) {
        bail!("--max-error-pct must be 0 or more");
    }
    if args.max_p99_ms.is_some_and(|p| p.is_nan() || p <= 0.0) {
        bail!("--max-p99-ms must be more than 0");
    }

    // The workload: the preset's unless a list option was given.
    let mut wargs = args.workload.clone();
    if let Some(p) = preset
        .as_ref()
        .filter(|_| !args.workload.chooses_requests())
    {
        wargs.filelist = p.filelist.map(str::to_string);
        wargs.small_files = p.small_files;
        if p.small_files {
            wargs.checksum = true;
        }
    }

    // The target: the URL, else the URL file's origin, else the embedded server.
    let url_file_origin = match &wargs.url_file {
        Some(f) => webstand_workload::urlfile::load(f)?.origin,
        None => None,
    };
    let mut embedded = if args.url.is_none() && url_file_origin.is_none() {
        Some(Embedded::start()?)
    } else {
        None
    };
    let url = match (&args.url, &url_file_origin, &embedded) {
        (Some(u), _, _) => u.clone(),
        (None, Some(o), _) => format!("{o}/"),
        (None, None, Some(e)) => e.url(preset.as_ref().map_or("/2k.html", |p| p.path)),
        (None, None, None) => {
            unreachable!("the embedded server starts when nothing names a target")
        }
    };
    let (target, url_path) = webstand_engine::parse_url(&url)?;
    let path = match &preset {
        Some(p) => p.path.to_string(),
        None => url_path,
    };
    let resolved = wargs.resolve(&path, embedded.as_ref().map(|e| &e.manifest))?;
    if let (Some(origin), Some(_)) = (&resolved.origin, &args.url) {
        let (t, _) = webstand_engine::parse_url(origin)?;
        if (t.host.as_str(), t.port) != (target.host.as_str(), target.port) {
            bail!("the URL file names {origin} but the URL is {url} (one target per run)");
        }
    }
    let workload = resolved.workload;
    let mut plan = Plan::new(target, &path);
    workload.apply(&mut plan);
    plan.keep_alive = args.keep_alive;
    plan.timeout = timeout;
    plan.threads = args.threads;

    // Levels and lengths.
    let stop = match (args.requests, duration, &preset) {
        (None, None, Some(p)) if args.full => p.full.clone(),
        (None, None, _) => Stop {
            requests: None,
            duration: Some(Duration::from_secs(5)),
        },
        (n, d, _) => Stop {
            requests: n,
            duration: d,
        },
    };
    let warmup = (!warmup.is_zero()).then_some(Stop {
        requests: None,
        duration: Some(warmup),
    });
    let clients = match (&clients_arg, &preset, rate) {
        (Some(c), _, _) => c.clone(),
        (None, Some(p), _) => p.clients.clone(),
        (None, None, Some(_)) => vec![16],
        (None, None, None) => vec![1, 2, 4, 8, 16, 32],
    };
    let levels = match preset.as_ref().and_then(|p| p.fixed_levels.clone()) {
        Some(fixed) if clients_arg.is_none() && args.requests.is_none() && duration.is_none() => {
            fixed
        }
        _ => clients
            .iter()
            .map(|&c| LevelSpec {
                clients: c,
                stop: stop.clone(),
            })
            .collect(),
    };
    let rate = rate.map(|rate| Rate {
        rate,
        jitter: args.jitter,
    });
    let table = args
        .table
        .or(preset.as_ref().map(|p| p.table))
        .unwrap_or(Table::Sweep(Layout::Full));

    let mut session = Session::open(global, "sweep", &url, args.quiet)?;
    if let Some(e) = &mut embedded {
        e.pin_generator();
        session.note(&format!(
            "embedded server on http://{}/ over fixtures in {} ({})",
            e.addr,
            e.dir.display(),
            e.pinning
        ));
    }

    if args.find_max_users {
        let spec = MaxUsersSpec {
            start: args.start_clients,
            limit: args.max_clients,
            stop,
            warmup,
            bounds: Bounds {
                max_error_pct: args.max_error_pct,
                max_p99_ms: args.max_p99_ms,
            },
            precision: 0.05,
        };
        let found = session.max_users(&spec, &plan, &workload.name)?;
        print_max_users(&found, &spec.bounds, &workload.name, args.json);
        let saved = session.finish(found.interrupted);
        print_saved(saved, args.json);
        return Ok(exit_code(found.interrupted));
    }

    let spec = SweepSpec {
        levels,
        warmup,
        rate,
    };
    let result = session.sweep(&spec, &plan, &workload.name)?;
    let levels = result.report_levels();
    if args.json {
        let mut doc = tables::sweep_json(&workload.name, &levels, result.interrupted);
        if let Some(r) = rate {
            doc["rate"] = serde_json::json!({ "requested_per_sec": r.rate, "jitter": r.jitter });
            doc["late_sends"] = result.levels.iter().map(|l| l.result.late_sends).collect();
        }
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "Sweep of {} on {}:{} ({})\n",
            workload.name,
            plan.target.host,
            plan.target.port,
            describe_load(&plan, rate)
        );
        match table {
            Table::Sweep(layout) => print!("{}", tables::render(layout, &levels)),
            Table::Ab => {
                for l in &result.levels {
                    let info = AbInfo {
                        host: plan.target.host.clone(),
                        port: plan.target.port,
                        path: workload.name.clone(),
                        concurrency: l.clients,
                        keep_alive: plan.keep_alive,
                        ..Default::default()
                    };
                    println!("{}", webstand_report::ab::report(&l.result, &info));
                }
                print!("{}", tables::summary(&levels));
            }
        }
        if let Some(r) = rate {
            for l in &result.levels {
                println!(
                    "Open loop, {} connections: asked {:.0}/s, got {:.1}/s; late sends: {} of {}",
                    l.clients,
                    r.rate,
                    l.result.hits_per_sec(),
                    l.result.late_sends,
                    l.result.attempted()
                );
            }
        }
        if result.interrupted {
            println!(
                "Interrupted: the table shows the levels that completed (the last one partly)."
            );
        }
    }
    let saved = session.finish(result.interrupted);
    print_saved(saved, args.json);
    drop(embedded);
    Ok(exit_code(result.interrupted))
}

fn describe_load(plan: &Plan, rate: Option<Rate>) -> String {
    let mut s = match rate {
        Some(r) => format!(
            "open loop at {} requests/s{}",
            r.rate,
            if r.jitter { " with jitter" } else { "" }
        ),
        None => "closed loop".to_string(),
    };
    s += if plan.keep_alive {
        ", keep-alive"
    } else {
        ", no keep-alive"
    };
    if plan.requests.iter().any(|r| r.expect.is_some()) {
        s += ", checksummed";
    }
    s
}

fn print_max_users(found: &MaxUsers, bounds: &Bounds, workload: &str, json: bool) {
    let bounds_text = match bounds.max_p99_ms {
        Some(p) => format!("error level ≤ {} %, p99 ≤ {p} ms", bounds.max_error_pct),
        None => format!("error level ≤ {} %", bounds.max_error_pct),
    };
    let probes: Vec<_> = found
        .probes
        .iter()
        .map(|p| webstand_report::export::Level {
            group: workload,
            clients: p.level.clients,
            server_version: p.level.result.server_software.as_deref(),
            result: &p.level.result,
        })
        .collect();
    if json {
        let doc = serde_json::json!({
            "workload": workload,
            "bounds": { "max_error_pct": bounds.max_error_pct, "max_p99_ms": bounds.max_p99_ms },
            "max_users": found.best.as_ref().map(|b| b.clients),
            "first_broken": found.first_broken,
            "probes": webstand_report::export::levels_json(&probes),
            "broke": found.probes.iter().map(|p| p.broke.clone()).collect::<Vec<_>>(),
            "interrupted": found.interrupted,
        });
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return;
    }
    println!(
        "Max-users search on {workload} (bounds: {bounds_text}), levels in the order tried:\n"
    );
    print!("{}", tables::full(&probes));
    for p in &found.probes {
        if let Some(why) = &p.broke {
            println!("{} clients broke: {why}", p.level.clients);
        }
    }
    match (&found.best, found.first_broken) {
        (Some(b), Some(bad)) => println!(
            "Max users: {} (largest clean level; {bad} broke): {:.0} hits/s, p99 {:.1} ms, error level {:.2} %",
            b.clients,
            b.result.hits_per_sec(),
            b.result.latency_ms(0.99),
            b.result.error_pct()
        ),
        (Some(b), None) => println!(
            "Max users: {}+ (no level broke up to --max-clients): {:.0} hits/s, p99 {:.1} ms, error level {:.2} %",
            b.clients,
            b.result.hits_per_sec(),
            b.result.latency_ms(0.99),
            b.result.error_pct()
        ),
        (None, _) if found.interrupted => println!("Max users: unknown (interrupted before a clean level)"),
        (None, _) => println!("Max users: none (the first level already broke)"),
    }
    if found.interrupted {
        println!("Interrupted: the search stopped early; the figures above are what completed.");
    }
}

fn print_saved(saved: Option<String>, json: bool) {
    if let Some(s) = saved {
        if json {
            eprintln!("{s}");
        } else {
            println!("\n{s}");
        }
    }
}

/// 130 after Ctrl-C (what shells report for SIGINT), else 0.
pub fn exit_code(interrupted: bool) -> i32 {
    if interrupted {
        130
    } else {
        0
    }
}

/// Ctrl-C, progress and the history around the lab's runs: one history run for the whole command, a
/// level saved as soon as it is measured. Any command driving `webstand_lab` runs can use it as the
/// lab's `Observer` (set the group and server version before each series).
pub struct Session {
    pub(super) store: Option<(Store, RunId)>,
    quiet: bool,
    /// The series the next levels belong to (the history's group).
    pub group: String,
    /// The target's version for the history; when `None`, the response's Server header.
    pub server_version: Option<String>,
    progress: Option<Progress>,
}

impl Session {
    /// Opens the history and records the start of a run (a history that cannot be opened is
    /// reported and the run goes on unsaved).
    pub fn open(global: &Global, kind: &str, target: &str, quiet: bool) -> Result<Session> {
        let meta = RunMeta {
            kind: kind.to_string(),
            command_line: command_line(),
            target: target.to_string(),
        };
        let store = match Store::open(global.db.as_deref())
            .and_then(|s| s.begin_run(&meta).map(|id| (s, id)))
        {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("webstand: warning: results will not be saved: {e:#}");
                None
            }
        };
        Ok(Session {
            store,
            quiet,
            group: String::new(),
            server_version: None,
            progress: None,
        })
    }

    pub fn note(&self, text: &str) {
        if !self.quiet {
            eprintln!("webstand: {text}");
        }
    }

    pub fn sweep(&mut self, spec: &SweepSpec, plan: &Plan, workload: &str) -> Result<SweepResult> {
        self.group = workload.to_string();
        lab_sweep::run(spec, plan, workload, self)
    }

    pub fn max_users(
        &mut self,
        spec: &MaxUsersSpec,
        plan: &Plan,
        workload: &str,
    ) -> Result<MaxUsers> {
        self.group = workload.to_string();
        maxusers::find(spec, plan, self)
    }

    /// Records the server's side of a level already saved in `group` (the lab's /proc figures).
    pub fn save_server_figures(&mut self, clients: usize, figures: &ServerFigures) {
        if let Some((store, id)) = &self.store {
            if let Err(e) = store.add_server_figures(*id, &self.group, clients, figures) {
                eprintln!("webstand: warning: server figures will not be saved: {e:#}");
                self.store = None;
            }
        }
    }

    /// Marks the run finished ("complete" or "interrupted"); returns where it was saved, to print.
    pub fn finish(&mut self, interrupted: bool) -> Option<String> {
        self.finish_as(if interrupted {
            "interrupted"
        } else {
            "complete"
        })
    }

    /// Marks the run finished with `status` ("complete", "interrupted" or "failed").
    pub fn finish_as(&mut self, status: &str) -> Option<String> {
        let (store, id) = self.store.take()?;
        match store.finish_run(id, status) {
            Ok(()) => Some(format!(
                "Saved as run {id} in {} (see `webstand show {id}`)",
                store.path().display()
            )),
            Err(e) => {
                eprintln!("webstand: warning: could not mark run {id} finished: {e:#}");
                None
            }
        }
    }
}

impl Observer for Session {
    fn live(&mut self) -> Arc<Live> {
        crate::interrupt::live()
    }
    fn run_starting(&mut self, label: &str, plan: &Plan, live: &Arc<Live>) {
        let label = format!("{}: {label}", self.group);
        self.progress = Some(progress::start(
            &label,
            live.clone(),
            plan.stop.requests,
            plan.stop.duration,
            self.quiet,
        ));
    }
    fn run_ended(&mut self) {
        self.progress = None;
    }
    fn level_done(&mut self, level: &Level) -> Result<()> {
        let r = &level.result;
        self.note(&format!(
            "{}: {} clients: {:.0} hits/s, {} failed{}",
            self.group,
            level.clients,
            r.hits_per_sec(),
            r.failed.total(),
            if r.interrupted { " (interrupted)" } else { "" }
        ));
        if let Some((store, id)) = &self.store {
            let version = self
                .server_version
                .as_deref()
                .or(r.server_software.as_deref());
            if let Err(e) = store.add_level(*id, &self.group, level.clients, version, r) {
                eprintln!("webstand: warning: results will not be saved: {e:#}");
                self.store = None;
            }
        }
        Ok(())
    }
}

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}
