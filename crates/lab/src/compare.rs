//! `webstand compare`: real servers side by side on one docroot. Each round gives every server a turn
//! (`round`: start it pinned to the server CPU with the run's limits, check its features, run every
//! workload's sweep and max-users search with the generator pinned to its own CPU, account its CPU
//! time and memory, stop it), the order rotating from round to round. A server that is missing, fails
//! to start or dies is reported in its row; none of that aborts the rest. Results are plain data;
//! `webstand_report::compare` renders them.

use anyhow::{bail, Context, Result};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use webstand_engine::{CpuTime, RunResult, Stop};
use webstand_report::compare::{FeatureRow, VerifyRow, WorkloadRow};
use webstand_workload::fixtures::{self, Manifest};
use webstand_workload::{webstone, Workload};

use crate::cgroup::CpuSource;
use crate::disclosure;
use crate::limits::Limits;
use crate::maxusers::{Bounds, MaxUsers, MaxUsersSpec};
use crate::round::{base_plan, Run};
use crate::servers::{self, Features, Kind, Server, Support};
use crate::sweep::{Observer, SweepResult};
use crate::tls::{KeyType, LabCert};
use std::sync::Arc;

/// The workloads a comparison can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkloadKind {
    /// thttpd's small-file load: 1000 × 1 KiB files at random.
    SmallFiles,
    /// thttpd's CGI load: a trivial "hello world" program.
    Cgi,
    /// One large file (1 MiB by default), thttpd's "large files".
    Large,
    /// WebStone 2.0.1's weighted file list.
    Webstone2,
    /// Tenon's single 2 KiB file.
    TwoK,
    /// HTTPS, keep-alive, the 2 KiB file: the record layer's cost.
    TlsKa,
    /// HTTPS, a new connection and a full handshake per request: the handshake rate per CPU.
    TlsNew,
    /// HTTPS, a new connection per request resuming the session of the client's previous one.
    TlsResume,
}

impl WorkloadKind {
    pub const ALL: [WorkloadKind; 8] = [
        WorkloadKind::SmallFiles,
        WorkloadKind::Cgi,
        WorkloadKind::Large,
        WorkloadKind::Webstone2,
        WorkloadKind::TwoK,
        WorkloadKind::TlsKa,
        WorkloadKind::TlsNew,
        WorkloadKind::TlsResume,
    ];
    /// What `--tls` runs when no workloads are named.
    pub const TLS_DEFAULT: [WorkloadKind; 3] = [
        WorkloadKind::TlsKa,
        WorkloadKind::TlsNew,
        WorkloadKind::TlsResume,
    ];
    pub const DEFAULT: [WorkloadKind; 4] = [
        WorkloadKind::SmallFiles,
        WorkloadKind::Cgi,
        WorkloadKind::Large,
        WorkloadKind::Webstone2,
    ];

    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::SmallFiles => "small-files",
            WorkloadKind::Cgi => "cgi",
            WorkloadKind::Large => "large",
            WorkloadKind::Webstone2 => "webstone2",
            WorkloadKind::TwoK => "2k",
            WorkloadKind::TlsKa => "tls-ka",
            WorkloadKind::TlsNew => "tls-new",
            WorkloadKind::TlsResume => "tls-resume",
        }
    }

    /// The TLS workloads, which need the servers on HTTPS (`--tls`).
    pub fn needs_tls(self) -> bool {
        matches!(
            self,
            WorkloadKind::TlsKa | WorkloadKind::TlsNew | WorkloadKind::TlsResume
        )
    }

    /// Whether every request opens a connection of its own, whatever `--no-keepalive` says: a
    /// handshake per request is what these workloads measure.
    pub fn new_connection_per_request(self) -> bool {
        matches!(self, WorkloadKind::TlsNew | WorkloadKind::TlsResume)
    }

    pub fn known_names() -> String {
        WorkloadKind::ALL
            .iter()
            .map(|w| w.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn parse_list(text: &str) -> Result<Vec<WorkloadKind>> {
        let mut out = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let w = WorkloadKind::ALL
                .into_iter()
                .find(|w| {
                    w.name() == part
                        || (part == "small" && *w == WorkloadKind::SmallFiles)
                        || (part == "2k.html" && *w == WorkloadKind::TwoK)
                })
                .with_context(|| {
                    format!(
                        "unknown workload '{part}' (known: {})",
                        WorkloadKind::known_names()
                    )
                })?;
            if !out.contains(&w) {
                out.push(w);
            }
        }
        if out.is_empty() {
            bail!(
                "no workloads given (known: {})",
                WorkloadKind::known_names()
            );
        }
        Ok(out)
    }

    /// The requests and pick over the fixtures.
    pub fn workload(self, manifest: &Manifest) -> Result<Workload> {
        let mut w = match self {
            WorkloadKind::SmallFiles => {
                Workload::small_files(manifest, webstand_workload::DEFAULT_SEED)?
            }
            WorkloadKind::Cgi => Workload::single(fixtures::CGI_HELLO),
            WorkloadKind::Large => {
                let large = manifest
                    .files
                    .iter()
                    .find(|e| e.path.starts_with("/large/"))
                    .context("the fixtures have no large file")?;
                Workload::single(&large.path)
            }
            WorkloadKind::Webstone2 => Workload::weighted(
                "webstone2",
                &webstone::preset("webstone2").expect("shipped"),
                webstand_workload::DEFAULT_SEED,
            )?,
            WorkloadKind::TwoK
            | WorkloadKind::TlsKa
            | WorkloadKind::TlsNew
            | WorkloadKind::TlsResume => Workload::single(fixtures::TENON_FILE),
        };
        w.name = self.name().to_string();
        Ok(w)
    }
}

