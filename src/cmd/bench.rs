//! `webstand bench [OPTIONS] URL`: one load run against a URL with ab's and wrk's options, reported in
//! ab's layout (or as one JSON document) and saved in the history.

use super::workload_args::WorkloadArgs;
use crate::Global;
use anyhow::{bail, Context};
use std::time::Duration;
use webstand_engine::{parse_url, HttpVersion, Plan, RunResult, Shape, Stop};
use webstand_report::ab::{self, AbInfo};

/// ab's request count when only a time limit is given (`-t`).
const AB_TIMELIMIT_REQUESTS: u64 = 50_000;

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  webstand bench -n 10000 -c 100 http://127.0.0.1:8080/2k.html\n  \
webstand bench -k -c 32 -d 10s --latency http://127.0.0.1:8080/\n  \
webstand bench -c 16 --rate 2000 -d 30s --json http://127.0.0.1:8080/ > run.json"
)]
pub struct Args {
    /// Number of requests to perform [default: 1, or 50000 with -t, unlimited with -d]
    #[arg(short = 'n', value_name = "REQUESTS")]
    requests: Option<u64>,

    /// Number of requests in flight at once (connections)
    #[arg(short = 'c', value_name = "CONCURRENCY", default_value_t = 1)]
    concurrency: usize,

    /// ab's time limit in seconds: stop after this long (implies -n 50000 unless -n is given)
    #[arg(short = 't', value_name = "SECONDS")]
    timelimit: Option<f64>,

    /// wrk's duration: run this long (e.g. 30s, 500ms, 2m); requests are unlimited unless -n is given
    #[arg(short = 'd', long = "duration", value_name = "DURATION", value_parser = parse_duration)]
    duration: Option<Duration>,

    /// Keep connections open between requests (HTTP keep-alive) [default: a new connection per request]
    #[arg(short = 'k')]
    keep_alive: bool,

    /// Extra request header 'Name: value' (repeatable); replaces a default header of the same name
    #[arg(short = 'H', value_name = "HEADER")]
    headers: Vec<String>,

    /// Request method [default: GET, or POST with -p]
    #[arg(short = 'm', value_name = "METHOD")]
    method: Option<String>,

    /// File whose contents are sent as the request body (with -T for its type)
    #[arg(short = 'p', value_name = "FILE")]
    post_file: Option<std::path::PathBuf>,

    /// Content-Type of the -p body
    #[arg(short = 'T', value_name = "TYPE", default_value = "text/plain")]
    content_type: String,

    /// Per-request timeout in seconds: a request with no progress for this long fails
    #[arg(short = 's', value_name = "SECONDS", default_value_t = 30.0)]
    timeout: f64,

    /// Accept responses whose length differs from the first one (dynamic pages)
    #[arg(short = 'l')]
    variable_length: bool,

    /// Quiet: no progress display
    #[arg(short = 'q')]
    quiet: bool,

    /// Event-loop threads (0 = one per core; never more than the connections)
    #[arg(long, value_name = "N", default_value_t = 0)]
    threads: usize,

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

    /// What to fetch besides the URL's path: URL files, WebStone lists, small files, checksums
    #[command(flatten)]
    workload: WorkloadArgs,

    /// The target, http://host[:port]/path
    #[arg(value_name = "URL")]
    url: String,
}

/// Parses "30s", "500ms", "2m", "1h" or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("bad duration '{s}': expected e.g. 30s, 500ms, 2m"))?;
    let secs = match unit {
        "" | "s" => v,
        "ms" => v / 1000.0,
        "m" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(format!("bad duration unit '{unit}': use ms, s, m or h")),
    };
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!("duration '{s}' must be positive"));
    }
    Duration::try_from_secs_f64(secs).map_err(|_| format!("duration '{s}' is too long"))
}

/// Seconds given on the command line as a Duration, with a clear error for nonsense.
fn seconds(v: f64, what: &str) -> anyhow::Result<Duration> {
    if v.is_nan() || v <= 0.0 {
        bail!("{what} must be a positive number of seconds");
    }
    Duration::try_from_secs_f64(v).map_err(|_| anyhow::anyhow!("{what} is too long"))
}

fn parse_header(h: &str) -> anyhow::Result<(String, String)> {
    let Some((name, value)) = h.split_once(':') else {
        bail!("malformed header '{h}': expected 'Name: value'");
    };
    let name = name.trim();
    let valid_name = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b));
    if !valid_name || value.contains(['\r', '\n']) {
        bail!("malformed header '{h}': expected 'Name: value'");
    }
    Ok((name.to_string(), value.trim().to_string()))
}

