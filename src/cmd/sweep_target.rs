//! What a sweep runs against, before any load: the bounds checked, each level's stop, the target
//! and workload as a plan (the embedded server started when nothing names a target), and the
//! history session that records it.

use super::main_job::Embedded;
use super::presets::PresetDefaults;
use super::session::Session;
use super::sweep_args::Args;
use crate::Global;
use anyhow::{bail, Result};
use std::time::Duration;
use webstand_engine::Scheme;
use webstand_results::{Plan, Stop, TlsPlan};
use webstand_store::EMBEDDED_TARGET;

/// The history session of the sweep; with the embedded server as the target, the generator is
/// pinned away from it and the user told where it runs.
pub(super) fn open_session(
    global: &Global,
    url: &str,
    embedded: Option<&mut Embedded>,
    quiet: bool,
) -> Result<Session> {
    let target = if embedded.is_some() {
        EMBEDDED_TARGET
    } else {
        url
    };
    let session = super::session::open(global, "sweep", target, quiet)?;
    if let Some(e) = embedded {
        e.pin_generator();
        session.note(&format!(
            "embedded server on http://{}/ over fixtures in {} ({})",
            e.addr,
            e.dir.display(),
            e.pinning
        ));
    }
    Ok(session)
}

/// The bounds a user gave that no level could meet.
pub(super) fn check_limits(args: &Args) -> Result<()> {
    if args.requests == Some(0) {
        bail!("-n must be at least 1 request per level");
    }
    super::session::check_max_error_pct(args.max_error_pct)?;
    if args.max_p99_ms.is_some_and(|p| p.is_nan() || p <= 0.0) {
        bail!("--max-p99-ms must be more than 0");
    }
    if let Some(m) = &args.streams {
        if !args.h2.h2 && !args.h2.h3 {
            bail!(
                "-m {m}: streams per connection are an HTTP/2 and HTTP/3 option: add --h2 or --h3"
            );
        }
        if m.parse::<u32>().is_err() {
            bail!("-m {m}: expected a number of streams per connection");
        }
    }
    args.spin.rule(args.rate.is_some())?;
    // The rest of the HTTP/2 options, refused without --h2 before anything starts.
    args.h2.plan(args.streams.as_deref())?;
    Ok(())
}

/// When each level stops: -n and -d as given, else the preset's `--full` length, else 5 s.
pub(super) fn level_stop(
    args: &Args,
    duration: Option<Duration>,
    preset: Option<&PresetDefaults>,
) -> Stop {
    match (args.requests, duration, preset) {
        (None, None, Some(p)) if args.full => p.full.clone(),
        (None, None, _) => Stop {
            requests: None,
            duration: Some(Duration::from_secs(5)),
        },
        (n, d, _) => Stop {
            requests: n,
            duration: d,
        },
    }
}

/// What a sweep fetches and from where, and the embedded server when nothing names a target.
pub(super) struct Targeted {
    pub url: String,
    pub embedded: Option<Embedded>,
    pub plan: Plan,
    pub workload: webstand_workload::Workload,
}

/// The workload (the preset's unless a list option was given) and the target (the URL, else the
/// URL file's origin, else the embedded server), as a plan.
pub(super) fn target_and_workload(
    args: &Args,
    preset: Option<&PresetDefaults>,
    timeout: Duration,
) -> Result<Targeted> {
    // The workload: the preset's unless a list option was given.
    let mut wargs = args.workload.clone();
    if let Some(p) = preset.filter(|_| !args.workload.chooses_requests()) {
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
    let embedded = if args.url.is_none() && url_file_origin.is_none() {
        Some(Embedded::start(args.h2.h2)?)
    } else {
        None
    };
    let url = match (&args.url, &url_file_origin, &embedded) {
        (Some(u), _, _) => u.clone(),
        (None, Some(o), _) => format!("{o}/"),
        (None, None, Some(e)) => e.url(preset.map_or("/2k.html", |p| p.path)),
        (None, None, None) => {
            unreachable!("the embedded server starts when nothing names a target")
        }
    };
    let (target, url_path, scheme) = webstand_engine::parse_web_url(&url)?;
    let path = match preset {
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
    plan.spin = args.spin.rule(args.rate.is_some())?;
    // https:// as bench does it by default: every TLS version, SNI, the certificate not verified.
    plan.tls = (scheme == Scheme::Https).then(|| TlsPlan {
        sni: true,
        ..TlsPlan::default()
    });
    apply_h2(args, &mut plan)?;
    Ok(Targeted {
        url,
        embedded,
        plan,
        workload,
    })
}

/// `--h2` (and h2load's -m, --window-bits, -W) as bench takes them: every level an HTTP/2 run. A
/// sweep has no request method, so its `-m` is only ever the streams per connection.
fn apply_h2(args: &Args, plan: &mut Plan) -> Result<()> {
    args.h2.apply(plan, args.streams.as_deref(), false)
}
