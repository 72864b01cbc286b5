//! The engine: webstand's load generator.
//!
//! It owns sockets, the protocol a connection speaks (`protocol.rs`: HTTP/1.x in `h1.rs`), pacing (closed loop and open-loop rate) and timing.
//! Input is a [`Plan`], output a [`RunResult`]. It knows nothing of sweeps, servers, tables, files on
//! disk or the history database: those belong to `webstand-lab`, `webstand-report` and `webstand-store`.
//!
//! Every figure derived from a result (hits/s, KB/s, errors, the peak, Little's load factor, CPU-µs
//! per request …) is defined once, in [`figures`], and used by every report and test; what a run's
//! results add up to (complete, errors, failed, target lost, interrupted), which drives every exit
//! status and history status, is defined once in [`outcome`].

pub mod affinity;
mod clock;
mod conn;
mod exchange;
pub mod figures;
mod h1;
mod h2;
mod h2_conn;
mod h2_refused;
mod h2_stream;
mod h2_worker;
mod halfway;
mod live;
pub mod outcome;
mod pacer;
pub mod plan;
mod protocol;
mod reach;
pub mod result;
mod run;
mod spin;
mod spin_rule;
mod target;
mod transport;
mod worker;

pub use h1::request::request_bytes;
pub use h1::response::{Feed, FrameError, ResponseParser};
pub use live::Live;
pub use outcome::{judge, Judged, Outcome, Verdict};
pub use pacer::LATE as LATE_SEND;
pub use plan::{
    BodyCheck, H2Plan, HttpVersion, Pick, Plan, RequestSpec, Shape, SourceAddrs, Stop, Target,
    TlsPlan, TlsVersions,
};
pub use result::{
    CpuTime, Ended, Failures, H2Summary, HalfwayWaits, Histograms, RunResult, Sample, TlsSummary,
    LOST_AFTER_REFUSALS,
};
pub use run::raise_fd_limit;
pub use run::{run, run_at};
pub use spin_rule::SpinRule;
pub use target::{parse_url, parse_web_url, resolve, split_url, Scheme};
