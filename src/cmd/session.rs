//! The command line's side of a [`Session`] (`webstand_lab::session`): opening one on the history
//! `--db` names with runs going where `ranks` sends them, and the checks of the flags every session
//! command shares.

use crate::Global;
use anyhow::Result;
use webstand_lab::session::Runner;
pub use webstand_lab::session::{SavedLine, Session};

/// Opens a session on the history `--db` names, its runs on MPI ranks when mpirun started us.
pub fn open(global: &Global, kind: &str, target: &str, quiet: bool) -> Result<Session> {
    let runner = Runner {
        execute: crate::ranks::run,
        spread: || crate::ranks::last().map(|s| s.table()),
    };
    Session::open(global.db.as_deref(), runner, kind, target, quiet)
}

/// Refuses a `--max-error-pct` that is not a percentage of 0 or more.
pub fn check_max_error_pct(pct: f64) -> Result<()> {
    if pct.is_nan() || pct < 0.0 {
        anyhow::bail!("--max-error-pct must be a percentage of 0 or more, not {pct}");
    }
    Ok(())
}
