//! Diagnosis: what limited a run, said with evidence.
//!
//! It owns the evidence gathered around a run — the kernel's TCP counters as deltas (host-wide), the
//! generator's load threads as the scheduler saw them (running, waiting for a CPU), the server's CPU
//! when its process is known, the socket errors met — and the rules that turn that evidence plus the
//! run's own measurements (connect-time clusters, latency floors, error counts and when they came,
//! bytes/s against the link's speed, throughput against the level before) into a verdict and findings, each with its
//! numbers and what to do. The rules are pure functions over measured inputs
//! ([`rules::diagnose`]); gathering ([`watch`], [`kernel`], [`network`]) is kept apart so the rules can be tested
//! on any input. It knows nothing of the command line, sweeps, servers' configs or the history.

pub mod errno;
pub mod findings;
pub mod kernel;
pub mod limits;
pub mod network;
pub mod pool;
pub mod render;
pub mod rules;
pub mod status;
pub mod timeline;
pub mod watch;
mod watch_tasks;

pub use findings::{Diagnosis, Finding, Inputs, Limit, Previous, ServerUse};
pub use rules::diagnose;
pub use watch::{LoadThread, Watch, Watched};
