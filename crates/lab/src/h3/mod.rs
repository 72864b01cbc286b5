//! The lab over HTTP/3 (`compare --h3`): how the servers speak it in a run. QUIC is always TLS 1.3,
//! so an h3 run puts every server on the lab's certificate; the servers that speak HTTP/3 here
//! answer it on UDP at the port of their HTTPS (TCP) listener, beside HTTP/1.1 and HTTP/2 there.
//! Which servers speak it, and why not the others, is each server kind's own knowledge
//! (`ServerKind::h3`, asked by `compare::options` before a run); the check behind thttpd's h3 column is `crate::checks::h3`, the probe's
//! hostile HTTP/3 clients `probe` over a blocking QUIC client of their own (`quic`).

pub mod probe;
pub mod quic;

pub use crate::checks::h3::{check_feature, fetch};
use webstand_results::H3_STREAMS_PER_CONNECTION;

/// How a row or a column without HTTP/3 begins.
pub const NO_H3: &str = "no h3";

/// One line on how an h3 run speaks HTTP/3, for the comparison's header.
pub fn describe() -> String {
    format!(
        "HTTP/3 over QUIC v1 (ALPN h3, TLS 1.3) on UDP at each server's HTTPS port, the lab's \
         certificate; h3 workloads: each client a QUIC connection with {H3_STREAMS_PER_CONNECTION} \
         streams in flight"
    )
}
