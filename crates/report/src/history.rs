//! The history as text: `history`'s listing (a line per saved run, with what tells runs apart at
//! a glance — clients, keep-alive, protocol, the headline figure — and what it measured, in 120
//! columns for a usual target), the
//! headline a run is quoted by, and the config files a comparison saved, as `show --configs`
//! prints them. Pure: what the history holds in, text out.

use crate::compare::WorkloadRow;
use crate::levels::Level;

/// A saved run's line in `history`.
pub struct HistoryLine {
    pub id: i64,
    pub started_unix: f64,
    pub kind: String,
    /// Its status as shown ("unfinished" for a run cut off).
    pub status: String,
    pub facts: Facts,
    /// What it measured: the target, or a comparison's servers and workloads.
    pub target: String,
}

/// What a line says of how its run went.
pub enum Facts {
    /// A run of levels: its clients ("4", "1..32"), whether it kept connections open, what it
    /// spoke and its headline figure ([`headline`]).
    Levels {
        clients: String,
        keep_alive: bool,
        protocol: String,
        headline: Option<String>,
    },
    /// A probe: each case's verdict ("safe", "lenient", "unsafe").
    Probe { verdicts: Vec<String> },
    /// A run that cannot be read back whole (a file damaged under it): what its summary says.
    Unreadable,
}

/// `history`'s columns. No count of levels: the clients say what a sweep measured, and `show`
/// lists every level. A probe's verdicts are its status.
const COLUMNS: &[&str] = &[
    "Id",
    "When (UTC)",
    "Kind",
    "Status",
    "Clients",
    "KA",
    "Protocol",
    "Peak hits/s",
    "Target",
];

/// `history`'s listing: a header, a line per run, "(no runs)" for none, and how many older runs
/// `hidden` left out.
pub fn listing(lines: &[HistoryLine], hidden: usize) -> String {
    let year = |l: &HistoryLine| {
        jiff::Timestamp::from_second(l.started_unix as i64)
            .ok()
            .map(|t| t.strftime("%Y").to_string())
    };
    // Runs of one year leave the year out (the newest's year is the one a reader assumes); runs
    // over several years carry it.
    let one_year = lines
        .iter()
        .all(|l| year(l).is_some() && year(l) == lines.first().and_then(year));
    let when = if one_year {
        "%m-%d %H:%M"
    } else {
        "%Y-%m-%d %H:%M"
    };
    let rows: Vec<Vec<String>> = lines.iter().map(|l| row(l, when)).collect();
    let mut text = columns(COLUMNS, &rows);
    if lines.is_empty() {
        text += "(no runs)\n";
    }
    if hidden > 0 {
        text += &format!(
            "({hidden} older run{} not shown: `webstand history -n 0` lists every run)\n",
            if hidden == 1 { "" } else { "s" }
        );
    }
    text
}

/// A run's cells, in [`COLUMNS`]' order ("?" for what an unreadable run cannot say).
fn row(l: &HistoryLine, when: &str) -> Vec<String> {
    let when = jiff::Timestamp::from_second(l.started_unix as i64)
        .map_or_else(|_| "?".into(), |t| t.strftime(when).to_string());
    let mut row = vec![l.id.to_string(), when, l.kind.clone(), l.status.clone()];
    match &l.facts {
        Facts::Probe { verdicts } => {
            let count = |v: &str| verdicts.iter().filter(|c| *c == v).count();
            let found = format!("{} unsafe, {} lenient", count("unsafe"), count("lenient"));
            row[3] = match l.status.as_str() {
                "complete" => found,
                status => format!("{status}, {found}"),
            };
            row.extend(["-".into(), "-".into(), "-".into(), "-".into()]);
        }
        Facts::Levels {
            clients,
            keep_alive,
            protocol,
            headline,
        } => {
            row.push(clients.clone());
            row.push(if *keep_alive { "yes" } else { "no" }.into());
            // "HTTP/1.1 TLS": the column is narrow, and `show` says it in words.
            row.push(protocol.replace(" over TLS", " TLS"));
            row.push(headline.clone().unwrap_or_else(|| "-".into()));
        }
        Facts::Unreadable => row.extend(["?".into(), "?".into(), "?".into(), "?".into()]),
    }
    row.push(l.target.clone());
    row
}

/// A table with a header line, each column as wide as its widest cell (numbers right-aligned),
/// the last one unpadded.
fn columns(header: &[&str], rows: &[Vec<String>]) -> String {
    let width = |i: usize| {
        let cells = rows.iter().map(|r| r[i].chars().count());
        cells.chain([header[i].chars().count()]).max().unwrap_or(0)
    };
    let widths: Vec<usize> = (0..header.len()).map(width).collect();
    let line = |cells: &[&str]| {
        let mut out = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            let numeric = i == 0;
            match (i + 1 == cells.len(), numeric) {
                (true, _) => out += c,
                (false, true) => out += &format!("{c:>w$}  "),
                (false, false) => out += &format!("{c:<w$}  "),
            }
        }
        out + "\n"
    };
    let mut text = line(header);
    for r in rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        text += &line(&cells);
    }
    text
}

