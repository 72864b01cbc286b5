//! `webstand compare`: real web servers side by side on one docroot (the lab, `webstand_lab::compare`),
//! printed as the per-workload tables and thttpd's comparison table, each level saved to the history.

use super::diagnose::{level_json, Diagnosed, Diagnosing};
use super::session::{SavedLine, Session};
use crate::Global;
use anyhow::{bail, Result};
use std::path::PathBuf;
use webstand_diagnosis::{render, Limit};
use webstand_duration::positive as parse_duration;
use webstand_lab::compare::{self, Options};
use webstand_lab::robustness::ProbeSpec;
use webstand_lab::servers::Kind;
use webstand_lab::sweep::parse_clients;
use webstand_lab::tls::KeyType;
use webstand_results::{Comparison, WorkloadKind};
use webstand_results::{Judged, Outcome, Stop, Verdict};

/// `--max-p99-ms`'s default: above it a max-users probe breaks.
pub const MAX_P99_MS: f64 = 1000.0;

#[derive(clap::Args)]
#[command(after_help = super::help::measuring("docs/COMPARE.md (each server's settings: docs/LAB-CONFIGS.md)"))]
pub struct Args {
    /// Servers to compare, comma-separated: builtin (webstand serve), builtin-nocache, nginx,
    /// lighttpd, apache, h2o, caddy, mini_httpd, apache-modphp (docs/COMPARE.md); a missing one is
    /// skipped, saying how to install it
    #[arg(
        long,
        value_name = "LIST",
        default_value = "builtin,builtin-nocache,nginx,lighttpd,apache,h2o,caddy,mini_httpd"
    )]
    pub servers: String,

    /// Workloads, comma-separated: small-files, cgi, large, webstone2, 2k, php, wordpress; with
    /// --tls also tls-ka, tls-new, tls-resume; with --h2 also h2, h2-2k; with --h3 also h3, h3-2k
    /// (docs/COMPARE.md says what each fetches) [default: small-files,cgi,large,webstone2; with
    /// --tls: tls-ka,tls-new,tls-resume; with --h2: h2,h2-2k; with --h3: h3,h3-2k]
    #[arg(long, value_name = "LIST")]
    pub workloads: Option<String>,

    /// Every server on HTTPS only, with one certificate the lab makes for the run and the same TLS
    /// settings; every workload then runs over HTTPS
    #[arg(long)]
    pub tls: bool,

    /// Every server that has HTTP/2 speaks it too, with the same stream limit: by ALPN with --tls,
    /// else by prior knowledge (h2c) on the plain ports, where only the h2 workloads run
    #[arg(long)]
    pub h2: bool,

    /// Every server that has HTTP/3 speaks it too, over QUIC on UDP at its HTTPS port (implies
    /// --tls); the others' rows say why not
    #[arg(long)]
    pub h3: bool,

    /// The key of --tls's certificate: ecdsa-p256 or rsa2048
    #[arg(long, value_name = "TYPE", default_value = "ecdsa-p256")]
    pub tls_key_type: String,

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

    /// A level with more errors than this (failed or non-2xx, % of attempted requests) is not clean:
    /// never a server's peak, the end of a max-users search, and exit status 3 for the comparison
    #[arg(long, value_name = "PCT", default_value_t = webstand_results::figures::DEFAULT_MAX_ERROR_PCT)]
    pub max_error_pct: f64,

    /// Max users: a level breaks above this 99th-percentile latency, ms
    #[arg(long, value_name = "MS", default_value_t = MAX_P99_MS)]
    pub max_p99_ms: f64,

    /// CPU the servers are pinned to
    #[arg(long, value_name = "CPU", default_value_t = 0)]
    pub server_cpu: usize,

    /// CPU the load generator is pinned to (one generator thread)
    #[arg(long, value_name = "CPU", default_value_t = 1)]
    pub generator_cpu: usize,

    #[command(flatten)]
    pub spin: super::spin_args::SpinArgs,

    #[command(flatten)]
    pub scale: super::scale_args::ScaleArgs,

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

    /// A duration: the per-request timeout (a request with no progress for this long fails).
    /// Anything not starting with a digit: wrk's -s, a Lua script run with every level
    /// (docs/SCRIPTING.md)
    #[arg(short = 's', long, value_name = "DURATION|FILE", default_value = "10s")]
    pub timeout: String,

    #[command(flatten)]
    pub script: super::script_runs::ScriptArgs,

    /// The php and wordpress workloads: PHP-FPM's binary, a name or a path
    #[arg(long, value_name = "PROGRAM", default_value = webstand_lab::php::fpm::PROGRAM)]
    pub php_fpm: String,

    /// The php and wordpress workloads: PHP-FPM's workers (a static pool shared by every server)
    #[arg(long, value_name = "N", default_value_t = webstand_lab::php::DEFAULT_CHILDREN)]
    pub php_children: usize,

    /// Also a robustness table: `webstand probe`'s verdicts per category, availability under
    /// slowloris and slow-read attacks (slowhttptest), and the most keep-alive connections held.
    /// Hostile traffic, to the lab's own servers only
    #[arg(long)]
    pub probe: bool,

    /// --probe: only these probe categories or case names, comma-separated [default: every case]
    #[arg(long, value_name = "LIST", value_delimiter = ',', requires = "probe")]
    pub probe_only: Vec<String>,

    /// --probe: the probe cases' budget per server
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "5m",
        requires = "probe"
    )]
    pub probe_time: String,

    /// --probe: slowhttptest's connections in each attack
    #[arg(long, value_name = "N", default_value_t = 4000, requires = "probe")]
    pub attack_connections: usize,

    /// --probe: the length of each slowhttptest attack
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "30s",
        requires = "probe"
    )]
    pub attack_time: String,

    /// --probe: the keep-alive search opens 250, 500, 1000… connections at once up to this many
    #[arg(long, value_name = "N", default_value_t = 10_000, requires = "probe")]
    pub hold_max: usize,

    /// Print the comparison as one JSON document on stdout instead of tables
    #[arg(long)]
    pub json: bool,

    /// No progress lines
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// --threshold, --junit, --summary-md: judged on each row (a server's peak on a workload)
    #[command(flatten)]
    pub thresholds: super::threshold_args::ThresholdArgs,
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
    let key_type = KeyType::parse(&args.tls_key_type)?;
    // QUIC is always TLS: --h3 puts the servers on the lab's certificate.
    o.tls = (args.tls || args.h3).then_some(key_type);
    o.h2 = args.h2;
    o.h3 = args.h3;
    o.workloads = match &args.workloads {
        Some(list) => WorkloadKind::parse_list(list)?,
        None if args.h3 => WorkloadKind::H3_DEFAULT.to_vec(),
        None if args.h2 => WorkloadKind::H2_DEFAULT.to_vec(),
        None if args.tls => WorkloadKind::TLS_DEFAULT.to_vec(),
        None => WorkloadKind::DEFAULT.to_vec(),
    };
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
    super::session::check_max_error_pct(args.max_error_pct)?;
    o.max_users.bounds.max_error_pct = args.max_error_pct;
    o.max_users.bounds.max_p99_ms = Some(args.max_p99_ms);
    if args.start_clients == 0 || args.max_clients < args.start_clients {
        bail!("max users needs 1 ≤ --start-clients ≤ --max-clients");
    }
    args.scale.apply(&mut o)?;
    // The most connections the generator will hold: the largest level, or the max-users search's cap.
    let searched = if o.max_users_for.is_empty() {
        0
    } else {
        args.max_clients
    };
    let most = o.levels.iter().copied().max().unwrap_or(1).max(searched);
    super::diagnose::check_open_files(most)?;
    if args.server_cpu == args.generator_cpu {
        bail!(
            "--server-cpu and --generator-cpu must differ (both are {})",
            args.server_cpu
        );
    }
    o.server_cpus = vec![args.server_cpu];
    o.generator_cpus = vec![args.generator_cpu];
    o.keep_alive = !args.no_keepalive;
    o.spin = args.spin.rule(false)?;
    o.checksum = args.checksum;
    o.features = !args.no_features;
    o.verify = args.verify;
    o.large_size = webstand_workload::fixtures::parse_size(&args.large_size)?;
    o.timeout = parse_duration(&args.script.split_s(&args.timeout, "10s", args.json)?.0)?;
    o.builtin = std::env::current_exe().ok();
    if args.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    o.rounds = args.rounds;
    if args.php_children == 0 {
        bail!("--php-children must be at least 1");
    }
    o.php_fpm = args.php_fpm.clone();
    o.php_children = args.php_children;
    o.probe = args.probe.then(|| probe_spec(args)).transpose()?;
    o.check()?;
    Ok(o)
}

