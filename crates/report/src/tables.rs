//! The sweep tables: the full per-level table, Tenon's (Clients, Hits/Sec, Kbytes/Sec) and WebStone's
//! (Clients, Conn/second, Errors/second, Latency, Little's Law, Throughput), the peak summary and the
//! sweep as JSON. Pure functions from levels to text; every figure comes from
//! `webstand_engine::figures`.

use crate::export::{levels_json, Level};
use std::fmt::Write;
use webstand_engine::RunResult;

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

/// The levels in the chosen layout, followed by the peak line.
pub fn render(layout: Layout, levels: &[Level]) -> String {
    let table = match layout {
        Layout::Full => full(levels),
        Layout::Tenon => tenon(levels),
        Layout::WebStone => webstone(levels),
    };
    table + &failures(levels) + &summary(levels)
}

/// One line per level that failed requests or got non-2xx answers: the classes (a checksum mismatch
/// counts as Length) and the first error seen. Empty when every level was clean.
pub fn failures(levels: &[Level]) -> String {
    let mut out = String::new();
    for l in levels {
        let (r, f) = (l.result, &l.result.failed);
        if f.total() == 0 && r.non_2xx == 0 {
            continue;
        }
        let _ = write!(
            out,
            "{} clients: {} failed (connect {}, receive {}, length/checksum {}, exceptions {}), {} non-2xx",
            l.clients,
            f.total(),
            f.connect,
            f.receive,
            f.length,
            f.exceptions,
            r.non_2xx
        );
        match &r.first_error {
            Some(e) => {
                let _ = writeln!(out, "; first error: {e}");
            }
            None => out.push('\n'),
        }
    }
    out
}

fn ms(r: &RunResult, q: f64) -> f64 {
    if r.histograms.total.is_empty() {
        0.0
    } else {
        r.latency_ms(q)
    }
}

/// Every figure of every level, one row each ("Requests" counts complete ones, "Failed" the rest),
/// and a total row (requests, failures, bytes and time summed over the levels).
pub fn full(levels: &[Level]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>7} {:>9} {:>7} {:>9} {:>9} {:>8} {:>8} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7} {:>4}",
        "Clients",
        "Requests",
        "Failed",
        "Hits/s",
        "KB/s",
        "Mbit/s",
        "Errors/s",
        "Err%",
        "Mean ms",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "p99.9 ms",
        "Max ms",
        "Little",
        "KA%"
    );
    for l in levels {
        let r = l.result;
        let _ = writeln!(
            out,
            "{:>7} {:>9} {:>7} {:>9.1} {:>9.1} {:>8.2} {:>8.2} {:>6.2} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>7.2} {:>4.0}{}",
            l.clients,
            r.complete,
            r.failed.total(),
            r.hits_per_sec(),
            r.kbytes_per_sec(),
            r.mbits_per_sec(),
            r.errors_per_sec(),
            r.error_pct(),
            r.mean_latency_secs() * 1000.0,
            ms(r, 0.5),
            ms(r, 0.9),
            ms(r, 0.99),
            ms(r, 0.999),
            r.histograms.total.max() as f64 / 1000.0,
            r.littles_load(),
            r.keep_alive_share() * 100.0,
            if r.interrupted { "  (interrupted)" } else { "" }
        );
    }
    let t = totals(levels);
    let _ = writeln!(
        out,
        "{:>7} {:>9} {:>7}   ({} bytes in {:.2} s)",
        "Total", t.complete, t.failed, t.total_bytes, t.elapsed_s
    );
    out
}

/// Tenon's layout (seed 000).
pub fn tenon(levels: &[Level]) -> String {
    let mut out = format!(
        "  {:<10} {:>12} {:>13}\n",
        "Clients", "Hits/Sec.", "Kbytes/Sec."
    );
    for l in levels {
        let _ = writeln!(
            out,
            "  {:<10} {:>12.0} {:>13.0}",
            l.clients,
            l.result.hits_per_sec(),
            l.result.kbytes_per_sec()
        );
    }
    out
}

/// WebStone's layout (seed 002). "Conn/second" is completed fetches per second, as WebStone counts a
/// connection per fetch; "Latency" is the mean in seconds; "Little's Law" is Σ latency ÷ elapsed.
pub fn webstone(levels: &[Level]) -> String {
    let mut out = format!(
        "{:<8} {:>12} {:>14} {:>9} {:>13} {:>24}\n",
        "Clients",
        "Conn/second",
        "Errors/second",
        "Latency",
        "Little's Law",
        "Throughput (Mbits/sec)"
    );
    for l in levels {
        let r = l.result;
        let _ = writeln!(
            out,
            "{:<8} {:>12.2} {:>14.4} {:>9.4} {:>13.2} {:>24.2}",
            l.clients,
            r.hits_per_sec(),
            r.errors_per_sec(),
            r.mean_latency_secs(),
            r.littles_load(),
            r.mbits_per_sec()
        );
    }
    out
}

