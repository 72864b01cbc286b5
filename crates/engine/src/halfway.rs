//! How a closed-loop keep-alive thread (HTTP/1, TLS or not) with a deep queue at the server waits:
//! blocked on one socket, the one whose response is due about halfway down the queue, instead of on
//! all of them.
//!
//! Why: a thread blocked in `epoll_wait` is woken by the server's first response, and on this kind
//! of machine that wake-up (an inter-processor interrupt through the hypervisor) is paid by the
//! server, on its CPU, so a blocking generator lowers the server's rate (`spin.rs`). The spin avoids
//! the wake-up by polling, and pays for it with the generator's CPU (16–21 % of an HTTPS keep-alive
//! request, docs/BENCHMARKS.md, "How the generator waits"). Blocked in `ppoll` on one socket, the thread is on no
//! other socket's wait queue: the server's other responses find no waiter (their epoll readiness
//! is still recorded) and cost it no wake-up. Picking the request sent halfway down the queue means
//! one wake-up per half-queue of responses, while the other half keeps the server busy through the
//! wake-up's latency; the thread then takes every ready response from the poller at once.
//!
//! Only where that holds: a closed keep-alive loop (HTTP/1, or `--h2`, whose connections wait on
//! their oldest batch of streams: `h2/conn.rs`) on a server that keeps its connections open
//! ([`KEPT_OPEN`]), with a deep enough queue and none waiting to write, and `--spin auto` (`off`
//! keeps wrk's way of waiting, a window keeps the spin). HTTP/1 waits from 32 requests in flight,
//! over plaintext ([`MIN_QUEUE_PLAIN`]) and over TLS ([`MIN_QUEUE_TLS`]): below that the server
//! pays for the wake-ups more than the spin costs us; `--h2` over TLS from 16 connections
//! ([`MIN_QUEUE`]), each many streams deep. A response that does not come (a slow request) holds
//! the others' no longer than [`bound`] allows.
//!
//!
//! Where the thread can nap instead of blocking, it does (`nap.rs`); this file holds the queues
//! from which each way of waiting applies, and the pick. `wait.rs` puts them together.

use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// The fewest `--h2` connections with streams in flight over TLS for a halfway wait: half of them
/// is the server's work through our wake-up (8 connections of many streams of 10 µs or more
/// against a wake-up of tens of µs here).
pub(crate) const MIN_QUEUE: usize = 16;

/// The same for HTTP/1 over TLS, counted in requests: waking every 8th of a 16-deep queue cost
/// nginx ~0.9 µs more CPU per request than the spin (~7 µs per wake-up on its CPU), 0.92–0.94×
/// wrk's requests/s at 16 connections where the spin got 1.03–1.06×; at 32 the halfway wait gets
/// the spin's rate at 0.7× wrk's CPU (docs/BENCHMARKS.md, "How the generator waits").
pub(crate) const MIN_QUEUE_TLS: usize = 32;

/// The same over plaintext, where a response costs the server 4–5 µs: a 16-deep queue cost 10 % of
/// the requests/s at 16 clients against lighttpd and h2o, a 32-deep one nothing
/// (docs/BENCHMARKS.md, "How the generator waits"). A shallower pick does not rescue a shorter queue:
/// the server needs about 12 responses behind the pick when we block, or it runs dry through our
/// wake-up (at 8 clients every wake found the whole queue answered); 24 cost h2o 4 %.
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
    spin: webstand_results::spin_rule::SpinRule,
) -> Option<usize> {
    let auto = keep_alive && spin == webstand_results::spin_rule::SpinRule::Auto;
    let tls_min = if h2 { MIN_QUEUE } else { MIN_QUEUE_TLS };
    auto.then_some(if tls { tls_min } else { NAP_FROM_PLAIN })
}

/// Over plaintext, the queue from which the thread blocks halfway instead of napping: at 32
/// connections the nap got 1.05× (lighttpd) and 1.07× (h2o) the block's requests/s in every round,
/// the server's CPU per request 5 % lower (no wake-up to pay); at 64–256 it lost up to 5 % in some
/// rounds on builtin, lighttpd and h2o, and at 16–24 (napping instead of spinning) it lost 3–37 %
/// (docs/BENCHMARKS.md, "How the generator waits"). Halfway between the 32 and 64 levels.
pub(crate) const NAP_BELOW_PLAIN: usize = 48;

/// Over plaintext, the queue from which the thread naps instead of spinning. With 16–31 requests in
/// flight against lighttpd, h2o and nginx (8–11 µs per response here, slower than our 6–7 µs of
/// work), the nap took the place of the spin's polling, a quarter of the generator's CPU:
/// 0.74–0.92× its CPU per request at 0.99–1.05× its requests/s (medians of 5 rounds; rounds spread
/// ±20 % on this machine, identical builds ±4 % in medians). At 12 it lost 4–6 % on nginx and
/// builtin in two runs: half of 12 responses (50–60 µs) leaves too little room for our oversleep
/// (14–22 µs, 40 µs at its tail). Against builtin, faster than we are, it seldom naps and changes
/// nothing (docs/BENCHMARKS.md, "How the generator waits"). Below [`MIN_QUEUE_PLAIN`] a wait with no nap
/// to take (the pace not yet measured, or half the backlog too short for the oversleep) spins, as
/// below this queue: the halfway block costs a short queue's server the wake-up.
pub(crate) const NAP_FROM_PLAIN: usize = 16;
const _: () = assert!(NAP_FROM_PLAIN < MIN_QUEUE_PLAIN && MIN_QUEUE_PLAIN < NAP_BELOW_PLAIN);

/// A server that closes a keep-alive connection after more than one response in this many is not
/// waited on halfway (nor napped on), nor is any before its first response: its queue is new
/// connections, which a sleeping or blocked thread does not open. Against mini_httpd (a close after
/// every response) the wait got 0.89–0.96× the requests/s of wrk and ab at 16–256 clients, the
/// server idle 3–8 % more (docs/BENCHMARKS.md, "How the generator waits"). apache's default of 100
/// requests per connection still waits.
const KEPT_OPEN: u64 = 8;

/// Whether a server that closed `server_closes` keep-alive connections over `complete` responses
/// keeps them open enough to be waited on ([`KEPT_OPEN`]); never before the first response.
pub(crate) fn kept_open(complete: u64, server_closes: u64) -> bool {
    complete > 0 && server_closes * KEPT_OPEN <= complete
}

/// How long a halfway wait may block when the request waited on was sent `spread` after the oldest.
fn bound(spread: Duration, most: Duration) -> Duration {
    (spread * 2).max(MIN_BOUND).min(most)
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
        use webstand_results::spin_rule::SpinRule::{Auto, Off};
        assert_eq!(min_queue(true, false, true, Auto), Some(32));
        assert_eq!(min_queue(true, true, true, Auto), Some(16));
        assert_eq!(min_queue(false, false, true, Auto), Some(NAP_FROM_PLAIN));
        assert_eq!(min_queue(true, false, false, Auto), None);
        assert_eq!(min_queue(true, true, true, Off), None);
    }

    #[test]
    fn the_bound_stays_between_its_floor_and_the_loops_own() {
        assert_eq!(bound(Duration::ZERO, MOST), MIN_BOUND);
        assert_eq!(bound(Duration::from_secs(1), MOST), MOST);
        let short = Duration::from_micros(50);
        assert_eq!(bound(Duration::from_millis(5), short), short);
    }
}
