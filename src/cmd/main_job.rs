//! `webstand` with no arguments, the main job: fixtures in a temporary directory, the embedded server
//! (`webstand serve`) on a free loopback port pinned to CPU 0 with the generator on CPU 1, Tenon's
//! sweep (1…32 clients on /2k.html) and the small-file run (thttpd's 1000 × 1 KiB files, at random,
//! checksummed), the tables, and where the results were saved. About a minute; `--full` uses the seeds'
//! lengths (one million requests per level).
//!
//! [`Embedded`] (fixtures + server, removed on drop) is also what `webstand sweep` targets when given
//! no URL.

use super::diagnose::{bound_cells, labelled, Diagnosed, Diagnosing, ServerProcess};
use super::session::SavedLine;
use crate::Global;
use anyhow::{Context, Result};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use webstand_lab::interrupt::stop_signal;
use webstand_lab::servers::Kind;
use webstand_lab::session::Session;
use webstand_lab::sweep::SweepSpec;
use webstand_lab::tls::ciphers::Versions;
use webstand_lab::up::{Up, UpOptions};
use webstand_report::tables::{self, Layout};
use webstand_results::figures::DEFAULT_MAX_ERROR_PCT as MAX_ERRORS;
use webstand_results::Judged;
use webstand_results::SweepResult;
use webstand_results::{Plan, Stop};
use webstand_store::EMBEDDED_TARGET;
use webstand_workload::fixtures::{self, Manifest};
use webstand_workload::Workload;

#[derive(clap::Args)]
pub struct Args {
    /// Main job only: the original benchmarks' lengths, one million requests per level (takes far longer)
    #[arg(long)]
    pub full: bool,
}

/// Tenon's client levels (seed 000).
const TENON_CLIENTS: [usize; 6] = [1, 2, 4, 8, 16, 32];
/// The small-file run's levels.
const SMALL_CLIENTS: [usize; 3] = [4, 16, 64];

pub fn run(args: Args, global: &Global) -> Result<i32> {
    let (length, small_length, warmup) = stops(args.full);
    let mut server = Embedded::start(false)?;
    let mut session = super::session::open(global, "sweep", EMBEDDED_TARGET, false)?;
    server.pin_generator();
    eprintln!(
        "webstand: fixtures in {}, embedded server on http://{}/ ({})",
        server.dir.display(),
        server.addr,
        server.pinning
    );

    let (target, _) = webstand_engine::parse_url(&server.url("/"))?;
    let mut plan = Plan::new(target, fixtures::TENON_FILE);
    plan.timeout = Duration::from_secs(10);
    let tenon_workload = Workload::single(fixtures::TENON_FILE);
    tenon_workload.apply(&mut plan);
    let spec = SweepSpec::uniform(&TENON_CLIENTS, length, Some(warmup.clone()));
    eprintln!(
        "webstand: Tenon's sweep: GET {} at {:?} clients",
        fixtures::TENON_FILE,
        TENON_CLIENTS
    );
    let process = Some(server.process());
    let tenon = diagnosed_sweep(&mut session, &spec, &plan, &tenon_workload.name, process);
    let (tenon, tenon_diagnosis) = session.failed_on_error(tenon)?;

    let lost = tenon.levels.iter().any(|l| l.result.ended.is_some());
    let small = if tenon.interrupted || lost {
        None
    } else {
        let w = Workload::small_files(&server.manifest, webstand_workload::DEFAULT_SEED)?
            .with_checksum(Some(&server.manifest));
        w.apply(&mut plan);
        let spec = SweepSpec::uniform(&SMALL_CLIENTS, small_length, Some(warmup));
        eprintln!(
            "webstand: small-file run: 1000 files of 1 KiB at random, checksummed, at {:?} clients",
            SMALL_CLIENTS
        );
        let small = diagnosed_sweep(&mut session, &spec, &plan, &w.name, process);
        Some(session.failed_on_error(small)?)
    };

    println!(
        "Tenon's sweep: GET {} on webstand serve (closed loop, no keep-alive)\n",
        fixtures::TENON_FILE
    );
    let tenon_levels = webstand_report::levels::sweep_levels(&tenon);
    let bound = bound_cells(&tenon_diagnosis);
    super::print(&tables::render(
        Layout::Tenon,
        &tenon_levels,
        MAX_ERRORS,
        &bound,
    ));
    println!();
    super::print(&tables::full(&tenon_levels, &bound));
    let tenon_label = format!("{} at ", tenon.workload);
    let mut diagnosed = labelled(&tenon_diagnosis, &tenon_label);
    if let Some((small, small_diagnosis)) = &small {
        println!("\nSmall files: 1000 × 1 KiB at random, checksummed (thttpd's load)\n");
        let levels = webstand_report::levels::sweep_levels(small);
        let bound = bound_cells(small_diagnosis);
        super::print(&tables::render(Layout::Full, &levels, MAX_ERRORS, &bound));
        let label = format!("{} at ", small.workload);
        diagnosed.extend(labelled(small_diagnosis, &label));
    }
    super::print(&webstand_diagnosis::render::levels_section(diagnosed));
    drop(server);
    let verdict = verdict(&tenon, small.as_ref().map(|(s, _)| s));
    Ok(session.conclude(&verdict, SavedLine::Stdout))
}

