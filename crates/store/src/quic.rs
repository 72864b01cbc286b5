//! QUIC's figures in the history (schema 15, `levels.quic`): an `--h3` level's handshakes (full,
//! resumed, 0-RTT), datagrams and bytes on the wire, packets sent and lost, congestion events,
//! smallest congestion window, connection errors by code and UDP offload, as one JSON object, so
//! that `show` reprints what the report printed and `diff`, `export` and the HTML report read
//! them back. Levels of other protocols, and levels saved before, read without them.

use webstand_results::{QuicSummary, RunResult};

/// The step that adds it to an older file, taken only when the column is missing.
pub(crate) const COLUMN: (&str, &str, &str) = ("levels", "quic", "TEXT");

/// The column's text for `r`; None for a level without QUIC.
pub(crate) fn column(r: &RunResult) -> anyhow::Result<Option<String>> {
    Ok(match &r.quic {
        Some(q) => Some(serde_json::to_string(q)?),
        None => None,
    })
}

/// Puts what the column holds back into `r`; a column that is empty or does not parse (written by
/// hand, cut short) leaves it without QUIC figures.
pub(crate) fn apply(text: Option<&str>, r: &mut RunResult) {
    r.quic = text.and_then(|t| serde_json::from_str::<QuicSummary>(t).ok());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_figures_come_back_as_they_went_in_and_a_bad_column_reads_as_none() {
        let mut q = QuicSummary {
            handshakes: 6,
            resumed: 5,
            zero_rtt_accepted: 4,
            zero_rtt_rejected: 1,
            datagrams_sent: 120,
            datagrams_received: 340,
            bytes_sent: 30_000,
            bytes_received: 400_000,
            packets_sent: 125,
            packets_lost: 2,
            congestion_events: 1,
            min_cwnd: 2_400,
            gso: true,
            ..Default::default()
        };
        q.errors.insert("H3_INTERNAL_ERROR".into(), 3);
        let r = RunResult {
            quic: Some(q),
            ..Default::default()
        };
        let text = column(&r).unwrap();
        let mut back = RunResult::default();
        apply(text.as_deref(), &mut back);
        assert_eq!(back.quic, r.quic);
        assert_eq!(column(&RunResult::default()).unwrap(), None);
        apply(Some("{\"handshakes\": "), &mut back);
        assert_eq!(back.quic, None);
    }
}
