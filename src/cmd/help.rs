//! What each command's `--help` says after its options: where its guide is and what its exit
//! statuses mean (docs/EXIT-STATUS.md has the whole story).

/// The measuring commands' exit statuses: each is also the run's status in the history.
pub const EXIT: &str = "Exit status: 0 complete, 1 could not run, 2 bad command line, 3 errors above \
--max-error-pct (failed requests + non-2xx answers), 4 nothing succeeded, 5 target lost, 6 a --threshold crossed, \
130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (docs/EXIT-STATUS.md); the same word is the run's status in `webstand history`";

/// `history`, `show`, `diff`, `export` and `report`, which only read the history.
pub const READING: &str = "Guide: docs/HISTORY.md\n\nExit status: 0 done, 1 could not \
(no history database, no such run, a file that cannot be written), 2 bad command line";

/// A measuring command's closing lines: its guide, then [`EXIT`].
pub fn measuring(guide: &str) -> String {
    format!("Guide: {guide}\n\n{EXIT}")
}

/// `serve`: it runs until it is stopped.
pub const SERVE: &str = "Guide: docs/SERVE.md\n\nExit status: 0 stopped by SIGTERM or Ctrl-C \
after finishing the requests in flight, 1 could not start (an address in use, a certificate or \
config that cannot be used), 2 bad command line";

/// `fixtures`.
pub const FIXTURES: &str = "Guide: docs/SWEEP.md\n\nExit status: 0 written, 1 could not write (a \
file in the way, no space), 2 bad command line";

/// `lab up`: it runs until it is stopped.
pub const LAB_UP: &str = "Guide: docs/COMPARE.md\n\nExit status: 0 stopped by Ctrl-C, SIGTERM or \
SIGHUP (everything it started stopped), 1 could not start (a server not installed, a port in use) \
or the server died, 2 bad command line";

/// `webstand --help`: where the guides are, then [`EXIT`].
pub fn main() -> String {
    format!(
        "Start with README.md; a guide per command in docs/: BENCH.md, SWEEP.md, COMPARE.md, \
SERVE.md, PROBE.md, HISTORY.md (history, show, diff, export, report).\n\n{EXIT}"
    )
}
