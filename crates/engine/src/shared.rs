//! What every load thread of a run reads: the plan, each request's bytes (built once), where the
//! target is and whether it can still be reached, the socket and TLS set-up, the run's start and
//! deadline, the spin window, and what the first responses set for the others to be checked against
//! (ab's Document Length, a first fetch's digest, the Server value).
//!
//! Nothing here changes per request: a thread touches the `OnceLock`s once each, `reach` once per
//! connect, and the `Live` counters once per pass.

use crate::reach::Reach;
use crate::transport::socket_setup::SocketSetup;
use crate::transport::tls_config::TlsSetup;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use webstand_results::live::Live;
use webstand_results::plan::Plan;

pub(crate) struct Shared<'a> {
    pub plan: &'a Plan,
    /// Which address to connect to, and whether the target was lost (no probe connection).
    pub reach: Reach<'a>,
    /// Each request's bytes in the run's protocol (built once).
    pub reqs: Vec<Vec<u8>>,
    pub head_request: bool,
    pub keep_alive: bool,
    pub pipeline: usize,
    /// Body length of the first complete response per request (ab's Document Length baseline).
    pub doc_len: Vec<OnceLock<u64>>,
    /// Digest of the first complete response per request, for `BodyCheck::FirstFetch`.
    pub first_digest: Vec<OnceLock<[u8; 32]>>,
    pub server: OnceLock<String>,
    pub live: &'a Live,
    /// ab's `-b` and `-B` for every new socket.
    pub setup: SocketSetup,
    pub start: Instant,
    pub deadline: Option<Instant>,
    /// `https://`: what every connection's TLS is made with.
    pub tls: Option<TlsSetup>,
    /// How long a load thread may spin before it blocks (`spin.rs`; zero: never).
    pub spin: Duration,
    /// The run's script reads responses (`response()`): connections keep each head and body.
    pub script_responses: bool,
}
