//! The event loops that carry out a plan. (Placeholder: being written under issue 2.)

use crate::{Plan, RunResult};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

/// Counters a run publishes while it goes, for progress displays and for stopping it early.
/// Threads add to them once per event batch, never per request.
#[derive(Debug, Default)]
pub struct Live {
    pub complete: AtomicU64,
    pub failed: AtomicU64,
    pub bytes: AtomicU64,
    /// Set by anyone (Ctrl-C handler) to end the run; the result then covers what completed.
    pub stop: AtomicBool,
}

/// Carries out `plan` and returns what it measured. Errors only for a plan that cannot start
/// (no target address, bad options); failures during the run are counted in the result.
pub fn run(plan: &Plan, live: Arc<Live>) -> anyhow::Result<RunResult> {
    let _ = (plan, live);
    anyhow::bail!("the engine is not written yet")
}
