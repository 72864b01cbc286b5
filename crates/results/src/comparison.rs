//! What a comparison found: each server's part (`ServerOutcome`) with its figures per workload
//! (`WorkloadOutcome`), and the whole (`Comparison`). Plain data: `webstand_report::comparison` makes
//! them into rows and tables.

use crate::notes::Note;
use crate::outcome::StopSignal;
use crate::result::CpuTime;
use crate::robustness::Robustness;
use crate::server::{CpuSource, Features, Support};
use crate::sweep::{MaxUsers, SweepResult};
use crate::verify::VerifyRow;
use crate::workload_kind::WorkloadKind;

/// How a server's `skipped` reason begins when it has no TLS here (a server kind's reason for
/// having none): its TLS column then says "no".
pub const NO_TLS: &str = "no TLS";

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
    /// Peak resident memory (KiB) during each measured level, in the order of `sweep.levels`.
    pub rss_per_level: Vec<u64>,
    pub max_users: Option<MaxUsers>,
    /// Why figures are missing or partial.
    pub note: Option<String>,
    /// How the server ran the workload where that differs from the table's heading or other rows.
    pub disclosures: Vec<Note>,
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
    /// The server kind's name ("nginx", "builtin").
    pub name: String,
    /// Its concurrency model, as thttpd's table names them, with what the lab configured.
    pub model: String,
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
    /// HTTP/3 (`--h3`): checked in the first round, or `No` when the server cannot speak it here.
    pub h3: Option<Support>,
    /// Why the server has no HTTP/3 here ("no h3: …"): its h3 workloads are not run.
    pub no_h3: Option<String>,
    /// `--probe`'s row, measured in the first round.
    pub robustness: Option<Robustness>,
}

impl ServerOutcome {
    /// Nothing measured yet of the server kind `name`, whose concurrency model is `model`.
    pub fn new(name: &str, model: &str) -> ServerOutcome {
        ServerOutcome {
            name: name.into(),
            model: model.into(),
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
            h3: None,
            no_h3: None,
            robustness: None,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Comparison {
    pub servers: Vec<ServerOutcome>,
    pub workloads: Vec<WorkloadKind>,
    pub verify: Vec<VerifyRow>,
    /// The signal that stopped the comparison, if one did.
    pub interrupted: Option<StopSignal>,
    /// How the CPUs were assigned, for the report's header.
    pub pinning: String,
    /// What each level ran (levels, length, keep-alive, max-users bounds), for the report's header.
    pub settings: String,
    /// Where server CPU time came from, for the report's header.
    pub cpu_accounting: String,
    pub rounds: usize,
}