/// `--probe`'s cases, budgets and sizes, checked before anything starts.
fn probe_spec(args: &Args) -> Result<ProbeSpec> {
    // The HTTP/3 cases run on servers that speak HTTP/3; the rest are the probe's HTTP/1 ones.
    let (h3, only) = webstand_lab::h3::probe::Case::pick(&args.probe_only);
    let cases = match only.is_empty() && !args.probe_only.is_empty() {
        true => Vec::new(),
        false => super::probe::load_cases(&[], &only)?,
    };
    let spec = ProbeSpec {
        cases,
        h3,
        max_time: parse_duration(&args.probe_time)
            .map_err(|e| anyhow::anyhow!("--probe-time: {e}"))?,
        attack_connections: args.attack_connections,
        attack_time: parse_duration(&args.attack_time)
            .map_err(|e| anyhow::anyhow!("--attack-time: {e}"))?,
        hold_max: args.hold_max,
    };
    if spec.attack_connections == 0 || spec.hold_max == 0 {
        bail!("--attack-connections and --hold-max must be at least 1");
    }
    if spec.attack_time < std::time::Duration::from_secs(1) {
        bail!("--attack-time must be at least 1s (slowhttptest counts whole seconds)");
    }
    super::diagnose::check_open_files(spec.most_connections())
        .map_err(|e| anyhow::anyhow!("--probe: {e}"))?;
    Ok(spec)
}

