//! Whether the target can be reached, learnt from the run's own connections (no probe connection
//! before a run): which of its addresses to use, and when to give up on it.
//!
//! - Until one connection has succeeded, a failed connect moves to the target's next address (a name
//!   such as `localhost` resolves to `::1` and `127.0.0.1`); with none left the target is
//!   [`Ended::Unreachable`] and the run stops at once: there is nothing to measure.
//! - After that, [`LOST_AFTER_REFUSALS`] connections refused in a row (no successful connect between
//!   them) mean nobody listens any more: the run stops as [`Ended::TargetLost`] instead of counting
//!   refusals for the rest of its time. Only refusals count: a connect timeout or a local limit
//!   (ports, file descriptors) says nothing about the server being gone.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::OnceLock;
use webstand_results::result::{Ended, LOST_AFTER_REFUSALS};

/// Shared by every load thread of one run. Touched once per connect, never per request.
pub(crate) struct Reach<'a> {
    addrs: &'a [SocketAddr],
    index: AtomicUsize,
    connected: AtomicBool,
    refusals: AtomicU64,
    ended: OnceLock<Ended>,
}

impl<'a> Reach<'a> {
    pub(crate) fn new(addrs: &'a [SocketAddr]) -> Reach<'a> {
        Reach {
            addrs,
            index: AtomicUsize::new(0),
            connected: AtomicBool::new(false),
            refusals: AtomicU64::new(0),
            ended: OnceLock::new(),
        }
    }

    /// The address new connections go to.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addrs[self.index.load(Relaxed).min(self.addrs.len() - 1)]
    }

    /// A connection was made.
    pub(crate) fn connected(&self) {
        if !self.connected.load(Relaxed) {
            self.connected.store(true, Relaxed);
        }
        if self.refusals.load(Relaxed) != 0 {
            self.refusals.store(0, Relaxed);
        }
    }

    /// A connect to `to` failed with `err`. Returns true when the request should simply be sent again
    /// (to the next address, not counted as a failure): nothing has connected yet and another address
    /// is left, or another thread has already moved on from `to`.
    pub(crate) fn connect_failed(&self, to: SocketAddr, err: &io::Error) -> bool {
        let i = self.index.load(Relaxed);
        // Stale: a connect begun before another thread moved on from `to` (and perhaps connected
        // to the next address since) says nothing about the address in use now.
        if self.addrs.get(i) != Some(&to) {
            return true;
        }
        if !self.connected.load(Relaxed) {
            if i + 1 < self.addrs.len() {
                let _ = self.index.compare_exchange(i, i + 1, Relaxed, Relaxed);
                return true;
            }
            let _ = self.ended.set(Ended::Unreachable);
        } else if err.kind() == io::ErrorKind::ConnectionRefused
            && self.refusals.fetch_add(1, Relaxed) + 1 >= LOST_AFTER_REFUSALS
        {
            let _ = self.ended.set(Ended::TargetLost);
        }
        false
    }

    /// The target answered but not in the protocol asked for (`--h2` to a server without
    /// HTTP/2, `--h3` to one without HTTP/3; `why` says which): like a target never reached, the
    /// run ends with nothing to report.
    pub(crate) fn refuse_protocol(&self, why: Ended) {
        let _ = self.ended.set(why);
    }

    /// Why the run must end now, if it must.
    pub(crate) fn ended(&self) -> Option<Ended> {
        self.ended.get().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused() -> io::Error {
        io::Error::from(io::ErrorKind::ConnectionRefused)
    }

    #[test]
    fn a_first_failure_moves_to_the_next_address_then_gives_up() {
        let addrs: Vec<SocketAddr> =
            vec!["[::1]:1".parse().unwrap(), "127.0.0.1:1".parse().unwrap()];
        let r = Reach::new(&addrs);
        assert!(
            r.connect_failed(addrs[0], &refused()),
            "retried on the next address"
        );
        assert_eq!((r.addr(), r.ended()), (addrs[1], None));
        // A late failure of the first address is retried too, and changes nothing.
        assert!(r.connect_failed(addrs[0], &refused()));
        assert_eq!((r.addr(), r.ended()), (addrs[1], None));
        assert!(!r.connect_failed(addrs[1], &refused()), "no address left");
        assert_eq!(r.ended(), Some(Ended::Unreachable));
    }

    #[test]
    fn a_refusal_of_an_address_left_behind_is_retried_after_the_next_one_answered() {
        let addrs: Vec<SocketAddr> =
            vec!["[::1]:1".parse().unwrap(), "127.0.0.1:1".parse().unwrap()];
        let r = Reach::new(&addrs);
        assert!(r.connect_failed(addrs[0], &refused()));
        r.connected();
        // Another client's connect to the first address, begun before the move, refused after.
        assert!(
            r.connect_failed(addrs[0], &refused()),
            "stale, not a failure"
        );
        assert_eq!((r.addr(), r.ended()), (addrs[1], None));
        assert!(
            !r.connect_failed(addrs[1], &refused()),
            "the address in use counts"
        );
    }

    #[test]
    fn refusals_in_a_row_after_a_connection_lose_the_target() {
        let addrs: Vec<SocketAddr> = vec!["127.0.0.1:1".parse().unwrap()];
        let r = Reach::new(&addrs);
        r.connected();
        let timeout = io::Error::from(io::ErrorKind::TimedOut);
        for _ in 0..100 {
            assert!(!r.connect_failed(addrs[0], &timeout));
        }
        for _ in 0..LOST_AFTER_REFUSALS - 1 {
            r.connect_failed(addrs[0], &refused());
        }
        r.connected(); // one success starts the count again
        for _ in 0..LOST_AFTER_REFUSALS - 1 {
            r.connect_failed(addrs[0], &refused());
        }
        assert_eq!(r.ended(), None);
        r.connect_failed(addrs[0], &refused());
        assert_eq!(r.ended(), Some(Ended::TargetLost));
    }
}
