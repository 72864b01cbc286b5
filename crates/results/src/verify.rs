//! `compare --verify`'s rows: webstand, wrk and ab on the same targets of one server, side by side.

use serde::Serialize;

/// One tool's run on one target in `--verify`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct VerifyRow {
    pub server: String,
    pub target: String,
    /// "webstand", "wrk" or "ab".
    pub tool: String,
    pub clients: usize,
    pub requests: u64,
    pub hits_per_sec: f64,
    /// Bytes read, as each tool counts them (wrk and webstand: every byte; ab: "Total transferred").
    pub bytes: u64,
    pub errors: u64,
    pub note: Option<String>,
}
