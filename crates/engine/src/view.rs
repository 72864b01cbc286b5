//! When a watched load thread publishes its view (`webstand_results::ThreadView`) into the run's
//! `Live`: a few times a second, never per request, and never waiting for the slot (a reader
//! holding it only delays the copy a pass).

use std::time::{Duration, Instant};

/// How often a watched load thread publishes its view: a few times a display's redraw rate, so a
/// reader's copy is never more than this old.
pub(crate) const VIEW_EVERY: Duration = Duration::from_millis(100);

/// When a load thread next publishes its view.
pub(crate) struct ViewClock {
    next: Instant,
}

impl ViewClock {
    pub(crate) fn new(now: Instant) -> ViewClock {
        ViewClock { next: now }
    }

    /// Whether a copy is due at `now` (the pass's clock read, so this costs a comparison).
    pub(crate) fn due(&mut self, now: Instant) -> bool {
        let due = now >= self.next;
        if due {
            self.next = now + VIEW_EVERY;
        }
        due
    }
}
