//! `webstand compare`: real servers side by side on one docroot. Each round gives every server a turn
//! (`crate::round`: start it pinned to the server CPU with the run's limits, check its features, run
//! every workload's sweep and max-users search with the generator pinned to its own CPU, account its
//! CPU time and memory, stop it), the order rotating from round to round. A server that is missing,
//! fails to start or dies is reported in its row; none of that aborts the rest.
//!
//! `options`: what a comparison runs; `workloads`: the requests each workload makes; `observer`: the
//! caller's hooks; `running`: the rounds. What it found is plain data (`webstand_results::comparison`),
//! which `webstand_report::comparison` makes into rows and tables.

pub mod observer;
pub mod options;
pub mod running;
pub mod workloads;

pub use observer::CompareObserver;
pub use options::Options;
pub use running::{prepare_docroot, round_order, run, scratch_dir};
