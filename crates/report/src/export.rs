//! Exports of measured levels for other tools: CSV (one row per level, every figure), HdrHistogram's
//! percentile-distribution text ("hgrm", read by HdrHistogram's plotting pages and scripts) and the
//! per-level JSON that `webstand export --format json` wraps with the run's metadata.

use crate::levels::Level;
use hdrhistogram::Histogram;
use std::fmt::Write;
use webstand_results::RunResult;

/// Latency at quantile `q` in milliseconds, 0 when nothing completed (an empty histogram has no
/// quantiles).
pub fn latency_ms(r: &RunResult, q: f64) -> f64 {
    if r.histograms.total.is_empty() {
        0.0
    } else {
        r.latency_ms(q)
    }
}

/// The columns of [`csv`], in order. `series` names the level's series as the HTML report's legends
/// and summary do ("nginx · 2k": the server and the workload, `crate::series::level_series`);
/// `group` is how the history keys it ("nginx/2k", a sweep's workload, empty for a bench run) and
/// `server_version` the Server header the level saw. `round` is the comparison's round that measured the level (1
/// for a bench or a sweep: a compare over 3 rounds has 3 rows per server, workload and clients);
/// `protocol` what the level spoke. Latencies are in milliseconds, empty for a level without a
/// response (as its generator CPU per request). CPU-µs per request: the load
/// generator's, and the server's where the lab measured it (empty otherwise), and on a php or
/// wordpress level the server's with its PHP backends' (PHP-FPM, MariaDB: compare's srv+php). `errors` = failed + non_2xx, and
/// `errors_per_sec` and `error_pct` count them; `mostly_errors` marks a level where they are more than
/// half of the attempted requests; `ended` says when the target was unreachable or lost;
/// `bound_by` and `diagnosis` are what the level's Diagnosis found (the Bound by column's word and
/// the verdict line; empty for a level saved without one); the `h2_` columns are h2load's figures
/// of an HTTP/2 or HTTP/3 level (empty otherwise), the `quic_` columns QUIC's of an HTTP/3 level
/// (`crate::quic::csv_fields`; empty otherwise).
pub const CSV_COLUMNS: &[&str] = &[
    "series",
    "group",
    "clients",
    "round",
    "protocol",
    "server_version",
    "elapsed_s",
    "complete",
    "failed",
    "failed_connect",
    "failed_receive",
    "failed_length",
    "failed_exceptions",
    "write_errors",
    "non_2xx",
    "connections",
    "keep_alive_requests",
    "total_bytes",
    "body_bytes",
    "hits_per_sec",
    "conns_per_sec",
    "kbytes_per_sec",
    "mbits_per_sec",
    "errors_per_sec",
    "error_pct",
    "littles_load",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p90_ms",
    "latency_p99_ms",
    "latency_p999_ms",
    "latency_max_ms",
    "generator_cpu_us_per_request",
    "server_cpu_us_per_request",
    "server_with_backends_cpu_us_per_request",
    "interrupted",
    "errors",
    "mostly_errors",
    "ended",
    "bound_by",
    "diagnosis",
    "h2_max_streams",
    "h2_started",
    "h2_done",
    "h2_succeeded",
    "h2_failed",
    "h2_errored",
    "h2_timeout",
    "h2_2xx",
    "h2_3xx",
    "h2_4xx",
    "h2_5xx",
    "h2_header_bytes",
    "h2_header_decoded_bytes",
    "h2_space_savings_pct",
    "quic_handshakes",
    "quic_full_handshakes",
    "quic_resumed",
    "quic_zero_rtt_accepted",
    "quic_zero_rtt_rejected",
    "quic_datagrams_sent",
    "quic_datagrams_received",
    "quic_wire_bytes_sent",
    "quic_wire_bytes_received",
    "quic_packets_sent",
    "quic_packets_lost",
    "quic_congestion_events",
    "quic_min_congestion_window",
    "quic_connection_errors",
    "quic_gso_gro",
];

