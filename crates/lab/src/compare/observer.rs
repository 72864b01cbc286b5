//! The caller's hooks into a comparison.

use crate::sweep::Observer;
use webstand_results::{Note, ServerFigures};

/// The caller's hooks: everything of sweep's [`Observer`] (Ctrl-C, progress, saving each level) plus
/// which server and workload the next levels belong to, and progress lines.
pub trait CompareObserver: Observer {
    /// The levels that follow belong to `server` (at `version`) on `workload`, in `round`
    /// (0-based, as [`WorkloadOutcome::round`]).
    fn series(&mut self, server: &str, version: &str, workload: &str, round: usize);
    /// How the server runs the series' workload where its row must say so (saved with each level
    /// that follows, until the next series).
    fn notes(&mut self, notes: &[Note]) {
        let _ = notes;
    }
    /// A line of progress (stderr in the CLI).
    fn note(&mut self, line: &str);
    /// Whether the user asked to stop (Ctrl-C): no further server is started.
    fn stop_requested(&self) -> bool;
    /// The server's side of the level just passed to `level_done`: its CPU time and peak resident
    /// memory (KiB) during the run, and on a dynamic workload its PHP backends' CPU time.
    fn server_figures(&mut self, clients: usize, figures: &ServerFigures) {
        let _ = (clients, figures);
    }
    /// The config files and command lines `server` was started with (once per comparison).
    fn server_configs(&mut self, server: &str, files: &[(String, String)]) {
        let _ = (server, files);
    }
}
