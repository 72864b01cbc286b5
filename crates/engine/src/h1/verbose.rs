//! ab's `-v`: what the engine prints while a run goes, in ab's words, so that a user who reads ab's
//! verbose output reads ours. Only reached when the plan asks (`Plan::verbosity` ≥ 2); a run without
//! `-v` never comes here.

use std::io::Write;

/// A final response head just arrived: at level 2 and up, the head as received and a warning for a
/// status outside 2xx; at level 3 and up, the status code of the others too.
pub(crate) fn head(level: u8, head: &[u8], status: u16) {
    let mut out = std::io::stdout().lock();
    let _ = write!(
        out,
        "LOG: header received:\n{}\n",
        String::from_utf8_lossy(head)
    );
    if !(200..300).contains(&status) {
        let _ = writeln!(out, "WARNING: Response code not 2xx ({status})");
    } else if level >= 3 {
        let _ = writeln!(out, "LOG: Response code = {status}");
    }
}
