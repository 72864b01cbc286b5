//! How a closed-loop keep-alive thread (HTTP/1, TLS or not) with a deep queue at the server waits:
//! blocked on one socket, the one whose response is due about halfway down the queue, instead of on
//! all of them.
//!
//! Why: a thread blocked in `epoll_wait` is woken by the server's first response, and on this kind
//! of machine that wake-up (an inter-processor interrupt through the hypervisor) is paid by the
//! server, on its CPU, so a blocking generator lowers the server's rate (`spin.rs`). The spin avoids
//! the wake-up by polling, and pays for it with the generator's CPU (16–21 % of an HTTPS keep-alive
//! request, docs/BENCHMARKS.md, issue 10). Blocked in `ppoll` on one socket, the thread is on no
//! other socket's wait queue: the server's other responses find no waiter (their epoll readiness
//! is still recorded) and cost it no wake-up. Picking the request sent halfway down the queue means
//! one wake-up per half-queue of responses, while the other half keeps the server busy through the
//! wake-up's latency; the thread then takes every ready response from the poller at once.
//!
//! Only where that holds: a closed keep-alive loop (HTTP/1, or `--h2`, whose connections wait on
//! their oldest batch of streams: `h2_worker.rs`) on a server that keeps its connections open
//! ([`KEPT_OPEN`]), with a deep enough queue and none waiting to write, and `--spin auto` (`off`
//! keeps wrk's way of waiting, a window keeps the spin). HTTP/1 waits from 32 requests in flight,
//! over plaintext ([`MIN_QUEUE_PLAIN`]) and over TLS ([`MIN_QUEUE_TLS`]): below that the server
//! pays for the wake-ups more than the spin costs us; `--h2` over TLS from 16 connections
//! ([`MIN_QUEUE`]), each many streams deep. A response that does not come (a slow request) holds
//! the others' no longer than [`bound`] allows.
//!
//! HTTP/1 over TLS naps instead of blocking once it knows the server's pace ([`Nap`]): a sleeping
//! thread is on no socket's wait queue at all, so its wake-up is a timer on our own CPU and the
//! server pays none (each of ours cost nginx ~7 µs). Sized to half the backlog less the measured
//! oversleep, it leaves half the queue to keep the server busy; it got 1.07× wrk's requests/s at
//! 32 connections and 1.01–1.02× at 64, against the block's 0.97–1.03×, never under the block in
//! a round (docs/BENCHMARKS.md, issue 10, sessions 10b and 10c). Over plaintext it naps with
//! 16–47 requests in flight ([`NAP_FROM_PLAIN`], [`NAP_BELOW_PLAIN`]): at 32 half the queue is the
//! least the server needs behind our wake-up and the block's wake-up cost it most (issue 18,
//! session 11); at 16–31 the nap takes the place of the spin, whose polling was a quarter of the
//! generator's CPU against a server slower per request than it (session 12), and when it cannot
//! nap it spins rather than block. Deeper queues block, shallower ones spin.

use crate::conn::Phase;
use crate::worker::Worker;
use mio::Events;
use std::io::{self, ErrorKind};
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// The fewest `--h2` connections with streams in flight over TLS for a halfway wait: half of them
/// is the server's work through our wake-up (8 connections of many streams of 10 µs or more
/// against a wake-up of tens of µs here).
pub(crate) const MIN_QUEUE: usize = 16;

/// The same for HTTP/1 over TLS, counted in requests: waking every 8th of a 16-deep queue cost
/// nginx ~0.9 µs more CPU per request than the spin (~7 µs per wake-up on its CPU), 0.92–0.94×
/// wrk's requests/s at 16 connections where the spin got 1.03–1.06×; at 32 the halfway wait gets
/// the spin's rate at 0.7× wrk's CPU (docs/BENCHMARKS.md, issue 10, session 10).
pub(crate) const MIN_QUEUE_TLS: usize = 32;

/// The same over plaintext, where a response costs the server 4–5 µs: a 16-deep queue cost 10 % of
/// the requests/s at 16 clients against lighttpd and h2o, a 32-deep one nothing
/// (docs/BENCHMARKS.md, issue 18, session 9). A shallower pick does not rescue a shorter queue:
/// the server needs about 12 responses behind the pick when we block, or it runs dry through our
/// wake-up (at 8 clients every wake found the whole queue answered); 24 cost h2o 4 % (session 10).
pub(crate) const MIN_QUEUE_PLAIN: usize = 32;

/// The shortest a halfway wait may block before the thread looks at every socket again.
const MIN_BOUND: Duration = Duration::from_micros(200);