/// A sweep with each level diagnosed (the embedded server's CPU watched), and the diagnoses.
fn diagnosed_sweep(
    session: &mut Session,
    spec: &SweepSpec,
    plan: &Plan,
    workload: &str,
    server: Option<ServerProcess>,
) -> Result<(SweepResult, Vec<Diagnosed>)> {
    session.group = workload.to_string();
    let known = super::diagnose::Known {
        server,
        link_mbit: None,
    };
    let mut diagnosing = Diagnosing::new(session, known, MAX_ERRORS);
    let result = webstand_lab::sweep::run(spec, plan, workload, &mut diagnosing)?;
    Ok((result, diagnosing.levels))
}

/// How long each level runs: Tenon's levels, the small-file levels and the warm-ups (`--full`:
/// up to ten minutes a level, as the seeds ran them).
fn stops(full: bool) -> (Stop, Stop, Stop) {
    let stop = |requests, duration| Stop {
        requests,
        duration: Some(duration),
    };
    if full {
        let level = stop(Some(1_000_000), Duration::from_secs(600));
        (level.clone(), level, stop(None, Duration::from_secs(2)))
    } else {
        (
            stop(Some(1_000_000), Duration::from_secs(5)),
            stop(Some(1_000_000), Duration::from_secs(4)),
            stop(None, Duration::from_millis(500)),
        )
    }
}

/// Both sweeps' levels, judged as one run.
fn verdict(tenon: &SweepResult, small: Option<&SweepResult>) -> webstand_results::Verdict {
    let sweeps = std::iter::once(tenon).chain(small);
    let judged: Vec<Judged> = sweeps
        .clone()
        .flat_map(|s| {
            s.levels.iter().map(|l| Judged {
                label: format!("{} at {} clients", s.workload, l.clients),
                result: &l.result,
                counts_errors: true,
            })
        })
        .collect();
    let interrupted = sweeps.clone().any(|s| s.interrupted);
    webstand_results::judge(&judged, MAX_ERRORS, interrupted.then(stop_signal))
}

/// Fixtures in a temporary directory served by `webstand serve` on a free loopback port, started
/// as the lab starts its builtin row (`webstand_lab::up`: its config, pinned as the lab pins, its
/// worker user when started as root); the server is stopped and the directory removed on drop.
pub struct Embedded {
    /// The docroot, inside the scratch directory.
    pub dir: PathBuf,
    pub addr: SocketAddr,
    pub manifest: Manifest,
    /// How the server and generator were placed on CPUs, for the log line.
    pub pinning: String,
    /// The server; dropped (stopped) before the scratch directory is removed.
    up: Up,
    /// Holds the docroot; removed when dropped.
    _scratch: tempfile::TempDir,
}

impl Embedded {
    /// The server's process, for the Diagnosis (its CPU over each level).
    pub fn process(&self) -> super::diagnose::ServerProcess {
        super::diagnose::ServerProcess(self.up.server.pid())
    }

    /// Starts `webstand serve` on the fixtures; `h2c`: it also takes HTTP/2 by prior knowledge
    /// (`sweep --h2` without a URL).
    pub fn start(h2c: bool) -> Result<Embedded> {
        let scratch = webstand_lab::owner::scratch_dir("main")?;
        webstand_lab::users::share(scratch.path(), 0o750)?;
        let dir = scratch.path().join("docroot");
        let manifest =
            fixtures::write(&dir, &fixtures::Options::default()).context("writing the fixtures")?;
        let webstand = std::env::current_exe().context("cannot find the webstand executable")?;
        let up = Up::start(&UpOptions {
            kind: Kind::parse("builtin").map_err(anyhow::Error::msg)?,
            tls: false,
            tls_versions: Versions::Both,
            h2: h2c,
            h3: false,
            php: false,
            port: None,
            docroot: Some(dir.clone()),
            cpus: None,
            webstand: Some(webstand),
        })?;
        // As `webstand serve` says it on its own stderr, which the lab keeps in its log.
        eprintln!("listening on http://{}", up.server.addr);
        let pinning = match up.cpus.as_deref() {
            Some([SERVER_CPU]) => "server on CPU 0".to_string(),
            Some(cpus) => format!("server on CPUs {cpus:?}"),
            None => "not pinned: needs 2 CPUs".to_string(),
        };
        Ok(Embedded {
            dir,
            addr: up.server.addr,
            manifest,
            pinning,
            up,
            _scratch: scratch,
        })
    }

    /// Pins the load generator to CPU 1 when the server was pinned to CPU 0. Called after the history
    /// run is opened, since that records the machine's CPU count, which pinning would hide.
    pub fn pin_generator(&mut self) {
        let server_on_0 = self.up.cpus.as_deref() == Some(&[SERVER_CPU]);
        if server_on_0 && webstand_lab::servers::pin_current(&[1]) {
            self.pinning = "server on CPU 0, load generator on CPU 1".to_string();
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
}

/// The CPU the lab pins its servers to when it may.
const SERVER_CPU: usize = 0;
