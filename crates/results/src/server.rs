//! What the lab found out about a server beside the load's figures: which features it has, where
//! its CPU time was read, and its side of each measured level.

use crate::result::{CpuTime, RunResult};

/// Whether a feature is there, as the lab found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    /// The server has no such feature (or the lab does not configure it).
    No,
    /// Configured and checked over a socket (or in /proc).
    Verified,
    /// Configured but not checked, with why.
    Unverified(String),
    /// Configured, and the check failed: what was seen.
    Failed(String),
}

impl Support {
    /// The table cell: "yes", "no", "yes?" (configured, unchecked), "FAILED".
    pub fn cell(&self) -> &'static str {
        match self {
            Support::No => "no",
            Support::Verified => "yes",
            Support::Unverified(_) => "yes?",
            Support::Failed(_) => "FAILED",
        }
    }
    pub fn note(&self) -> Option<&str> {
        match self {
            Support::Unverified(n) | Support::Failed(n) => Some(n),
            _ => None,
        }
    }
}

/// thttpd's feature columns for one server.
#[derive(Clone, Debug)]
pub struct Features {
    pub basic_auth: Support,
    pub chroot: Support,
    pub throttling: Support,
}

/// Where a server's CPU time comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuSource {
    /// cgroup v1, the `cpuacct` controller (`cpuacct.usage`, split as `cpuacct.stat` says).
    CgroupV1,
    /// cgroup v2 (`cpu.stat`: `usage_usec`, split as `user_usec` and `system_usec` say).
    CgroupV2,
    /// utime + stime (+ reaped children's) of the live process trees in /proc: misses children whose
    /// parent never waits for them and processes that left the tree.
    ProcTree,
}

impl CpuSource {
    /// How the tables name it.
    pub fn describe(self) -> &'static str {
        match self {
            CpuSource::CgroupV1 => "a cgroup per server (v1 cpuacct): every process it started, orphans included",
            CpuSource::CgroupV2 => "a cgroup per server (v2 cpu.stat): every process it started, orphans included",
            CpuSource::ProcTree => "the live process tree in /proc (no writable cgroup): children nobody waited for are missed",
        }
    }
}

/// What the lab measured of the server during a level: its process tree's CPU time and peak memory,
/// and on a php or wordpress level its PHP backends' CPU time (PHP-FPM, MariaDB: processes of
/// their own, outside the server's tree) — None elsewhere, and in levels saved before schema 11.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ServerFigures {
    pub cpu: CpuTime,
    pub peak_rss_kib: Option<u64>,
    pub backends_cpu: Option<CpuTime>,
}

impl ServerFigures {
    /// Server CPU-µs per complete request of `result` (user + sys).
    pub fn cpu_us_per_request(&self, result: &RunResult) -> f64 {
        result.cpu_us_per_request_of(self.cpu).unwrap_or(0.0)
    }

    /// The server's and its backends' CPU-µs per complete request (the compare table's srv+php),
    /// where the backends' was measured.
    pub fn with_backends_cpu_us_per_request(&self, result: &RunResult) -> Option<f64> {
        let b = self.backends_cpu?;
        result.cpu_us_per_request_of(CpuTime {
            user: self.cpu.user + b.user,
            sys: self.cpu.sys + b.sys,
        })
    }
}
