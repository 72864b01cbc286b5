//! `webstand compare`: real web servers side by side on one docroot (the lab, `webstand_lab::compare`),
//! printed as the per-workload tables and thttpd's comparison table, each level saved to the history.

use super::sweep::Session;
use crate::Global;
use anyhow::{bail, Result};
use std::path::PathBuf;
use webstand_engine::{CpuTime, Stop};
use webstand_lab::compare::{self, CompareObserver, Options, WorkloadKind};
use webstand_lab::servers::Kind;
use webstand_lab::sweep::{parse_clients, parse_duration};
use webstand_store::ServerFigures;

#[derive(clap::Args)]
pub struct Args {
    /// Servers to compare, comma-separated: builtin (webstand serve), builtin-nocache (the same
    /// without its in-memory file cache), nginx, lighttpd, apache, h2o, caddy, mini_httpd. A missing
    /// one is skipped with a line saying how to install it
    #[arg(
        long,
        value_name = "LIST",
        default_value = "builtin,builtin-nocache,nginx,lighttpd,apache,h2o,caddy,mini_httpd"
    )]
    pub servers: String,

    /// Workloads, comma-separated: small-files (1000 × 1 KiB at random), cgi (a hello-world CGI
    /// program), large (one 1 MiB file), webstone2 (WebStone 2.0.1's weighted list), 2k (Tenon's file)
    #[arg(
        long,
        value_name = "LIST",
        default_value = "small-files,cgi,large,webstone2"
    )]
    pub workloads: String,

    /// Client levels of each workload's sweep: a list (1,8,32) or a range (16..128/16, 1..256*2)
    #[arg(short = 'c', long, value_name = "LEVELS", default_value = "1,8,32,128")]
    pub levels: String,

    /// Time per level: 500ms, 2s, 1m
    #[arg(short = 'd', long, value_name = "DURATION", default_value = "2s")]
    pub duration: String,

    /// Most requests per level (the first of -n and -d reached ends the level)
    #[arg(short = 'n', long, value_name = "N", default_value_t = 200_000)]
    pub requests: u64,

    /// Warm-up run before each level, not measured; 0 for none
    #[arg(long, value_name = "DURATION", default_value = "300ms")]
    pub warmup: String,

    /// Workloads that also get a max-users search (thttpd's column), comma-separated, or "none"
    #[arg(long, value_name = "LIST", default_value = "large")]
    pub max_users: String,

    /// Max users: the first level tried (doubled until a bound breaks, then bisected)
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub start_clients: usize,

    /// Max users: never more clients than this
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_clients: usize,

    /// Max users: a level breaks above this error level (failed or non-2xx, % of requests)
    #[arg(long, value_name = "PCT", default_value_t = 1.0)]
    pub max_error_pct: f64,

    /// Max users: a level breaks above this 99th-percentile latency, ms
    #[arg(long, value_name = "MS", default_value_t = 1000.0)]
    pub max_p99_ms: f64,

    /// CPU the servers are pinned to
    #[arg(long, value_name = "CPU", default_value_t = 0)]
    pub server_cpu: usize,

    /// CPU the load generator is pinned to (one generator thread)
    #[arg(long, value_name = "CPU", default_value_t = 1)]
    pub generator_cpu: usize,

    /// A new connection per request instead of keep-alive
    #[arg(long)]
    pub no_keepalive: bool,

    /// Check every response body against the fixtures' SHA-256 (costs generator CPU)
    #[arg(long)]
    pub checksum: bool,

    /// Skip the feature checks (basic auth, chroot, throttling; about 3 s per server)
    #[arg(long)]
    pub no_features: bool,

    /// Also run wrk and ab on /2k.html (and the CGI program) of each server, and print their hits/s and
    /// byte counts beside webstand's
    #[arg(long)]
    pub verify: bool,

    /// Repeat the whole comparison N times, the server order rotating each round; the tables give
    /// medians (use --rounds 3 for figures worth quoting)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub rounds: usize,

    /// Where to write the shared docroot [default: a temporary directory, removed afterwards]
    #[arg(long, value_name = "DIR")]
    pub docroot: Option<PathBuf>,

    /// Size of the large file: 1M, 10M, 512K
    #[arg(long, value_name = "SIZE", default_value = "1M")]
    pub large_size: String,

    /// Per-request timeout: a request with no progress for this long fails
    #[arg(short = 's', long, value_name = "DURATION", default_value = "10s")]
    pub timeout: String,

    /// Print the comparison as one JSON document on stdout instead of tables
    #[arg(long)]
    pub json: bool,

    /// No progress lines
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