/// How a comparison's results are printed.
pub struct Printing {
    pub json: bool,
    pub quiet: bool,
    pub max_error_pct: f64,
    /// Also each server's sweep table over clients (the wordpress preset's).
    pub sweeps: bool,
    pub thresholds: super::threshold_args::ThresholdArgs,
    /// `-s FILE`: run with every level.
    pub script: Option<super::script_runs::ScriptRuns>,
    /// `--scale`: the connection counts of the scaling table.
    pub scale: Option<Vec<usize>>,
}

pub fn run(args: Args, global: &Global) -> Result<i32> {
    // Everything the user typed is checked before anything is written or started.
    let scratch = compare::scratch_dir()?;
    let docroot = match &args.docroot {
        Some(d) => d.clone(),
        None => scratch.path().join("docroot"),
    };
    let opts = options(&args, docroot)?;
    args.thresholds.parse()?;
    let printing = Printing {
        json: args.json,
        quiet: args.quiet,
        max_error_pct: args.max_error_pct,
        sweeps: false,
        thresholds: args.thresholds.clone(),
        script: args.script.split_s(&args.timeout, "10s", args.json)?.1,
        scale: args.scale.counts()?,
    };
    execute(&opts, &printing, global)
}

/// Runs a comparison whose options are checked, prints it, and returns its exit status.
pub fn execute(opts: &Options, p: &Printing, global: &Global) -> Result<i32> {
    let mut obs = super::session::open(global, "compare", "lab", p.quiet)?;
    if let Some(s) = &p.script {
        super::script_runs::save_identity(&mut obs, &s.file);
    }
    let mut diagnosing = Diagnosing::new(&mut obs, Default::default(), p.max_error_pct);
    diagnosing.lab_cpus = opts.server_cpus.clone();
    let outcome = match &p.script {
        Some(s) => compare::run(
            opts,
            &mut super::script_runs::Scripted::new(&mut diagnosing, s),
        ),
        None => compare::run(opts, &mut diagnosing),
    };
    let peaks = outcome
        .as_ref()
        .map(|c| peak_diagnoses(c, &diagnosing))
        .ok();
    let levels = std::mem::take(&mut diagnosing.levels);
    let mut comparison = obs.failed_on_error(outcome)?;
    let peaks = peaks.unwrap_or_default();
    flag_generator_bound(&mut comparison, &peaks);
    // A closed stdout (`| head`) is not an error of the comparison: everything is measured and saved.
    use std::io::Write;
    let thresholds = p.thresholds.parse()?;
    let judging = judge_rows(&comparison, &thresholds, &mut obs);
    let verdict = verdict(&comparison, p.max_error_pct);
    let verdict = judging.conclude(&p.thresholds, "compare", verdict)?;
    let scale = p.scale.as_ref().map(|counts| {
        webstand_report::scale::scale_table(&comparison, super::scale_args::SCALE_WORKLOAD, counts)
    });
    let text = if p.json {
        let mut doc = webstand_report::comparison::comparison_json(&comparison);
        doc["outcome"] = webstand_report::json::verdict_json(&verdict);
        doc["diagnosis"] = peaks.iter().map(|(_, l)| level_json(l)).collect();
        if !thresholds.is_empty() {
            doc["thresholds"] = judging.json();
        }
        if let Some(t) = &scale {
            doc["scale"] = serde_json::json!(t);
        }
        format!("{doc:#}\n")
    } else if p.sweeps {
        webstand_report::comparison::render_comparison(&comparison)
            + &webstand_report::seed004::render_sweeps(&comparison)
            + &peaks_section(&peaks, &levels)
    } else {
        webstand_report::comparison::render_comparison(&comparison)
            + &peaks_section(&peaks, &levels)
    };
    let text = match (p.json, &scale) {
        (true, _) => text,
        (false, Some(t)) => {
            text + "\n" + &webstand_report::scale::render_scale(t) + &judging.tables()
        }
        (false, None) => text + &judging.tables(),
    };
    if p.json {
        let _ = std::io::stdout().write_all(text.as_bytes());
    } else {
        super::print(&text);
    }
    let saved = if p.json {
        SavedLine::Stderr
    } else {
        SavedLine::Stdout
    };
    Ok(obs.conclude(&verdict, saved))
}

