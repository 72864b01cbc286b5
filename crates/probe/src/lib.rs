//! `webstand probe`: how a web server fares against hostile and edge-case HTTP/1.x requests.
//!
//! It owns the case file format (cases are data: raw request bytes written as templates, timing
//! steps and expectations, see [`cases`] and docs/PROBE-CASES.md), running each case over real
//! sockets with a time limit and a total limit, and the verdict each case earns: safe, lenient
//! (accepted something it should refuse, no harm seen) or unsafe (a desync, a leak outside the
//! document root, a crash or a hang). Every connection goes to the one address the user named; no
//! redirect is ever followed. Responses are split with the engine's response parser.
//!
//! It must not know the command line, the history database, servers' configs or the lab: callers
//! (the CLI, later `compare --probe`) hand it a target and cases and get a [`Report`] back, case by
//! case through a callback so that an interrupted probe still keeps what it found.

pub mod cases;
mod conn;
mod exec;
pub mod reader;
pub mod result;
pub mod table;
pub mod template;
mod verdict;

pub use cases::{load, Case, BUILTIN, BUILTIN_NAME};
pub use result::{CaseResult, Ended, Report, Verdict};
pub use template::LeakTarget;

use anyhow::bail;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What to probe.
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL as given, for reports.
    pub url: String,
    /// Every address of the URL's host; the first that answers is used for the whole probe.
    pub addrs: Vec<SocketAddr>,
    /// The Host header value: host, and :port unless 80.
    pub host: String,
    /// A path the server answers normally (the URL's path).
    pub path: String,
}

/// How to probe.
#[derive(Debug, Clone)]
pub struct Options {
    /// The whole probe ends by this time; cases that no longer fit are not run.
    pub max_time: Duration,
    /// Files outside the document root that traversal cases try to reach.
    pub leaks: Vec<LeakTarget>,
    /// Quiet time after a complete answer before an open connection counts as done.
    pub settle: Duration,
    /// How long a fresh request (during a case, and after each) may take.
    pub fresh_within: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_time: Duration::from_secs(300),
            leaks: vec![passwd()],
            settle: Duration::from_millis(500),
            fresh_within: Duration::from_secs(3),
        }
    }
}

/// /etc/passwd, which every Unix-like system has, recognised by its root line ("root:x:0:0:" and
/// the BSD and shadow-less spellings); twelve levels up reach / from any common document root.
pub fn passwd() -> LeakTarget {
    LeakTarget {
        name: "passwd".into(),
        depth: 12,
        file: vec!["etc".into(), "passwd".into()],
        markers: ["root:x:0:0:", "root:*:0:0:", "root::0:0:"]
            .map(|m| m.as_bytes().to_vec())
            .to_vec(),
    }
}

/// A file of the user's outside the document root: `relative` is its path from the document root
/// ("../secret.txt"), `marker` text that only that file holds.
pub fn secret(relative: &str, marker: &str) -> anyhow::Result<LeakTarget> {
    let segments: Vec<&str> = relative
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    let depth = segments.iter().take_while(|s| **s == "..").count();
    let file: Vec<String> = segments[depth..].iter().map(|s| s.to_string()).collect();
    if depth == 0 || file.is_empty() || file.iter().any(|s| s == "..") {
        bail!("--secret-path '{relative}' must climb out of the document root first, like ../secret.txt");
    }
    if marker.len() < 6 {
        bail!("--secret-marker must be at least 6 characters, so that it cannot appear by chance");
    }
    Ok(LeakTarget {
        name: "secret".into(),
        depth,
        file,
        markers: vec![marker.as_bytes().to_vec()],
    })
}

/// A target that answered its URL: every case goes to the address that did.
pub struct Probe {
    target: Target,
    opts: Options,
    addr: SocketAddr,
    baseline_status: u16,
    baseline_bytes: u64,
}

impl Probe {
    /// Fetches the URL normally (nothing hostile yet) from the first address that answers. Fails
    /// with one line when none does, or when the normal answer already holds a leak marker.
    pub fn reach(target: &Target, opts: &Options) -> anyhow::Result<Probe> {
        let (addr, (status, bytes)) = first_answer(target, opts)?;
        Ok(Probe {
            target: target.clone(),
            opts: opts.clone(),
            addr,
            baseline_status: status,
            baseline_bytes: bytes,
        })
    }

    /// The address every case goes to.
    pub fn address(&self) -> SocketAddr {
        self.addr
    }

    /// The URL's normal answer: status and bytes.
    pub fn baseline(&self) -> (u16, u64) {
        (self.baseline_status, self.baseline_bytes)
    }

