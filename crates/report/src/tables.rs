//! The sweep tables: the full per-level table, Tenon's (Clients, Hits/Sec, Kbytes/Sec) and WebStone's
//! (Clients, Conn/second, Errors/second, Latency, Little's Law, Throughput), the peak summary and the
//! sweep as JSON. Pure functions from levels to text; every figure, the errors and the peak come from
//! `webstand_results::figures`, and every layout flags a level that is mostly errors.

use crate::export::{latency_ms, levels_json};
use crate::levels::Level;
use std::fmt::Write;
use webstand_results::{figures, RunResult};

/// Which layout `webstand sweep --table` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Full,
    Tenon,
    WebStone,
}

impl std::str::FromStr for Layout {
    type Err = String;
    fn from_str(s: &str) -> Result<Layout, String> {
        match s {
            "full" => Ok(Layout::Full),
            "tenon" => Ok(Layout::Tenon),
            "webstone" => Ok(Layout::WebStone),
            _ => Err(format!(
                "unknown table {s:?}: expected full, tenon or webstone"
            )),
        }
    }
}

/// The levels in the chosen layout, then the levels' errors and the peak line. `max_error_pct` is
/// the command's threshold: a level above it is never the peak. `bound` names what bound each level
/// (the Diagnosis' short verdicts, in `levels`' order) for the "Bound by" column; empty, no column.
pub fn render(layout: Layout, levels: &[Level], max_error_pct: f64, bound: &[&str]) -> String {
    let table = match layout {
        Layout::Full => full(levels, bound),
        Layout::Tenon => tenon(levels, bound),
        Layout::WebStone => webstone(levels, bound),
    };
    table + &failures(levels) + &summary(levels, max_error_pct)
}

/// A table of [`render`]'s with a leading "Level" column: each row's level numbered as its run
/// numbers it (`numbers`, in the levels' order: what `webstand export --level N` takes). Each table
/// of a layout (the full one has two) opens with a header line whose first word is "Clients" and
/// then has a row per level; the full layout's Total row is padded to line up, the titles and notes
/// are left as they are.
pub fn numbered(table: &str, numbers: &[usize]) -> String {
    let w = numbers
        .iter()
        .map(|n| n.to_string().len())
        .max()
        .unwrap_or(0)
        .max("Level".len());
    let mut out = String::new();
    // The rows of the table whose header was seen last, counted from 1; None outside a table.
    let mut row: Option<usize> = None;
    for line in table.lines() {
        let lead = if line.split_whitespace().next() == Some("Clients") {
            row = Some(0);
            format!("{:>w$}  ", "Level")
        } else if let Some(n) = row.filter(|&n| n < numbers.len()) {
            row = Some(n + 1);
            format!("{:>w$}  ", numbers[n])
        } else if line.trim_start().starts_with("Total ") {
            " ".repeat(w + 2)
        } else {
            row = None;
            String::new()
        };
        let _ = writeln!(out, "{lead}{line}");
    }
    out
}

/// The "Bound by" cell of level `i` (its header for None), or nothing when no level was diagnosed.
fn bound_by(bound: &[&str], i: Option<usize>) -> String {
    if bound.is_empty() {
        return String::new();
    }
    let cell = match i {
        None => "Bound by",
        Some(i) => bound.get(i).copied().unwrap_or("?"),
    };
    format!("  {cell:<13}")
}

/// What follows level `i`'s figures: its "Bound by" cell and its flags, with nothing trailing (the
/// cell is padded only to line up flags after it).
fn row_end(bound: &[&str], i: usize, r: &RunResult) -> String {
    let end = bound_by(bound, Some(i)) + &row_flags(r);
    end.trim_end().to_string()
}

/// The line under a table with a "Bound by" column, saying where its words come from.
fn bound_by_note(bound: &[&str]) -> &'static str {
    if bound.is_empty() {
        ""
    } else {
        "Bound by: what the Diagnosis found limiting each level (- when nothing did)\n"
    }
}

