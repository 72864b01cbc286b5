//! `compare --scale`'s connection-scaling table: which server holds up under a crowd. A row per
//! server, a column per connection count (keep-alive on /2k.html): its requests/s and CPU-µs per
//! request there, how much that cost grew from the fewest connections to the most, and its resident
//! memory per connection (its peak RSS at the most connections less at the fewest, over the
//! connections added). Medians over rounds. Pure: the comparison in, rows, text and JSON out.

use serde::Serialize;
use std::fmt::Write;
use webstand_results::{Comparison, ServerOutcome, WorkloadKind, WorkloadOutcome};

use crate::compare::grid;
use crate::comparison::median;

/// One server at one connection count.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ScaleCell {
    pub connections: usize,
    pub requests_per_sec: f64,
    /// The server's CPU (its cgroup's, or its process tree's) per request.
    pub server_cpu_us: Option<f64>,
    /// Failed requests and non-2xx answers, % of attempted.
    pub error_pct: f64,
}

/// One server's row: a cell per count of the run (None where it was not measured).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ScaleRow {
    pub server: String,
    pub version: String,
    pub cells: Vec<Option<ScaleCell>>,
    /// Its CPU per request at the most connections over the fewest.
    pub cpu_growth: Option<f64>,
    /// Resident memory per connection, KiB.
    pub kib_per_connection: Option<f64>,
    pub note: Option<String>,
}

/// The table: the counts, and a row per server.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ScaleTable {
    pub workload: String,
    pub counts: Vec<usize>,
    pub rows: Vec<ScaleRow>,
}

/// The table of `workload`'s levels at `counts` connections, every server of the comparison.
pub fn scale_table(c: &Comparison, workload: WorkloadKind, counts: &[usize]) -> ScaleTable {
    ScaleTable {
        workload: workload.name().to_string(),
        counts: counts.to_vec(),
        rows: c
            .servers
            .iter()
            .map(|s| server_row(s, workload, counts))
            .collect(),
    }
}

/// A server's row: each figure the median of its rounds'.
fn server_row(s: &ServerOutcome, workload: WorkloadKind, counts: &[usize]) -> ScaleRow {
    let rounds: Vec<&WorkloadOutcome> = s
        .workloads
        .iter()
        .filter(|w| w.workload == Some(workload))
        .collect();
    let cells: Vec<Option<ScaleCell>> = counts
        .iter()
        .map(|&n| median_cell(rounds.iter().filter_map(|w| cell(w, n)).collect()))
        .collect();
    let cpu = |i: usize| cells.get(i)?.as_ref()?.server_cpu_us;
    let last = counts.len().saturating_sub(1);
    let cpu_growth = match (cpu(0), cpu(last)) {
        (Some(first), Some(most)) if last > 0 && first > 0.0 => Some(most / first),
        _ => None,
    };
    let memory = rounds
        .iter()
        .filter_map(|w| kib_per_connection(w, counts))
        .collect();
    let notes: Vec<String> = s
        .skipped
        .iter()
        .chain(rounds.iter().filter_map(|w| w.note.as_ref()))
        .cloned()
        .collect();
    ScaleRow {
        server: s.name.clone(),
        version: s.version.clone(),
        cells,
        cpu_growth,
        kib_per_connection: median(memory),
        note: Some(notes.join("; ")).filter(|n| !n.is_empty()),
    }
}

/// One round's figures at `connections`, when that level was measured.
fn cell(w: &WorkloadOutcome, connections: usize) -> Option<ScaleCell> {
    let levels = &w.sweep.as_ref()?.levels;
    let i = levels.iter().position(|l| l.clients == connections)?;
    let r = &levels[i].result;
    Some(ScaleCell {
        connections,
        requests_per_sec: r.hits_per_sec(),
        server_cpu_us: w
            .server_cpu
            .get(i)
            .and_then(|c| r.cpu_us_per_request_of(*c)),
        error_pct: r.error_pct(),
    })
}

/// The median of several rounds' cells, figure by figure.
fn median_cell(cells: Vec<ScaleCell>) -> Option<ScaleCell> {
    let first = cells.first()?;
    Some(ScaleCell {
        connections: first.connections,
        requests_per_sec: median(cells.iter().map(|c| c.requests_per_sec).collect())?,
        server_cpu_us: median(cells.iter().filter_map(|c| c.server_cpu_us).collect()),
        error_pct: median(cells.iter().map(|c| c.error_pct).collect())?,
    })
}

/// One round's resident memory per connection: its peak RSS at the most connections less at the
/// fewest, over the connections added (KiB).
fn kib_per_connection(w: &WorkloadOutcome, counts: &[usize]) -> Option<f64> {
    let (&fewest, &most) = (counts.first()?, counts.last()?);
    let levels = &w.sweep.as_ref()?.levels;
    let rss = |n: usize| {
        let i = levels.iter().position(|l| l.clients == n)?;
        w.rss_per_level.get(i).copied().filter(|&k| k > 0)
    };
    let (low, high) = (rss(fewest)?, rss(most)?);
    (most > fewest).then(|| high.saturating_sub(low) as f64 / (most - fewest) as f64)
}

/// The table as text.
pub fn render_scale(t: &ScaleTable) -> String {
    let counts: Vec<String> = t.counts.iter().map(|n| format!("{n} conns")).collect();
    let (fewest, most) = (
        t.counts.first().copied().unwrap_or(0),
        t.counts.last().copied().unwrap_or(0),
    );
    let growth = format!("CPU ×{fewest}→{most}");
    let mut header = vec!["server"];
    header.extend(counts.iter().map(String::as_str));
    header.push(&growth);
    header.push("KiB/conn");
    let body: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| {
            let mut v = vec![r.server.clone()];
            v.extend(r.cells.iter().map(|c| match c {
                Some(c) => format!(
                    "{:.0} / {}{}",
                    c.requests_per_sec,
                    c.server_cpu_us.map_or("-".into(), |u| format!("{u:.2}")),
                    if c.error_pct > 0.0 { " !" } else { "" }
                ),
                None => "-".into(),
            }));
            v.push(r.cpu_growth.map_or("-".into(), |g| format!("{g:.2}")));
            v.push(
                r.kib_per_connection
                    .map_or("-".into(), |k| format!("{k:.1}")),
            );
            v
        })
        .collect();
    let mut out = format!(
        "Connection scaling ({} over keep-alive): requests/s / server CPU-µs per request at each count\n",
        t.workload
    );
    out.push_str(&grid(&header, &body, 1));
    out.push_str(&format!(
        "  CPU ×: the server's CPU per request at {most} connections over {fewest}; KiB/conn: its peak\n  resident memory at {most} connections less at {fewest}, per connection added; !: errors at that count\n"
    ));
    for r in t.rows.iter().filter(|r| r.note.is_some()) {
        let _ = writeln!(out, "  {}: {}", r.server, r.note.as_deref().unwrap_or(""));
    }
    out
}
