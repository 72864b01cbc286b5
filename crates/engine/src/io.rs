//! What a load thread lends its connections on every call (`connection.rs`): the poller they
//! register with, the thread's one read buffer, the pass's clock for arrival stamps, where the
//! next request comes from (`requests.rs`), where what happened is counted (`record.rs`), the
//! slots that asked to be started at the next pass, and the finished connections to close once
//! their successors' requests are out.

use crate::clock::PassClock;
use crate::record::Record;
use crate::requests::Requests;
use crate::shared::Shared;
use crate::transport::Transport;
use mio::Poll;

pub(crate) struct Io<'a> {
    pub sh: &'a Shared<'a>,
    pub poll: Poll,
    /// The one read buffer of this thread.
    pub buf: Vec<u8>,
    pub clock: PassClock,
    pub requests: Requests,
    pub record: Record,
    pub ready: Ready,
    /// Finished connections, closed once the slots' next requests are on their way (the server
    /// gets those requests a close() sooner).
    pub retired: Vec<Transport>,
}

/// Slots that need their next start at the top of the next pass (deferred so failures never
/// recurse), each listed once.
pub(crate) struct Ready {
    slots: Vec<usize>,
    listed: Vec<bool>,
}

impl Ready {
    pub(crate) fn new(slots: usize) -> Ready {
        Ready {
            slots: Vec::with_capacity(slots),
            listed: vec![false; slots],
        }
    }

    pub(crate) fn push(&mut self, slot: usize) {
        if !std::mem::replace(&mut self.listed[slot], true) {
            self.slots.push(slot);
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Moves the listed slots into `batch` (empty), in the order they were listed; slots listed
    /// while the batch is started go to the next one.
    pub(crate) fn take(&mut self, batch: &mut Vec<usize>) {
        std::mem::swap(&mut self.slots, batch);
        for &slot in batch.iter() {
            self.listed[slot] = false;
        }
    }
}
