//! `webstand sweep`: a workload at rising concurrency (or an open-loop rate, or a max-users search),
//! printed in the seeds' tables and saved to the history (through [`Session`]); its exit status is
//! the sweep's outcome (docs/EXIT-STATUS.md).

use super::diagnose::{Diagnosing, Known, ServerProcess};
use super::main_job::Embedded;
use super::presets::{preset_defaults, PresetDefaults};
use super::session::{SavedLine, Session};
use super::sweep_args::Args;
use super::sweep_table::Table;
use super::sweep_target::{check_limits, level_stop, open_session, target_and_workload, Targeted};
use crate::Global;
use anyhow::{bail, Result};
use std::time::Duration;
use webstand_lab::interrupt::stop_signal;
use webstand_lab::maxusers::{Bounds, MaxUsersSpec};
use webstand_lab::sweep::{self as lab_sweep, LevelSpec, Rate, SweepSpec};
use webstand_report::ab::AbInfo;
use webstand_report::tables::{self, Layout};
use webstand_results::MaxUsers;
use webstand_results::SweepResult;
use webstand_results::{Judged, Outcome, Plan, Stop, Verdict};

// Values are parsed here rather than by clap so that bad input gets one line (`webstand: error: …`).
fn parse_warmup(s: &str) -> Result<Duration> {
    if s.trim() == "0" {
        return Ok(Duration::ZERO);
    }
    webstand_duration::positive(s).map_err(|e| anyhow::anyhow!("--warmup: {e}"))
}
fn parse_rate(s: &str) -> Result<f64> {
    match s.trim().parse::<f64>() {
        Ok(r) if r > 0.0 && r.is_finite() => Ok(r),
        _ => bail!("bad rate {s:?}: expected requests per second, more than 0"),
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
        .map(|d| webstand_duration::positive(d).map_err(|e| anyhow::anyhow!("-d: {e}")))
        .transpose()?;
    let warmup = parse_warmup(&args.warmup)?;
    let (timeout, script) = args.script.split_s(&args.timeout, "30s", args.json)?;
    let timeout =
        webstand_duration::positive(&timeout).map_err(|e| anyhow::anyhow!("--timeout: {e}"))?;
    let rate = args.rate.as_deref().map(parse_rate).transpose()?;
    let link_mbit = super::diagnose::link_speed(args.link_speed.as_deref())?;
    check_limits(&args)?;

    let Targeted {
        url,
        mut embedded,
        plan,
        workload,
    } = target_and_workload(&args, preset.as_ref(), timeout)?;

    // Levels and lengths.
    let stop = level_stop(&args, duration, preset.as_ref());
    let warmup = (!warmup.is_zero()).then_some(Stop {
        requests: None,
        duration: Some(warmup),
    });
    let search = args
        .max_rate
        .find_max_rate
        .then(|| {
            let clients = clients_arg.as_deref();
            args.max_rate
                .search(clients, stop.clone(), warmup.clone(), args.jitter)
        })
        .transpose()?;
    let thresholds = args.thresholds.parse()?;
    let t = &args.thresholds;
    let ci_files = !t.thresholds.is_empty() || t.junit.is_some() || t.summary_md.is_some();
    if ci_files && args.find_max_users {
        bail!("--threshold, --junit and --summary-md judge a sweep's levels or a max-rate search, not --find-max-users: it judges its --max-p99-ms and --max-error-pct");
    }
    if search.is_some() {
        super::max_rate_ci::answer_thresholds(&thresholds)?;
    }
    let levels = level_specs(&args, preset.as_ref(), &clients_arg, duration, rate, &stop);
    check_open_files(&args, &levels)?;
    let rate = rate.map(|rate| Rate {
        rate,
        jitter: args.jitter,
    });
    let table = args
        .table
        .or(preset.as_ref().map(|p| p.table))
        .unwrap_or(Table::Sweep(Layout::Full));

    let mut session = open_session(global, &url, embedded.as_mut(), args.quiet)?;
    session.save_protocol(&plan);
    if let Some(s) = &script {
        super::script_runs::save_identity(&mut session, &s.file);
    }
    let searching = args.find_max_users || search.is_some();
    session.on_run = super::watch_args::on_run(&args.watch, "sweep", levels.len(), searching)?;
    let bounds = Bounds {
        max_error_pct: args.max_error_pct,
        max_p99_ms: args.max_p99_ms,
    };
    if args.find_max_users {
        if script.is_some() {
            bail!("-s FILE runs with a sweep's levels, not with --find-max-users");
        }
        let spec = MaxUsersSpec {
            start: args.start_clients,
            limit: args.max_clients,
            stop,
            warmup,
            bounds,
            precision: 0.05,
        };
        return find_max_users(&mut session, &spec, &plan, &workload.name, args.json);
    }
    let known = known(&args, embedded.as_ref(), link_mbit)?;
    if let Some(search) = search {
        if script.is_some() {
            bail!("-s FILE runs with a sweep's levels, not with --find-max-rate");
        }
        let name = &workload.name;
        let ci_args = &args.thresholds;
        let ci: super::max_rate::Concluding = Box::new(|session, searched, verdict| {
            super::max_rate_ci::conclude(session, searched, (&thresholds, ci_args), verdict)
        });
        let json = args.json;
        return super::max_rate::run(&mut session, &search, (&plan, name), known, json, ci);
    }
    let spec = SweepSpec {
        levels,
        warmup,
        rate,
        max_error_pct: args.max_error_pct,
    };
    let shown = Shown {
        plan: &plan,
        workload: &workload.name,
        rate,
        table,
        thresholds: (&thresholds, &args.thresholds),
        script: script.as_ref(),
    };
    let code = sweep_levels(&mut session, &spec, &shown, known, args.json)?;
    drop(embedded);
    Ok(code)
}

/// What the diagnosis is told besides the runs: the server's process (`--server-pid`, else the
/// embedded server's) and the link's speed.
fn known(args: &Args, embedded: Option<&Embedded>, link_mbit: Option<f64>) -> Result<Known> {
    let server = match (args.server_pid, embedded) {
        (Some(pid), _) => Some(ServerProcess::given(pid)?),
        (None, Some(e)) => Some(e.process()),
        (None, None) => None,
    };
    Ok(Known { server, link_mbit })
}

/// Refuses up front the most connections the sweep will hold (its largest level, or the max-users
/// search's cap) when the open-files limit cannot hold them.
fn check_open_files(args: &Args, levels: &[LevelSpec]) -> Result<()> {
    let searched = if args.find_max_users {
        args.max_clients
    } else {
        0
    };
    let most = levels.iter().map(|l| l.clients).max().unwrap_or(1);
    super::diagnose::check_open_files(most.max(searched))
}

/// `--find-max-users`: the search, its table and its verdict.
fn find_max_users(
    session: &mut Session,
    spec: &MaxUsersSpec,
    plan: &Plan,
    workload: &str,
    json: bool,
) -> Result<i32> {
    let found = session.max_users(spec, plan, workload);
    let found = session.failed_on_error(found)?;
    let verdict = max_users_verdict(&found, &spec.bounds);
    print_max_users(&found, &spec.bounds, workload, json.then_some(&verdict));
    Ok(session.conclude(&verdict, saved_line(json)))
}

/// Runs the levels with each one diagnosed, prints them and their Diagnosis, and concludes.
fn sweep_levels(
    session: &mut Session,
    spec: &SweepSpec,
    shown: &Shown,
    known: Known,
    json: bool,
) -> Result<i32> {
    session.group = shown.workload.to_string();
    let mut diagnosing = Diagnosing::new(session, known, spec.max_error_pct);
    let result = match shown.script {
        Some(s) => {
            let mut scripted = super::script_runs::Scripted::new(&mut diagnosing, s);
            lab_sweep::run(spec, shown.plan, shown.workload, &mut scripted)
        }
        None => lab_sweep::run(spec, shown.plan, shown.workload, &mut diagnosing),
    };
    let (section, diagnoses) = (diagnosing.section(), diagnosing.json());
    let bound = super::diagnose::bound_cells(&diagnosing.levels);
    session.on_run = None; // the live view closes before the report prints
    let result = session.failed_on_error(result)?;
    let mut judging = super::threshold_args::Judging::new(shown.thresholds.0);
    for l in &result.levels {
        let at = (shown.workload, l.clients, format!("{} clients", l.clients));
        judging.judge(session, at, &l.result);
    }
    let verdict = levels_verdict(&result, spec.max_error_pct);
    let verdict = judging.conclude(shown.thresholds.1, "sweep", verdict)?;
    if json {
        let extra = (&verdict, diagnoses, judging.json());
        print_sweep(&result, shown, Some(extra), &bound)?;
    } else {
        print_sweep(&result, shown, None, &bound)?;
        print!("{section}");
        print!("{}", judging.tables());
    }
    Ok(session.conclude(&verdict, saved_line(json)))
}

/// The levels: the clients given (or the preset's, or the defaults), each with `stop`, or the
/// preset's fixed levels when nothing overrides them.
fn level_specs(
    args: &Args,
    preset: Option<&PresetDefaults>,
    clients_arg: &Option<Vec<usize>>,
    duration: Option<Duration>,
    rate: Option<f64>,
    stop: &Stop,
) -> Vec<LevelSpec> {
    let clients = match (clients_arg, preset, rate) {
        (Some(c), _, _) => c.clone(),
        (None, Some(p), _) => p.clients.clone(),
        (None, None, Some(_)) => vec![16],
        (None, None, None) => vec![1, 2, 4, 8, 16, 32],
    };
    match preset.and_then(|p| p.fixed_levels.clone()) {
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
    }
}

fn saved_line(json: bool) -> SavedLine {
    if json {
        SavedLine::Stderr
    } else {
        SavedLine::Stdout
    }
}

/// A sweep's verdict: every level's errors count.
pub fn levels_verdict(result: &SweepResult, max_error_pct: f64) -> Verdict {
    let judged: Vec<Judged> = result
        .levels
        .iter()
        .map(|l| Judged {
            label: format!("{} clients", l.clients),
            result: &l.result,
            counts_errors: true,
        })
        .collect();
    webstand_results::judge(&judged, max_error_pct, result.interrupted.then(stop_signal))
}

/// A max-users search's verdict: levels breaking the bounds are what it looks for, so their errors
/// do not count; finding no clean level because the first one already had too many errors does.
fn max_users_verdict(found: &MaxUsers, bounds: &Bounds) -> Verdict {
    let judged: Vec<Judged> = found
        .probes
        .iter()
        .map(|p| Judged {
            label: format!("{} clients", p.level.clients),
            result: &p.level.result,
            counts_errors: false,
        })
        .collect();
    let mut v = webstand_results::judge(
        &judged,
        bounds.max_error_pct,
        found.interrupted.then(stop_signal),
    );
    let first = found.probes.first().map(|p| &p.level);
    if let Some(l) = first.filter(|_| v.outcome == Outcome::Complete && found.best.is_none()) {
        if !l.result.is_clean(bounds.max_error_pct) {
            v = Verdict {
                outcome: Outcome::Errors,
                reason: format!(
                    "no clean level: the first, {} clients, had {:.2} % errors (failed or non-2xx), above --max-error-pct {} %",
                    l.clients,
                    l.result.error_pct(),
                    bounds.max_error_pct
                ),
            };
        }
    }
    v
}

/// What a sweep's text output needs besides its result.
struct Shown<'a> {
    plan: &'a Plan,
    workload: &'a str,
    rate: Option<Rate>,
    table: Table,
    /// The thresholds judged on every level, and where their CI files go.
    thresholds: (
        &'a [webstand_thresholds::Threshold],
        &'a super::threshold_args::ThresholdArgs,
    ),
    /// `-s FILE`: run with every level.
    script: Option<&'a super::script_runs::ScriptRuns>,
}

