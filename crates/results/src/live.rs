//! The counters a run publishes while it goes, and the flag that stops it: the one thing a load
//! thread shares with the rest of the program during a run (progress displays, Ctrl-C, MPI ranks).

use std::sync::atomic::{AtomicBool, AtomicU64};

/// Counters a run publishes while it goes, for progress displays and for stopping it early.
/// Threads add to them once per event batch, never per request.
#[derive(Debug, Default)]
pub struct Live {
    pub complete: AtomicU64,
    pub failed: AtomicU64,
    /// Complete answers whose status was not 2xx (with `failed`, the errors a diagnosis dates).
    pub non_2xx: AtomicU64,
    pub bytes: AtomicU64,
    /// Set by anyone (Ctrl-C handler) to end the run; the result then covers what completed.
    pub stop: AtomicBool,
}
