//! HTTP/1.x message syntax for both of webstand's roles, in the spirit of hyper's `proto/h1`: the
//! server (`webstand-server`) scans request heads and decodes request bodies with it, the load
//! generator (`webstand-engine`) scans response heads and counts response bodies with it.
//!
//! - [`request`]: request heads, checked for the request-smuggling shapes a server must refuse.
//! - [`response`]: response heads, read as leniently as the common clients (curl, ab) read them.
//! - [`chunked`]: the one chunked-body decoder, incremental, strict for requests and lenient for
//!   responses.
//! - [`status`]: the reason phrases of status codes.
//! - [`framing`]: which body a message has (Content-Length, chunked, close-delimited or none: HEAD,
//!   1xx, 204, 304), decided once for both directions.
//!
//! Nothing here allocates on the hot path, owns a socket or knows about files, pacing or reports.

pub mod chunked;
pub mod framing;
pub mod request;
pub mod response;
pub mod status;

/// Whether a comma-separated header value (`Connection: keep-alive, Upgrade`) holds `token`,
/// compared case-insensitively.
pub fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}