/// The sweep's levels as JSON (with the verdict), or as the chosen table (with a "Bound by"
/// column from `bound`, each level's diagnosis) and the open-loop lines.
fn print_sweep(
    result: &SweepResult,
    shown: &Shown,
    json: Option<(&Verdict, serde_json::Value, serde_json::Value)>,
    bound: &[&str],
) -> Result<()> {
    let levels = webstand_report::levels::sweep_levels(result);
    let max = result.max_error_pct;
    if let Some((verdict, diagnoses, thresholds)) = json {
        let mut doc = tables::sweep_json(shown.workload, &levels, result.interrupted, max);
        doc["outcome"] = webstand_report::json::verdict_json(verdict);
        doc["diagnosis"] = diagnoses;
        if !shown.thresholds.0.is_empty() {
            doc["thresholds"] = thresholds;
        }
        if let Some(r) = shown.rate {
            doc["rate"] = serde_json::json!({ "requested_per_sec": r.rate, "jitter": r.jitter });
            doc["late_sends"] = result.levels.iter().map(|l| l.result.late_sends).collect();
        }
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(());
    }
    let plan = shown.plan;
    println!(
        "Sweep of {} on {}:{} ({})\n",
        shown.workload,
        plan.target.host,
        plan.target.port,
        describe_load(plan, shown.rate)
    );
    match shown.table {
        Table::Sweep(layout) => {
            print!("{}", tables::render(layout, &levels, max, bound));
            print!("{}", webstand_report::h2_table::table(&levels));
        }
        Table::Ab => {
            for l in &result.levels {
                let info = AbInfo {
                    host: plan.target.host.clone(),
                    port: plan.target.port,
                    path: shown.workload.to_string(),
                    concurrency: l.clients,
                    keep_alive: plan.keep_alive,
                    rate: shown.rate.map(|r| r.rate),
                    ..Default::default()
                };
                println!("{}", webstand_report::ab::report(&l.result, &info));
                print!("{}", webstand_report::h2load::summary(&l.result, None));
            }
            print!("{}", tables::summary(&levels, max));
        }
    }
    if let Some(r) = shown.rate {
        for l in &result.levels {
            println!("{}", tables::open_loop_line(l.clients, r.rate, &l.result));
        }
    }
    if result.interrupted {
        println!("Interrupted: the table shows the levels that completed (the last one partly).");
    }
    Ok(())
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
    s += match (&plan.h2, plan.keep_alive) {
        (Some(h2), _) => format!(
            ", HTTP/2{}, up to {} stream{} per connection",
            if plan.tls.is_some() { "" } else { " (h2c)" },
            h2.max_streams,
            if h2.max_streams == 1 { "" } else { "s" }
        ),
        (None, true) => ", keep-alive".to_string(),
        (None, false) => ", no keep-alive".to_string(),
    }
    .as_str();
    if plan.requests.iter().any(|r| r.expect.is_some()) {
        s += ", checksummed";
    }
    s
}