/// What a level's row adds after its figures: "mostly errors" when more than half of its requests
/// failed or were answered non-2xx (`webstand_results::figures::MOSTLY_ERRORS_PCT`), and how the run
/// ended when it was cut short. Every layout uses it, so no layout shows a broken level as a good one.
pub fn row_flags(r: &RunResult) -> String {
    let mut out = String::new();
    if r.mostly_errors() {
        let _ = write!(out, "  << MOSTLY ERRORS: {:.1} %", r.error_pct());
    }
    if let Some(e) = r.ended {
        let _ = write!(out, "  ({})", e.name());
    }
    if r.interrupted {
        out.push_str("  (interrupted)");
    }
    out
}

/// One line per level that failed requests or got non-2xx answers: the classes (a checksum mismatch
/// counts as Length) and the first error seen. Empty when every level was clean.
pub fn failures(levels: &[Level]) -> String {
    let mut out = String::new();
    for l in levels {
        let (r, f) = (l.result, &l.result.failed);
        if r.errors() == 0 {
            continue;
        }
        let _ = write!(
            out,
            "{} clients: {} errors = {} failed (connect {}, receive {}, length/checksum {}, exceptions {}) + {} non-2xx",
            l.clients,
            r.errors(),
            f.total(),
            f.connect,
            f.receive,
            f.length,
            f.exceptions,
            r.non_2xx
        );
        match &r.first_error {
            Some(e) => {
                let _ = writeln!(out, "; first failure: {e}");
            }
            None => out.push('\n'),
        }
    }
    out
}

/// Every figure of every level as two tables, throughput then latency, as wrk and h2load print them
/// apart (one table of both would be over 140 columns wide). The first: a row per level
/// ("Requests" counts complete ones, "Failed" the ones that never completed, "Non-2xx" the complete
/// ones answered with another status), what bound it and its flags, and a total row; the second:
/// its latencies and Little's Law load.
pub fn full(levels: &[Level], bound: &[&str]) -> String {
    let mut out = String::from("Throughput\n");
    let _ = writeln!(
        out,
        "{:>7} {:>9} {:>7} {:>7} {:>6} {:>9} {:>9} {:>7} {:>4}{}",
        "Clients",
        "Requests",
        "Failed",
        "Non-2xx",
        "Err%",
        "Hits/s",
        "KB/s",
        "Mbit/s",
        "KA%",
        bound_by(bound, None).trim_end()
    );
    for (i, l) in levels.iter().enumerate() {
        let r = l.result;
        // No complete request: no keep-alive share of them ("-", not 0).
        let ka = match r.complete {
            0 => "-".to_string(),
            _ => format!("{:.0}", r.keep_alive_share() * 100.0),
        };
        let _ = writeln!(
            out,
            "{:>7} {:>9} {:>7} {:>7} {:>6.2} {:>9.1} {:>9.1} {:>7.2} {ka:>4}{}",
            l.clients,
            r.complete,
            r.failed.total(),
            r.non_2xx,
            r.error_pct(),
            r.hits_per_sec(),
            r.kbytes_per_sec(),
            r.mbits_per_sec(),
            row_end(bound, i, r)
        );
    }
    let t = totals(levels);
    let _ = writeln!(
        out,
        "{:>7} {:>9} {:>7} {:>7}   ({} bytes in {:.2} s)",
        "Total", t.complete, t.failed, t.non_2xx, t.total_bytes, t.elapsed_s
    );
    out.push_str(
        "Err%: failed requests and non-2xx answers, % of attempted; KA%: keep-alive share of requests\n",
    );
    out.push_str(bound_by_note(bound));
    out.push_str("\nLatency (ms)\n");
    let _ = writeln!(
        out,
        "{:>7} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7}",
        "Clients", "Mean", "p50", "p90", "p99", "p99.9", "Max", "Little"
    );
    for l in levels {
        let r = l.result;
        if r.histograms.total.is_empty() {
            // No response, no latency: dashes rather than zeros.
            let _ = writeln!(
                out,
                "{:>7} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7}",
                l.clients, "-", "-", "-", "-", "-", "-", "-"
            );
            continue;
        }
        let _ = writeln!(
            out,
            "{:>7} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>7.2}",
            l.clients,
            r.mean_latency_ms(),
            latency_ms(r, 0.5),
            latency_ms(r, 0.9),
            latency_ms(r, 0.99),
            latency_ms(r, 0.999),
            r.histograms.total.max() as f64 / 1000.0,
            r.littles_load(),
        );
    }
    out.push_str(
        "Little: Little's Law load, hits/s × mean latency (the requests in flight on average)\n",
    );
    out
}