/// The `h2_` columns of [`csv`]: h2load's figures of an HTTP/2 level, empty for an HTTP/1 one.
fn h2_fields(r: &RunResult) -> Vec<String> {
    let Some(h) = &r.h2 else {
        return vec![String::new(); 14];
    };
    let counts = crate::h2_table::level_counts(h)
        .into_iter()
        .chain([h.header_bytes, h.header_decoded_bytes]);
    let mut out: Vec<String> = counts.map(|n| n.to_string()).collect();
    out.push(format!("{:.2}", crate::h2load::space_savings(h)));
    out
}

/// A CSV field, quoted when it holds a separator, a quote or a line break (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A level's server CPU-µs per request as the lab measured it: the server's process tree alone, and
/// with its PHP backends' on a dynamic workload.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ServerCpu {
    pub server: Option<f64>,
    pub with_backends: Option<f64>,
}

/// What the history knows of a level besides its result, for [`csv`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recorded {
    /// The level's series as the report names it (`crate::series::level_series`).
    pub series: String,
    /// What it spoke ("HTTP/1.1 over TLS", "h2c" …); None says "HTTP/2" when the level has
    /// HTTP/2 figures, else "HTTP/1" (its version unsaid).
    pub protocol: Option<String>,
    /// The server's CPU, where the lab measured it.
    pub server_cpu: ServerCpu,
    /// What its Diagnosis found: the Bound by column's word ("-" when nothing bound it) and the
    /// verdict line; None for a level saved without one.
    pub bound_by: Option<String>,
    pub diagnosis: Option<String>,
}

