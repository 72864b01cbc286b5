//! The engine: webstand's load generator.
//!
//! It owns sockets, HTTP/1.x response framing, pacing (closed loop and open-loop rate) and timing.
//! Input is a [`Plan`], output a [`RunResult`]. It knows nothing of sweeps, servers, tables, files on
//! disk or the history database: those belong to `webstand-lab`, `webstand-report` and `webstand-store`.
//!
//! Every figure derived from a result (hits/s, KB/s, Little's load factor, CPU-µs per request …) is
//! defined once, in [`figures`], and used by every report and test.

mod clock;
mod conn;
mod exchange;
pub mod figures;
mod pacer;
pub mod plan;
mod response;
pub mod result;
mod run;
mod target;
mod worker;

pub use plan::{BodyCheck, HttpVersion, Pick, Plan, RequestSpec, Shape, Stop, Target};
pub use result::{CpuTime, Failures, Histograms, RunResult};
pub use run::{run, Live};
pub use target::{parse_url, request_bytes};
