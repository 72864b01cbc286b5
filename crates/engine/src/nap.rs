//! The nap: how an HTTP/1 thread waits halfway once it knows the server's pace, instead of the
//! halfway block (`halfway.rs`).
//!
//! HTTP/1 over TLS naps instead of blocking once it knows the server's pace ([`Nap`]): a sleeping
//! thread is on no socket's wait queue at all, so its wake-up is a timer on our own CPU and the
//! server pays none (each of ours cost nginx ~7 µs). Sized to half the backlog less the measured
//! oversleep, it leaves half the queue to keep the server busy; it got 1.07× wrk's requests/s at 32
//! connections and 1.01–1.02× at 64, against the block's 0.97–1.03×, never under the block in a
//! round (docs/BENCHMARKS.md, "How the generator waits"). Over plaintext it naps with 16–47
//! requests in flight ([`NAP_FROM_PLAIN`](crate::halfway::NAP_FROM_PLAIN), [`NAP_BELOW_PLAIN`]): at
//! 32 half the queue is the least the server needs behind our wake-up and the block's wake-up cost
//! it most; at 16–31 the nap takes the place of the spin, whose polling was
//! a quarter of the generator's CPU against a server slower per request than it, and
//! when it cannot nap it spins rather than block. Deeper queues block, shallower ones spin.

use crate::halfway::{MIN_QUEUE_PLAIN, NAP_BELOW_PLAIN};
use std::time::{Duration, Instant};

/// The queue from which a thread naps for a fixed number of responses ([`DEEP_NAP`]) instead of
/// waiting halfway down it, over plaintext and TLS alike.
///
/// Why: a response read long after it arrived is read from memory, not from cache. Between the
/// server's write into our socket and our read of it the server writes as many responses as the
/// wait lets pass, and each touches a socket of its own on both sides (a few KiB of kernel state
/// per request); halfway down thousands of requests that is tens of MiB, past this machine's 8 MiB
/// L3, so every socket we read, and the server's socket our next request lands in, is cold. A nap
/// of a fixed few hundred responses keeps that span inside the cache and still leaves the server
/// thousands of requests to work through while we sleep (no wake-up for it to pay, as the nap
/// elsewhere), and it needs no pick of a socket, which costs a look at every connection.
pub(crate) const DEEP_QUEUE: usize = 1024;

/// Responses a nap at a deep queue lets arrive before the thread reads them.
pub(crate) const DEEP_NAP: u32 = 128;

/// The shortest time a nap measures the server's time per response over.
const NAP_WINDOW: Duration = Duration::from_millis(1);

/// The shortest nap worth a sleep: below it, the halfway block (or, below [`MIN_QUEUE_PLAIN`]
/// over plaintext, the spin).
const MIN_NAP: Duration = Duration::from_micros(20);

/// Over HTTP/1 (over plaintext with 16–47 in flight), a timed nap instead of the halfway block
/// (the module's doc): half the backlog at the server (requests in flight × its
/// measured time per response) less the measured oversleep, so half the queue keeps the server
/// busy through our late wake-up.
#[derive(Debug)]
pub(crate) struct Nap {
    /// The queue from which this thread blocks instead ([`NAP_BELOW_PLAIN`]; never over TLS).
    below: usize,
    /// The shortest queue it blocks on when it cannot nap; shorter ones spin instead
    /// ([`MIN_QUEUE_PLAIN`] over plaintext; over TLS the halfway wait's own minimum).
    block_from: usize,
    /// Where the measuring window started: the arrival of the latest response then, and the count.
    window: Option<(Instant, u64)>,
    /// The server's time per response over the last full window (arrival stamps ÷ responses).
    per_response: Option<Duration>,
    /// Moving average (¼ weight) of how much longer than asked the naps slept.
    oversleep: Duration,
    /// Whether this thread's timer slack is down to 1 ns (the default 50 µs would be oversleep).
    slack_set: bool,
}

