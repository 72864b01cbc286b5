//! `webstand bench [OPTIONS] URL`: one load run against a URL with ab's and wrk's options, reported in
//! ab's layout (or as one JSON document) and saved in the history; the exit status is the run's
//! outcome (docs/EXIT-STATUS.md). There is no probe connection before the run: the engine stops at
//! once when the first real connection fails.

use super::ab_args::AbArgs;
use super::diagnose::{link_speed, Known, RunEvidence, RunWatch, ServerProcess};
use super::session::{SavedLine, Session};
use super::threshold_args::Judging;
use super::workload_args::WorkloadArgs;
use crate::Global;
use plan::Planned;
use std::sync::Arc;
use webstand_diagnosis::{render, Diagnosis};
use webstand_lab::interrupt::stop_signal;
use webstand_lab::sweep::Observer;
use webstand_report::ab::{self, AbInfo};
use webstand_results::Level;
use webstand_results::{Ended, Judged, Live, Plan, RunResult, Shape, Verdict};
use webstand_script::{Output, WrkScript};
use webstand_watch::Watch;

mod plan;

/// A script's `done()`, run after the report (its output kept for `--json`).
struct Done<'a>(&'a Option<Arc<WrkScript>>, &'a Output);

#[derive(clap::Args)]
#[command(after_help = after_help())]
pub struct Args {
    /// The target, http[s]://host[:port]/path [default: the origin of --url-file's full URLs]
    #[arg(value_name = "URL")]
    url: Option<String>,

    // Declared before the option groups: a field after a group with a heading is listed under it.
    /// The script's arguments (its init(args)), after `--`
    #[arg(last = true, value_name = "ARGS")]
    script_args: Vec<String>,

    /// Number of requests to perform [default: 1, or 50000 with -t, unlimited with -d]
    #[arg(short = 'n', value_name = "REQUESTS")]
    requests: Option<u64>,

    /// Number of requests in flight at once (connections)
    #[arg(short = 'c', value_name = "CONCURRENCY", default_value_t = 1)]
    concurrency: usize,

    /// ab's time limit in seconds: stop after this long (implies -n 50000 unless -n is given).
    /// Not wrk's -t: the number of threads is --threads here
    #[arg(short = 't', value_name = "SECONDS")]
    timelimit: Option<f64>,

    /// wrk's duration: run this long (e.g. 30 seconds, 500ms, 2m, 1h 30m); requests are unlimited
    /// unless -n is given. Without a value, ab's -d: no "Percentage of the requests served" table
    #[arg(short = 'd', long = "duration", value_name = "DURATION", num_args = 0..=1, default_missing_value = "")]
    duration: Option<String>,

    /// Keep connections open between requests (HTTP keep-alive) [default: a new connection per request]
    #[arg(short = 'k')]
    keep_alive: bool,

    /// Extra request header 'Name: value' (repeatable); replaces a default header of the same name
    /// ('User-Agent:' or 'Accept:' with no value leaves that default out)
    #[arg(short = 'H', value_name = "HEADER")]
    headers: Vec<String>,

    /// Request method [default: GET, or POST with -p]
    #[arg(short = 'm', value_name = "METHOD")]
    method: Option<String>,

    /// File whose contents are sent as the request body (with -T for its type)
    #[arg(short = 'p', value_name = "FILE")]
    post_file: Option<std::path::PathBuf>,

    /// Content-Type of the -p or -u body
    #[arg(short = 'T', value_name = "TYPE", default_value = "text/plain")]
    content_type: String,

    /// A number: ab's per-request timeout in seconds (a request with no progress for this long
    /// fails) [default: 30]. Anything else: wrk's -s, a Lua script to run (docs/SCRIPTING.md)
    #[arg(short = 's', value_name = "SECONDS|FILE")]
    timeout_or_script: Option<String>,

    /// A wrk Lua script to run, whatever its name (docs/SCRIPTING.md)
    #[arg(long, value_name = "FILE")]
    script: Option<std::path::PathBuf>,

    /// Accept responses whose length differs from the first one (dynamic pages)
    #[arg(short = 'l')]
    variable_length: bool,

    /// Quiet: no progress display
    #[arg(short = 'q')]
    quiet: bool,

    /// ab's "don't exit on socket receive errors", accepted for ab's command lines: webstand always
    /// goes on past them, counting them as failed requests (Receive)
    #[arg(short = 'r')]
    receive_errors_ok: bool,

    /// ab's other options: -A -P -X -C -i -u -b -B -v -S -g -e -w -x -y -z -V
    #[command(flatten)]
    ab: AbArgs,

