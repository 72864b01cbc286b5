//! What a diagnosis is made of: the limits a run can meet, in the order their verdicts win, a
//! finding (its evidence and advice), the inputs every rule reads, and the diagnosis they make.
//! The rules (rules.rs and pool.rs) both build on these, so they live apart from either.

use crate::watch::Watched;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use webstand_results::RunResult;

/// What bound a run (or a level), most decisive first: the order in which verdicts win.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    NoHttp2,
    NoHttp3,
    TargetLost,
    ErrorBurst,
    Errors,
    ListenQueue,
    SynRetries,
    BothSaturated,
    Pool,
    Generator,
    Network,
    Saturated,
    LatencyFloor,
    Server,
}

impl Limit {
    /// The verdict as a sentence fragment ("Diagnosis: limited by the listen queue").
    pub fn verdict(self) -> &'static str {
        match self {
            Limit::NoHttp2 => "the server does not speak HTTP/2",
            Limit::NoHttp3 => "the server does not speak HTTP/3",
            Limit::TargetLost => "the target was lost",
            Limit::ErrorBurst => "limited by a burst of errors",
            Limit::Errors => "limited by errors",
            Limit::ListenQueue => "limited by the listen queue",
            Limit::SynRetries => "limited by dropped connection attempts",
            Limit::BothSaturated => "both saturated: inconclusive for this pair",
            Limit::Pool => "limited by the connection pool: the server could not keep up",
            Limit::Generator => "generator-bound",
            Limit::Network => "limited by the network",
            Limit::Saturated => "saturated: more clients only wait longer",
            Limit::LatencyFloor => "limited by a latency floor",
            Limit::Server => "server-bound",
        }
    }
    /// A table cell ("bound by" column of a sweep).
    pub fn short(self) -> &'static str {
        match self {
            Limit::NoHttp2 => "no HTTP/2",
            Limit::NoHttp3 => "no HTTP/3",
            Limit::TargetLost => "target lost",
            Limit::ErrorBurst => "error burst",
            Limit::Errors => "errors",
            Limit::ListenQueue => "listen queue",
            Limit::SynRetries => "SYN retries",
            Limit::BothSaturated => "both saturated",
            Limit::Pool => "connection pool",
            Limit::Generator => "generator",
            Limit::Network => "network",
            Limit::Saturated => "saturated",
            Limit::LatencyFloor => "latency floor",
            Limit::Server => "server",
        }
    }
    /// The limit whose [`Limit::short`] is `s`.
    pub fn from_short(s: &str) -> Option<Limit> {
        Limit::ALL.into_iter().find(|l| l.short() == s)
    }
    pub const ALL: [Limit; 14] = [
        Limit::NoHttp2,
        Limit::NoHttp3,
        Limit::TargetLost,
        Limit::ErrorBurst,
        Limit::Errors,
        Limit::ListenQueue,
        Limit::SynRetries,
        Limit::BothSaturated,
        Limit::Pool,
        Limit::Generator,
        Limit::Network,
        Limit::Saturated,
        Limit::LatencyFloor,
        Limit::Server,
    ];
    /// Whether a level with this verdict measured something other than the server's own limit:
    /// the generator's, or both sides' at once (a comparison says so beside the figure).
    pub fn not_the_servers(self) -> bool {
        matches!(self, Limit::Generator | Limit::BothSaturated)
    }
}

/// One finding: what limited the run, the numbers that show it, what to do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub limit: Limit,
    pub evidence: String,
    pub advice: String,
}

/// The server's CPU over the run, when its process is known.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerUse {
    /// User + system CPU time of its process tree during the run.
    pub cpu: Duration,
    /// The CPUs it may run on ("CPU 0", "CPUs 0-1").
    pub cpus: Vec<usize>,
}

/// The level measured just before this one in the same series (a sweep's), for the saturation rule.
#[derive(Clone, Copy)]
pub struct Previous<'a> {
    pub clients: usize,
    pub result: &'a RunResult,
}

/// Everything the rules read.
pub struct Inputs<'a> {
    pub result: &'a RunResult,
    /// The run's concurrency.
    pub clients: usize,
    pub previous: Option<Previous<'a>>,
    pub max_error_pct: f64,
    pub watched: &'a Watched,
    pub server: Option<ServerUse>,
}

/// A run's diagnosis: the verdict (None when nothing is known to bind it), and the findings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diagnosis {
    pub verdict: Option<Limit>,
    pub findings: Vec<Finding>,
    /// The server's busy share of its CPUs (0..=1), when known.
    pub server_busy: Option<f64>,
    /// The busiest load thread's work (its CPU less its spin) as a share of the run (0..=1), when
    /// the result carries its load threads.
    pub generator_busy: Option<f64>,
}