impl Nap {
    /// The nap of an HTTP/1 thread, over TLS or plaintext (the module's doc).
    pub(crate) fn new(tls: bool) -> Nap {
        Nap {
            below: if tls { usize::MAX } else { NAP_BELOW_PLAIN },
            block_from: if tls { 0 } else { MIN_QUEUE_PLAIN },
            window: None,
            per_response: None,
            oversleep: Duration::ZERO,
            slack_set: false,
        }
    }

    /// Counts `done` responses, the latest arrived at `last`: a new time per response each window.
    pub(crate) fn measure(&mut self, last: Instant, done: u64) {
        match self.window {
            Some((t0, n0)) if done > n0 && last.saturating_duration_since(t0) >= NAP_WINDOW => {
                let n = u32::try_from(done - n0).unwrap_or(u32::MAX);
                self.per_response = Some(last.duration_since(t0) / n);
                self.window = Some((last, done));
            }
            Some(_) => {}
            None => self.window = Some((last, done)),
        }
    }

    /// How long to sleep with `queue` requests at the server, at most `most`; None (block halfway,
    /// or below the block's queue spin) from the queue it blocks at, before the first window, or
    /// when the nap left after the oversleep is under [`MIN_NAP`], which also lets a past
    /// oversleep fade (no nap measures it again).
    pub(crate) fn length(&mut self, queue: usize, most: Duration) -> Option<Duration> {
        if queue >= self.below {
            return None;
        }
        let half = self.per_response? * u32::try_from(queue).unwrap_or(u32::MAX) / 2;
        match half.checked_sub(self.oversleep).filter(|n| *n >= MIN_NAP) {
            Some(nap) => Some(nap.min(most)),
            None => {
                self.oversleep = self.oversleep * 7 / 8;
                None
            }
        }
    }

    /// At a deep queue ([`DEEP_QUEUE`] or more in flight), once the pace is known: a nap for
    /// [`DEEP_NAP`] responses less the oversleep, at most `most` (see [`DEEP_QUEUE`]); None below
    /// it, before the first window, or when the oversleep eats the nap.
    pub(crate) fn deep_length(&mut self, queue: usize, most: Duration) -> Option<Duration> {
        if queue < DEEP_QUEUE {
            return None;
        }
        let span = self.per_response? * DEEP_NAP;
        match span.checked_sub(self.oversleep).filter(|n| *n >= MIN_NAP) {
            Some(nap) => Some(nap.min(most)),
            None => {
                self.oversleep = self.oversleep * 7 / 8;
                None
            }
        }
    }

    /// A nap asked for `asked` took `took`: the oversleep, each counted at most the nap's length.
    fn slept(&mut self, asked: Duration, took: Duration) {
        let over = took.saturating_sub(asked).min(asked);
        self.oversleep = (self.oversleep * 3 + over) / 4;
    }

    /// The shortest queue this thread blocks on halfway when it cannot nap (shorter ones spin).
    pub(crate) fn block_from(&self) -> usize {
        self.block_from
    }

