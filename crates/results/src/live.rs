//! The counters a run publishes while it goes, and the flag that stops it: the one thing a load
//! thread shares with the rest of the program during a run (progress displays, Ctrl-C, MPI ranks,
//! and, while someone watches, each thread's view of what it measured: [`crate::view`]).

use crate::view::ThreadView;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Counters a run publishes while it goes, for progress displays and for stopping it early.
/// Threads add to them once per event batch, never per request.
#[derive(Debug, Default)]
pub struct Live {
    pub complete: AtomicU64,
    pub failed: AtomicU64,
    /// Complete answers whose status was not 2xx (with `failed`, the errors a diagnosis dates).
    pub non_2xx: AtomicU64,
    pub bytes: AtomicU64,
    /// Set by anyone (Ctrl-C handler) to end the run; the result then covers what completed.
    pub stop: AtomicBool,
    /// Set by a watcher ([`Live::watch`]): the load threads then publish their views.
    watched: AtomicBool,
    /// Each load thread's latest view, by thread index.
    views: Mutex<Vec<Option<ThreadView>>>,
}

impl Live {
    /// Asks the load threads to publish their views from now on (a few times a second each).
    pub fn watch(&self) {
        self.watched.store(true, Ordering::Relaxed);
    }

    /// Whether someone watches: the load threads publish their views only then.
    pub fn watched(&self) -> bool {
        self.watched.load(Ordering::Relaxed)
    }

    /// Load thread `index` copies its view into its slot with `fill`. While the run goes it never
    /// waits for a reader holding the slots (the copy is then a pass later); its `last` copy, at
    /// its end, does. The slot is made on the first copy.
    pub fn publish(&self, index: usize, last: bool, fill: impl FnOnce(&mut ThreadView)) {
        let mut views = match (self.views.try_lock(), last) {
            (Ok(v), _) => v,
            (Err(_), true) => self.views.lock().unwrap_or_else(|e| e.into_inner()),
            (Err(_), false) => return,
        };
        if views.len() <= index {
            views.resize_with(index + 1, || None);
        }
        fill(views[index].get_or_insert_with(ThreadView::empty));
    }

    /// The whole run's view: every thread's latest copy merged (None before the first copy).
    pub fn view(&self) -> Option<ThreadView> {
        let views = self.views.lock().unwrap_or_else(|e| e.into_inner());
        let mut all = views.iter().flatten();
        let mut merged = all.next()?.clone();
        for v in all {
            merged.merge(v);
        }
        Some(merged)
    }
}