/// Tenon's layout (seed 000), with a level's flags after its row.
pub fn tenon(levels: &[Level], bound: &[&str]) -> String {
    let mut out = format!(
        "  {:<10} {:>12} {:>13}{}\n",
        "Clients",
        "Hits/Sec.",
        "Kbytes/Sec.",
        bound_by(bound, None).trim_end()
    );
    for (i, l) in levels.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {:<10} {:>12.0} {:>13.0}{}",
            l.clients,
            l.result.hits_per_sec(),
            l.result.kbytes_per_sec(),
            row_end(bound, i, l.result)
        );
    }
    out.push_str(bound_by_note(bound));
    out
}

/// WebStone's layout (seed 002). WebStone fetched one page per connection, so its "Conn/second" was
/// also hits/s; here the column is the connections actually made per second, and with keep-alive
/// (several requests per connection) a "Hits/second" column comes first, since the two differ.
/// "Errors/second" counts failed requests and non-2xx answers; "Latency" is the mean, in ms.
pub fn webstone(levels: &[Level], bound: &[&str]) -> String {
    let keep_alive = levels.iter().any(|l| l.result.keep_alive_requests > 0);
    let hits = |s: &str| {
        if keep_alive {
            s.to_string()
        } else {
            String::new()
        }
    };
    let mut out = format!(
        "{:<8} {}{:>12} {:>14} {:>13} {:>13} {:>24}{}\n",
        "Clients",
        hits(&format!("{:>12} ", "Hits/second")),
        "Conn/second",
        "Errors/second",
        "Latency (ms)",
        "Little's Law",
        "Throughput (Mbits/sec)",
        bound_by(bound, None).trim_end()
    );
    for (i, l) in levels.iter().enumerate() {
        let r = l.result;
        let _ = writeln!(
            out,
            "{:<8} {}{:>12.2} {:>14.4} {:>13.3} {:>13.2} {:>24.2}{}",
            l.clients,
            hits(&format!("{:>12.2} ", r.hits_per_sec())),
            r.conns_per_sec(),
            r.errors_per_sec(),
            r.mean_latency_ms(),
            r.littles_load(),
            r.mbits_per_sec(),
            row_end(bound, i, r)
        );
    }
    if keep_alive {
        out.push_str(
            "Keep-alive: each connection carried several requests, so Conn/second < Hits/second\n",
        );
    }
    out.push_str("Errors/second: failed requests + non-2xx answers; Latency: mean response time\n");
    out.push_str(bound_by_note(bound));
    out
}

/// Sums over the levels.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    pub complete: u64,
    pub failed: u64,
    pub non_2xx: u64,
    pub total_bytes: u64,
    pub elapsed_s: f64,
}

pub fn totals(levels: &[Level]) -> Totals {
    levels.iter().fold(Totals::default(), |t, l| Totals {
        complete: t.complete + l.result.complete,
        failed: t.failed + l.result.failed.total(),
        non_2xx: t.non_2xx + l.result.non_2xx,
        total_bytes: t.total_bytes + l.result.total_bytes,
        elapsed_s: t.elapsed_s + l.result.elapsed.as_secs_f64(),
    })
}

