//! The engine: webstand's load generator.
//!
//! Input is a [`Plan`], output a [`RunResult`]. `run.rs` picks the protocol and starts one load
//! thread per share of the connections; each thread is one loop (`driver.rs`) that owns its
//! sockets, the clock, the pacing (closed loop, open-loop rate) and the wait (`wait.rs`), and
//! drives the protocol's connection state machines (`h1/conn.rs`, `h2/conn.rs`) behind one trait
//! (`connection.rs`); what they travel over is `transport/`'s. It knows nothing of sweeps, servers,
//! tables, files on disk or the history database: those belong to `webstand-lab`, `webstand-report`
//! and `webstand-store`.
//!
//! Every figure derived from a result (hits/s, KB/s, errors, the peak, Little's load factor, CPU-µs
//! per request …) is defined once, in [`figures`], and used by every report and test; what a run's
//! results add up to (complete, errors, failed, target lost, interrupted), which drives every exit
//! status and history status, is defined once in [`outcome`].

// What a run is given and what it returns: data only, no sockets (a crate of results can take
// them as they are).
pub mod figures;
mod live;
pub mod outcome;
pub mod plan;
pub mod result;
pub mod script;
mod spin_rule;
mod target;
mod view;

// Carrying out a plan: the protocol picked, the load threads, what they share.
mod reach;
mod run;
mod share;
mod shared;

// One load thread: its loop and what the loop lends its connections.
mod clock;
mod connection;
mod driver;
mod io;
mod pacer;
mod rates;
mod record;
mod requests;
mod script_mux;

// How a load thread waits.
pub mod affinity;
mod halfway;
mod nap;
mod spin;
mod wait;

// What connections speak and what they travel over.
mod h1;
mod h2;
mod h3;
mod stream;
mod transport;

#[cfg(feature = "fuzzing")]
pub mod fuzzing;

pub use h1::request::request_bytes;
pub use h1::response::{Feed, FrameError, ResponseParser};
pub use live::Live;
pub use outcome::{interrupted_by, interrupting_signal, judge, Judged, Outcome, Verdict};
pub use pacer::LATE as LATE_SEND;
pub use plan::{
    BodyCheck, H2Plan, HttpVersion, Pick, Plan, RequestSpec, Shape, SourceAddrs, Stop, Target,
    TlsPlan, TlsVersions,
};
pub use result::{
    CpuTime, Ended, Failures, H2Summary, HalfwayWaits, Histograms, QuicSummary, RunResult, Sample,
    TlsSummary, LOST_AFTER_REFUSALS,
};
pub use run::{raise_fd_limit, run, run_at};
pub use spin_rule::SpinRule;
pub use target::{authority, parse_url, parse_web_url, resolve, split_url, Scheme};
pub use view::{status_class, ThreadView};