/// Builds the plan from the options, rejecting bad input with one clear message.
fn plan(a: &Args) -> anyhow::Result<(Plan, String)> {
    if a.concurrency == 0 {
        bail!("concurrency (-c) must be at least 1");
    }
    if a.pipeline == 0 {
        bail!("--pipeline must be at least 1");
    }
    let timeout = seconds(a.timeout, "timeout (-s)")?;
    let limit = match (a.timelimit, a.duration) {
        (Some(_), Some(_)) => bail!("use either -t (seconds) or -d (duration), not both"),
        (Some(t), None) => Some(seconds(t, "time limit (-t)")?),
        (None, d) => d,
    };
    let requests = match (a.requests, a.timelimit, a.duration) {
        (Some(0), ..) => bail!("number of requests (-n) must be at least 1"),
        (Some(n), ..) => Some(n),
        (None, Some(_), _) => Some(AB_TIMELIMIT_REQUESTS),
        (None, None, Some(_)) => None,
        (None, None, None) => Some(1),
    };
    if let Some(n) = requests {
        if a.concurrency as u64 > n {
            bail!(
                "concurrency (-c {}) cannot be greater than the number of requests (-n {n})",
                a.concurrency
            );
        }
    }
    if let Some(r) = a.rate {
        if !(r >= 0.001 && r.is_finite()) {
            bail!("--rate must be a number of requests per second of at least 0.001");
        }
    }
    let headers = a
        .headers
        .iter()
        .map(|h| parse_header(h))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let body = match &a.post_file {
        Some(p) => Some((
            std::fs::read(p).with_context(|| format!("cannot read -p file {}", p.display()))?,
            a.content_type.clone(),
        )),
        None => None,
    };
    let method = match (&a.method, &body) {
        (Some(m), _) => {
            if m.is_empty()
                || !m
                    .bytes()
                    .all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_')
            {
                bail!("bad method '{m}'");
            }
            m.to_ascii_uppercase()
        }
        (None, Some(_)) => "POST".to_string(),
        (None, None) => "GET".to_string(),
    };

    let (target, path) = parse_url(&a.url)?;
    let mut plan = Plan::new(target, &path);
    plan.shape = match a.rate {
        Some(rate) => Shape::Open {
            clients: a.concurrency,
            rate,
            jitter: a.jitter,
        },
        None => Shape::Closed {
            clients: a.concurrency,
        },
    };
    plan.stop = Stop {
        requests,
        duration: limit,
    };
    plan.threads = a.threads;
    plan.keep_alive = a.keep_alive || a.pipeline > 1;
    plan.pipeline = a.pipeline;
    plan.timeout = timeout;
    plan.http_version = if a.http10 {
        HttpVersion::Http10
    } else {
        HttpVersion::Http11
    };
    plan.method = method;
    plan.headers = headers;
    plan.body = body;
    plan.variable_length = a.variable_length;
    if a.workload.chooses_requests() || a.workload.checksum {
        a.workload.apply(&mut plan)?;
    }
    Ok((plan, path))
}

/// One connection before the run, so a dead target is reported at once rather than after a long
/// run of connect failures.
fn probe(plan: &Plan) -> anyhow::Result<()> {
    let t = &plan.target;
    let mut last = None;
    for addr in &t.addrs {
        match std::net::TcpStream::connect_timeout(addr, plan.timeout.min(Duration::from_secs(10)))
        {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    match last {
        Some(e) => bail!("could not connect to {}:{}: {e}", t.host, t.port),
        None => bail!("no address for {}", t.host),
    }
}

/// Every attempt failed to connect: there is nothing to report but why.
fn refused(r: &RunResult) -> bool {
    r.complete == 0 && r.failed.connect > 0 && r.failed.connect == r.failed.total()
}

pub fn run(args: Args, global: &Global) -> anyhow::Result<i32> {
    let (plan, path) = plan(&args)?;
    probe(&plan)?;
    let live = crate::interrupt::live();
    if !args.json {
        println!("Benchmarking {} (be patient)", plan.target.host);
    }
    let result = {
        let _progress = crate::progress::start(
            "bench",
            live.clone(),
            plan.stop.requests,
            plan.stop.duration,
            args.quiet,
        );
        webstand_engine::run(&plan, live)?
    };
    if refused(&result) && !result.interrupted {
        bail!(
            "could not connect: {} ({} attempt{})",
            result.first_error.as_deref().unwrap_or("connection failed"),
            result.failed.connect,
            if result.failed.connect == 1 { "" } else { "s" }
        );
    }

    if args.json {
        let mut v = webstand_report::json::result_json(&result);
        if let Some(o) = v.as_object_mut() {
            o.insert("url".into(), args.url.clone().into());
            o.insert("server_hostname".into(), plan.target.host.clone().into());
            o.insert("server_port".into(), plan.target.port.into());
            o.insert("document_path".into(), path.clone().into());
            o.insert("concurrency".into(), args.concurrency.into());
            o.insert("keep_alive".into(), plan.keep_alive.into());
            o.insert("threads".into(), plan.threads.into());
            o.insert("pipeline".into(), plan.pipeline.into());
            if let Shape::Open { rate, jitter, .. } = plan.shape {
                o.insert("rate".into(), rate.into());
                o.insert("jitter".into(), jitter.into());
            }
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let info = AbInfo {
            host: plan.target.host.clone(),
            port: plan.target.port,
            path: path.clone(),
            concurrency: args.concurrency,
            variable_length: args.variable_length,
            keep_alive: plan.keep_alive,
            body_sent: plan.body.is_some(),
        };
        print!("{}", ab::report(&result, &info));
        if args.latency {
            print!("{}", ab::latency_spectrum(&result));
        }
        if result.interrupted {
            println!("\n(interrupted: the figures cover what completed before Ctrl-C)");
        }
    }
    save(global, &args, &result);
    Ok(if result.interrupted { 130 } else { 0 })
}

/// Saves the run in the history; a failure here only warns, the report is already out.
fn save(global: &Global, args: &Args, result: &RunResult) {
    let outcome = (|| -> anyhow::Result<()> {
        let store = webstand_store::Store::open(global.db.as_deref())?;
        let meta = webstand_store::RunMeta {
            kind: "bench".into(),
            command_line: std::env::args().collect::<Vec<_>>().join(" "),
            target: args.url.clone(),
        };
        let run = store.begin_run(&meta)?;
        store.add_level(
            run,
            "",
            args.concurrency,
            result.server_software.as_deref(),
            result,
        )?;
        store.finish_run(
            run,
            if result.interrupted {
                "interrupted"
            } else {
                "complete"
            },
        )?;
        Ok(())
    })();
    if let Err(e) = outcome {
        eprintln!("webstand: warning: the run was not saved in the history: {e:#}");
    }
}