/// The peak level: the most hits/s among the levels with errors within `max_error_pct`
/// (`webstand_results::figures::peak`).
pub fn peak<'a>(levels: &[Level<'a>], max_error_pct: f64) -> Option<Level<'a>> {
    figures::peak(levels.iter().map(|l| l.result), max_error_pct).map(|i| levels[i])
}

/// "Peak: 1239 hits/s at 8 clients (2502 KB/s), the fastest level with errors ≤ 1 %", or why
/// there is none.
pub fn summary(levels: &[Level], max_error_pct: f64) -> String {
    match peak(levels, max_error_pct) {
        Some(p) => format!(
            "Peak: {:.0} hits/s at {} clients ({:.0} KB/s), the fastest level with errors ≤ {max_error_pct} % (failed or non-2xx)\n",
            p.result.hits_per_sec(),
            p.clients,
            p.result.kbytes_per_sec()
        ),
        None if levels.is_empty() => "Peak: none (no level completed)\n".to_string(),
        None => format!(
            "Peak: none: no level had a successful request with errors ≤ {max_error_pct} % (failed or non-2xx)\n"
        ),
    }
}

/// An open-loop level's pacing in words: the rate asked for, the rate achieved and the late sends.
pub fn open_loop_line(clients: usize, rate: f64, r: &RunResult) -> String {
    format!(
        "Open loop, {clients} connections: target {rate:.0} requests/s, achieved {:.1}/s (complete responses); {} of {} sends left more than {} ms late",
        r.hits_per_sec(),
        r.late_sends,
        r.attempted(),
        webstand_results::LATE_SEND.as_millis()
    )
}