    /// Runs `cases`; `on_case` sees each result as it completes. `stop` ends the probe after the
    /// case in progress (which still ends within its limit).
    pub fn run(
        &self,
        cases: &[Case],
        stop: &AtomicBool,
        on_case: &mut dyn FnMut(&CaseResult),
    ) -> anyhow::Result<Report> {
        let start = Instant::now();
        let end = start + self.opts.max_time;
        // Each connection is a descriptor: the floods need more than a default soft limit of 1024.
        let most = cases.iter().map(|c| c.connections).max().unwrap_or(1);
        webstand_engine::raise_fd_limit(most as u64 + 64);
        let ctx = self.ctx(self.addr, stop);
        let mut report = Report {
            url: self.target.url.clone(),
            address: self.addr.to_string(),
            baseline_status: self.baseline_status,
            baseline_bytes: self.baseline_bytes,
            cases: Vec::new(),
            not_run: Vec::new(),
            ended: Ended::Complete,
            elapsed_ms: 0,
        };
        for (case, leak) in runs(cases, &self.opts.leaks) {
            let name = run_name(case, leak);
            if stop.load(Ordering::Relaxed) {
                report.ended = Ended::Interrupted;
            }
            if matches!(report.ended, Ended::Interrupted | Ended::TargetLost) {
                report
                    .not_run
                    .push(format!("{name}: {}", ended_reason(report.ended)));
                continue;
            }
            // Room for the case and the check after it?
            if Instant::now() + case.limit + self.opts.fresh_within > end {
                report.not_run.push(format!(
                    "{name}: --max-time left no room for its {}s",
                    case.limit.as_secs_f64()
                ));
                report.ended = Ended::MaxTime;
                continue;
            }
            let result = run_case(case, leak, &ctx, report.baseline_bytes)?;
            if stop.load(Ordering::Relaxed) {
                // Cut short: what it saw would be judged against a time it did not get.
                report.not_run.push(format!("{name}: interrupted"));
                continue;
            }
            if result.after.answered_ms.is_none() {
                report.ended = Ended::TargetLost;
            }
            on_case(&result);
            report.cases.push(result);
        }
        if stop.load(Ordering::Relaxed) {
            report.ended = Ended::Interrupted;
        }
        report.elapsed_ms = start.elapsed().as_millis() as u64;
        Ok(report)
    }

    fn ctx<'a>(&'a self, addr: SocketAddr, stop: &'a AtomicBool) -> exec::Ctx<'a> {
        ctx(&self.target, &self.opts, addr, stop)
    }
}

fn ctx<'a>(
    target: &'a Target,
    opts: &'a Options,
    addr: SocketAddr,
    stop: &'a AtomicBool,
) -> exec::Ctx<'a> {
    exec::Ctx {
        addr,
        host: &target.host,
        path: &target.path,
        leaks: &opts.leaks,
        settle: opts.settle,
        fresh_within: opts.fresh_within,
        stop,
    }
}

fn ended_reason(e: Ended) -> &'static str {
    match e {
        Ended::Interrupted => "interrupted",
        Ended::TargetLost => "the target stopped answering",
        _ => "not run",
    }
}

/// Each case once, a traversal case once per leak target.
fn runs<'a>(
    cases: &'a [Case],
    leaks: &'a [LeakTarget],
) -> impl Iterator<Item = (&'a Case, Option<&'a LeakTarget>)> {
    cases.iter().flat_map(move |c| {
        let per: Vec<Option<&LeakTarget>> = if c.uses_leak() {
            leaks.iter().map(Some).collect()
        } else {
            vec![None]
        };
        per.into_iter().map(move |l| (c, l))
    })
}

fn run_name(case: &Case, leak: Option<&LeakTarget>) -> String {
    match leak {
        Some(l) => format!("{}@{}", case.name, l.name),
        None => case.name.clone(),
    }
}

fn run_case(
    case: &Case,
    leak: Option<&LeakTarget>,
    ctx: &exec::Ctx,
    baseline_bytes: u64,
) -> anyhow::Result<CaseResult> {
    let ran = exec::run(case, leak, ctx, Instant::now() + case.limit)
        .map_err(|e| anyhow::anyhow!("case {} ({}): {e}", run_name(case, leak), case.origin))?;
    let after = check_after(ctx);
    let (verdict, notes) = verdict::judge(case, &ran, &after, baseline_bytes);
    Ok(CaseResult {
        name: run_name(case, leak),
        category: case.category.clone(),
        what: case.what.clone(),
        rfc: case.rfc.clone(),
        verdict,
        notes,
        first: ran.seen.first().cloned().unwrap_or_default(),
        crowd: ran.crowd,
        during: ran.during,
        after,
        elapsed_ms: ran.elapsed.as_millis() as u64,
    })
}

/// A fresh request after a case; a server that does not answer gets a second chance a moment
/// later (a restarting worker), then counts as gone.
fn check_after(ctx: &exec::Ctx) -> result::Fresh {
    let first = exec::fresh_request(ctx, Instant::now() + ctx.fresh_within);
    if first.answered_ms.is_some() || ctx.stop.load(Ordering::Relaxed) {
        return first;
    }
    std::thread::sleep(Duration::from_millis(500));
    exec::fresh_request(ctx, Instant::now() + ctx.fresh_within)
}

/// The URL's normal answer (status, bytes) from the first address that gives one.
fn first_answer(target: &Target, opts: &Options) -> anyhow::Result<(SocketAddr, (u16, u64))> {
    let never = AtomicBool::new(false);
    let mut why = String::from("no address");
    for &addr in &target.addrs {
        let ctx = ctx(target, opts, addr, &never);
        let (f, got) = exec::fetch(&ctx, Instant::now() + opts.fresh_within);
        let Some(status) = f.status else {
            why = format!("{addr}: {}", f.error.unwrap_or_default());
            continue;
        };
        for leak in &opts.leaks {
            if let Some(m) = leak
                .markers
                .iter()
                .find(|m| memchr::memmem::find(&got, m).is_some())
            {
                bail!(
                    "the normal answer of {} already holds the {} marker {:?}: the leak check would mean nothing; pick another URL or marker",
                    target.url,
                    leak.name,
                    String::from_utf8_lossy(m)
                );
            }
        }
        return Ok((addr, (status, got.len() as u64)));
    }
    bail!("cannot probe {}: {why}", target.url)
}
