//! What a load thread has measured so far, for whoever watches a run while it goes (the live view,
//! the metrics endpoint, the OTLP push): each thread copies its own counts and latency histogram
//! into its slot of the run's [`crate::Live`] a few times a second (the engine decides when), only
//! while someone watches, never per request.

use crate::result::Failures;
use hdrhistogram::Histogram;
use std::time::Duration;

/// One load thread's measurements so far, or (merged) the whole run's.
#[derive(Clone, Debug)]
pub struct ThreadView {
    /// Complete responses.
    pub complete: u64,
    /// Failed requests by ab's classes.
    pub failed: Failures,
    /// Complete responses by status class: index 1 to 5 for 1xx to 5xx, 0 for anything else.
    pub statuses: [u64; 6],
    /// Bytes received.
    pub bytes: u64,
    /// Connections open at the moment of the copy.
    pub connections_open: u64,
    /// The thread's CPU time spent working (not spinning) since the run started.
    pub busy: Duration,
    /// Load threads merged into this view.
    pub threads: u64,
    /// Latency of every complete response (microseconds, as the report's).
    pub latency: Histogram<u64>,
}

impl ThreadView {
    /// An empty view, with the histogram bounds of the run's own.
    pub fn empty() -> ThreadView {
        ThreadView {
            complete: 0,
            failed: Failures::default(),
            statuses: [0; 6],
            bytes: 0,
            connections_open: 0,
            busy: Duration::ZERO,
            threads: 0,
            latency: crate::result::Histograms::new().total,
        }
    }

    /// Adds another thread's view to this one.
    pub fn merge(&mut self, o: &ThreadView) {
        self.complete += o.complete;
        self.failed.add(&o.failed);
        for (a, b) in self.statuses.iter_mut().zip(o.statuses) {
            *a += b;
        }
        self.bytes += o.bytes;
        self.connections_open += o.connections_open;
        self.busy += o.busy;
        self.threads += o.threads;
        // Same bounds on both sides, so this neither fails nor grows the histogram.
        let _ = self.latency.add(&o.latency);
    }
}

/// Index into [`ThreadView::statuses`] for a status code.
pub fn status_class(status: u16) -> usize {
    match status / 100 {
        c @ 1..=5 => c as usize,
        _ => 0,
    }
}