/// One CSV row per level with a header line: the raw counts and every derived figure, and what
/// the history recorded of each level (`recorded`, in `levels`' order; a level beyond it has
/// nothing recorded).
pub fn csv(levels: &[Level], recorded: &[Recorded]) -> String {
    let mut out = CSV_COLUMNS.join(",");
    out.push('\n');
    let nothing = Recorded::default();
    for (i, l) in levels.iter().enumerate() {
        let known = recorded.get(i).unwrap_or(&nothing);
        let cpu = known.server_cpu;
        let us = |v: Option<f64>| v.map_or(String::new(), |c| format!("{c:.3}"));
        let r = l.result;
        // No response, no latency: empty cells rather than zeros (as the JSON's `"count": 0`).
        let answered = !r.histograms.total.is_empty();
        let ms = |v: f64| match answered {
            true => format!("{v:.3}"),
            false => String::new(),
        };
        let fields = [
            csv_field(&known.series),
            csv_field(l.group),
            l.clients.to_string(),
            l.round.to_string(),
            csv_field(known.protocol.as_deref().unwrap_or(
                match (r.quic.is_some(), r.h2.is_some()) {
                    (true, _) => "HTTP/3",
                    (false, true) => "HTTP/2",
                    (false, false) => "HTTP/1",
                },
            )),
            csv_field(l.server_version.unwrap_or("")),
            format!("{:.6}", r.elapsed.as_secs_f64()),
            r.complete.to_string(),
            r.failed.total().to_string(),
            r.failed.connect.to_string(),
            r.failed.receive.to_string(),
            r.failed.length.to_string(),
            r.failed.exceptions.to_string(),
            r.write_errors.to_string(),
            r.non_2xx.to_string(),
            r.connections.to_string(),
            r.keep_alive_requests.to_string(),
            r.total_bytes.to_string(),
            r.body_bytes.to_string(),
            format!("{:.3}", r.hits_per_sec()),
            format!("{:.3}", r.conns_per_sec()),
            format!("{:.3}", r.kbytes_per_sec()),
            format!("{:.3}", r.mbits_per_sec()),
            format!("{:.3}", r.errors_per_sec()),
            format!("{:.4}", r.error_pct()),
            format!("{:.3}", r.littles_load()),
            ms(r.mean_latency_secs() * 1000.0),
            ms(latency_ms(r, 0.5)),
            ms(latency_ms(r, 0.9)),
            ms(latency_ms(r, 0.99)),
            ms(latency_ms(r, 0.999)),
            ms(r.histograms.total.max() as f64 / 1000.0),
            ms(r.cpu_us_per_request()),
            us(cpu.server),
            us(cpu.with_backends),
            r.interrupted.to_string(),
            r.errors().to_string(),
            r.mostly_errors().to_string(),
            r.ended.map_or("", |e| e.name()).to_string(),
            csv_field(known.bound_by.as_deref().unwrap_or("")),
            csv_field(known.diagnosis.as_deref().unwrap_or("")),
        ];
        let fields: Vec<String> = fields
            .into_iter()
            .chain(h2_fields(r))
            .chain(crate::quic::csv_fields(r))
            .collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// HdrHistogram's percentile distribution of a histogram recorded in microseconds, printed in
/// milliseconds: the "Value Percentile TotalCount 1/(1-Percentile)" table at 5 ticks per half
/// distance, then the `#[Mean …]`, `#[Max …]` and `#[Buckets …]` footer, as HdrHistogram's own
/// `outputPercentileDistribution` writes it, so its plotting tools read the file.
pub fn hgrm(h: &Histogram<u64>) -> String {
    const TICKS_PER_HALF_DISTANCE: u32 = 5;
    const US_PER_MS: f64 = 1000.0;
    let digits = h.sigfig() as usize;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    for row in percentile_rows(h, TICKS_PER_HALF_DISTANCE) {
        let (value, q, total) = (row.value as f64 / US_PER_MS, row.quantile, row.total);
        if q < 1.0 {
            let _ = writeln!(
                out,
                "{value:12.digits$} {q:2.12} {total:10} {:14.2}",
                1.0 / (1.0 - q)
            );
        } else {
            let _ = writeln!(out, "{value:12.digits$} {q:2.12} {total:10}");
        }
    }
    let (mean, stdev, max) = if h.is_empty() {
        (0.0, 0.0, 0.0)
    } else {
        (h.mean(), h.stdev(), h.max() as f64)
    };
    // HdrHistogram keeps 2^ceil(log2(2 × 10^digits)) sub-buckets per bucket.
    let sub_buckets = (2.0 * 10f64.powi(digits as i32)).log2().ceil().exp2() as u64;
    let _ = writeln!(
        out,
        "#[Mean    = {:12.digits$}, StdDeviation   = {:12.digits$}]",
        mean / US_PER_MS,
        stdev / US_PER_MS
    );
    let _ = writeln!(
        out,
        "#[Max     = {:12.digits$}, Total count    = {:12}]",
        max / US_PER_MS,
        h.len()
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        sub_buckets
    );
    out
}

/// One row of HdrHistogram's percentile distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PercentileRow {
    /// The highest value equivalent to the one where the level was reached (the histogram's unit).
    pub value: u64,
    /// The level, 0 to 1.
    pub quantile: f64,
    /// Values recorded up to and including `value`.
    pub total: u64,
}

/// The rows of HdrHistogram's percentile iteration, as its `outputPercentileDistribution` walks
/// them: levels 0, 100/(2t) … 50 %, then halving steps towards 100 % (t ticks per half distance),
/// each reported at the first recorded value whose cumulative share reaches it, and one last row
/// at 100 %. The levels are kept in percent, as HdrHistogram keeps them, where every step
/// (100 / (t · 2^k)) is an exact binary fraction: a share that lands exactly on a level (30 of 50
/// values at 60 %) reaches it. Summing fractions instead (0.55 + 0.05 = 0.6000000000000001) would
/// report such a level one value too late.
pub fn percentile_rows(h: &Histogram<u64>, ticks_per_half_distance: u32) -> Vec<PercentileRow> {
    let total = h.len();
    let mut rows = Vec::new();
    let mut level = 0.0f64; // percent
    let mut count = 0u64;
    let mut last = 0;
    for v in h.iter_recorded() {
        count += v.count_at_value();
        last = h.highest_equivalent(v.value_iterated_to());
        let reached = 100.0 * count as f64 / total as f64;
        while level <= reached {
            rows.push(PercentileRow {
                value: last,
                quantile: level / 100.0,
                total: count,
            });
            if count == total {
                break; // the last value: one row here, then the 100 % row
            }
            let halvings = (100.0 / (100.0 - level)).log2().floor();
            level += 100.0 / (f64::from(ticks_per_half_distance) * (halvings + 1.0).exp2());
        }
    }
    if total > 0 {
        rows.push(PercentileRow {
            value: last,
            quantile: 1.0,
            total,
        });
    }
    rows
}

/// Reads back the (value ms, percentile, total count) rows of [`hgrm`] text: what a plotting tool
/// parses; used by the tests to check the format round-trips.
pub fn parse_hgrm(text: &str) -> Vec<(f64, f64, u64)> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let v = f.next()?.parse().ok()?;
            let p = f.next()?.parse().ok()?;
            let n = f.next()?.parse().ok()?;
            Some((v, p, n))
        })
        .collect()
}

