//! An HTTP/2 run's h2load figures ([`H2Summary`]) as a rank sends them: counts as numbers, the
//! per-connection connect and first-byte histograms V2-encoded like the latency ones, so rank 0
//! adds them up exactly (`RunResult::add_counts` sums the counts, adds the histograms and keeps the
//! smallest stream limit any rank was allowed).

use super::{decode, encode};
use serde::{Deserialize, Serialize};
use webstand_results::H2Summary;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct WireH2 {
    started: u64,
    done: u64,
    succeeded: u64,
    errored: u64,
    timeout: u64,
    status: [u64; 6],
    header_bytes: u64,
    header_decoded_bytes: u64,
    resets: u64,
    goaways: u64,
    max_streams: u32,
    /// Each connection's own req/s (h2load's per-client row): rank 0 lists every rank's.
    client_rps: Vec<f64>,
    /// connect, first byte: base64 of the V2 encoding.
    histograms: [String; 2],
}

impl From<&H2Summary> for WireH2 {
    fn from(h: &H2Summary) -> WireH2 {
        // Destructured whole, so a field added to H2Summary cannot be forgotten here.
        let H2Summary {
            started,
            done,
            succeeded,
            errored,
            timeout,
            status,
            header_bytes,
            header_decoded_bytes,
            resets,
            goaways,
            max_streams,
            connect,
            first_byte,
            client_rps,
        } = h;
        WireH2 {
            started: *started,
            done: *done,
            succeeded: *succeeded,
            errored: *errored,
            timeout: *timeout,
            status: *status,
            header_bytes: *header_bytes,
            header_decoded_bytes: *header_decoded_bytes,
            resets: *resets,
            goaways: *goaways,
            max_streams: *max_streams,
            client_rps: client_rps.clone(),
            histograms: [connect, first_byte].map(encode),
        }
    }
}

impl WireH2 {
    pub(super) fn to_summary(&self) -> anyhow::Result<H2Summary> {
        let [connect, first_byte] = &self.histograms;
        Ok(H2Summary {
            started: self.started,
            done: self.done,
            succeeded: self.succeeded,
            errored: self.errored,
            timeout: self.timeout,
            status: self.status,
            header_bytes: self.header_bytes,
            header_decoded_bytes: self.header_decoded_bytes,
            resets: self.resets,
            goaways: self.goaways,
            max_streams: self.max_streams,
            connect: decode(connect)?,
            first_byte: decode(first_byte)?,
            client_rps: self.client_rps.clone(),
        })
    }
}
