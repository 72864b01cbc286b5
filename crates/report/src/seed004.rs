//! Seed 004's table for a lab comparison (ab's figures as rows, a column per server, at the run's
//! largest client level: the seed's `-n 1000 -c 100`), and each server's sweep over clients in the
//! full layout: what `webstand sweep --preset wordpress` prints after the workload tables.

use webstand_results::{Comparison, WorkloadKind};

use crate::ab_columns::{self, AbColumn};
use crate::tables::{self, Layout};

/// The seed's table for `wk`, from each server's first round at the largest level it measured.
pub fn seed_table(c: &Comparison, wk: WorkloadKind) -> String {
    let columns: Vec<AbColumn> = c
        .servers
        .iter()
        .map(|s| {
            let mut col = AbColumn {
                server: s.name.clone(),
                note: s.skipped.clone(),
                ..Default::default()
            };
            let Some(w) = s.workloads.iter().find(|w| w.workload == Some(wk)) else {
                return col;
            };
            col.note = col.note.or_else(|| w.note.clone());
            let levels = w.sweep.as_ref().map(|s| &s.levels[..]).unwrap_or(&[]);
            if let Some((i, level)) = levels.iter().enumerate().max_by_key(|(_, l)| l.clients) {
                let r = &level.result;
                col.clients = level.clients;
                col.server_cpu_us = w
                    .server_cpu
                    .get(i)
                    .and_then(|c| r.cpu_us_per_request_of(*c));
                col.with_backends_cpu_us = w
                    .with_backends_cpu(i)
                    .and_then(|c| r.cpu_us_per_request_of(c));
                col.result = Some(r.clone());
            }
            col
        })
        .collect();
    let clients = columns.iter().map(|c| c.clients).max().unwrap_or(0);
    let gzip = if wk.headers().is_empty() {
        ""
    } else {
        ", Accept-Encoding: gzip"
    };
    ab_columns::table(
        &format!("Seed 004's table: {} at {clients} clients{gzip}", wk.name()),
        &columns,
    )
}

/// Every server's sweep of every workload, one table each.
pub fn render_sweeps(c: &Comparison) -> String {
    let mut out = String::new();
    for s in &c.servers {
        for w in &s.workloads {
            let Some(sweep) = &w.sweep else { continue };
            let levels = crate::levels::sweep_levels(sweep);
            let name = w.workload.map_or("?", |k| k.name());
            out.push_str(&format!("\nSweep: {} on {name}\n", s.name));
            out.push_str(&tables::render(
                Layout::Full,
                &levels,
                sweep.max_error_pct,
                &[],
            ));
        }
    }
    out
}