/// The thresholds judged on each row: a server's peak level on a workload.
fn judge_rows<'a>(
    c: &'a Comparison,
    thresholds: &'a [webstand_thresholds::Threshold],
    session: &mut Session,
) -> super::threshold_args::Judging<'a> {
    let mut judging = super::threshold_args::Judging::new(thresholds);
    for s in &c.servers {
        for w in &s.workloads {
            let name = format!("{}/{}", s.name, w.workload.map_or("?", |k| k.name()));
            if let Some(peak) = w.sweep.as_ref().and_then(|sw| sw.peak()) {
                let label = format!("{name} at {} clients", peak.clients);
                judging.judge(session, (&name, peak.clients, label), &peak.result);
            }
        }
    }
    judging
}

/// Each server's peak level on each workload with its diagnosis, in the comparison's order.
fn peak_diagnoses(c: &Comparison, d: &Diagnosing<'_, Session>) -> Vec<(String, Diagnosed)> {
    let mut out = Vec::new();
    for s in &c.servers {
        for w in &s.workloads {
            let series = format!("{}/{}", s.name, w.workload.map_or("?", |k| k.name()));
            let peak = w.sweep.as_ref().and_then(|sw| sw.peak());
            if let Some(l) = peak.and_then(|p| d.level(&series, w.round, p.clients)) {
                out.push((series, l.clone()));
            }
        }
    }
    out
}

