//! `webstand diff`'s QUIC table for a pair of HTTP/3 levels, under their metrics table: the share
//! of handshakes resumed and of 0-RTT accepted, datagrams and bytes on the wire per request, the
//! share of packets lost, congestion events, the smallest congestion window and the connections
//! that ended on an error — each side's median over its samples, and B/A ("-" for a share of
//! nothing). Nothing when either
//! side has no QUIC figures (a diff of an HTTP/3 run against another protocol compares the common
//! metrics alone).

use crate::diff_cells::{median, num, ratio, ratio_cell};
use crate::quic::{per, per_request};
use std::fmt::Write;
use webstand_results::{QuicSummary, RunResult};

struct Row {
    name: &'static str,
    /// None where the figure does not exist: a share of nothing (no handshake, no 0-RTT tried, no
    /// packet sent), shown "-" rather than 0.
    value: fn(&RunResult, &QuicSummary) -> Option<f64>,
}

/// `part` of `whole` in per cent, None without a whole.
fn pct(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| per(part * 100, whole))
}

const ROWS: &[Row] = &[
    Row {
        name: "Resumed %",
        value: |_, q| pct(q.resumed, q.handshakes),
    },
    Row {
        name: "0-RTT accepted %",
        value: |_, q| {
            pct(
                q.zero_rtt_accepted,
                q.zero_rtt_accepted + q.zero_rtt_rejected,
            )
        },
    },
    Row {
        name: "Datagrams out/req",
        value: |r, q| Some(per_request(q.datagrams_sent, r)),
    },
    Row {
        name: "Datagrams in/req",
        value: |r, q| Some(per_request(q.datagrams_received, r)),
    },
    Row {
        name: "Wire bytes out/req",
        value: |r, q| Some(per_request(q.bytes_sent, r)),
    },
    Row {
        name: "Wire bytes in/req",
        value: |r, q| Some(per_request(q.bytes_received, r)),
    },
    Row {
        name: "Packets lost %",
        value: |_, q| pct(q.packets_lost, q.packets_sent),
    },
    Row {
        name: "Congestion events",
        value: |_, q| Some(q.congestion_events as f64),
    },
    Row {
        name: "Min cwnd bytes",
        value: |_, q| Some(q.min_cwnd as f64),
    },
    Row {
        name: "Conn errors",
        value: |_, q| Some(q.errors.values().sum::<u64>() as f64),
    },
];

/// The table for a pair whose every sample on both sides has QUIC figures; empty otherwise.
pub(crate) fn table(a: &[&RunResult], b: &[&RunResult]) -> String {
    let has = |s: &[&RunResult]| !s.is_empty() && s.iter().all(|r| r.quic.is_some());
    if !has(a) || !has(b) {
        return String::new();
    }
    let mut out = format!("\n{:<18} {:>12} {:>12} {:>8}\n", "QUIC", "A", "B", "B/A");
    for row in ROWS {
        let side = |s: &[&RunResult]| {
            let values: Vec<f64> = (s.iter())
                .filter_map(|r| (row.value)(r, r.quic.as_ref()?))
                .collect();
            (!values.is_empty()).then(|| median(values))
        };
        let (va, vb) = (side(a), side(b));
        let cell = |v: Option<f64>| v.map_or_else(|| "-".into(), num);
        let _ = writeln!(
            out,
            "{:<18} {:>12} {:>12} {:>8}",
            row.name,
            cell(va),
            cell(vb),
            ratio_cell(va.zip(vb).and_then(|(a, b)| ratio(a, b)))
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_of_nothing_is_a_dash_not_zero() {
        let with = |q: QuicSummary| RunResult {
            complete: 10,
            quic: Some(q),
            ..Default::default()
        };
        let a = with(QuicSummary {
            handshakes: 4,
            resumed: 2,
            packets_sent: 100,
            ..Default::default()
        });
        // No handshake finished: nothing to be resumed or lost a share of.
        let b = with(QuicSummary::default());
        let text = table(&[&a], &[&b]);
        let cells = |name: &str| -> Vec<String> {
            let line = text.lines().find(|l| l.starts_with(name)).unwrap();
            line[name.len()..]
                .split_whitespace()
                .map(String::from)
                .collect()
        };
        assert_eq!(cells("Resumed %"), ["50.0", "-", "-"], "{text}");
        assert_eq!(cells("0-RTT accepted %"), ["-", "-", "-"], "{text}");
        assert_eq!(cells("Packets lost %"), ["0.000", "-", "-"], "{text}");
        assert_eq!(
            cells("Congestion events"),
            ["0.000", "0.000", "-"],
            "{text}"
        );
    }
}