/// The sweep as one JSON document: workload, every level's counts and figures, totals, the peak
/// (the fastest clean level) and the threshold that decided it.
pub fn sweep_json(
    workload: &str,
    levels: &[Level],
    interrupted: bool,
    max_error_pct: f64,
) -> serde_json::Value {
    let t = totals(levels);
    let peak = peak(levels, max_error_pct).map(
        |p| serde_json::json!({ "clients": p.clients, "hits_per_sec": p.result.hits_per_sec() }),
    );
    serde_json::json!({
        "workload": workload,
        "levels": levels_json(levels),
        "totals": { "complete": t.complete, "failed": t.failed, "non_2xx": t.non_2xx, "total_bytes": t.total_bytes, "elapsed_s": t.elapsed_s },
        "max_error_pct": max_error_pct,
        "peak": peak,
        "interrupted": interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn result(complete: u64, secs: u64, latency_us: u64) -> RunResult {
        let mut r = RunResult {
            complete,
            elapsed: Duration::from_secs(secs),
            total_bytes: complete * 2048,
            ..Default::default()
        };
        for _ in 0..complete {
            r.histograms.total.record(latency_us).unwrap();
        }
        r.latency_sum_us = complete as u128 * latency_us as u128;
        r
    }

    fn lv<'a>(clients: usize, r: &'a RunResult) -> Level<'a> {
        Level {
            group: "/2k.html",
            clients,
            round: 1,
            server_version: None,
            result: r,
        }
    }

    #[test]
    fn tenon_and_webstone_layouts_carry_the_figures() {
        let mut a = result(790, 1, 1000);
        let mut b = result(2400, 2, 2000);
        (a.connections, b.connections) = (790, 2400);
        let levels = [lv(1, &a), lv(2, &b)];
        let t = tenon(&levels, &[]);
        let rows: Vec<Vec<&str>> = t.lines().map(|l| l.split_whitespace().collect()).collect();
        assert_eq!(rows[0], ["Clients", "Hits/Sec.", "Kbytes/Sec."]);
        assert_eq!(rows[1], ["1", "790", "1580"]);
        assert_eq!(rows[2], ["2", "1200", "2400"]);
        let w = webstone(&levels, &[]);
        assert!(
            w.starts_with("Clients  ") && w.contains("Conn/second") && !w.contains("Hits/second")
        );
        let row: Vec<&str> = w.lines().nth(2).unwrap().split_whitespace().collect();
        // 1200 conn/s, no errors, 2 ms mean, Little 2400·0.002 = 2.4, 2048·1200·8/1e6 Mbit/s.
        assert_eq!(row, ["2", "1200.00", "0.0000", "2.000", "2.40", "19.66"]);
        assert!(summary(&levels, 1.0).starts_with("Peak: 1200 hits/s at 2 clients"));
    }

    #[test]
    fn webstone_under_keep_alive_says_hits_and_connections_apart() {
        let mut r = result(8000, 1, 500);
        (r.connections, r.keep_alive_requests) = (8, 8000);
        let w = webstone(&[lv(8, &r)], &[]);
        let header: Vec<&str> = w
            .lines()
            .next()
            .unwrap()
            .split("  ")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        assert_eq!(
            &header[..4],
            ["Clients", "Hits/second", "Conn/second", "Errors/second"]
        );
        let row: Vec<&str> = w.lines().nth(1).unwrap().split_whitespace().collect();
        assert_eq!(&row[..4], ["8", "8000.00", "8.00", "0.0000"]);
        assert!(w.contains("Keep-alive"), "{w}");
    }

    #[test]
    fn errors_count_non_2xx_and_a_mostly_failing_level_is_flagged_in_every_layout() {
        let good = result(500, 1, 1000);
        let mut all_404 = result(9000, 1, 100);
        all_404.non_2xx = 9000;
        let levels = [lv(1, &good), lv(2, &all_404)];
        for text in [
            full(&levels, &[]),
            tenon(&levels, &[]),
            webstone(&levels, &[]),
        ] {
            let row = text
                .lines()
                .find(|l| l.trim_start().starts_with("2 "))
                .unwrap();
            assert!(row.contains("MOSTLY ERRORS: 100.0 %"), "{text}");
            let first = text
                .lines()
                .find(|l| l.trim_start().starts_with("1 "))
                .unwrap();
            assert!(!first.contains("MOSTLY"), "{text}");
        }
        let text = full(&levels, &[]);
        let f: Vec<&str> = text.lines().nth(3).unwrap().split_whitespace().collect();
        // Non-2xx 9000; Err% 100.
        assert_eq!((f[3], f[4]), ("9000", "100.00"));
        // The 404 level is the fastest but not the peak.
        assert!(summary(&levels, 1.0).starts_with("Peak: 500 hits/s at 1 clients"));
        assert!(summary(&levels[1..], 1.0).starts_with("Peak: none: no level"));
        assert!(failures(&levels).starts_with("2 clients: 9000 errors = 0 failed"));
        let j = sweep_json("w", &levels, false, 1.0);
        assert_eq!(j["peak"]["clients"], 1);
        assert_eq!(j["totals"]["non_2xx"], 9000);
    }

    #[test]
    fn every_layout_names_what_bound_each_level() {
        let (a, b) = (result(100, 1, 500), result(300, 1, 700));
        let levels = [lv(1, &a), lv(2, &b)];
        for layout in [Layout::Full, Layout::Tenon, Layout::WebStone] {
            let text = render(layout, &levels, 1.0, &["-", "generator"]);
            let lines: Vec<&str> = text.lines().collect();
            let header = lines.iter().find(|l| l.contains("Clients")).unwrap();
            assert!(header.ends_with("Bound by"), "{text}");
            assert!(
                lines.iter().all(|l| !l.ends_with(' ')),
                "no line ends in spaces: {text:?}"
            );
            let row = |c: &str| {
                *lines
                    .iter()
                    .find(|l| l.trim_start().starts_with(c))
                    .unwrap()
            };
            assert_eq!(row("1 ").split_whitespace().last(), Some("-"), "{text}");
            assert_eq!(
                row("2 ").split_whitespace().last(),
                Some("generator"),
                "{text}"
            );
            assert!(
                text.contains("Bound by: what the Diagnosis found"),
                "{text}"
            );
        }
    }

    #[test]
    fn full_table_totals_add_up() {
        let mut a = result(100, 1, 500);
        a.failed.receive = 3;
        let b = result(300, 2, 700);
        let levels = [lv(4, &a), lv(8, &b)];
        let text = full(&levels, &[]);
        let total: Vec<&str> = text.lines().nth(4).unwrap().split_whitespace().collect();
        assert_eq!(&total[..4], ["Total", "400", "3", "0"]);
        assert_eq!(
            totals(&levels),
            Totals {
                complete: 400,
                failed: 3,
                non_2xx: 0,
                total_bytes: 400 * 2048,
                elapsed_s: 3.0
            }
        );
        let j = sweep_json("w", &levels, false, 1.0);
        assert_eq!(j["totals"]["complete"], 400);
        assert_eq!(j["peak"]["clients"], 8);
        assert_eq!(j["levels"].as_array().unwrap().len(), 2);
        assert_eq!("webstone".parse::<Layout>().unwrap(), Layout::WebStone);
        assert!("x".parse::<Layout>().is_err());
        assert_eq!(failures(&[lv(8, &b)]), "");
        assert!(
            !text.contains("Bound by"),
            "no column without a diagnosis: {text}"
        );
        assert_eq!(
            failures(&levels),
            "4 clients: 3 errors = 3 failed (connect 0, receive 3, length/checksum 0, exceptions 0) + 0 non-2xx\n"
        );
    }

    #[test]
    fn a_level_without_a_response_has_dashes_for_its_latencies_not_zeros() {
        let mut refused = RunResult {
            elapsed: Duration::from_secs(1),
            ..Default::default()
        };
        refused.failed.connect = 5;
        let text = full(&[lv(2, &refused)], &[]);
        let row = |after: &str| -> Vec<String> {
            let mut lines = text.lines().skip_while(|l| *l != after).skip(2);
            lines
                .next()
                .unwrap()
                .split_whitespace()
                .map(String::from)
                .collect()
        };
        assert_eq!(
            row("Latency (ms)"),
            ["2", "-", "-", "-", "-", "-", "-", "-"],
            "{text}"
        );
        let throughput = row("Throughput");
        assert_eq!(
            (throughput[5].as_str(), throughput[8].as_str()),
            ("0.0", "-"),
            "hits/s and KA%: {text}"
        );
    }

    #[test]
    fn numbered_tables_lead_each_level_row_with_its_number() {
        let (a, b) = (result(100, 1, 1000), result(200, 1, 2000));
        let levels = [
            Level {
                group: "",
                clients: 1,
                round: 1,
                server_version: None,
                result: &a,
            },
            Level {
                group: "",
                clients: 16,
                round: 1,
                server_version: None,
                result: &b,
            },
        ];
        for layout in [Layout::Full, Layout::Tenon, Layout::WebStone] {
            let text = numbered(&render(layout, &levels, 1.0, &[]), &[7, 12]);
            let lines: Vec<&str> = text.lines().collect();
            let headers: Vec<usize> = (0..lines.len())
                .filter(|&i| lines[i].starts_with("Level  "))
                .collect();
            // The full layout's two tables (throughput, latency) are numbered alike.
            let tables = if layout == Layout::Full { 2 } else { 1 };
            assert_eq!(headers.len(), tables, "{text}");
            for h in headers {
                let first: Vec<&str> = lines[h + 1].split_whitespace().take(2).collect();
                let second: Vec<&str> = lines[h + 2].split_whitespace().take(2).collect();
                assert_eq!(
                    (first, second),
                    (vec!["7", "1"], vec!["12", "16"]),
                    "{text}"
                );
                assert!(!lines[h + 3].starts_with(" 1"), "{text}");
            }
            assert!(text.contains("\nPeak: 200 hits/s at 16 clients"), "{text}");
        }
        let full = numbered(&render(Layout::Full, &levels, 1.0, &[]), &[7, 12]);
        let total = full.lines().find(|l| l.contains("Total")).unwrap();
        assert!(total.starts_with("         Total"), "lined up: {full}");
    }
}
