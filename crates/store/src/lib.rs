//! The results history: every bench, sweep and compare run in an embedded SQLite database, written in
//! transactions so an interrupted run keeps what it completed. (Being written under issue 6: the API
//! below is the contract the commands call; its bodies are placeholders until then.)

use std::path::Path;
use webstand_engine::RunResult;

/// A run's id in the history.
pub type RunId = i64;

/// What a run was, recorded when it begins.
#[derive(Clone, Debug, Default)]
pub struct RunMeta {
    /// "bench", "sweep" or "compare".
    pub kind: String,
    /// The command line as typed.
    pub command_line: String,
    /// The target URL (or "lab" for a comparison).
    pub target: String,
}

pub struct Store {}

impl Store {
    /// Opens (creating if needed) the database at `path`, or the default one in the user's data dir.
    pub fn open(path: Option<&Path>) -> anyhow::Result<Store> {
        let _ = path;
        Ok(Store {})
    }
    /// Records the start of a run.
    pub fn begin_run(&self, meta: &RunMeta) -> anyhow::Result<RunId> {
        let _ = meta;
        Ok(0)
    }
    /// Records one measured level, in its own transaction. `group` names the series it belongs to
    /// ("" for a bench run, the workload for a sweep, "server/workload" for a comparison);
    /// `server_version` is the target's version where known.
    pub fn add_level(&self, run: RunId, group: &str, clients: usize, server_version: Option<&str>, result: &RunResult) -> anyhow::Result<()> {
        let _ = (run, group, clients, server_version, result);
        Ok(())
    }
    /// Marks a run finished: "complete", "interrupted" or "failed".
    pub fn finish_run(&self, run: RunId, status: &str) -> anyhow::Result<()> {
        let _ = (run, status);
        Ok(())
    }
}