    /// Errors (failed requests + non-2xx answers, % of attempted) above which the run exits with
    /// status 3 and is saved as `errors`
    #[arg(long, value_name = "PCT", default_value_t = webstand_results::figures::DEFAULT_MAX_ERROR_PCT)]
    max_error_pct: f64,

    /// Event-loop threads (0 = one per core; never more than the connections)
    #[arg(long, value_name = "N", default_value_t = 0)]
    threads: usize,

    #[command(flatten)]
    spin: super::spin_args::SpinArgs,

    /// HTTP/1.1 pipelining depth per connection (implies keep-alive)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pipeline: usize,

    /// Print a latency percentile spectrum after the report (wrk's --latency)
    #[arg(long)]
    latency: bool,

    /// Print the whole result as one JSON document on stdout instead of the report
    #[arg(long)]
    json: bool,

    /// Send HTTP/1.0 requests [default: HTTP/1.1 with Host]
    #[arg(long = "http1.0")]
    http10: bool,

    /// Open loop: send this many requests per second in total, whatever the response times;
    /// latency counts from each request's intended send time (-c is then the connection pool)
    #[arg(long, value_name = "PER_SEC")]
    rate: Option<f64>,

    /// With --rate: Poisson (exponentially spaced) send times instead of evenly spaced ones
    #[arg(long, requires = "rate")]
    jitter: bool,

    /// The server's process, when you started it yourself: its CPU over the run goes into the
    /// Diagnosis (server-bound or not)
    #[arg(long, value_name = "PID")]
    server_pid: Option<i32>,

    /// The speed of the link to the server when sysfs does not know it (veth, a shaped or remote
    /// link), as tc writes rates: 20mbit, 1gbit. The Diagnosis says "limited by the network" when
    /// the bytes/s come near it
    #[arg(long, value_name = "RATE")]
    link_speed: Option<String>,

    /// What to fetch besides the URL's path: URL files, WebStone lists, small files, checksums
    #[command(flatten)]
    workload: WorkloadArgs,

    /// TLS for https:// URLs
    #[command(flatten)]
    tls: super::tls_args::TlsArgs,

    /// HTTP/2: --h2 and h2load's -m, -w, -W
    #[command(flatten)]
    h2: super::h2_args::H2Args,

    /// The run watched while it goes: --live, --metrics-listen, --otlp-endpoint
    #[command(flatten)]
    watch: super::watch_args::WatchArgs,

    /// --threshold, --junit, --summary-md
    #[command(flatten)]
    thresholds: super::threshold_args::ThresholdArgs,
}

/// What `bench --help` ends with: examples, the guide, the exit statuses.
fn after_help() -> String {
    format!(
        "Examples:
  webstand bench -n 10000 -c 100 http://127.0.0.1:8080/2k.html
  webstand bench -k -c 32 -d 10s --latency http://127.0.0.1:8080/2k.html
  webstand bench -k -c 32 -d 10s -s script.lua http://127.0.0.1:8080/ -- ARGS   (wrk's Lua scripts: docs/SCRIPTING.md)
  webstand bench -c 16 --rate 2000 -d 30s --json http://127.0.0.1:8080/2k.html > run.json

{}",
        super::help::measuring(
            "docs/BENCH.md (every option, and why the figures differ from ab's, wrk's and h2load's)"
        )
    )
}

