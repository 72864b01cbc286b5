//! What a probe found: per connection ([`Seen`]), per case ([`CaseResult`]) and for the whole run
//! ([`Report`]). Serializable: the same values go to `--json`, the history and back.

use serde::{Deserialize, Serialize};

/// How a connection ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum End {
    /// The server closed it (FIN, or a write found it gone).
    Closed,
    /// The server reset it.
    Reset,
    /// Still open at the end of the case, after complete answers.
    Open,
    /// Still open at the end of the case, waiting for an answer.
    #[default]
    Timeout,
    /// Never connected.
    Refused,
}

impl End {
    pub fn name(self) -> &'static str {
        match self {
            End::Closed => "close",
            End::Reset => "reset",
            End::Open => "open",
            End::Timeout => "timeout",
            End::Refused => "refused",
        }
    }
}

/// What one connection saw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Seen {
    /// Final statuses of the complete responses, in order (the first 16).
    pub statuses: Vec<u16>,
    /// Complete responses.
    pub responses: u64,
    pub end: End,
    /// When it ended, from the start of the case.
    pub end_ms: u64,
    /// When the first byte of an answer came (or the server closed).
    pub first_answer_ms: Option<u64>,
    /// Bytes received.
    pub bytes: u64,
    /// Bytes the server never took (it closed, or stopped reading).
    pub unsent: u64,
    /// A response that could not be parsed, and why.
    pub garbage: Option<String>,
    /// The leak target whose content came back.
    pub leaked: Option<String>,
}

/// Safe, lenient or unsafe (docs/PROBE-CASES.md, "Verdicts").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Safe,
    /// Accepted something it should refuse; no harm seen.
    Lenient,
    /// A desync, a leak outside the docroot, a crash or a hang.
    Unsafe,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Safe => "safe",
            Verdict::Lenient => "lenient",
            Verdict::Unsafe => "UNSAFE",
        }
    }
}

/// A fresh request on a new connection: answered (status, milliseconds) or not (why).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fresh {
    /// When it was sent, from the start of the case (0 for the check after the case).
    pub at_ms: u64,
    pub status: Option<u16>,
    pub answered_ms: Option<u64>,
    pub error: Option<String>,
}

/// Every connection of a multi-connection case, counted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Crowd {
    pub requested: usize,
    pub opened: usize,
    /// Closed or reset by the server before the case ended.
    pub ended_by_server: usize,
    /// When the last of those ended.
    pub last_end_ms: Option<u64>,
    pub responses: u64,
}

/// One case's run against the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    /// The case name, with `@target` for a traversal run.
    pub name: String,
    pub category: String,
    pub what: String,
    pub rfc: String,
    pub verdict: Verdict,
    /// Why the verdict is not safe (empty when safe).
    pub notes: Vec<String>,
    /// The first connection.
    pub first: Seen,
    pub crowd: Crowd,
    /// The fresh request during the case (`expect.available_at`).
    pub during: Option<Fresh>,
    /// The fresh request after the case (is the server still there?).
    pub after: Fresh,
    pub elapsed_ms: u64,
}

/// How a probe run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ended {
    Complete,
    /// `--max-time` left no room for some cases.
    MaxTime,
    Interrupted,
    /// The target stopped answering; the cases after that were not run.
    TargetLost,
}

/// The whole probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub url: String,
    /// The address probed (every connection went there).
    pub address: String,
    /// The URL's normal answer: status and bytes.
    pub baseline_status: u16,
    pub baseline_bytes: u64,
    pub cases: Vec<CaseResult>,
    /// Cases not run, with the reason.
    pub not_run: Vec<String>,
    pub ended: Ended,
    pub elapsed_ms: u64,
}

/// "1.2s", "35ms".
pub fn millis(ms: u64) -> String {
    if ms >= 1000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{ms}ms")
    }
}

/// "312B", "5.1kB", "2.0MB".
pub fn bytes(n: u64) -> String {
    match n {
        0..=999 => format!("{n}B"),
        1000..=999_999 => format!("{:.1}kB", n as f64 / 1e3),
        _ => format!("{:.1}MB", n as f64 / 1e6),
    }
}

impl Seen {
    /// The complete answers' statuses: "400", "200,404", "200×12" for many.
    fn statuses_text(&self) -> String {
        if self.responses as usize > self.statuses.len() || self.responses > 4 {
            format!("{}×{}", self.statuses[0], self.responses)
        } else {
            let s: Vec<String> = self.statuses.iter().map(u16::to_string).collect();
            s.join(",")
        }
    }

    /// "400 at 2ms, close, 312B", "200,404 at 1ms, open, 4.3kB", "- close at 5ms, 0B", "- no
    /// answer in 3.0s, 0B": a time is the server's (when its first byte, or its close, came, from
    /// the start of the case) unless it answered nothing, when it is how long the probe waited.
    pub fn describe(&self) -> String {
        let first = self.first_answer_ms.map(millis);
        let mut text = match (self.responses, self.end, first) {
            (0, End::Refused, _) => "- refused".to_string(),
            (0, End::Closed | End::Reset, Some(t)) => format!("- {} at {t}", self.end.name()),
            (0, _, Some(t)) => format!("- first byte at {t}, no answer in {}", millis(self.end_ms)),
            (0, _, None) => format!("- no answer in {}", millis(self.end_ms)),
            (_, end, t) => format!(
                "{} at {}, {}",
                self.statuses_text(),
                t.unwrap_or_else(|| "?".into()),
                end.name()
            ),
        };
        text += &format!(", {}", bytes(self.bytes));
        if self.unsent > 0 {
            text += &format!(" ({} unsent)", bytes(self.unsent));
        }
        if self.garbage.is_some() {
            text += " garbage";
        }
        if let Some(t) = &self.leaked {
            text += &format!(" LEAK:{t}");
        }
        text
    }
}

impl CaseResult {
    /// What the server did, in one cell.
    pub fn did(&self) -> String {
        if self.crowd.requested <= 1 {
            return self.first.describe();
        }
        let c = &self.crowd;
        let mut text = format!("{}/{} conns", c.opened, c.requested);
        match c.last_end_ms {
            Some(t) if c.ended_by_server == c.opened => {
                text += &format!(" all closed by {}", millis(t))
            }
            _ => text += &format!(", {} closed", c.ended_by_server),
        }
        if c.responses > 0 {
            text += &format!(", {} resp", c.responses);
        }
        if let Some(f) = &self.during {
            text += &match f.answered_ms {
                Some(ms) => format!("; a fresh request: {}", millis(ms)),
                None => "; fresh: no answer".to_string(),
            };
        }
        text
    }
}