/// What a comparison runs.
#[derive(Clone, Debug)]
pub struct Options {
    pub servers: Vec<Kind>,
    pub workloads: Vec<WorkloadKind>,
    /// Client levels of every sweep.
    pub levels: Vec<usize>,
    /// Each level's measured run.
    pub stop: Stop,
    pub warmup: Option<Stop>,
    /// Workloads that also get a max-users search, and its spec.
    pub max_users_for: Vec<WorkloadKind>,
    pub max_users: MaxUsersSpec,
    /// CPUs for the servers and for the generator (disjoint when the machine has two or more).
    pub server_cpus: Vec<usize>,
    pub generator_cpus: Vec<usize>,
    pub keep_alive: bool,
    /// Check every body against the fixtures manifest (costs generator CPU).
    pub checksum: bool,
    /// Check basic auth, chroot and throttling (a few seconds per server).
    pub features: bool,
    /// Also run wrk and ab on the same targets.
    pub verify: bool,
    /// Where the docroot is written (fixtures + the lab's files).
    pub docroot: PathBuf,
    /// Size of the large file, bytes.
    pub large_size: u64,
    /// The `webstand` binary, for the builtin server.
    pub builtin: Option<PathBuf>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Times the whole comparison is repeated, servers taking turns; the tables give medians.
    pub rounds: usize,
    /// Every server on HTTPS only, with a certificate of this key type the lab generates.
    pub tls: Option<KeyType>,
}

impl Options {
    /// Short defaults: a quick look at every server, not a publication run.
    pub fn new(docroot: &Path) -> Options {
        Options {
            servers: Kind::ALL.to_vec(),
            workloads: WorkloadKind::DEFAULT.to_vec(),
            levels: vec![1, 8, 32, 128],
            stop: Stop {
                requests: Some(200_000),
                duration: Some(Duration::from_secs(2)),
            },
            warmup: Some(Stop {
                requests: Some(20_000),
                duration: Some(Duration::from_millis(300)),
            }),
            max_users_for: vec![WorkloadKind::Large],
            max_users: MaxUsersSpec {
                start: 64,
                limit: 1024,
                stop: Stop {
                    requests: Some(200_000),
                    duration: Some(Duration::from_secs(2)),
                },
                warmup: None,
                bounds: Bounds {
                    max_error_pct: 1.0,
                    max_p99_ms: Some(1000.0),
                },
                precision: 0.25,
            },
            server_cpus: vec![0],
            generator_cpus: vec![1],
            keep_alive: true,
            checksum: false,
            features: true,
            verify: false,
            docroot: docroot.to_path_buf(),
            large_size: 1 << 20,
            builtin: None,
            timeout: Duration::from_secs(10),
            rounds: 1,
            tls: None,
        }
    }
}

impl Options {
    /// The limits every server's config gets: from the most clients any level opens, and the most on
    /// the CGI workload.
    pub fn limits(&self) -> Limits {
        let most = |wk: Option<WorkloadKind>| {
            let search = wk.map_or(!self.max_users_for.is_empty(), |w| {
                self.max_users_for.contains(&w)
            });
            let levels = self.levels.iter().copied().max().unwrap_or(1);
            levels.max(if search { self.max_users.limit } else { 0 })
        };
        let cgi = self.workloads.contains(&WorkloadKind::Cgi);
        Limits::new(
            most(None),
            if cgi {
                most(Some(WorkloadKind::Cgi))
            } else {
                1
            },
        )
    }
}