/// Sets each row's (round's) Bound-by cell of its peak, and notes a row whose peak is not the
/// server's limit (the generator's, or both sides' at once).
fn flag_generator_bound(c: &mut Comparison, peaks: &[(String, Diagnosed)]) {
    for s in &mut c.servers {
        let name = s.name.as_str();
        for w in &mut s.workloads {
            let series = format!("{name}/{}", w.workload.map_or("?", |k| k.name()));
            let Some((_, l)) = peaks
                .iter()
                .find(|(p, l)| *p == series && l.round == w.round)
            else {
                continue;
            };
            render::mark_peak(w, &l.diagnosis);
        }
    }
}

/// The Diagnosis of every row's peak (with rounds, each round's, grouped by row), each level's
/// verdict beside it; a peak that is not the server's limit is flagged.
fn peaks_section(peaks: &[(String, Diagnosed)], all: &[Diagnosed]) -> String {
    let rounds = peaks.iter().map(|(_, l)| l.round + 1).max().unwrap_or(1);
    let mut sorted: Vec<&(String, Diagnosed)> = peaks.iter().collect();
    // Stable: rows keep the comparison's order, each row's rounds in order.
    sorted.sort_by_key(|(series, l)| {
        let first = peaks.iter().position(|(s, _)| s == series);
        (first, l.round)
    });
    let mut out = String::from("\nDiagnosis of each row's peak:\n");
    for (series, l) in sorted {
        let label = if rounds > 1 {
            format!("{series} (round {} of {rounds})", l.round + 1)
        } else {
            series.clone()
        };
        let flag = match l.diagnosis.verdict {
            Some(Limit::Generator) => " — NOT the server's limit: the generator bound this peak",
            Some(Limit::BothSaturated) => {
                " — NOT the server's limit alone: both sides were saturated"
            }
            _ => "",
        };
        let head = render::headline(&l.diagnosis);
        out.push_str(&format!(
            "  {label} at {} clients: {head}{flag}\n",
            l.clients
        ));
        let levels: Vec<String> = all
            .iter()
            .filter(|o| o.series == *series && o.round == l.round)
            .map(|o| {
                let bound = o.diagnosis.verdict.map_or("nothing found", Limit::short);
                format!("{} clients {bound}", o.clients)
            })
            .collect();
        if levels.len() > 1 {
            out.push_str(&format!("    each level bound by: {}\n", levels.join(", ")));
        }
        out.push_str(&render::finding_lines(&l.diagnosis, "    "));
    }
    out
}

/// Every server's sweep levels count; max-users probes do not (finding where errors start is
/// their purpose). A server that died mid-run makes the comparison `target lost`, even when the
/// levels it finished were clean. Servers not installed, or without CGI, measured nothing and
/// count for nothing.
fn verdict(c: &Comparison, max_error_pct: f64) -> Verdict {
    let mut judged = Vec::new();
    for s in &c.servers {
        for w in &s.workloads {
            let name = format!("{}/{}", s.name, w.workload.map_or("?", |k| k.name()));
            let sweep = w
                .sweep
                .iter()
                .flat_map(|sw| sw.levels.iter().map(|l| (l, true)));
            let probes = w
                .max_users
                .iter()
                .flat_map(|m| m.probes.iter().map(|p| (&p.level, false)));
            for (l, counts_errors) in sweep.chain(probes) {
                judged.push(Judged {
                    label: format!("{name} at {} clients", l.clients),
                    result: &l.result,
                    counts_errors,
                });
            }
        }
    }
    let verdict = webstand_results::judge(&judged, max_error_pct, c.interrupted);
    let died = c.servers.iter().find_map(|s| {
        let w = s.workloads.iter().find(|w| w.died)?;
        Some(format!(
            "{} died during {}",
            s.name.as_str(),
            w.workload.map_or("?", |k| k.name())
        ))
    });
    match died {
        Some(what) if matches!(verdict.outcome, Outcome::Complete | Outcome::Errors) => Verdict {
            outcome: Outcome::TargetLost,
            reason: format!("target lost: {what}"),
        },
        _ => verdict,
    }
}
