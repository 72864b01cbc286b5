//! The engine: webstand's load generator.
//!
//! Input is a [`webstand_results::Plan`], output a [`webstand_results::RunResult`]. `run.rs` picks the protocol and starts one load
//! thread per share of the connections; each thread is one loop (`driver.rs`) that owns its
//! sockets, the clock, the pacing (closed loop, open-loop rate) and the wait (`wait.rs`), and
//! drives the protocol's connection state machines (`h1/conn.rs`, `h2/conn.rs`) behind one trait
//! (`connection.rs`); what they travel over is `transport/`'s. It knows nothing of sweeps, servers,
//! tables, files on disk or the history database: those belong to `webstand-lab`, `webstand-report`
//! and `webstand-store`.
//!
//! What a run is given and what it returns (the plan, the result, the figures derived from it) are
//! data, `webstand-results`'s.

// Reading a plan's URL.
mod target;

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
mod view;

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
pub use run::{raise_fd_limit, run, run_at};
pub use target::{
    authority, parse_url, parse_web_url, resolve, split_authority, split_url, Scheme,
};
