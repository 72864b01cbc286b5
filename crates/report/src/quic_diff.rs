//! `webstand diff`'s QUIC table for a pair of HTTP/3 levels, under their metrics table: the share
//! of handshakes resumed and of 0-RTT accepted, datagrams and bytes on the wire per request, the
//! share of packets lost, congestion events, the smallest congestion window and the connections
//! that ended on an error — each side's median over its samples, and B/A. Nothing when either
//! side has no QUIC figures (a diff of an HTTP/3 run against another protocol compares the common
//! metrics alone).

use crate::diff_cells::{median, num, ratio, ratio_cell};
use crate::quic::{per, per_request};
use std::fmt::Write;
use webstand_results::{QuicSummary, RunResult};

struct Row {
    name: &'static str,
    value: fn(&RunResult, &QuicSummary) -> f64,
}

/// `part` of `whole` in per cent, 0 without a whole.
fn pct(part: u64, whole: u64) -> f64 {
    per(part * 100, whole)
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
        value: |r, q| per_request(q.datagrams_sent, r),
    },
    Row {
        name: "Datagrams in/req",
        value: |r, q| per_request(q.datagrams_received, r),
    },
    Row {
        name: "Wire bytes out/req",
        value: |r, q| per_request(q.bytes_sent, r),
    },
    Row {
        name: "Wire bytes in/req",
        value: |r, q| per_request(q.bytes_received, r),
    },
    Row {
        name: "Packets lost %",
        value: |_, q| pct(q.packets_lost, q.packets_sent),
    },
    Row {
        name: "Congestion events",
        value: |_, q| q.congestion_events as f64,
    },
    Row {
        name: "Min cwnd bytes",
        value: |_, q| q.min_cwnd as f64,
    },
    Row {
        name: "Conn errors",
        value: |_, q| q.errors.values().sum::<u64>() as f64,
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
            median(
                s.iter()
                    .filter_map(|r| Some((row.value)(r, r.quic.as_ref()?)))
                    .collect(),
            )
        };
        let (va, vb) = (side(a), side(b));
        let _ = writeln!(
            out,
            "{:<18} {:>12} {:>12} {:>8}",
            row.name,
            num(va),
            num(vb),
            ratio_cell(ratio(va, vb))
        );
    }
    out
}
