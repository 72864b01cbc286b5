//! `compare --probe`'s row for one server: the probe's cases counted by category, service
//! availability under slowhttptest's attacks, the most keep-alive connections held at once, and the
//! memory an idle connection costs. The lab measures them (`webstand_lab::robustness`).

use serde::Serialize;

/// One server's robustness row.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Robustness {
    /// Safe, lenient and unsafe cases per category.
    pub categories: Vec<Counts>,
    /// Why the probe's counts are partial or missing (unreachable, target lost, out of time, or
    /// not run on this port).
    pub probe_note: Option<String>,
    /// Categories whose cases were not run at all (the HTTP/1 cases on an HTTPS port): `-` cells.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<String>,
    /// The HTTP/3 cases that were not safe, each with what was seen.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub h3_notes: Vec<String>,
    pub slowloris: Attacked,
    pub slow_read: Attacked,
    pub held: Held,
    /// Resident memory per idle keep-alive connection, measured first (before the attacks and the
    /// search raise the server's high-water mark).
    pub memory: PerConnection,
}

/// The keep-alive search: each level opens that many connections at once and makes two requests on
/// each.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Held {
    /// The most connections held with 0 errors (0: not even the first level).
    pub most: usize,
    /// The search's ceiling; `most == limit` means the server was not pushed to its end.
    pub limit: usize,
    /// The first level with errors: its connections and error count.
    pub broke_at: Option<(usize, u64)>,
}

impl Held {
    pub fn cell(&self) -> String {
        match self.broke_at {
            None if self.most >= self.limit => format!("{}+", self.most),
            _ => self.most.to_string(),
        }
    }
}

/// Safe, lenient and unsafe counts of one category, in first-seen order of categories.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub category: String,
    pub safe: usize,
    pub lenient: usize,
    #[serde(rename = "unsafe")]
    pub unsafe_: usize,
}

/// Service availability during one slowhttptest attack, from its per-second CSV.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Attacked {
    pub connections: usize,
    pub seconds: u64,
    /// Seconds sampled, and those in which slowhttptest's own fresh request was answered in time.
    pub samples: usize,
    pub available: usize,
    /// Most attack connections open at once, as slowhttptest counted them.
    pub most_connected: usize,
    /// Why there is no figure (the tool missing or failing).
    pub note: Option<String>,
}

impl Attacked {
    /// The table's cell: `yes` when every second was served, else the share of seconds.
    pub fn cell(&self) -> String {
        match &self.note {
            Some(_) => "FAILED".into(),
            None if self.samples > 0 && self.available == self.samples => "yes".into(),
            None => format!("no ({}/{} s)", self.available, self.samples),
        }
    }
}

/// The resident memory an idle keep-alive connection costs a server, as measured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PerConnection {
    /// Connections held open (and answered) at the second reading.
    pub connections: usize,
    pub rss_before_kib: u64,
    pub rss_with_kib: u64,
    /// Why there is no figure (a connection refused or unanswered).
    pub note: Option<String>,
}

impl PerConnection {
    /// Bytes per connection, when measured.
    pub fn bytes(&self) -> Option<f64> {
        (self.note.is_none() && self.connections > 0).then(|| {
            let delta = self.rss_with_kib.saturating_sub(self.rss_before_kib);
            delta as f64 * 1024.0 / self.connections as f64
        })
    }

    /// The table's cell: KiB per connection with one decimal.
    pub fn cell(&self) -> String {
        match self.bytes() {
            Some(b) => format!("{:.1}", b / 1024.0),
            None => "FAILED".into(),
        }
    }
}
