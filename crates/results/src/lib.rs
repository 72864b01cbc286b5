//! webstand's model: what a run is given ([`plan`]) and what it measured ([`result`]), the figures
//! derived from a result, each defined once ([`figures`]), what a command's results add up to
//! ([`outcome`]), and what the lab's sweeps and comparisons found ([`sweep`], [`comparison`] and
//! their parts). Data only: no sockets, load threads, processes, files or database here, so the
//! engine that fills these, the lab that runs them, the history that stores them and the reports
//! that show them all share one definition without depending on each other.
//!
//! Every figure derived from a result (hits/s, time per request, KB/s, errors, the peak, Little's
//! load factor, CPU-µs per request …) is defined in [`figures`] and used by every report and test;
//! what a run's results add up to (complete, errors, failed, target lost, interrupted), which
//! drives every exit status and history status, is defined once in [`outcome`].

// One run.
pub mod figures;
pub mod live;
pub mod outcome;
pub mod plan;
pub mod result;
pub mod script;
pub mod spin_rule;
pub mod text;
pub mod url;
pub mod view;

// What the lab's commands found.
pub mod comparison;
pub mod notes;
pub mod robustness;
pub mod server;
pub mod sweep;
pub mod verify;
pub mod workload_kind;

pub use comparison::{Comparison, ServerOutcome, WorkloadOutcome};
pub use live::Live;
pub use notes::{H2Note, Note, TlsNote};
pub use outcome::{judge, Judged, Outcome, StopSignal, Verdict};
pub use plan::{
    BodyCheck, H2Plan, HttpVersion, Pick, Plan, RequestSpec, Shape, SourceAddrs, Stop, Target,
    TlsPlan, TlsVersions,
};
pub use result::{
    CpuTime, Ended, Failures, H2Summary, HalfwayWaits, Histograms, QuicSummary, RunResult, Sample,
    TlsSummary, LATE_SEND, LOST_AFTER_REFUSALS,
};
pub use robustness::{Attacked, Counts, Held, PerConnection, Robustness};
pub use server::{CpuSource, Features, ServerFigures, Support};
pub use spin_rule::SpinRule;
pub use sweep::{Level, MaxUsers, Probe, SweepResult};
pub use verify::VerifyRow;
pub use view::{status_class, ThreadView};
pub use workload_kind::{WorkloadKind, H2_STREAMS_PER_CONNECTION, H3_STREAMS_PER_CONNECTION};
