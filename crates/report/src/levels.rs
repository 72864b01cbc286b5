//! What every multi-level report here (export, the tables, HTML) takes: one measured level of a
//! series ([`Level`]), borrowed from wherever the results live (a sweep in memory, the history
//! database), and one run of them to report ([`ReportRun`]).

use webstand_results::{RunResult, SweepResult};

/// One measured level: which series (`group`: "" for a bench run, the workload for a sweep,
/// "server/workload" in a comparison), at how many clients, and what it measured.
#[derive(Clone, Copy, Debug)]
pub struct Level<'a> {
    pub group: &'a str,
    pub clients: usize,
    /// Which round of a comparison measured it, from 1 (1 for a bench or a sweep).
    pub round: usize,
    pub server_version: Option<&'a str>,
    pub result: &'a RunResult,
}

/// A lab sweep's levels as the reports take them (`tables`, `csv`, …).
pub fn sweep_levels(s: &SweepResult) -> Vec<Level<'_>> {
    s.levels
        .iter()
        .map(|l| Level {
            group: &s.workload,
            clients: l.clients,
            round: 1,
            server_version: l.result.server_software.as_deref(),
            result: &l.result,
        })
        .collect()
}

/// One run to report: a title line, its details (command line, machine …) and its levels.
pub struct ReportRun<'a> {
    /// Short name that tells runs apart when two series would share a label, e.g. "#12".
    pub name: String,
    /// A heading such as "Run 12 — sweep of http://127.0.0.1:8080/ (2026-11-22 21:40 UTC)".
    pub title: String,
    /// Label/value lines shown under the heading (command line, version, machine, status).
    pub details: Vec<(String, String)>,
    pub levels: Vec<Level<'a>>,
    /// The seed-style text tables of this run, shown beneath the charts as preformatted text.
    pub tables: String,
    /// Its Diagnosis as text (a headline per level, a line per finding), shown as wrapping prose.
    pub diagnosis: String,
    /// The run's target (a bench run's workload is its URL's path).
    pub target: String,
    /// The run's error threshold, which decides its peak.
    pub max_error_pct: f64,
    /// Server CPU-µs per request of each level, in `levels`' order, where the lab measured it.
    pub server_cpu_us: Vec<Option<f64>>,
    /// The thresholds judged on its levels or rows (empty without `--threshold`).
    pub thresholds: Vec<crate::thresholds_html::JudgedLevel>,
}