pub fn run(mut args: Args, global: &Global) -> anyhow::Result<i32> {
    if args.ab.version {
        println!(concat!(
            "webstand ",
            env!("CARGO_PKG_VERSION"),
            " (bench: ApacheBench 2.3's options)"
        ));
        return Ok(0);
    }
    plan::ab_d_before_url(&mut args);
    let Planned {
        mut plan,
        path,
        url,
        script: script_file,
    } = plan::plan(&args)?;
    let thresholds = args.thresholds.parse()?;
    let output = match args.json {
        true => Output::kept(),
        false => Output::stdout(),
    };
    let script = match &script_file {
        Some(file) => {
            let s = WrkScript::load(file, args.script_args.clone(), &plan, output.clone())?;
            plan.script = Some(s.plan_ref());
            Some(s)
        }
        None => None,
    };
    let files = args.ab.data_files()?;
    let known = Known {
        server: args.server_pid.map(ServerProcess::given).transpose()?,
        link_mbit: link_speed(args.link_speed.as_deref())?,
    };
    let live = webstand_lab::interrupt::live();
    announce(&args, &plan);
    // After the header, which stays on the main screen when --live takes the alternate one.
    let watch = args.watch.start("bench")?;
    // Quiet: bench keeps ab's output; the progress display below is its own.
    let mut session = super::session::open(global, "bench", &url, true)?;
    session.save_protocol(&plan);
    if let Some(file) = &script_file {
        super::script_runs::save_identity(&mut session, file);
    }
    let (result, evidence) = measure(&args, &plan, known, &mut session, &live, watch.as_ref())?;
    drop(watch); // the view closes before the report prints
    let level = Level {
        clients: args.concurrency,
        result,
    };
    session.level_done(&level)?;
    let result = &level.result;
    let mut judging = Judging::new(&thresholds);
    let verdict = judge(&args, result, &mut session, &mut judging)?;
    // A target never reached has no figures to report: the last line says why.
    if !matches!(
        result.ended,
        Some(Ended::Unreachable | Ended::NoHttp2 | Ended::NoHttp3)
    ) {
        let diagnosis = evidence.diagnose(result, args.concurrency, None, args.max_error_pct);
        session.save_diagnosis(
            args.concurrency,
            &render::json(&diagnosis, &evidence.watched),
        );
        let shown = Shown {
            verdict: &verdict,
            diagnosis: &diagnosis,
            evidence: &evidence,
            thresholds: &judging,
        };
        print_report(
            &args,
            &plan,
            &path,
            &url,
            result,
            &shown,
            &Done(&script, &output),
        )?;
    }
    files.write(result)?;
    // Where the run was saved, after ab's report as compare says it; off stdout when that is JSON
    // or HTML.
    let saved = if args.json || args.ab.html {
        SavedLine::Stderr
    } else {
        SavedLine::Stdout
    };
    Ok(session.conclude(&verdict, saved))
}

/// ab's header before the run (and with `-v 2` the request head), unless the output is JSON or
/// ab's HTML table.
fn announce(args: &Args, plan: &Plan) {
    if !args.json && !args.ab.html {
        match args.ab.proxy() {
            Some(p) => println!(
                "Benchmarking {} [through {p}] (be patient)",
                plan.target.host
            ),
            None => println!("Benchmarking {} (be patient)", plan.target.host),
        }
    }
    if plan.verbosity >= 2 {
        print_request(plan);
    }
}

/// The run itself, with its progress line, the live view when asked and the evidence the
/// Diagnosis reads.
fn measure(
    args: &Args,
    plan: &Plan,
    known: Known,
    session: &mut Session,
    live: &Arc<Live>,
    watch: Option<&Watch>,
) -> anyhow::Result<(RunResult, RunEvidence)> {
    let _progress = webstand_lab::progress::start(
        "bench",
        live.clone(),
        plan.stop.requests,
        plan.stop.duration,
        args.quiet || args.watch.live,
    );
    if let Some(w) = watch {
        w.run_starting(live, webstand_watch::Stage::of("", plan, None));
    }
    let watch = RunWatch::start(known, plan, live);
    let result = session.failed_on_error(crate::ranks::run(plan, live.clone()))?;
    Ok((result, watch.finish()))
}

/// The run's outcome: its verdict by the error threshold, then by its `--threshold`s (judged
/// and saved with the level).
fn judge<'a>(
    args: &Args,
    result: &'a RunResult,
    session: &mut Session,
    judging: &mut Judging<'a>,
) -> anyhow::Result<Verdict> {
    let judged = Judged {
        label: String::new(),
        result,
        counts_errors: true,
    };
    let verdict = webstand_results::judge(
        &[judged],
        args.max_error_pct,
        result.interrupted.then(stop_signal),
    );
    let group = session.group.clone();
    judging.judge(session, (&group, args.concurrency, String::new()), result);
    judging.conclude(&args.thresholds, "bench", verdict)
}

/// ab's `-v 2`: the request head, once, before the run.
fn print_request(plan: &Plan) {
    let bytes = webstand_engine::request_bytes(plan, &plan.requests[0].path);
    let end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(bytes.len(), |i| i + 4);
    println!(
        "INFO: {} header == \n---\n{}\n---",
        plan.method,
        String::from_utf8_lossy(&bytes[..end])
    );
}

/// What is said of a run besides its figures.
struct Shown<'a> {
    verdict: &'a Verdict,
    diagnosis: &'a Diagnosis,
    evidence: &'a RunEvidence,
    thresholds: &'a super::threshold_args::Judging<'a>,
}