    /// Sleeps `nap` with 1 ns timer slack, and counts the oversleep.
    pub(crate) fn sleep(&mut self, nap: Duration) {
        if !self.slack_set {
            // SAFETY: PR_SET_TIMERSLACK takes a plain integer and changes only this thread's slack.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
            self.slack_set = true;
        }
        let t0 = Instant::now();
        std::thread::sleep(nap);
        self.slept(nap, t0.elapsed());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::halfway::{min_queue, NAP_FROM_PLAIN};

    const MOST: Duration = Duration::from_millis(50);

    #[test]
    fn a_nap_is_half_the_backlog_less_the_oversleep_once_measured() {
        let t0 = Instant::now();
        let mut nap = Nap::new(true);
        nap.measure(t0, 100);
        assert_eq!(nap.length(32, MOST), None, "no time per response yet");
        nap.measure(t0 + Duration::from_micros(500), 150);
        assert_eq!(nap.length(32, MOST), None, "the window is not over");
        nap.measure(t0 + Duration::from_millis(2), 350);
        // 2 ms over 250 responses: 8 µs each; 32 in flight, half of them 128 µs.
        assert_eq!(nap.length(32, MOST), Some(Duration::from_micros(128)));
        assert_eq!(
            nap.length(64, Duration::from_micros(200)),
            Some(Duration::from_micros(200))
        );
        nap.slept(Duration::from_micros(128), Duration::from_micros(168));
        assert_eq!(nap.length(32, MOST), Some(Duration::from_micros(118)));
    }

    #[test]
    fn a_long_oversleep_counts_at_most_the_nap_and_fades_while_no_nap_is_taken() {
        let t0 = Instant::now();
        let mut nap = Nap::new(true);
        nap.measure(t0, 0);
        nap.measure(t0 + Duration::from_millis(1), 125);
        let asked = Duration::from_micros(128);
        for _ in 0..8 {
            nap.slept(asked, Duration::from_millis(5));
        }
        assert!(nap.oversleep <= asked, "{:?}", nap.oversleep);
        assert_eq!(nap.length(32, MOST), None, "the oversleep eats the nap");
        for _ in 0..40 {
            if nap.length(32, MOST).is_some() {
                break;
            }
        }
        let back = nap.length(32, MOST).expect("the oversleep fades");
        assert!(back >= MIN_NAP && back < asked, "{back:?}");
    }

    #[test]
    fn over_plaintext_only_a_queue_under_48_naps_over_tls_any() {
        let t0 = Instant::now();
        let (mut plain, mut tls) = (Nap::new(false), Nap::new(true));
        for nap in [&mut plain, &mut tls] {
            nap.measure(t0, 0);
            nap.measure(t0 + Duration::from_millis(1), 125);
        }
        // 8 µs per response: half of 32 in flight is 128 µs, of 47 is 188 µs.
        assert_eq!(plain.length(32, MOST), Some(Duration::from_micros(128)));
        assert_eq!(plain.length(47, MOST), Some(Duration::from_micros(188)));
        assert_eq!(plain.length(NAP_BELOW_PLAIN, MOST), None, "48 blocks");
        assert_eq!(plain.length(256, MOST), None);
        assert_eq!(tls.length(256, MOST), Some(Duration::from_micros(1024)));
    }

    #[test]
    fn a_deep_queue_naps_for_a_fixed_number_of_responses_over_either() {
        let t0 = Instant::now();
        let each = Duration::from_micros(8);
        for tls in [false, true] {
            let mut nap = Nap::new(tls);
            assert_eq!(nap.deep_length(15_000, MOST), None, "no pace yet");
            nap.measure(t0, 0);
            nap.measure(t0 + Duration::from_millis(1), 125);
            assert_eq!(nap.deep_length(DEEP_QUEUE - 1, MOST), None);
            assert_eq!(nap.deep_length(DEEP_QUEUE, MOST), Some(each * DEEP_NAP));
            assert_eq!(nap.deep_length(15_000, MOST), Some(each * DEEP_NAP));
            let short = Duration::from_micros(100);
            assert_eq!(nap.deep_length(15_000, short), Some(short));
        }
    }

    #[test]
    fn over_plaintext_only_a_queue_of_32_or_more_blocks_when_it_cannot_nap() {
        use webstand_results::spin_rule::SpinRule::Auto;
        // The halfway wait starts where the nap does; a shorter queue than the block's spins.
        assert_eq!(min_queue(false, false, true, Auto), Some(NAP_FROM_PLAIN));
        assert_eq!(Nap::new(false).block_from, MIN_QUEUE_PLAIN);
        assert_eq!(
            Nap::new(true).block_from,
            0,
            "over TLS the wait's own minimum"
        );
    }
}
