//! Seed 004's table: ab's figures as rows (Time taken for tests, Total transferred, HTML transferred,
//! Requests per second, both Time per request rows, Transfer rate), one column per server, each
//! figure computed as ab prints it (`ab.rs`); then the lab's own rows (requests, errors, and CPU per
//! request of the server alone and with its PHP backends). Pure: figures in, text out.

use crate::compare::grid;
use webstand_results::RunResult;

/// One server's column: its run at the table's client level, or why it has none.
#[derive(Clone, Debug, Default)]
pub struct AbColumn {
    pub server: String,
    /// Concurrent clients (ab's -c), for the first "Time per request".
    pub clients: usize,
    pub result: Option<RunResult>,
    /// CPU-µs per request of the server's processes, and of the server with PHP-FPM and MariaDB.
    pub server_cpu_us: Option<f64>,
    pub with_backends_cpu_us: Option<f64>,
    pub note: Option<String>,
}

/// The rows' names, in the seed's order, with what the seed said under each.
pub const ROWS: [(&str, &str); 7] = [
    ("Time taken for tests", "lower is better"),
    ("Total transferred", "compression was enabled"),
    ("HTML transferred", "compression was enabled"),
    ("Requests per second", "higher is better"),
    ("Time per request", "lower is better"),
    ("Time per request", "across all concurrent requests"),
    ("Transfer rate", "higher is better"),
];

/// The seven figures of one run, as ab prints them.
fn cells(r: &RunResult, clients: usize) -> [String; 7] {
    // Without a complete request there is no time per request: NaN, as the table has always shown.
    let ms = |figure: Option<f64>| format!("{:.3} [ms]", figure.unwrap_or(f64::NAN));
    [
        format!("{:.3} seconds", r.elapsed.as_secs_f64()),
        format!("{} bytes", r.total_bytes),
        format!("{} bytes", r.body_bytes),
        format!("{:.2} [#/sec]", r.hits_per_sec()),
        ms(r.time_per_request_ms(clients)),
        ms(r.time_per_request_across_ms()),
        format!("{:.2} [Kbytes/sec]", r.kbytes_per_sec()),
    ]
}

/// The table, titled, with a note per column that has one.
pub fn table(title: &str, columns: &[AbColumn]) -> String {
    let mut header = vec!["Metric"];
    header.extend(columns.iter().map(|c| c.server.as_str()));
    let figures: Vec<Option<[String; 7]>> = columns
        .iter()
        .map(|c| c.result.as_ref().map(|r| cells(r, c.clients)))
        .collect();
    let dash = || "-".to_string();
    let mut rows: Vec<Vec<String>> = ROWS
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            let mut row = vec![name.to_string()];
            row.extend(
                figures
                    .iter()
                    .map(|f| f.as_ref().map_or_else(dash, |f| f[i].clone())),
            );
            row
        })
        .collect();
    let lab_row = |name: &str, f: &dyn Fn(&AbColumn) -> Option<String>| {
        let mut row = vec![name.to_string()];
        row.extend(columns.iter().map(|c| f(c).unwrap_or_else(dash)));
        row
    };
    let result = |c: &AbColumn| c.result.clone();
    rows.push(lab_row("Complete requests", &|c| {
        result(c).map(|r| r.complete.to_string())
    }));
    rows.push(lab_row("Errors", &|c| {
        result(c).map(|r| r.errors().to_string())
    }));
    rows.push(lab_row("Server CPU per request", &|c| {
        c.server_cpu_us.map(|u| format!("{u:.0} [µs]"))
    }));
    rows.push(lab_row("Server + PHP CPU per request", &|c| {
        c.with_backends_cpu_us.map(|u| format!("{u:.0} [µs]"))
    }));
    let mut out = format!("{title}\n");
    out.push_str(&grid(&header, &rows, 1));
    for c in columns {
        if let Some(n) = &c.note {
            out.push_str(&format!("  {}: {n}\n", c.server));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn figures_are_abs_and_every_row_is_there() {
        let r = RunResult {
            complete: 1000,
            total_bytes: 21_691_000,
            body_bytes: 21_464_000,
            elapsed: Duration::from_millis(45_584),
            ..Default::default()
        };
        let cols = [
            AbColumn {
                server: "apache-modphp".into(),
                clients: 100,
                result: Some(r),
                server_cpu_us: Some(1500.0),
                with_backends_cpu_us: Some(1500.0),
                note: None,
            },
            AbColumn {
                server: "caddy".into(),
                note: Some("not installed".into()),
                ..Default::default()
            },
        ];
        let t = table("Seed 004", &cols);
        // The seed's Apache column, recomputed from its own totals.
        for want in [
            "45.584 seconds",
            "21691000 bytes",
            "21464000 bytes",
            "21.94 [#/sec]",
            "4558.400 [ms]",
            "45.584 [ms]",
            "464.69 [Kbytes/sec]",
            "1500 [µs]",
            "caddy: not installed",
        ] {
            assert!(t.contains(want), "{want} missing from\n{t}");
        }
        for (name, _) in ROWS {
            assert!(t.contains(name), "{name}");
        }
    }
}
