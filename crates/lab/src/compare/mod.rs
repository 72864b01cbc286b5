//! `webstand compare`: real servers side by side on one docroot. Each round gives every server a turn
//! (`round`: start it pinned to the server CPU with the run's limits, check its features, run every
//! workload's sweep and max-users search with the generator pinned to its own CPU, account its CPU
//! time and memory, stop it), the order rotating from round to round. A server that is missing, fails
//! to start or dies is reported in its row; none of that aborts the rest. Results are plain data:
//! `webstand_report::comparison` makes them into rows and tables.
//!
//! Here: what a comparison runs and what it found (the types); `workloads`: the workloads it can run;
//! `running`: the rounds.

mod running;
mod workloads;

use std::path::{Path, PathBuf};
use std::time::Duration;
use webstand_engine::{CpuTime, SpinRule, Stop};

use crate::cgroup::CpuSource;
use crate::limits::Limits;
use crate::maxusers::{Bounds, MaxUsers, MaxUsersSpec};
use crate::servers::{Features, Kind, Support};
use crate::sweep::{Observer, SweepResult};
use crate::tls::KeyType;
use crate::verify::VerifyRow;
pub use webstand_store::ServerFigures;

pub use running::{prepare_docroot, round_order, run, scratch_dir};
pub use workloads::WorkloadKind;

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
    /// How the generator's closed-loop threads wait (`--spin`); every level of every server alike.
    pub spin: SpinRule,
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
    /// Every server that can on HTTP/2 too: by ALPN with `tls`, by prior knowledge (h2c) without.
    pub h2: bool,
    /// PHP-FPM's binary (a name or a path) and its workers, for the php and wordpress workloads.
    pub php_fpm: String,
    pub php_children: usize,
    /// `--probe`: each server's robustness row, measured after its workloads in the first round.
    pub probe: Option<crate::robustness::ProbeSpec>,
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
            spin: SpinRule::Auto,
            checksum: false,
            features: true,
            verify: false,
            docroot: docroot.to_path_buf(),
            large_size: 1 << 20,
            builtin: None,
            timeout: Duration::from_secs(10),
            rounds: 1,
            tls: None,
            h2: false,
            php_fpm: crate::php::fpm::PROGRAM.into(),
            php_children: crate::php::DEFAULT_CHILDREN,
            probe: None,
        }
    }
}

impl Options {
    /// Refuses, in one line, a run whose workloads need a protocol the options do not put the
    /// servers on, or an `--h2` run none of whose servers speaks HTTP/2.
    pub fn check(&self) -> anyhow::Result<()> {
        use anyhow::bail;
        let first = |need: fn(&WorkloadKind) -> bool| self.workloads.iter().copied().find(need);
        if let (None, Some(w)) = (self.tls, first(|w| w.needs_tls())) {
            bail!("workload {} runs over HTTPS: add --tls", w.name());
        }
        if let (false, Some(w)) = (self.h2, first(|w| w.h2_streams().is_some())) {
            bail!("workload {} runs over HTTP/2: add --h2", w.name());
        }
        if !self.h2 {
            return Ok(());
        }
        if let (None, Some(w)) = (self.tls, first(|w| w.h2_streams().is_none())) {
            bail!(
                "workload {} speaks HTTP/1.1, but --h2 without --tls puts the servers on h2c \
                 (nginx's port then takes HTTP/2 only): add --tls, or run it without --h2",
                w.name()
            );
        }
        if self.tls.is_none() && (self.verify || self.probe.is_some()) {
            bail!("--verify and --probe speak HTTP/1.1: with --h2 add --tls (h2 by ALPN)");
        }
        if self.servers.iter().all(|&k| crate::h2::never(k).is_some()) {
            let speak: Vec<&str> = Kind::ALL
                .into_iter()
                .filter(|&k| crate::h2::never(k).is_none())
                .map(Kind::name)
                .collect();
            bail!(
                "--h2: none of the servers speaks HTTP/2 ({}); these do: {}",
                self.servers
                    .iter()
                    .filter_map(|&k| crate::h2::never(k))
                    .collect::<Vec<_>>()
                    .join("; "),
                speak.join(", ")
            );
        }
        Ok(())
    }

    /// The limits every server's config gets: from the most clients any level (or `--probe`) opens,
    /// and the most on the CGI workload.
    pub fn limits(&self) -> Limits {
        let most = |wk: Option<WorkloadKind>| {
            let search = wk.map_or(!self.max_users_for.is_empty(), |w| {
                self.max_users_for.contains(&w)
            });
            let levels = self.levels.iter().copied().max().unwrap_or(1);
            levels.max(if search { self.max_users.limit } else { 0 })
        };
        let cgi = self.workloads.contains(&WorkloadKind::Cgi);
        let probe = self.probe.as_ref().map_or(0, |p| p.most_connections());
        Limits::new(
            most(None).max(probe),
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
    /// The levels that follow belong to `server` (at `version`) on `workload`, in `round`
    /// (0-based, as [`WorkloadOutcome::round`]).
    fn series(&mut self, server: &str, version: &str, workload: &str, round: usize);
    /// A line of progress (stderr in the CLI).
    fn note(&mut self, line: &str);
    /// Whether the user asked to stop (Ctrl-C): no further server is started.
    fn stop_requested(&self) -> bool;
    /// The server's side of the level just passed to `level_done`: its CPU time and peak resident
    /// memory (KiB) during the run, and on a dynamic workload its PHP backends' CPU time.
    fn server_figures(&mut self, clients: usize, figures: &ServerFigures) {
        let _ = (clients, figures);
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
    /// PHP-FPM's and MariaDB's CPU during each measured level, on dynamic workloads.
    pub backends_cpu: Vec<CpuTime>,
    pub peak_rss_kib: Option<u64>,
    pub max_users: Option<MaxUsers>,
    /// Why figures are missing or partial.
    pub note: Option<String>,
    /// How the server ran the workload where that differs from the table's heading or other rows.
    pub disclosures: Vec<String>,
    /// What bound the peak level, as a diagnosis's Bound-by cell ("server", "generator", "both
    /// saturated"), set by whoever diagnosed the levels (the command line); None otherwise.
    pub peak_bound: Option<String>,
    /// The server died during this workload (`note` says how).
    pub died: bool,
}

impl WorkloadOutcome {
    /// The server's CPU together with its PHP backends' over measured level `i`, on a dynamic
    /// workload.
    pub fn with_backends_cpu(&self, i: usize) -> Option<CpuTime> {
        let (server, backends) = (self.server_cpu.get(i)?, self.backends_cpu.get(i)?);
        Some(CpuTime {
            user: server.user + backends.user,
            sys: server.sys + backends.sys,
        })
    }
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
    /// HTTP/2 (`--h2`): checked in the first round, or `No` when the server cannot speak it here.
    pub h2: Option<Support>,
    /// Why the server has no HTTP/2 here ("no h2: …"): its h2 workloads are not run.
    pub no_h2: Option<String>,
    /// `--probe`'s row, measured in the first round.
    pub robustness: Option<crate::robustness::Robustness>,
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
            h2: None,
            no_h2: None,
            robustness: None,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