/// The run as one JSON document: the result, what was asked, the outcome and the Diagnosis, and
/// with `--h2` h2load's figures under `h2`.
fn print_json(
    args: &Args,
    plan: &Plan,
    path: &str,
    url: &str,
    result: &RunResult,
    shown: &Shown,
    done: &Done,
) -> anyhow::Result<()> {
    if let Some(script) = done.0 {
        script.done(result)?;
    }
    let mut v = webstand_report::json::result_json(result);
    if let Some(o) = v.as_object_mut() {
        o.insert("url".into(), url.into());
        o.insert("server_hostname".into(), plan.target.host.clone().into());
        o.insert("server_port".into(), plan.target.port.into());
        o.insert("document_path".into(), path.into());
        o.insert("concurrency".into(), args.concurrency.into());
        o.insert("keep_alive".into(), plan.keep_alive.into());
        o.insert("threads".into(), plan.threads.into());
        o.insert("spin".into(), plan.spin.to_string().into());
        o.insert("pipeline".into(), plan.pipeline.into());
        let time_limit = plan.stop.duration.map(|d| d.as_secs_f64());
        o.insert("time_limit_secs".into(), time_limit.into());
        if let Shape::Open { rate, jitter, .. } = plan.shape {
            o.insert("rate".into(), rate.into());
            o.insert("jitter".into(), jitter.into());
        }
        o.insert("max_error_pct".into(), args.max_error_pct.into());
        o.insert(
            "outcome".into(),
            webstand_report::json::verdict_json(shown.verdict),
        );
        o.insert(
            "diagnosis".into(),
            render::json(shown.diagnosis, &shown.evidence.watched),
        );
        if !shown.thresholds.thresholds.is_empty() {
            o.insert("thresholds".into(), shown.thresholds.judged[0].json());
        }
        if let Some(spread) = crate::ranks::last() {
            o.insert("ranks".into(), spread.json());
        }
        if result.h2.is_some() {
            let h2 = webstand_report::h2load::json(result, plan.stop.requests);
            o.insert("h2".into(), h2);
        }
        if result.quic.is_some() {
            o.insert("quic".into(), webstand_report::quic::json(result));
        }
        if done.0.is_some() {
            // What the script printed (init, done …), apart from the report's figures.
            o.insert("script_output".into(), done.1.take().into());
        }
    }
    println!("{}", serde_json::to_string_pretty(&v)?);
    Ok(())
}

/// The run as ab's report (with wrk's latency spectrum if asked) and its Diagnosis, or as one JSON
/// document.
fn print_report(
    args: &Args,
    plan: &Plan,
    path: &str,
    url: &str,
    result: &RunResult,
    shown: &Shown,
    done: &Done,
) -> anyhow::Result<()> {
    if args.json {
        return print_json(args, plan, path, url, result, shown, done);
    }
    let info = AbInfo {
        host: plan.target.host.clone(),
        port: plan.target.port,
        path: path.to_string(),
        concurrency: args.concurrency,
        variable_length: args.variable_length,
        keep_alive: plan.keep_alive,
        body_sent: plan.body.is_some(),
        pipeline: plan.pipeline,
        rate: args.rate,
        hide_percentiles: args.duration.as_deref() == Some(""),
        hide_confidence: args.ab.no_confidence,
    };
    if args.ab.html {
        let attributes = args.ab.html_attributes();
        print!(
            "{}",
            webstand_report::ab_html::report(result, &info, &attributes)
        );
        return Ok(());
    }
    let mut text = ab::report(result, &info);
    if !info.hide_percentiles {
        text += &webstand_report::wrk::fine_percentiles(result);
    }
    text += &webstand_report::h2load::summary(result, plan.stop.requests);
    text += &webstand_report::quic::summary(result);
    // How the load was made (threads, where, how they waited): why figures differ from ab's or wrk's.
    text += &webstand_report::generator::lines(result);
    if args.latency {
        let done = &shown.evidence.watched.completions;
        let rates = webstand_report::wrk::Rates {
            interval: done.interval,
            counts: done.counts.clone(),
        };
        text += &webstand_report::wrk::thread_stats(result, Some(&rates));
        text += &ab::latency_spectrum(result);
    }
    let spread = crate::ranks::last();
    if let Some(spread) = &spread {
        text += &spread.table();
    }
    text += &render::section(shown.diagnosis);
    text += &shown.thresholds.tables();
    // A rank lost mid-run says so in the table (INCOMPLETE); the stop was not a signal.
    let lost_ranks = matches!(&spread, Some(s) if !s.missing.is_empty());
    if result.interrupted && !lost_ranks {
        text += &format!(
            "\n(interrupted: the figures cover what completed before {})\n",
            webstand_lab::interrupt::stop_signal().name()
        );
    }
    super::print(&text);
    if let Some(script) = done.0 {
        script.done(result)?;
    }
    Ok(())
}