/// The socket to block on among `(sent, fd)` of the connections waiting on a response: the one
/// sent halfway down the queue (oldest first), and how long to wait for it: twice the time between
/// the oldest request's send and its (a server answering in order gets through that half in about
/// that time), at least [`MIN_BOUND`], at most `most`. Reorders `waiting`. None below [`MIN_QUEUE`].
pub(crate) fn pick(
    waiting: &mut [(Instant, RawFd)],
    most: Duration,
    min: usize,
) -> Option<(RawFd, Duration)> {
    if waiting.len() < min.max(2) {
        return None;
    }
    let half = waiting.len() / 2 - 1;
    let (older, &mut (sent, fd), _) = waiting.select_nth_unstable(half);
    let oldest = older.iter().map(|w| w.0).min().unwrap_or(sent);
    Some((fd, bound(sent - oldest, most)))
}

/// The queue a load thread needs before it waits halfway: [`MIN_QUEUE_TLS`] over TLS
/// ([`MIN_QUEUE`] for `--h2`), [`NAP_FROM_PLAIN`] over plaintext (where it naps, and blocks only
/// from [`MIN_QUEUE_PLAIN`]); None (never) without keep-alive or under a `--spin` other than
/// `auto`.
pub(crate) fn min_queue(
    tls: bool,
    h2: bool,
    keep_alive: bool,
    spin: crate::SpinRule,
) -> Option<usize> {
    let auto = keep_alive && spin == crate::SpinRule::Auto;
    let tls_min = if h2 { MIN_QUEUE } else { MIN_QUEUE_TLS };
    auto.then_some(if tls { tls_min } else { NAP_FROM_PLAIN })
}

/// Over plaintext, the queue from which the thread blocks halfway instead of napping: at 32
/// connections the nap got 1.05× (lighttpd) and 1.07× (h2o) the block's requests/s in every round,
/// the server's CPU per request 5 % lower (no wake-up to pay); at 64–256 it lost up to 5 % in some
/// rounds on builtin, lighttpd and h2o, and at 16–24 (napping instead of spinning) it lost 3–37 %
/// (docs/BENCHMARKS.md, issue 18, session 11). Halfway between the 32 and 64 levels.
pub(crate) const NAP_BELOW_PLAIN: usize = 48;

/// Over plaintext, the queue from which the thread naps instead of spinning. With 16–31 requests in
/// flight against lighttpd, h2o and nginx (8–11 µs per response here, slower than our 6–7 µs of
/// work), the nap took the place of the spin's polling, a quarter of the generator's CPU:
/// 0.74–0.92× its CPU per request at 0.99–1.05× its requests/s (medians of 5 rounds; rounds spread
/// ±20 % on this machine, identical builds ±4 % in medians). At 12 it lost 4–6 % on nginx and
/// builtin in two runs: half of 12 responses (50–60 µs) leaves too little room for our oversleep
/// (14–22 µs, 40 µs at its tail). Against builtin, faster than we are, it seldom naps and changes
/// nothing (docs/BENCHMARKS.md, issue 18, session 12). Below [`MIN_QUEUE_PLAIN`] a wait with no nap
/// to take (the pace not yet measured, or half the backlog too short for the oversleep) spins, as
/// below this queue: the halfway block costs a short queue's server the wake-up.
pub(crate) const NAP_FROM_PLAIN: usize = 16;
const _: () = assert!(NAP_FROM_PLAIN < MIN_QUEUE_PLAIN && MIN_QUEUE_PLAIN < NAP_BELOW_PLAIN);

/// A server that closes a keep-alive connection after more than one response in this many is not
/// waited on halfway (nor napped on), nor is any before its first response: its queue is new
/// connections, which a sleeping or blocked thread does not open. Against mini_httpd (a close after
/// every response) the wait got 0.89–0.96× the requests/s of wrk and ab at 16–256 clients, the
/// server idle 3–8 % more (docs/BENCHMARKS.md, issue 18, session 13). apache's default of 100
/// requests per connection still waits.
const KEPT_OPEN: u64 = 8;

/// The shortest time a nap measures the server's time per response over.
const NAP_WINDOW: Duration = Duration::from_millis(1);

/// The shortest nap worth a sleep: below it, the halfway block (or, below [`MIN_QUEUE_PLAIN`]
/// over plaintext, the spin).
const MIN_NAP: Duration = Duration::from_micros(20);