/// The figure a run is quoted by, in hits/s (its column's unit, so not repeated): its peak (the
/// fastest level within its error threshold), with the clients there when it had several levels
/// ("41234 @16"); a comparison's fastest server on its first workload (the median of its rounds, as compare printed it: `comparison`'s rows),
/// naming that workload when it measured several. None when no level was clean.
pub fn headline(
    levels: &[Level],
    max_error_pct: f64,
    comparison: Option<&[(String, Vec<WorkloadRow>)]>,
) -> Option<String> {
    if let Some(workloads) = comparison {
        let (workload, rows) = workloads.first()?;
        let best = rows
            .iter()
            .filter(|r| r.measured)
            .max_by(|a, b| a.peak_hits_per_sec.total_cmp(&b.peak_hits_per_sec))?;
        let hits = format!("{:.0} {}", best.peak_hits_per_sec, best.server);
        return Some(match workloads.len() {
            1 => hits,
            _ => format!("{hits} ({workload})"),
        });
    }
    let i = webstand_results::figures::peak(levels.iter().map(|l| l.result), max_error_pct)?;
    let peak = &levels[i];
    let hits = peak.result.hits_per_sec();
    Some(match levels.len() {
        1 => format!("{hits:.0}"),
        _ => format!("{hits:.0} @{}", peak.clients),
    })
}

/// Every file saved with run `id`, as (server, file name, text), each under a
/// `== server: name ==` line.
pub fn configs<'a>(
    id: i64,
    files: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
) -> String {
    let mut text = String::new();
    for (server, name, body) in files {
        text += &format!("== {server}: {name} ==\n{body}");
        if !body.ends_with('\n') {
            text.push('\n');
        }
        text.push('\n');
    }
    if text.is_empty() {
        return format!(
            "(no configs saved with run {id}: `webstand compare` saves its servers' since schema 7)\n"
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: i64, kind: &str, facts: Facts, target: &str) -> HistoryLine {
        HistoryLine {
            id,
            started_unix: 1_795_383_603.5,
            kind: kind.into(),
            status: "complete".into(),
            facts,
            target: target.into(),
        }
    }

    #[test]
    fn the_listing_lines_runs_up_under_their_columns() {
        let sweep = Facts::Levels {
            clients: "1..32".into(),
            keep_alive: true,
            protocol: "HTTP/1.1".into(),
            headline: Some("41234 @16".into()),
        };
        let probe = Facts::Probe {
            verdicts: ["safe", "unsafe", "lenient", "lenient"]
                .map(String::from)
                .into(),
        };
        let lines = [
            line(9, "sweep", sweep, "http://127.0.0.1:8080/2k.html"),
            line(10, "probe", probe, "http://127.0.0.1:8080/"),
            line(11, "bench", Facts::Unreadable, "http://127.0.0.1:8080/"),
        ];
        assert_eq!(
            listing(&lines, 1),
            "Id  When (UTC)   Kind   Status               Clients  KA   Protocol  Peak hits/s  Target\n\
             \x209  11-22 21:40  sweep  complete             1..32    yes  HTTP/1.1  41234 @16    http://127.0.0.1:8080/2k.html\n\
             10  11-22 21:40  probe  1 unsafe, 2 lenient  -        -    -         -            http://127.0.0.1:8080/\n\
             11  11-22 21:40  bench  complete             ?        ?    ?         ?            http://127.0.0.1:8080/\n\
             (1 older run not shown: `webstand history -n 0` lists every run)\n"
        );
        assert!(listing(&[], 0).ends_with("Target\n(no runs)\n"));
        // Runs over two years carry the year.
        let mut old = line(8, "bench", Facts::Unreadable, "http://127.0.0.1:8080/");
        old.started_unix -= 366.0 * 86_400.0;
        let over = listing(&[old, line(9, "bench", Facts::Unreadable, "x")], 0);
        assert!(
            over.contains("\n 8  2025-11-21 21:40  bench")
                && over.contains("\n 9  2026-11-22 21:40"),
            "{over}"
        );
    }

    #[test]
    fn configs_are_under_their_server_and_name() {
        let files = [("nginx", "nginx.conf", "a\nb"), ("builtin", "cmd", "c\n")];
        assert_eq!(
            configs(3, files),
            "== nginx: nginx.conf ==\na\nb\n\n== builtin: cmd ==\nc\n\n"
        );
        assert!(configs(3, []).starts_with("(no configs saved with run 3:"));
    }
}
