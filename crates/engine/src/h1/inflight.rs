//! The requests an HTTP/1 connection has written and not yet seen answered, oldest first. Every
//! connection but a pipelining one has at most one: it is held in the connection itself, and only
//! `-p`'s further pipelined requests queue behind it, so a keep-alive request touches no memory
//! beyond its connection's (one cache miss fewer per request when connections are many).

use std::collections::VecDeque;
use std::time::Instant;

#[derive(Clone, Copy)]
pub(crate) struct InFlight {
    pub req: usize,
    /// Send time (closed loop) or intended send time (open loop).
    pub start: Instant,
}

/// The queue: its front held inline, the rest behind it.
pub(crate) struct InFlights {
    first: Option<InFlight>,
    rest: VecDeque<InFlight>,
}

impl InFlights {
    /// Room for `pipeline` requests at once (the rest's queue allocated only when pipelining).
    pub(crate) fn with_room(pipeline: usize) -> InFlights {
        InFlights {
            first: None,
            rest: VecDeque::with_capacity(pipeline.saturating_sub(1)),
        }
    }

    pub(crate) fn push_back(&mut self, f: InFlight) {
        match self.first {
            None => self.first = Some(f),
            Some(_) => self.rest.push_back(f),
        }
    }

    pub(crate) fn pop_front(&mut self) -> Option<InFlight> {
        let front = self.first.take();
        self.first = self.rest.pop_front();
        front
    }

    pub(crate) fn front(&self) -> Option<&InFlight> {
        self.first.as_ref()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    pub(crate) fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.rest.len()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &InFlight> {
        self.first.iter().chain(&self.rest)
    }

    pub(crate) fn clear(&mut self) {
        self.first = None;
        self.rest.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_leave_in_the_order_they_came_whether_one_or_many() {
        let t = Instant::now();
        let mut q = InFlights::with_room(1);
        assert!(q.is_empty() && q.pop_front().is_none());
        for req in 0..4 {
            q.push_back(InFlight { req, start: t });
        }
        assert_eq!(q.len(), 4);
        assert_eq!(q.iter().map(|f| f.req).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(q.pop_front().map(|f| f.req), Some(0));
        q.push_back(InFlight { req: 4, start: t });
        let order: Vec<usize> = std::iter::from_fn(|| q.pop_front().map(|f| f.req)).collect();
        assert_eq!(order, [1, 2, 3, 4]);
        assert!(q.is_empty() && q.front().is_none());
        q.push_back(InFlight { req: 5, start: t });
        q.clear();
        assert_eq!(q.len(), 0);
    }
}