/// The caller's hooks: everything of sweep's [`Observer`] (Ctrl-C, progress, saving each level) plus
/// which server and workload the next levels belong to, and progress lines.
pub trait CompareObserver: Observer {
    /// The levels that follow belong to `server` (at `version`) on `workload`.
    fn series(&mut self, server: &str, version: &str, workload: &str);
    /// A line of progress (stderr in the CLI).
    fn note(&mut self, line: &str);
    /// Whether the user asked to stop (Ctrl-C): no further server is started.
    fn stop_requested(&self) -> bool;
    /// The server's side of the level just passed to `level_done`: its CPU time and peak resident
    /// memory (KiB) during the run.
    fn server_figures(&mut self, clients: usize, cpu: CpuTime, peak_rss_kib: Option<u64>) {
        let _ = (clients, cpu, peak_rss_kib);
    }
    /// The config files and command lines `server` was started with (once per comparison).
    fn server_configs(&mut self, server: &str, files: &[(String, String)]) {
        let _ = (server, files);
    }
}

/// One server's figures on one workload.
#[derive(Clone, Debug, Default)]
pub struct WorkloadOutcome {
    pub workload: Option<WorkloadKind>,
    /// Which round (0-based) measured it.
    pub round: usize,
    pub sweep: Option<SweepResult>,
    /// Server tree CPU used during each measured level, in the order of `sweep.levels`.
    pub server_cpu: Vec<CpuTime>,
    pub peak_rss_kib: Option<u64>,
    pub max_users: Option<MaxUsers>,
    /// Why figures are missing or partial.
    pub note: Option<String>,
    /// How the server ran the workload where that differs from the table's heading or other rows.
    pub disclosures: Vec<String>,
    /// The server died during this workload (`note` says how).
    pub died: bool,
}

/// One server's part of the comparison.
#[derive(Clone, Debug)]
pub struct ServerOutcome {
    pub kind: Kind,
    pub version: String,
    /// Set when the server was not measured at all: not installed, failed to start, interrupted.
    pub skipped: Option<String>,
    pub features: Option<Features>,
    pub workloads: Vec<WorkloadOutcome>,
    /// Size of its executable, bytes.
    pub exe_bytes: Option<u64>,
    /// Processes and threads of its tree after the first round's load.
    pub shape: Option<(usize, usize)>,
    /// Where its CPU time came from (known once it started).
    pub cpu_source: Option<CpuSource>,
    /// HTTPS, checked in the first round when the server runs on the lab's certificate.
    pub tls: Option<Support>,
}

#[derive(Clone, Debug, Default)]
pub struct Comparison {
    pub servers: Vec<ServerOutcome>,
    pub workloads: Vec<WorkloadKind>,
    pub verify: Vec<VerifyRow>,
    pub interrupted: bool,
    /// How the CPUs were assigned, for the report's header.
    pub pinning: String,
    /// What each level ran (levels, length, keep-alive, max-users bounds), for the report's header.
    pub settings: String,
    /// Where server CPU time came from, for the report's header.
    pub cpu_accounting: String,
    pub rounds: usize,
}

/// A temporary directory for a comparison's docroot, removed when dropped.
pub fn scratch_dir() -> Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("webstand-compare-")
        .tempdir()
        .context("cannot create a temporary directory")
}

/// Writes the docroot: the fixtures and the lab's own files. A docroot that cannot be written is an
/// error naming it.
pub fn prepare_docroot(dir: &Path, large_size: u64) -> Result<Manifest> {
    let opts = fixtures::Options {
        large_sizes: vec![large_size],
        ..Default::default()
    };
    let manifest = fixtures::write(dir, &opts)
        .with_context(|| format!("cannot write the docroot {}", dir.display()))?;
    servers::write_lab_files(dir)
        .with_context(|| format!("cannot write the docroot {}", dir.display()))?;
    Ok(manifest)
}

/// Runs the comparison. Every server started is stopped before this returns, on every path.
pub fn run(opts: &Options, obs: &mut dyn CompareObserver) -> Result<Comparison> {
    if opts.levels.is_empty() {
        bail!("a comparison needs at least one client level");
    }
    if let (None, Some(w)) = (opts.tls, opts.workloads.iter().find(|w| w.needs_tls())) {
        bail!("workload {} runs over HTTPS: add --tls", w.name());
    }
    let cert = opts.tls.map(LabCert::generate).transpose()?.map(Arc::new);
    let manifest = prepare_docroot(&opts.docroot, opts.large_size)?;
    let workloads: Vec<(WorkloadKind, Workload)> = opts
        .workloads
        .iter()
        .map(|&k| {
            let w = k.workload(&manifest)?;
            Ok((
                k,
                if opts.checksum {
                    w.with_checksum(Some(&manifest))
                } else {
                    w
                },
            ))
        })
        .collect::<Result<_>>()?;
    let (pinned, pinning) = pin(opts);
    obs.note(&pinning);
    let mut out = Comparison {
        workloads: opts.workloads.clone(),
        pinning,
        settings: describe(opts),
        rounds: opts.rounds.max(1),
        ..Default::default()
    };
    out.servers = opts
        .servers
        .iter()
        .map(|&kind| ServerOutcome::new(kind))
        .collect();
    for round in 0..out.rounds {
        for i in round_order(out.servers.len(), round) {
            let outcome = &mut out.servers[i];
            if obs.stop_requested() {
                out.interrupted = true;
                if round == 0 && outcome.workloads.is_empty() {
                    outcome.skipped = Some("not run: interrupted".into());
                }
                continue;
            }
            if round > 0 && outcome.skipped.is_some() {
                continue;
            }
            if out.rounds > 1 {
                let (n, name) = (out.rounds, outcome.kind.name());
                obs.note(&format!("round {} of {n}: {name}", round + 1));
            }
            let server = Run {
                round,
                opts,
                pinned,
                workloads: &workloads,
                cert: cert.as_ref(),
            };
            server.run(outcome, obs, &mut out.verify);
        }
    }
    out.cpu_accounting = disclosure::cpu_accounting(&out.servers);
    out.interrupted |= obs.stop_requested();
    Ok(out)
}