fn parse_warmup(s: &str) -> Result<Option<Stop>> {
    if s.trim() == "0" {
        return Ok(None);
    }
    Ok(Some(Stop {
        requests: None,
        duration: Some(parse_duration(s)?),
    }))
}

fn options(args: &Args, docroot: PathBuf) -> Result<Options> {
    let mut o = Options::new(&docroot);
    o.servers = Kind::parse_list(&args.servers)?;
    o.workloads = WorkloadKind::parse_list(&args.workloads)?;
    o.levels = parse_clients(&args.levels)?;
    if args.requests == 0 {
        bail!("-n must be at least 1 request per level");
    }
    o.stop = Stop {
        requests: Some(args.requests),
        duration: Some(parse_duration(&args.duration)?),
    };
    o.warmup = parse_warmup(&args.warmup)?;
    o.max_users_for = if args.max_users.trim() == "none" {
        Vec::new()
    } else {
        WorkloadKind::parse_list(&args.max_users)?
    };
    o.max_users.start = args.start_clients;
    o.max_users.limit = args.max_clients;
    o.max_users.stop = o.stop.clone();
    o.max_users.warmup = o.warmup.clone();
    o.max_users.bounds.max_error_pct = args.max_error_pct;
    o.max_users.bounds.max_p99_ms = Some(args.max_p99_ms);
    if args.start_clients == 0 || args.max_clients < args.start_clients {
        bail!("max users needs 1 ≤ --start-clients ≤ --max-clients");
    }
    if args.server_cpu == args.generator_cpu {
        bail!(
            "--server-cpu and --generator-cpu must differ (both are {})",
            args.server_cpu
        );
    }
    o.server_cpus = vec![args.server_cpu];
    o.generator_cpus = vec![args.generator_cpu];
    o.keep_alive = !args.no_keepalive;
    o.checksum = args.checksum;
    o.features = !args.no_features;
    o.verify = args.verify;
    o.large_size = webstand_workload::fixtures::parse_size(&args.large_size)?;
    o.timeout = parse_duration(&args.timeout)?;
    o.builtin = std::env::current_exe().ok();
    if args.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    o.rounds = args.rounds;
    Ok(o)
}

pub fn run(args: Args, global: &Global) -> Result<i32> {
    // Everything the user typed is checked before anything is written or started.
    let scratch = compare::scratch_dir()?;
    let docroot = match &args.docroot {
        Some(d) => d.clone(),
        None => scratch.path().join("docroot"),
    };
    let opts = options(&args, docroot)?;
    let mut obs = Session::open(global, "compare", "lab", args.quiet)?;
    let outcome = compare::run(&opts, &mut obs);
    let comparison = match outcome {
        Ok(c) => c,
        Err(e) => {
            obs.finish_as("failed");
            return Err(e);
        }
    };
    // A closed stdout (`| head`) is not an error of the comparison: everything is measured and saved.
    use std::io::Write;
    let saved = obs.finish(comparison.interrupted);
    let mut text = if args.json {
        format!("{:#}\n", comparison.to_json())
    } else {
        comparison.render()
    };
    match saved {
        Some(saved) if !args.json => text.push_str(&format!("\n{saved}\n")),
        Some(saved) => eprintln!("webstand: {saved}"),
        None => {}
    }
    let _ = std::io::stdout().write_all(text.as_bytes());
    Ok(if comparison.interrupted { 130 } else { 0 })
}

/// The lab's series are saved through the sweep command's [`Session`]: one history run for the whole
/// comparison, a group per server and workload.
impl CompareObserver for Session {
    fn series(&mut self, server: &str, version: &str, workload: &str) {
        self.group = format!("{server}/{workload}");
        self.server_version = Some(format!("{server} {version}"));
    }
    fn note(&mut self, line: &str) {
        Session::note(self, line)
    }
    fn stop_requested(&self) -> bool {
        crate::interrupt::interrupted()
    }
    fn server_figures(&mut self, clients: usize, cpu: CpuTime, peak_rss_kib: Option<u64>) {
        self.save_server_figures(clients, &ServerFigures { cpu, peak_rss_kib });
    }
    fn server_configs(&mut self, server: &str, files: &[(String, String)]) {
        let Some((store, id)) = &self.store else {
            return;
        };
        for (name, text) in files {
            if let Err(e) = store.add_config(*id, server, name, text) {
                eprintln!("webstand: warning: {server}'s configs will not be saved: {e:#}");
                return;
            }
        }
    }
}
