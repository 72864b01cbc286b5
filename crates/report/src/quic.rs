//! QUIC's own figures for an HTTP/3 run (`webstand bench --h3`), printed after h2load's summary
//! (by bench, and by `show` from the history), given as JSON (bench's `--json`, export's) and as
//! the CSV export's `quic_` columns: handshakes (full, resumed, 0-RTT), UDP datagrams and bytes on
//! the wire per request, packets declared lost, the smallest congestion window seen, the
//! connections that ended on an error by code, and whether GSO and GRO carried the datagrams.

use serde_json::{json, Value};
use webstand_results::{QuicSummary, RunResult};

/// Requests that ended (complete or failed): the base of the per-request figures.
fn requests(r: &RunResult) -> u64 {
    r.complete + r.failed.total()
}

/// `n` per request that ended.
pub fn per_request(n: u64, r: &RunResult) -> f64 {
    per(n, requests(r))
}

/// `n` per `requests` (per anything counted), 0 without any.
pub(crate) fn per(n: u64, requests: u64) -> f64 {
    match requests {
        0 => 0.0,
        r => n as f64 / r as f64,
    }
}

/// The lines, or nothing for a run without QUIC.
pub fn summary(r: &RunResult) -> String {
    let Some(q) = &r.quic else {
        return String::new();
    };
    let n = requests(r);
    let full = q.handshakes - q.resumed.min(q.handshakes);
    let mut s = String::from("\nQUIC:\n");
    s += &format!(
        "handshakes: {} total, {} full, {} resumed, 0-RTT {} accepted, {} rejected\n",
        q.handshakes, full, q.resumed, q.zero_rtt_accepted, q.zero_rtt_rejected
    );
    s += &format!(
        "UDP datagrams: {} sent, {} received ({:.2} and {:.2} per request)\n",
        q.datagrams_sent,
        q.datagrams_received,
        per(q.datagrams_sent, n),
        per(q.datagrams_received, n)
    );
    s += &format!(
        "bytes on the wire: {} sent, {} received ({:.0} and {:.0} per request)\n",
        q.bytes_sent,
        q.bytes_received,
        per(q.bytes_sent, n),
        per(q.bytes_received, n)
    );
    s += &format!(
        "packets: {} sent, {} lost ({:.3}%), {} congestion events, smallest congestion window {} bytes\n",
        q.packets_sent,
        q.packets_lost,
        per(q.packets_lost * 100, q.packets_sent),
        q.congestion_events,
        q.min_cwnd
    );
    s += &format!("connection errors: {}\n", errors(q, ", "));
    s += &format!(
        "UDP offload: GSO {}, GRO {}\n",
        if q.gso { "on" } else { "off" },
        if q.gro { "on" } else { "off" }
    );
    s
}

/// The connections that ended on an error, "CODE N" by code joined with `sep`; "none" without.
pub fn errors(q: &QuicSummary, sep: &str) -> String {
    if q.errors.is_empty() {
        return "none".to_string();
    }
    let each: Vec<String> = q.errors.iter().map(|(c, n)| format!("{c} {n}")).collect();
    each.join(sep)
}

/// How many `quic_` columns the CSV export has (`export::CSV_COLUMNS` ends with their names).
pub const CSV_FIELDS: usize = 15;

/// A level's `quic_` fields: its figures as counts (the per-request ones follow from `complete`
/// and `failed`), the errors as "CODE N; CODE N", the offload as "on/off"; empty for a level
/// without QUIC.
pub fn csv_fields(r: &RunResult) -> Vec<String> {
    let Some(q) = &r.quic else {
        return vec![String::new(); CSV_FIELDS];
    };
    let on = |b: bool| if b { "on" } else { "off" };
    let counts = [
        q.handshakes,
        q.handshakes - q.resumed.min(q.handshakes),
        q.resumed,
        q.zero_rtt_accepted,
        q.zero_rtt_rejected,
        q.datagrams_sent,
        q.datagrams_received,
        q.bytes_sent,
        q.bytes_received,
        q.packets_sent,
        q.packets_lost,
        q.congestion_events,
        q.min_cwnd,
    ];
    let errors = match q.errors.is_empty() {
        true => String::new(),
        false => errors(q, "; "),
    };
    let offload = format!("{}/{}", on(q.gso), on(q.gro));
    counts
        .iter()
        .map(u64::to_string)
        .chain([errors, offload])
        .collect()
}

/// The same figures as JSON (null for a run without QUIC).
pub fn json(r: &RunResult) -> Value {
    let Some(q) = &r.quic else {
        return Value::Null;
    };
    let n = requests(r);
    json!({
        "handshakes": {
            "total": q.handshakes,
            "full": q.handshakes - q.resumed.min(q.handshakes),
            "resumed": q.resumed,
            "zero_rtt_accepted": q.zero_rtt_accepted,
            "zero_rtt_rejected": q.zero_rtt_rejected,
        },
        "datagrams": {
            "sent": q.datagrams_sent,
            "received": q.datagrams_received,
            "sent_per_request": per(q.datagrams_sent, n),
            "received_per_request": per(q.datagrams_received, n),
        },
        "wire_bytes": {
            "sent": q.bytes_sent,
            "received": q.bytes_received,
            "sent_per_request": per(q.bytes_sent, n),
            "received_per_request": per(q.bytes_received, n),
        },
        "packets_sent": q.packets_sent,
        "packets_lost": q.packets_lost,
        "congestion_events": q.congestion_events,
        "min_congestion_window": q.min_cwnd,
        "connection_errors": q.errors,
        "gso": q.gso,
        "gro": q.gro,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_divide_by_the_requests_that_ended() {
        let mut r = RunResult {
            complete: 100,
            ..Default::default()
        };
        assert_eq!(summary(&r), "");
        let mut q = QuicSummary {
            handshakes: 4,
            datagrams_sent: 250,
            datagrams_received: 300,
            bytes_sent: 40_000,
            bytes_received: 260_000,
            packets_sent: 250,
            packets_lost: 1,
            min_cwnd: 12_000,
            gso: true,
            ..Default::default()
        };
        q.errors.insert("H3_INTERNAL_ERROR".into(), 2);
        r.quic = Some(q);
        let s = summary(&r);
        assert!(s.contains("handshakes: 4 total, 4 full, 0 resumed"), "{s}");
        assert!(
            s.contains("250 sent, 300 received (2.50 and 3.00 per request)"),
            "{s}"
        );
        assert!(s.contains("(400 and 2600 per request)"), "{s}");
        assert!(s.contains("1 lost (0.400%)"), "{s}");
        assert!(s.contains("connection errors: H3_INTERNAL_ERROR 2"), "{s}");
        assert!(s.contains("GSO on, GRO off"), "{s}");
        assert_eq!(json(&r)["datagrams"]["sent_per_request"], 2.5);
        let fields = csv_fields(&r);
        assert_eq!(fields.len(), CSV_FIELDS);
        assert_eq!(&fields[..3], ["4", "4", "0"]);
        assert_eq!(&fields[12..], ["12000", "H3_INTERNAL_ERROR 2", "on/off"]);
        assert!(csv_fields(&RunResult::default())
            .iter()
            .all(String::is_empty));
    }
}
