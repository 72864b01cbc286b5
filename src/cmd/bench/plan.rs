//! What `bench`'s arguments ask, as a plan: ab's and wrk's options read and checked (one clear
//! line for each mistake), the target, the request, the load's shape and stop, the wrk script to
//! run; everything `run` needs before it measures.

use super::Args;
use anyhow::{bail, Context};
use std::path::PathBuf;
use std::time::Duration;
use webstand_results::{HttpVersion, Plan, Shape, Stop};

/// A run's plan and what its report and history name: ab's document path, the target URL, and
/// the wrk script to load into it.
pub struct Planned {
    pub plan: Plan,
    /// The document path ab's report names (the URL's, or the request list's name).
    pub path: String,
    /// The target URL the history keeps.
    pub url: String,
    pub script: Option<PathBuf>,
}

/// ab's request count when only a time limit is given (`-t`).
const AB_TIMELIMIT_REQUESTS: u64 = 50_000;

/// ab's default per-request timeout, in seconds.
const DEFAULT_TIMEOUT: f64 = 30.0;

/// `-s` as ab's timeout: a number of seconds.
fn timeout_secs(a: &Args) -> Option<f64> {
    a.timeout_or_script.as_deref()?.parse().ok()
}

/// The wrk script to run: `--script FILE`, or `-s` with something other than a number.
fn script_file(a: &Args) -> anyhow::Result<Option<PathBuf>> {
    let by_s = a
        .timeout_or_script
        .as_deref()
        .filter(|_| timeout_secs(a).is_none())
        .map(PathBuf::from);
    match (by_s, &a.script) {
        (Some(_), Some(_)) => bail!("-s FILE and --script FILE each name the script: give one"),
        (s, None) => Ok(s),
        (None, Some(s)) => Ok(Some(s.clone())),
    }
}

/// `-d`, parsed here rather than by clap so that a bad value gets one line (`webstand: error: …`).
/// `-d` alone is ab's (no percentiles table), not a duration.
fn duration_flag(a: &Args) -> anyhow::Result<Option<Duration>> {
    let parse = |d: &str| webstand_duration::positive(d).map_err(|e| anyhow::anyhow!("-d: {e}"));
    a.duration
        .as_deref()
        .filter(|d| !d.is_empty())
        .map(parse)
        .transpose()
}

/// ab's `-d URL` reaches clap as wrk's `-d` with the URL for its value: given back to the URL.
pub fn ab_d_before_url(a: &mut Args) {
    if a.url.is_none() && a.duration.as_deref().is_some_and(|d| d.contains("://")) {
        a.url = a.duration.replace(String::new());
    }
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

/// The URL given, else the origin of the URL file's full URLs.
fn target_url(a: &Args) -> anyhow::Result<String> {
    match (&a.url, &a.workload.url_file) {
        (Some(u), _) => Ok(u.clone()),
        (None, Some(f)) => match webstand_workload::urlfile::load(f)?.origin {
            Some(origin) => Ok(format!("{origin}/")),
            None => bail!(
                "no target: {} lists only paths; give the server's URL too (webstand bench [OPTIONS] URL)",
                f.display()
            ),
        },
        (None, None) => bail!("no target: give a URL (http://host[:port]/path) or a --url-file of full URLs"),
    }
}

/// The request's headers, body (with its type) and method, from -H, -A, -P, -C, -p/-u/-T, -i
/// and -m.
#[allow(clippy::type_complexity)]
fn request_parts(
    a: &Args,
) -> anyhow::Result<(Vec<(String, String)>, Option<(Vec<u8>, String)>, String)> {
    let (_, method) = a.h2.plan(a.method.as_deref())?;
    let mut headers = a.ab.headers();
    for h in &a.headers {
        headers.push(parse_header(h)?);
    }
    let choosers = [a.post_file.is_some(), a.ab.put_file.is_some(), a.ab.head];
    if choosers.iter().filter(|&&c| c).count() > 1 {
        bail!("-p (POST), -u (PUT) and -i (HEAD) each choose the method: give one of them");
    }
    let body = match (&a.post_file, &a.ab.put_file) {
        (Some(p), _) | (None, Some(p)) => Some((
            std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?,
            a.content_type.clone(),
        )),
        (None, None) => None,
    };
    let method = match (method, &body) {
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
        (None, _) if a.ab.method().is_some() => a.ab.method().unwrap_or_default().to_string(),
        (None, Some(_)) => "POST".to_string(),
        (None, None) => "GET".to_string(),
    };
    Ok((headers, body, method))
}

/// The load's shape: a closed loop of -c clients, or with --rate an open loop over them.
fn shape(a: &Args) -> anyhow::Result<Shape> {
    Ok(match a.rate {
        Some(rate) if !(rate >= 0.001 && rate.is_finite()) => {
            bail!("--rate must be a number of requests per second of at least 0.001")
        }
        Some(rate) => Shape::Open {
            clients: a.concurrency,
            rate,
            jitter: a.jitter,
        },
        None => Shape::Closed {
            clients: a.concurrency,
        },
    })
}

/// Builds the plan from the options, rejecting bad input with one clear message. Returns it with
/// the document path for ab's report, the target URL for the history and the script to load.
pub fn plan(a: &Args) -> anyhow::Result<Planned> {
    if a.json && a.ab.html {
        bail!("-w (ab's HTML table) and --json each choose the output: give one");
    }
    if a.concurrency == 0 {
        bail!("concurrency (-c) must be at least 1");
    }
    if a.pipeline == 0 {
        bail!("--pipeline must be at least 1");
    }
    let timeout = seconds(timeout_secs(a).unwrap_or(DEFAULT_TIMEOUT), "timeout (-s)")?;
    crate::cmd::session::check_max_error_pct(a.max_error_pct)?;
    let duration = duration_flag(a)?;
    let limit = match (a.timelimit, duration) {
        (Some(t), Some(_)) => bail!(
            "-t is ab's time limit in seconds, not wrk's thread count: for {t} threads use --threads {t} (and -d for the duration)"
        ),
        (Some(t), None) => Some(seconds(t, "time limit (-t)")?),
        (None, d) => d,
    };
    let requests = match (a.requests, a.timelimit, duration) {
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
    let (shape, spin) = (shape(a)?, a.spin.rule(a.rate.is_some())?);
    let (headers, body, method) = request_parts(a)?;
    let url = target_url(a)?;
    let (target, mut path, scheme) = a.ab.target(&url)?;
    let mut plan = Plan::new(target, &path);
    plan.tls = a.tls.plan(scheme)?;
    plan.shape = shape;
    plan.stop = Stop {
        requests,
        duration: limit,
    };
    plan.threads = a.threads;
    plan.spin = spin;
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
        let name = a.workload.apply(&mut plan)?;
        if a.workload.chooses_requests() {
            path = name;
        }
    }
    a.ab.apply(&mut plan)?;
    a.h2.apply(&mut plan, a.method.as_deref(), a.ab.proxy().is_some())?;
    crate::cmd::diagnose::check_connections(a.concurrency, &plan)?;
    let script = script_file(a)?;
    if !a.script_args.is_empty() && script.is_none() {
        bail!("arguments after -- are a script's: give the script with -s FILE");
    }
    Ok(Planned {
        plan,
        path,
        url,
        script,
    })
}
