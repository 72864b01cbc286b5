//! The order a multiplexed connection (HTTP/2, HTTP/3) answers its requests in: streams whose
//! request is complete wait in `ready`, in arrival order; one that needs a CGI/FastCGI job while
//! the connection runs its most jobs waits among the deferred, which go first once a job ends;
//! the streams a job answers; and answered requests' text buffers, kept for the next streams so
//! that a request allocates nothing (tests/serve_h2_alloc.rs, serve_h3_alloc.rs).

use crate::service::Served;
use std::collections::VecDeque;

/// Request text buffers kept for reuse: a batch of streams answered in one round.
const SPARE_TEXTS: usize = 32;

/// One connection's streams by where they are in their turn.
pub struct Turns<Id> {
    /// Streams whose requests are complete (or refused), to answer in order.
    pub ready: VecDeque<Id>,
    /// Streams that wait for a job slot, in order.
    deferred: VecDeque<Id>,
    /// Streams a job answers (their jobs end when they close first).
    with_jobs: Vec<Id>,
    spare_texts: Vec<Vec<u8>>,
    /// A stream's answer was paced by a throttle rule.
    pub paced: bool,
}

impl<Id: Copy + PartialEq> Turns<Id> {
    pub fn new() -> Turns<Id> {
        Turns {
            ready: VecDeque::new(),
            deferred: VecDeque::new(),
            with_jobs: Vec::new(),
            spare_texts: Vec::new(),
            paced: false,
        }
    }

    /// A round of answers begins: the deferred streams go first when a job may start again.
    pub fn begin(&mut self, job_slot_free: bool) {
        if job_slot_free && !self.deferred.is_empty() {
            let mut queue = std::mem::take(&mut self.deferred);
            queue.append(&mut self.ready);
            self.ready = queue;
        }
    }

    /// What the server did with stream `id`'s request: the throttle its answer is paced by
    /// (`Some(None)` when none, or when a job answers later), or None when it waits for a job slot.
    pub fn served(&mut self, id: Id, served: Served) -> Option<Option<usize>> {
        match served {
            Served::Answered { throttle, .. } => {
                self.paced |= throttle.is_some();
                Some(throttle)
            }
            Served::Started => {
                self.with_jobs.push(id);
                Some(None)
            }
            Served::Busy => {
                self.deferred.push_back(id);
                None
            }
        }
    }

    /// Streams wait for a job slot (asked again once one of the running jobs ends).
    pub fn waits_for_job(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// The streams a job answers.
    pub fn with_jobs(&self) -> &[Id] {
        &self.with_jobs
    }

    /// Stream `id`'s job ended.
    pub fn job_ended(&mut self, id: Id) {
        self.with_jobs.retain(|&s| s != id);
    }

    /// Ends the jobs of the streams that closed before their answer (`open` says which are
    /// still open; `cancel` ends a job).
    pub fn end_jobs_of_closed(&mut self, open: impl Fn(Id) -> bool, mut cancel: impl FnMut(Id)) {
        self.with_jobs.retain(|&id| {
            let still = open(id);
            if !still {
                cancel(id);
            }
            still
        });
    }

    /// Stream `id` was reset: it is answered no more.
    pub fn forget(&mut self, id: Id) {
        self.ready.retain(|&s| s != id);
        self.deferred.retain(|&s| s != id);
    }

    /// The connection failed: nothing more is answered.
    pub fn clear(&mut self) {
        self.ready.clear();
        self.deferred.clear();
    }

    /// A buffer for a new request's text: one kept from an answered request, if any.
    pub fn text_buffer(&mut self) -> Vec<u8> {
        self.spare_texts.pop().unwrap_or_default()
    }

    /// A request's text buffer, kept for the next request's.
    pub fn keep_text_buffer(&mut self, mut text: Vec<u8>) {
        if self.spare_texts.len() < SPARE_TEXTS {
            text.clear();
            self.spare_texts.push(text);
        }
    }
}