/// The order servers run in during `round`: the list rotated by one place per round, so no server
/// always runs first (on a shared machine the first minutes of a run are not like the last).
pub fn round_order(servers: usize, round: usize) -> Vec<usize> {
    (0..servers).map(|i| (i + round) % servers).collect()
}

/// Pins this process (the generator) when the CPUs asked for are allowed and disjoint; the header line.
fn pin(opts: &Options) -> (bool, String) {
    let allowed = servers::allowed_cpus();
    let wanted = || opts.server_cpus.iter().chain(&opts.generator_cpus);
    let pinned = wanted().all(|c| allowed.contains(c))
        && opts
            .server_cpus
            .iter()
            .all(|c| !opts.generator_cpus.contains(c));
    if !pinned {
        return (false, format!(
            "not pinned: this process may use CPU {} only, and the server and generator need disjoint ones",
            list(&allowed)
        ));
    }
    servers::pin_current(&opts.generator_cpus);
    let text = format!(
        "servers pinned to CPU {}, generator to CPU {}",
        list(&opts.server_cpus),
        list(&opts.generator_cpus)
    );
    (true, text)
}

fn list(v: &[usize]) -> String {
    v.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// One line on what every level ran.
fn describe(opts: &Options) -> String {
    let levels = list(&opts.levels);
    let stop = match (opts.stop.requests, opts.stop.duration) {
        (Some(n), Some(d)) => format!("{:?} or {n} requests", d),
        (None, Some(d)) => format!("{d:?}"),
        (Some(n), None) => format!("{n} requests"),
        (None, None) => "?".into(),
    };
    let warm = opts
        .warmup
        .as_ref()
        .and_then(|w| w.duration)
        .map(|d| format!(" after a {d:?} warm-up"))
        .unwrap_or_default();
    let mut text = format!(
        "clients {levels}, {stop} per level{warm}, {}",
        if opts.keep_alive {
            "keep-alive"
        } else {
            "a connection per request"
        }
    );
    if let Some(kt) = opts.tls {
        text.push_str(&format!(
            "; HTTPS only: the lab's {} certificate, TLS 1.3 and 1.2, resumption on, one cipher \
             preference (tls-new: a full handshake per request, tls-resume: a resumed one)",
            kt.name()
        ));
    }
    if !opts.max_users_for.is_empty() {
        let b = &opts.max_users.bounds;
        text.push_str(&format!(
            "; max users: {} to {} clients, error ≤ {} %{}",
            opts.max_users.start,
            opts.max_users.limit,
            b.max_error_pct,
            b.max_p99_ms
                .map(|p| format!(", p99 ≤ {p} ms"))
                .unwrap_or_default()
        ));
    }
    text
}

impl ServerOutcome {
    /// Nothing measured yet.
    pub fn new(kind: Kind) -> ServerOutcome {
        ServerOutcome {
            kind,
            version: "?".into(),
            skipped: None,
            features: None,
            workloads: Vec::new(),
            exe_bytes: None,
            shape: None,
            cpu_source: None,
            tls: None,
        }
    }

    /// The row of one round's sweep: figures at its peak level.
    fn round_row(&self, w: &WorkloadOutcome) -> WorkloadRow {
        let notes: Vec<String> = w.note.iter().chain(&w.disclosures).cloned().collect();
        let mut row = WorkloadRow {
            server: self.kind.name().into(),
            version: self.version.clone(),
            note: Some(notes.join("; ")).filter(|n| !n.is_empty()),
            ..Default::default()
        };
        if let Some(s) = &w.sweep {
            if let Some((i, peak)) = s.peak_index().map(|i| (i, &s.levels[i])) {
                let r = &peak.result;
                row.measured = true;
                row.peak_hits_per_sec = r.hits_per_sec();
                row.clients_at_peak = peak.clients;
                row.p99_ms_at_peak = r.latency_ms(0.99);
                row.errors = s.levels.iter().map(|l| l.result.errors()).sum();
                row.server_cpu_us = w.server_cpu.get(i).and_then(|c| cpu_us_per_request(*c, r));
                row.generator_cpu_us = Some(r.cpu_us_per_request()).filter(|_| r.complete > 0);
                row.peak_rss_kib = w.peak_rss_kib;
                row.requests_at_peak = r.complete;
            } else if row.note.is_none() {
                row.note = Some(format!("no clean level (errors ≤ {} %)", s.max_error_pct));
            }
            if s.interrupted && w.note.is_none() {
                let why = "interrupted: figures cover the levels that completed";
                row.note = Some(
                    [why]
                        .into_iter()
                        .chain(row.note.as_deref())
                        .collect::<Vec<_>>()
                        .join("; "),
                );
            }
        }
        row.max_users = w
            .max_users
            .as_ref()
            .and_then(|m| m.best.as_ref().map(|b| b.clients));
        row.max_users_capped = w
            .max_users
            .as_ref()
            .is_some_and(|m| m.best.is_some() && m.first_broken.is_none());
        row
    }

    /// The row of `wk`'s table: with several rounds, the round with the median peak gives the clients
    /// and p99, and every other figure is its own median (errors: the sum; memory: the largest).
    pub fn workload_row(&self, wk: WorkloadKind) -> WorkloadRow {
        let rows: Vec<WorkloadRow> = self
            .workloads
            .iter()
            .filter(|w| w.workload == Some(wk))
            .map(|w| self.round_row(w))
            .collect();
        if rows.is_empty() {
            let note = self.skipped.clone().or_else(|| Some("not run".into()));
            return WorkloadRow {
                server: self.kind.name().into(),
                version: self.version.clone(),
                note,
                ..Default::default()
            };
        }
        median_row(rows)
    }

    /// The TLS column: checked with `--tls`; "no" for a server without TLS; "-" when not asked.
    fn tls_cell(&self) -> String {
        match (&self.tls, &self.skipped) {
            (Some(s), _) => s.cell().into(),
            (None, Some(why)) if why.starts_with(crate::tls::NO_TLS) => "no".into(),
            _ => "-".into(),
        }
    }

    /// The row of thttpd's table.
    pub fn feature_row(&self) -> FeatureRow {
        let cell = |s: Option<&Support>| {
            s.map(|s| s.cell().to_string())
                .unwrap_or_else(|| "-".into())
        };
        let f = self.features.as_ref();
        let peak = |wk| {
            Some(self.workload_row(wk))
                .filter(|r| r.measured)
                .map(|r| r.peak_hits_per_sec)
        };
        let large = self.workload_row(WorkloadKind::Large);
        let mut notes: Vec<String> = Vec::new();
        if let Some(f) = f {
            for (name, s) in [
                ("basic auth", &f.basic_auth),
                ("chroot", &f.chroot),
                ("throttling", &f.throttling),
            ] {
                if let Some(n) = s.note() {
                    notes.push(format!("{name}: {n}"));
                }
            }
        }
        if let Some(n) = self.tls.as_ref().and_then(Support::note) {
            notes.push(format!("TLS: {n}"));
        }
        if let Some(s) = &self.skipped {
            notes.push(s.clone());
        }
        FeatureRow {
            name: self.kind.name().into(),
            version: self.version.clone(),
            model: match self.shape {
                Some((p, t)) => format!("{} ({p} proc, {t} thr)", self.kind.model()),
                None => self.kind.model().into(),
            },
            exe_bytes: self.exe_bytes,
            basic_auth: cell(f.map(|f| &f.basic_auth)),
            chroot: cell(f.map(|f| &f.chroot)),
            throttling: cell(f.map(|f| &f.throttling)),
            tls: self.tls_cell(),
            small_files_rps: peak(WorkloadKind::SmallFiles),
            cgi_rps: peak(WorkloadKind::Cgi),
            large_files_max_users: large.max_users,
            large_files_max_users_capped: large.max_users_capped,
            note: if notes.is_empty() {
                None
            } else {
                Some(notes.join("; "))
            },
        }
    }
}

fn median<T: Copy + PartialOrd>(mut v: Vec<T>) -> Option<T> {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len().wrapping_sub(1) / 2).copied()
}

