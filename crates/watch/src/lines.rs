//! `--live` when stdout is not a terminal (a CI log, a pipe): one plain line per second on stderr
//! with what the view shows, so the report on stdout stays as it is without the option.

use crate::reading::Reading;
use std::time::{Duration, Instant};

/// How often a line is written.
pub const EVERY: Duration = Duration::from_secs(1);

#[derive(Default)]
pub struct Lines {
    last: Option<Instant>,
}

impl Lines {
    /// Writes a line for `r` if one is due at `now`, or if it is the `last` (the whole run's).
    pub fn show(&mut self, r: &Reading, now: Instant, last: bool) {
        let early = self.last.is_some_and(|t| now.duration_since(t) < EVERY) || r.elapsed < EVERY;
        if early && !last {
            return;
        }
        self.last = Some(now);
        eprintln!("{}", line(r));
    }
}

/// One line: where the run is, its rate, latency percentiles, statuses, failures, connections and
/// the generator's busy share.
pub fn line(r: &Reading) -> String {
    let s = &r.stage;
    let mut at = format!("webstand {}", s.command);
    if !s.label.is_empty() {
        at += &format!(" {}", s.label);
    }
    if let Some((n, of)) = s.level {
        at += &format!(" level {n}/{of}");
    }
    if let Some(rate) = s.target_rate {
        at += &format!(" asked {rate:.0}/s");
    }
    let v = &r.view;
    format!(
        "{at}: {:.1} s, {} clients, {:.0} req/s, {} complete, p50 {:.3} ms, p99 {:.3} ms, 2xx {}, 3xx {}, 4xx {}, 5xx {}, failed {}, {} connections open, generator {:.0} % busy",
        r.elapsed.as_secs_f64(),
        s.clients,
        r.rate,
        v.complete,
        r.latency(50.0) * 1e3,
        r.latency(99.0) * 1e3,
        v.statuses[2],
        v.statuses[3],
        v.statuses[4],
        v.statuses[5],
        r.failed(),
        v.connections_open,
        r.busy * 100.0
    )
}