/// Every level as JSON: its series, clients, server version, and the result as `crate::json` writes
/// it (raw counts, derived figures, latency summaries); an HTTP/2 or HTTP/3 level adds h2load's
/// figures under `h2` (as `bench --h2 --json` has them), an HTTP/3 level QUIC's under `quic` (as
/// `bench --h3 --json` has them).
pub fn levels_json(levels: &[Level]) -> serde_json::Value {
    levels
        .iter()
        .map(|l| {
            let mut v = serde_json::json!({
                "group": l.group,
                "clients": l.clients,
                "round": l.round,
                "server_version": l.server_version,
                "result": crate::json::result_json(l.result),
            });
            if l.result.h2.is_some() {
                v["h2"] = crate::h2load::json(l.result, None);
            }
            if l.result.quic.is_some() {
                v["quic"] = crate::quic::json(l.result);
            }
            v
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn result(values_us: &[u64]) -> RunResult {
        let mut r = RunResult {
            elapsed: Duration::from_secs(2),
            complete: values_us.len() as u64,
            total_bytes: 4096,
            ..Default::default()
        };
        for &v in values_us {
            r.histograms.total.record(v).unwrap();
            r.latency_sum_us += v as u128;
        }
        r
    }

    #[test]
    fn hgrm_has_hdrhistograms_layout_and_values() {
        let values: Vec<u64> = (1..=10_000).collect(); // 1 µs … 10 ms
        let r = result(&values);
        let text = hgrm(&r.histograms.total);
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(
            header,
            ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"]
        );
        assert_eq!(lines.next(), Some(""));
        let rows = parse_hgrm(&text);
        assert!(rows.len() > 20, "{text}");
        // Monotone in value, percentile and count; ends at 100 % with every value counted.
        for w in rows.windows(2) {
            assert!(
                w[0].0 <= w[1].0 && w[0].1 <= w[1].1 && w[0].2 <= w[1].2,
                "{w:?}"
            );
        }
        let last = rows.last().unwrap();
        assert_eq!((last.1, last.2), (1.0, 10_000));
        assert!((last.0 - 10.0).abs() < 0.02, "max {}", last.0);
        // The median row: 5 ms (values were µs, printed in ms).
        let median = rows.iter().find(|r| r.1 >= 0.5).unwrap();
        assert!((median.0 - 5.0).abs() < 0.01, "{median:?}");
        // Rows below 100 % carry 1/(1-p); the last does not.
        let mid = text.lines().nth(3).unwrap();
        assert_eq!(mid.split_whitespace().count(), 4, "{mid}");
        assert_eq!(text.lines().filter(|l| l.starts_with("#[")).count(), 3);
        assert!(text.contains("#[Mean    =        5.00"), "{text}");
        assert!(text.contains("Total count    =        10000]"), "{text}");
        assert!(text.contains("SubBuckets     =         2048]"), "{text}");
    }

    #[test]
    fn a_share_landing_exactly_on_a_level_reaches_it() {
        // 6 of 10 values are 100 µs: the 60 % level is 0.1 ms, as HdrHistogram reports it.
        let r = result(&[100, 100, 100, 100, 100, 100, 900, 900, 900, 900]);
        let rows = percentile_rows(&r.histograms.total, 5);
        let at = |q: f64| rows.iter().find(|r| r.quantile == q).unwrap();
        assert_eq!((at(0.6).value, at(0.6).total), (100, 6));
        assert_eq!((at(0.65).value, at(0.65).total), (900, 10));
        let levels: Vec<f64> = rows.iter().map(|r| r.quantile).collect();
        assert_eq!(levels, [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 1.0]);
    }

    #[test]
    fn hgrm_of_an_empty_histogram_is_just_the_frame() {
        let text = hgrm(&RunResult::default().histograms.total);
        assert!(parse_hgrm(&text).is_empty());
        assert!(text.contains("Total count    =            0]"));
    }

    #[test]
    fn csv_has_a_header_and_one_quoted_row_per_level() {
        let a = result(&[1000, 2000, 3000]);
        let b = result(&[500]);
        let levels = [
            Level {
                group: "small, random",
                clients: 4,
                round: 1,
                server_version: Some("nginx/1.22 \"light\""),
                result: &a,
            },
            Level {
                group: "2k",
                clients: 8,
                round: 1,
                server_version: None,
                result: &b,
            },
        ];
        let cpu = ServerCpu {
            server: Some(12.5),
            with_backends: Some(30.0),
        };
        let recorded = Recorded {
            server_cpu: cpu,
            bound_by: Some("generator".into()),
            diagnosis: Some("generator-bound (the server used 27 % of its CPUs)".into()),
            series: "nginx · small".into(),
            ..Recorded::default()
        };
        let text = csv(&levels, &[recorded]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].split(',').count(), CSV_COLUMNS.len());
        let quic = &CSV_COLUMNS[CSV_COLUMNS.len() - crate::quic::CSV_FIELDS..];
        assert!(quic.iter().all(|c| c.starts_with("quic_")), "{quic:?}");
        assert!(
            lines[1].ends_with(&format!(
                ",0,false,,generator,generator-bound (the server used 27 % of its CPUs){}",
                ",".repeat(14 + crate::quic::CSV_FIELDS)
            )),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].ends_with(&format!(
                ",0,false,,,{}",
                ",".repeat(14 + crate::quic::CSV_FIELDS)
            )),
            "nothing recorded: {}",
            lines[2]
        );
        assert!(
            lines[1].starts_with(
                "nginx · small,\"small, random\",4,1,HTTP/1,\"nginx/1.22 \"\"light\"\"\",2.000000,3,0,"
            ),
            "{}",
            lines[1]
        );
        // hits/s = 3 / 2 s; p50 = 2 ms.
        assert!(lines[1].contains(",1.500,"), "{}", lines[1]);
        // The server's CPU, alone and with its backends', where the lab measured it (the first
        // level), empty where not.
        let cell = |line: &str, name: &str| {
            let at = CSV_COLUMNS.iter().position(|c| *c == name).unwrap();
            line.replace("\"small, random\"", "small")
                .split(',')
                .nth(at)
                .map(String::from)
        };
        let (alone, with) = (
            "server_cpu_us_per_request",
            "server_with_backends_cpu_us_per_request",
        );
        assert_eq!(cell(lines[1], alone).as_deref(), Some("12.500"));
        assert_eq!(cell(lines[1], with).as_deref(), Some("30.000"));
        assert_eq!(cell(lines[2], alone).as_deref(), Some(""));
        assert_eq!(cell(lines[2], with).as_deref(), Some(""));
        assert!(
            lines[2].starts_with(",2k,8,1,HTTP/1,,2.000000,1,"),
            "{}",
            lines[2]
        );
        let h2c = Recorded {
            protocol: Some("h2c".into()),
            ..Recorded::default()
        };
        let text = csv(&levels[1..], &[h2c]);
        assert!(
            text.lines().nth(1).unwrap().starts_with(",2k,8,1,h2c,,"),
            "{text}"
        );
    }
}
