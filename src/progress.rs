//! Progress display for runs longer than a couple of seconds (issue 6: placeholder until it lands).

use std::sync::Arc;
use std::time::Duration;
use webstand_engine::Live;

/// Stops the display when dropped.
pub struct Progress {}

/// Starts showing `live`'s counters: a bar on a terminal, periodic lines otherwise, nothing if `quiet`.
/// `requests` / `duration` are the run's bounds, for the bar's length.
pub fn start(label: &str, live: Arc<Live>, requests: Option<u64>, duration: Option<Duration>, quiet: bool) -> Progress {
    let _ = (label, live, requests, duration, quiet);
    Progress {}
}
