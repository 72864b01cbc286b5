//! One module per subcommand: its clap arguments and the wiring from them to the crates.
//! Each `run` returns the process exit code.

pub mod ab_args;
pub mod bench;
pub mod compare;
pub mod diagnose;
pub mod fixtures;
pub mod h2_args;
pub mod help;
pub mod history;
pub mod lab;
pub mod main_job;
pub mod max_rate;
pub mod max_rate_ci;
pub mod max_rate_stored;
pub mod presets;
pub mod probe;
pub mod scale_args;
pub mod script_runs;
pub mod serve;
pub mod session;
pub mod spin_args;
pub mod stored;
pub mod stored_thresholds;
pub mod sweep;
pub mod sweep_args;
pub mod sweep_table;
pub mod sweep_target;
pub mod threshold_args;
pub mod tls_args;
pub mod usage;
pub mod watch_args;
pub mod wordpress;
pub mod workload_args;