/// Over HTTP/1 (over plaintext with 16–47 in flight), a timed nap instead of the halfway block
/// (the module's last paragraph): half the backlog at the server (requests in flight × its
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
    /// The nap of an HTTP/1 thread, over TLS or plaintext (the module's last paragraph).
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
    fn measure(&mut self, last: Instant, done: u64) {
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
    fn length(&mut self, queue: usize, most: Duration) -> Option<Duration> {
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

    /// A nap asked for `asked` took `took`: the oversleep, each counted at most the nap's length.
    fn slept(&mut self, asked: Duration, took: Duration) {
        let over = took.saturating_sub(asked).min(asked);
        self.oversleep = (self.oversleep * 3 + over) / 4;
    }
}

/// How long a halfway wait may block when the request waited on was sent `spread` after the oldest.
fn bound(spread: Duration, most: Duration) -> Duration {
    (spread * 2).max(MIN_BOUND).min(most)
}

impl Worker<'_> {
    /// Whether this pass may wait halfway with `queue` connections waiting on responses (the rule
    /// above, but for the queue's readiness, which [`Worker::wait_halfway`] checks). Counted before
    /// the poll that checks costs anything.
    pub(crate) fn may_wait_halfway(&self, queue: usize) -> bool {
        self.halfway.is_some_and(|min| queue >= min)
            && self.ready.is_empty()
            && self.pacer.is_none()
            && self.r.complete > 0
            && self.server_closes * KEPT_OPEN <= self.r.complete
    }

    /// Waits for events as the module says: first takes what is ready without blocking, then blocks
    /// on the halfway socket (at most until the loop's own bound), then takes what is ready. Falls
    /// back to [`Worker::wait_for_events`] when the connections do not make a queue. `list` puts
    /// `(sent, fd)` of every connection waiting on a response in the list it is given, and says
    /// false if some connection's readiness matters otherwise (connecting, or with something to
    /// write). False when a signal interrupted the wait.
    pub(crate) fn wait_halfway(
        &mut self,
        events: &mut Events,
        now: Instant,
        next_check: Instant,
        list: impl FnOnce(&Self, &mut Vec<(Instant, RawFd)>) -> bool,
    ) -> io::Result<bool> {
        // Edge-triggered readiness that arrived while the last pass ran is in the poller already.
        if !self.poll_now(events)? || !events.is_empty() {
            return Ok(true);
        }
        let Some((fd, bound)) = self.halfway_socket(now, next_check, list) else {
            return self.wait_for_events(events, now, next_check, None);
        };
        if let Some(nap) = self.nap_length(bound) {
            self.halfway_waits.naps += 1;
            self.nap_for(nap);
            return self.poll_now(events);
        }
        let queue = self.outstanding as usize;
        if self.nap.as_ref().is_some_and(|n| queue < n.block_from) {
            return self.wait_for_events(events, now, next_check, None);
        }
        self.halfway_waits.blocks += 1;
        let t0 = Instant::now();
        let blocked = block_on(fd, bound);
        self.halfway_waits.blocked += t0.elapsed();
        match blocked {
            Err(e) if e.kind() == ErrorKind::Interrupted => return Ok(false),
            Err(e) => return Err(e),
            Ok(()) => {}
        }
        self.poll_now(events)
    }

    /// How long to nap instead of blocking on the halfway socket (at most `bound`), if at all.
    fn nap_length(&mut self, bound: Duration) -> Option<Duration> {
        let (last, done, queue) = (self.last_done, self.r.complete, self.outstanding as usize);
        let nap = self.nap.as_mut()?;
        nap.measure(last, done);
        nap.length(queue, bound)
    }

    /// Sleeps `nap` with 1 ns timer slack, and counts the oversleep.
    fn nap_for(&mut self, nap: Duration) {
        let Some(state) = self.nap.as_mut() else {
            return;
        };
        if !state.slack_set {
            // SAFETY: PR_SET_TIMERSLACK takes a plain integer and changes only this thread's slack.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
            state.slack_set = true;
        }
        let t0 = Instant::now();
        std::thread::sleep(nap);
        let took = t0.elapsed();
        state.slept(nap, took);
        self.halfway_waits.napped += took;
    }

    /// The socket to block on and for how long; None if `list` says some connection's readiness
    /// matters or the queue is short.
    fn halfway_socket(
        &mut self,
        now: Instant,
        next_check: Instant,
        list: impl FnOnce(&Self, &mut Vec<(Instant, RawFd)>) -> bool,
    ) -> Option<(RawFd, Duration)> {
        let mut waiting = std::mem::take(&mut self.waiting);
        waiting.clear();
        let all_receiving = list(self, &mut waiting);
        let most = self.poll_wait(now, next_check, None);
        let picked = all_receiving
            .then(|| pick(&mut waiting, most, self.halfway.unwrap_or(MIN_QUEUE)))
            .flatten();
        self.waiting = waiting;
        picked
    }

    /// HTTP/1's list for [`Worker::wait_halfway`]: the slots waiting on a response, false if one
    /// is connecting or sending.
    pub(crate) fn receiving(&self, waiting: &mut Vec<(Instant, RawFd)>) -> bool {
        for c in &self.conns {
            match c.phase {
                Phase::Receiving => {
                    let Some(s) = c.stream.as_ref() else { continue };
                    waiting.push((c.written_at, s.raw_fd()));
                }
                Phase::Connecting | Phase::Sending => return false,
                Phase::Free | Phase::Idle => {}
            }
        }
        true
    }

    /// Takes the events that are ready without blocking; false when a signal interrupted it.
    fn poll_now(&mut self, events: &mut Events) -> io::Result<bool> {
        match self.poll.poll(events, Some(Duration::ZERO)) {
            Err(e) if e.kind() == ErrorKind::Interrupted => Ok(false),
            Err(e) => Err(e),
            Ok(()) => Ok(true),
        }
    }
}