/// Sums over the levels.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    pub complete: u64,
    pub failed: u64,
    pub total_bytes: u64,
    pub elapsed_s: f64,
}

pub fn totals(levels: &[Level]) -> Totals {
    levels.iter().fold(Totals::default(), |t, l| Totals {
        complete: t.complete + l.result.complete,
        failed: t.failed + l.result.failed.total(),
        total_bytes: t.total_bytes + l.result.total_bytes,
        elapsed_s: t.elapsed_s + l.result.elapsed.as_secs_f64(),
    })
}

/// The level with the most hits/s.
pub fn peak<'a>(levels: &[Level<'a>]) -> Option<Level<'a>> {
    levels
        .iter()
        .copied()
        .max_by(|a, b| a.result.hits_per_sec().total_cmp(&b.result.hits_per_sec()))
}

/// "Peak: 1239 hits/s at 8 clients (2502 KB/s)".
pub fn summary(levels: &[Level]) -> String {
    match peak(levels) {
        Some(p) => format!(
            "Peak: {:.0} hits/s at {} clients ({:.0} KB/s)\n",
            p.result.hits_per_sec(),
            p.clients,
            p.result.kbytes_per_sec()
        ),
        None => "Peak: no level completed\n".to_string(),
    }
}

/// The sweep as one JSON document: workload, every level's counts and figures, totals, peak.
pub fn sweep_json(workload: &str, levels: &[Level], interrupted: bool) -> serde_json::Value {
    let t = totals(levels);
    let peak = peak(levels).map(
        |p| serde_json::json!({ "clients": p.clients, "hits_per_sec": p.result.hits_per_sec() }),
    );
    serde_json::json!({
        "workload": workload,
        "levels": levels_json(levels),
        "totals": { "complete": t.complete, "failed": t.failed, "total_bytes": t.total_bytes, "elapsed_s": t.elapsed_s },
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
            server_version: None,
            result: r,
        }
    }

    #[test]
    fn tenon_and_webstone_layouts_carry_the_figures() {
        let a = result(790, 1, 1000);
        let b = result(2400, 2, 2000);
        let levels = [lv(1, &a), lv(2, &b)];
        let t = tenon(&levels);
        let rows: Vec<Vec<&str>> = t.lines().map(|l| l.split_whitespace().collect()).collect();
        assert_eq!(rows[0], ["Clients", "Hits/Sec.", "Kbytes/Sec."]);
        assert_eq!(rows[1], ["1", "790", "1580"]);
        assert_eq!(rows[2], ["2", "1200", "2400"]);
        let w = webstone(&levels);
        let row: Vec<&str> = w.lines().nth(2).unwrap().split_whitespace().collect();
        // 1200 conn/s, no errors, 2 ms mean, Little 2400·0.002 = 2.4, 2048·1200·8/1e6 Mbit/s.
        assert_eq!(row, ["2", "1200.00", "0.0000", "0.0020", "2.40", "19.66"]);
        assert!(summary(&levels).starts_with("Peak: 1200 hits/s at 2 clients"));
    }

    #[test]
    fn full_table_totals_add_up() {
        let mut a = result(100, 1, 500);
        a.failed.receive = 3;
        let b = result(300, 2, 700);
        let levels = [lv(4, &a), lv(8, &b)];
        let text = full(&levels);
        let total: Vec<&str> = text.lines().last().unwrap().split_whitespace().collect();
        assert_eq!(&total[..3], ["Total", "400", "3"]);
        assert_eq!(
            totals(&levels),
            Totals {
                complete: 400,
                failed: 3,
                total_bytes: 400 * 2048,
                elapsed_s: 3.0
            }
        );
        let j = sweep_json("w", &levels, false);
        assert_eq!(j["totals"]["complete"], 400);
        assert_eq!(j["peak"]["clients"], 8);
        assert_eq!(j["levels"].as_array().unwrap().len(), 2);
        assert_eq!("webstone".parse::<Layout>().unwrap(), Layout::WebStone);
        assert!("x".parse::<Layout>().is_err());
        assert_eq!(failures(&[lv(8, &b)]), "");
        assert_eq!(
            failures(&levels),
            "4 clients: 3 failed (connect 0, receive 3, length/checksum 0, exceptions 0), 0 non-2xx\n"
        );
    }
}
