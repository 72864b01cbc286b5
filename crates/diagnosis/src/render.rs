//! A diagnosis as the user reads it: the Diagnosis section printed after a report, and its JSON.

use crate::rules::{Diagnosis, Limit};
use crate::watch::Watched;
use serde_json::{json, Value};

/// The Diagnosis section: one line for a clean run, else the verdict and one line per finding.
pub fn section(d: &Diagnosis) -> String {
    let mut out = format!("\nDiagnosis: {}\n", headline(d));
    for f in &d.findings {
        out.push_str(&format!("  - {}: {}\n", f.evidence, f.advice));
    }
    out
}

/// The verdict line's text, without "Diagnosis: ".
pub fn headline(d: &Diagnosis) -> String {
    let server = d
        .server_busy
        .map(|b| format!(" (the server used {:.0} % of its CPUs)", b * 100.0))
        .unwrap_or_default();
    match (d.verdict, d.findings.is_empty()) {
        (Some(Limit::Server), true) => format!("no problem found; server-bound{server}"),
        (_, true) => format!("no problem found{server}"),
        (Some(v), false) => format!("{}{server}", v.verdict()),
        (None, false) => unreachable!("a finding always gives a verdict"),
    }
}

/// The short name of what bound a level, for a table column ("-" when nothing did).
pub fn bound_cell(d: &Diagnosis) -> &'static str {
    d.verdict.map_or("-", Limit::short)
}

/// The diagnosis with its evidence, for `--json`.
pub fn json(d: &Diagnosis, w: &Watched) -> Value {
    json!({
        "verdict": d.verdict.map(Limit::short),
        "summary": headline(d),
        "findings": d.findings,
        "evidence": {
            "tcp_counters_host_wide": w.tcp.0,
            "load_threads": w.threads,
            "server_busy": d.server_busy,
        },
    })
}