/// One row out of several rounds' rows of the same server and workload.
fn median_row(rows: Vec<WorkloadRow>) -> WorkloadRow {
    let mut notes: Vec<String> = Vec::new();
    for n in rows.iter().filter_map(|r| r.note.clone()) {
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    let mut measured: Vec<WorkloadRow> = rows.iter().filter(|r| r.measured).cloned().collect();
    measured.sort_by(|a, b| a.peak_hits_per_sec.total_cmp(&b.peak_hits_per_sec));
    let mut out = match measured.get(measured.len().wrapping_sub(1) / 2) {
        Some(mid) => mid.clone(),
        None => rows[0].clone(),
    };
    if measured.len() > 1 {
        out.server_cpu_us = median(measured.iter().filter_map(|r| r.server_cpu_us).collect());
        out.generator_cpu_us = median(measured.iter().filter_map(|r| r.generator_cpu_us).collect());
        out.errors = measured.iter().map(|r| r.errors).sum();
        out.peak_rss_kib = measured.iter().filter_map(|r| r.peak_rss_kib).max();
    }
    out.max_users = median(rows.iter().filter_map(|r| r.max_users).collect());
    out.max_users_capped = out.max_users.is_some()
        && rows
            .iter()
            .any(|r| r.max_users == out.max_users && r.max_users_capped);
    out.note = if notes.is_empty() {
        None
    } else {
        Some(notes.join("; "))
    };
    out
}

/// Server CPU-µs per complete request of one level.
pub fn cpu_us_per_request(cpu: CpuTime, r: &RunResult) -> Option<f64> {
    (r.complete > 0).then(|| cpu.total().as_secs_f64() * 1e6 / r.complete as f64)
}

impl Comparison {
    /// Every table as text: one per workload, thttpd's, and the verification when run.
    /// Each workload's rows, in order.
    pub fn workload_rows(&self) -> Vec<(String, Vec<WorkloadRow>)> {
        self.workloads
            .iter()
            .map(|&wk| {
                (
                    wk.name().to_string(),
                    self.servers.iter().map(|s| s.workload_row(wk)).collect(),
                )
            })
            .collect()
    }

    /// Everything the tables show, as one JSON document.
    pub fn to_json(&self) -> serde_json::Value {
        let features: Vec<FeatureRow> = self.servers.iter().map(|s| s.feature_row()).collect();
        serde_json::json!({
            "pinning": self.pinning,
            "settings": self.settings,
            "cpu_accounting": self.cpu_accounting,
            "rounds": self.rounds,
            "interrupted": self.interrupted,
            "workloads": self.workload_rows().into_iter().map(|(name, rows)| serde_json::json!({ "workload": name, "rows": rows })).collect::<Vec<_>>(),
            "servers": features,
            "verify": self.verify,
        })
    }

    pub fn render(&self) -> String {
        use webstand_report::compare as rc;
        let rounds = if self.rounds > 1 {
            format!("; medians of {} rounds", self.rounds)
        } else {
            String::new()
        };
        let mut out = format!(
            "Lab comparison: {}{rounds}\n{}\n{}\n\n",
            self.pinning, self.settings, self.cpu_accounting
        );
        for (name, rows) in self.workload_rows() {
            out.push_str(&rc::workload_table(&name, &rows));
            out.push('\n');
        }
        let rows: Vec<FeatureRow> = self.servers.iter().map(|s| s.feature_row()).collect();
        out.push_str(&rc::thttpd_table(&rows));
        if !self.verify.is_empty() {
            out.push('\n');
            out.push_str(&rc::verify_table(&self.verify));
        }
        if self.interrupted {
            out.push_str("\nInterrupted: the tables hold what was measured before Ctrl-C.\n");
        }
        out
    }
}

/// `--verify`: webstand, wrk and ab on the same single-URL targets of one server, with the same number
/// of clients and about the same length, so their hits/s and byte counts can be read side by side.
pub(crate) mod verify {
    use super::*;
    use std::process::{Command, Stdio};

    const CLIENTS: usize = 16;
    const SECONDS: u64 = 2;

    pub fn run(
        server: &mut Server,
        opts: &Options,
        obs: &mut dyn CompareObserver,
    ) -> Vec<VerifyRow> {
        let name = server.kind().name().to_string();
        let mut rows = Vec::new();
        let mut targets = vec![fixtures::TENON_FILE.to_string()];
        let cgi = disclosure::cgi_unavailable(server.kind()).is_none();
        if cgi && opts.workloads.contains(&WorkloadKind::Cgi) {
            targets.push(fixtures::CGI_HELLO.to_string());
        }
        for path in targets {
            obs.note(&format!(
                "{name}: verifying {path} with webstand, wrk and ab"
            ));
            let keep_alive = opts.keep_alive && server.kind().keeps_alive();
            rows.push(webstand_row(
                server.addr,
                server.kind(),
                &path,
                opts,
                obs,
                &name,
            ));
            rows.push(wrk_row(server.addr, &path, keep_alive, &name));
            rows.push(ab_row(server.addr, &path, keep_alive, &name));
        }
        rows
    }

    fn row(server: &str, path: &str, tool: &str) -> VerifyRow {
        VerifyRow {
            server: server.into(),
            target: path.into(),
            tool: tool.into(),
            clients: CLIENTS,
            ..Default::default()
        }
    }

    fn webstand_row(
        addr: SocketAddr,
        kind: Kind,
        path: &str,
        opts: &Options,
        obs: &mut dyn CompareObserver,
        server: &str,
    ) -> VerifyRow {
        let mut r = row(server, path, "webstand");
        let mut plan = base_plan(addr, kind, &Workload::single(path), opts);
        plan.shape = webstand_engine::Shape::Closed { clients: CLIENTS };
        plan.stop = Stop {
            requests: Some(1_000_000),
            duration: Some(Duration::from_secs(SECONDS)),
        };
        match webstand_engine::run(&plan, obs.live()) {
            Ok(res) => {
                r.requests = res.complete;
                r.hits_per_sec = res.hits_per_sec();
                r.bytes = res.total_bytes;
                r.errors = res.errors();
            }
            Err(e) => r.note = Some(format!("{e:#}")),
        }
        r
    }

    /// wrk with a Lua `done` hook printing exact counts (its summary rounds bytes to MB).
    fn wrk_row(addr: SocketAddr, path: &str, keep_alive: bool, server: &str) -> VerifyRow {
        let mut r = row(server, path, "wrk");
        let script = "done = function(summary, latency, requests)\n  local e = summary.errors\n  io.write(string.format(\"WEBSTAND %d %d %d %d\\n\", summary.requests, summary.bytes, summary.duration, e.connect + e.read + e.write + e.status + e.timeout))\nend\n";
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => {
                r.note = Some(e.to_string());
                return r;
            }
        };
        let file = dir.path().join("count.lua");
        if let Err(e) = std::fs::write(&file, script) {
            r.note = Some(e.to_string());
            return r;
        }
        let mut cmd = Command::new("wrk");
        cmd.args([
            "-t1",
            &format!("-c{CLIENTS}"),
            &format!("-d{SECONDS}s"),
            "-s",
        ])
        .arg(&file)
        .arg(format!("http://{addr}{path}"));
        if !keep_alive {
            cmd.args(["-H", "Connection: close"]);
        }
        match output(cmd, SECONDS + 20) {
            Err(e) => r.note = Some(e),
            Ok(text) => match text.lines().find_map(|l| l.strip_prefix("WEBSTAND ")) {
                Some(nums) => {
                    let n: Vec<u64> = nums
                        .split_whitespace()
                        .filter_map(|x| x.parse().ok())
                        .collect();
                    if n.len() == 4 {
                        r.requests = n[0];
                        r.bytes = n[1];
                        r.hits_per_sec = n[0] as f64 / (n[2] as f64 / 1e6).max(1e-9);
                        r.errors = n[3];
                    }
                }
                None => {
                    r.note = Some(format!(
                        "no counts in wrk's output: {}",
                        text.lines().last().unwrap_or("")
                    ))
                }
            },
        }
        r
    }

    /// ab for the same time (`-t`, which also caps it at 50,000 requests).
    fn ab_row(addr: SocketAddr, path: &str, keep_alive: bool, server: &str) -> VerifyRow {
        let mut r = row(server, path, "ab");
        let mut cmd = Command::new("ab");
        cmd.args([
            "-q",
            "-c",
            &CLIENTS.to_string(),
            "-t",
            &SECONDS.to_string(),
            "-s",
            "10",
        ]);
        if keep_alive {
            cmd.arg("-k");
        }
        cmd.arg(format!("http://{addr}{path}"));
        match output(cmd, SECONDS + 30) {
            Err(e) => r.note = Some(e),
            Ok(text) => {
                let field = |name: &str| {
                    text.lines()
                        .find_map(|l| l.strip_prefix(name))
                        .map(|v| v.split_whitespace().next().unwrap_or("").to_string())
                };
                r.requests = field("Complete requests:")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                r.bytes = field("Total transferred:")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                r.hits_per_sec = field("Requests per second:")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0.0);
                r.errors = field("Failed requests:")
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
                    + field("Non-2xx responses:")
                        .and_then(|v| v.parse::<u64>().ok())
                        .unwrap_or(0);
                if r.requests == 0 {
                    r.note = Some(format!(
                        "ab: {}",
                        text.lines().last().unwrap_or("no output")
                    ));
                }
            }
        }
        r
    }

    /// Runs a tool to completion within `limit_secs`, returning stdout (stderr on failure).
    fn output(mut cmd: Command, limit_secs: u64) -> std::result::Result<String, String> {
        let prog = cmd.get_program().to_string_lossy().into_owned();
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                format!(
                    "{prog} not runnable ({e}): apt-get install {}",
                    if prog == "ab" { "apache2-utils" } else { "wrk" }
                )
            })?;
        let deadline = std::time::Instant::now() + Duration::from_secs(limit_secs);
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if std::time::Instant::now() > deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("{prog} did not finish within {limit_secs}s"));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(e.to_string()),
            }
        }
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() && text.trim().is_empty() {
            return Err(format!(
                "{prog}: {}",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .next()
                    .unwrap_or("failed")
            ));
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::Level;

    #[test]
    fn rounds_rotate_the_order_and_limits_follow_the_largest_level() {
        assert_eq!(round_order(3, 0), [0, 1, 2]);
        assert_eq!(round_order(3, 1), [1, 2, 0]);
        assert_eq!(round_order(3, 5), [2, 0, 1]);
        let mut o = Options::new(Path::new("/tmp"));
        assert_eq!(
            o.limits(),
            Limits::new(1024, 128),
            "max users on large to 1024"
        );
        o.max_users.limit = 4096;
        o.max_users_for = vec![WorkloadKind::Cgi];
        o.levels = vec![1, 300];
        assert_eq!(o.limits(), Limits::new(4096, 4096));
        o.max_users_for.clear();
        o.workloads = vec![WorkloadKind::TwoK];
        assert_eq!(o.limits(), Limits::new(300, 1));
    }

    #[test]
    fn workload_names_parse_and_unknown_ones_list_the_known() {
        assert_eq!(
            WorkloadKind::parse_list("small-files, cgi,2k,small").unwrap(),
            [
                WorkloadKind::SmallFiles,
                WorkloadKind::Cgi,
                WorkloadKind::TwoK
            ]
        );
        let e = WorkloadKind::parse_list("large,huge")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown workload 'huge'") && e.contains("webstone2"),
            "{e}"
        );
    }

    #[test]
    fn rows_come_from_the_peak_level_and_its_server_cpu() {
        let lvl = |clients, complete| Level {
            clients,
            result: RunResult {
                complete,
                elapsed: Duration::from_secs(1),
                ..Default::default()
            },
        };
        let sweep = SweepResult {
            workload: "2k".into(),
            levels: vec![lvl(1, 1000), lvl(8, 4000), lvl(32, 3000)],
            ..Default::default()
        };
        let ms = Duration::from_millis;
        let w = WorkloadOutcome {
            workload: Some(WorkloadKind::TwoK),
            sweep: Some(sweep),
            server_cpu: vec![
                CpuTime {
                    user: ms(10),
                    sys: ms(0),
                },
                CpuTime {
                    user: ms(30),
                    sys: ms(10),
                },
                CpuTime {
                    user: ms(30),
                    sys: ms(0),
                },
            ],
            peak_rss_kib: Some(4096),
            ..Default::default()
        };
        let s = ServerOutcome {
            version: "1.22.1".into(),
            workloads: vec![w],
            ..ServerOutcome::new(Kind::Nginx)
        };
        let row = s.workload_row(WorkloadKind::TwoK);
        assert!(row.measured);
        assert_eq!(row.clients_at_peak, 8);
        assert_eq!(row.peak_hits_per_sec, 4000.0);
        assert_eq!(row.server_cpu_us, Some(10.0)); // 40 ms over 4000 requests
        assert!(!s.workload_row(WorkloadKind::Cgi).measured);
        let f = s.feature_row();
        assert_eq!((f.basic_auth.as_str(), f.small_files_rps), ("-", None));
    }

    #[test]
    fn rounds_give_the_median_round_and_median_figures() {
        let r = |hits: f64, clients, cpu: f64, errors, rss| WorkloadRow {
            server: "h2o".into(),
            measured: true,
            peak_hits_per_sec: hits,
            clients_at_peak: clients,
            server_cpu_us: Some(cpu),
            generator_cpu_us: Some(1.0),
            errors,
            peak_rss_kib: Some(rss),
            max_users: Some(clients * 10),
            ..Default::default()
        };
        let m = median_row(vec![
            r(300.0, 8, 9.0, 1, 10),
            r(100.0, 1, 7.0, 0, 30),
            r(200.0, 32, 8.0, 2, 20),
        ]);
        assert_eq!((m.peak_hits_per_sec, m.clients_at_peak), (200.0, 32));
        assert_eq!(
            (m.server_cpu_us, m.errors, m.peak_rss_kib, m.max_users),
            (Some(8.0), 3, Some(30), Some(80))
        );
        let unmeasured = WorkloadRow {
            note: Some("died".into()),
            ..Default::default()
        };
        let m = median_row(vec![unmeasured, r(100.0, 1, 7.0, 0, 30)]);
        assert_eq!(
            (m.peak_hits_per_sec, m.note.as_deref()),
            (100.0, Some("died"))
        );
    }
}
