//! The HTML report's QUIC section, in the part of a run whose levels spoke HTTP/3: a table with a
//! row per such level (its series and clients) and the figures bench prints under "QUIC:" —
//! handshakes (full, resumed, 0-RTT accepted and rejected), datagrams and bytes on the wire per
//! request, packets lost, congestion events, the smallest congestion window, the connections
//! that ended on an error by code, and UDP offload. Nothing for a run without them.

use crate::chart::escape;
use crate::levels::Level;
use crate::quic::{errors, per_request};
use std::fmt::Write;

const HEAD: [&str; 10] = [
    "Level",
    "Handshakes (full / resumed)",
    "0-RTT accepted / rejected",
    "Datagrams out / in per request",
    "Wire bytes out / in per request",
    "Packets lost",
    "Congestion events",
    "Smallest cwnd (bytes)",
    "Connection errors",
    "GSO / GRO",
];

/// The section for `levels` (one run's), or "" when none of them has QUIC figures.
pub(crate) fn section(levels: &[Level]) -> String {
    let rows: Vec<String> = levels.iter().filter_map(row).collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut h =
        String::from("<h3>QUIC</h3>\n<div class=\"wide\"><table class=\"summary quic\">\n<tr>");
    for name in HEAD {
        let _ = write!(h, "<th>{name}</th>");
    }
    h.push_str("</tr>\n");
    for r in rows {
        h.push_str(&r);
    }
    h.push_str("</table></div>\n");
    h
}

/// A level's row; None without QUIC figures.
fn row(l: &Level) -> Option<String> {
    let r = l.result;
    let q = r.quic.as_ref()?;
    let on = |b: bool| if b { "on" } else { "off" };
    let level = match l.group.is_empty() {
        true => format!("{} clients", l.clients),
        false => format!("{} @ {} clients", l.group, l.clients),
    };
    let lost_pct = match q.packets_sent {
        0 => 0.0,
        n => q.packets_lost as f64 * 100.0 / n as f64,
    };
    let cells = [
        level,
        format!(
            "{} ({} / {})",
            q.handshakes,
            q.handshakes - q.resumed.min(q.handshakes),
            q.resumed
        ),
        format!("{} / {}", q.zero_rtt_accepted, q.zero_rtt_rejected),
        format!(
            "{:.2} / {:.2}",
            per_request(q.datagrams_sent, r),
            per_request(q.datagrams_received, r)
        ),
        format!(
            "{:.0} / {:.0}",
            per_request(q.bytes_sent, r),
            per_request(q.bytes_received, r)
        ),
        format!("{} of {} ({lost_pct:.3}%)", q.packets_lost, q.packets_sent),
        q.congestion_events.to_string(),
        q.min_cwnd.to_string(),
        errors(q, ", "),
        format!("{} / {}", on(q.gso), on(q.gro)),
    ];
    let mut h = String::from("<tr>");
    for c in cells {
        let _ = write!(h, "<td>{}</td>", escape(&c));
    }
    h.push_str("</tr>\n");
    Some(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use webstand_results::{QuicSummary, RunResult};

    #[test]
    fn a_row_per_http3_level_and_nothing_without() {
        let plain = RunResult {
            complete: 10,
            ..Default::default()
        };
        let mut q = QuicSummary {
            handshakes: 6,
            resumed: 5,
            zero_rtt_accepted: 5,
            datagrams_sent: 30,
            datagrams_received: 60,
            packets_sent: 40,
            packets_lost: 1,
            min_cwnd: 2400,
            ..Default::default()
        };
        q.errors.insert("H3_<odd>".into(), 1);
        let h3 = RunResult {
            complete: 12,
            quic: Some(q),
            ..Default::default()
        };
        let level = |result| Level {
            group: "",
            clients: 1,
            round: 1,
            server_version: None,
            result,
        };
        assert_eq!(section(&[level(&plain)]), "");
        let s = section(&[level(&plain), level(&h3)]);
        assert_eq!(s.matches("<tr><td>").count(), 1, "{s}");
        assert!(
            s.contains("<td>1 clients</td><td>6 (1 / 5)</td><td>5 / 0</td>"),
            "{s}"
        );
        assert!(s.contains("<td>2.50 / 5.00</td>"), "{s}");
        assert!(s.contains("<td>1 of 40 (2.500%)</td>"), "{s}");
        assert!(s.contains("<td>H3_&lt;odd&gt; 1</td>"), "{s}");
    }
}