/// Blocks until `fd` is readable (or closed) or `wait` passed.
fn block_on(fd: RawFd, wait: Duration) -> io::Result<()> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: wait.as_secs() as libc::time_t,
        tv_nsec: wait.subsec_nanos() as libc::c_long,
    };
    // SAFETY: one valid pollfd and a valid timespec, both alive across the call; no signal mask.
    let r = unsafe { libc::ppoll(&mut p, 1, &ts, std::ptr::null()) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOST: Duration = Duration::from_millis(50);

    /// `n` connections, slot i sent i × `step` after the first, listed in a scrambled order.
    fn queue(n: usize, step: Duration) -> (Instant, Vec<(Instant, RawFd)>) {
        let t0 = Instant::now();
        let mut w: Vec<(Instant, RawFd)> =
            (0..n).map(|i| (t0 + step * i as u32, i as RawFd)).collect();
        w.reverse();
        w.swap(1, n / 2);
        (t0, w)
    }

    #[test]
    fn picks_the_request_sent_halfway_down_the_queue() {
        let step = Duration::from_micros(12);
        let (_, mut w) = queue(32, step);
        let (slot, bound) = pick(&mut w, MOST, MIN_QUEUE).unwrap();
        assert_eq!(slot, 15, "the 16th oldest of 32");
        assert_eq!(bound, (step * 15 * 2).max(MIN_BOUND));
        let (_, mut w) = queue(33, Duration::from_micros(100));
        let (slot, bound) = pick(&mut w, MOST, MIN_QUEUE).unwrap();
        assert_eq!(slot, 15);
        assert_eq!(bound, Duration::from_micros(3000));
    }

    #[test]
    fn a_short_queue_is_not_waited_on_halfway() {
        let (_, mut w) = queue(MIN_QUEUE - 1, Duration::from_micros(10));
        assert_eq!(pick(&mut w, MOST, MIN_QUEUE), None);
        let (_, mut w) = queue(MIN_QUEUE, Duration::from_micros(10));
        assert_eq!(
            pick(&mut w, MOST, MIN_QUEUE).map(|p| p.0),
            Some(MIN_QUEUE as RawFd / 2 - 1)
        );
    }

    #[test]
    fn http1_over_tls_waits_from_32_requests_h2_from_16_connections() {
        use crate::SpinRule::{Auto, Off};
        assert_eq!(min_queue(true, false, true, Auto), Some(32));
        assert_eq!(min_queue(true, true, true, Auto), Some(16));
        assert_eq!(min_queue(false, false, true, Auto), Some(NAP_FROM_PLAIN));
        assert_eq!(min_queue(true, false, false, Auto), None);
        assert_eq!(min_queue(true, true, true, Off), None);
    }

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
    fn over_plaintext_only_a_queue_of_32_or_more_blocks_when_it_cannot_nap() {
        use crate::SpinRule::Auto;
        // The halfway wait starts where the nap does; a shorter queue than the block's spins.
        assert_eq!(min_queue(false, false, true, Auto), Some(NAP_FROM_PLAIN));
        assert_eq!(Nap::new(false).block_from, MIN_QUEUE_PLAIN);
        assert_eq!(
            Nap::new(true).block_from,
            0,
            "over TLS the wait's own minimum"
        );
    }

    #[test]
    fn the_bound_stays_between_its_floor_and_the_loops_own() {
        assert_eq!(bound(Duration::ZERO, MOST), MIN_BOUND);
        assert_eq!(bound(Duration::from_secs(1), MOST), MOST);
        let short = Duration::from_micros(50);
        assert_eq!(bound(Duration::from_millis(5), short), short);
    }
}