fn print_max_users(found: &MaxUsers, bounds: &Bounds, workload: &str, json: Option<&Verdict>) {
    let bounds_text = match bounds.max_p99_ms {
        Some(p) => format!("errors ≤ {} %, p99 ≤ {p} ms", bounds.max_error_pct),
        None => format!("errors ≤ {} %", bounds.max_error_pct),
    };
    let probes: Vec<_> = found
        .probes
        .iter()
        .map(|p| webstand_report::levels::Level {
            group: workload,
            clients: p.level.clients,
            round: 1,
            server_version: p.level.result.server_software.as_deref(),
            result: &p.level.result,
        })
        .collect();
    if let Some(verdict) = json {
        let doc = serde_json::json!({
            "outcome": webstand_report::json::verdict_json(verdict),
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
    print!("{}", tables::full(&probes, &[]));
    for p in &found.probes {
        if let Some(why) = &p.broke {
            println!("{} clients broke: {why}", p.level.clients);
        }
    }
    match (&found.best, found.first_broken) {
        (Some(b), Some(bad)) => println!(
            "Max users: {} (largest clean level; {bad} broke): {:.0} hits/s, p99 {:.1} ms, errors {:.2} % (failed or non-2xx)",
            b.clients,
            b.result.hits_per_sec(),
            b.result.latency_ms(0.99),
            b.result.error_pct()
        ),
        (Some(b), None) => println!(
            "Max users: {}+ (no level broke up to --max-clients): {:.0} hits/s, p99 {:.1} ms, errors {:.2} % (failed or non-2xx)",
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
