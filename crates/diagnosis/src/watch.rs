//! Watching a run from the outside: the kernel's TCP counters before and after, and every thread
//! the run starts in this process (the engine's load threads) sampled from
//! `/proc/self/task/TID/schedstat` — the time it ran and the time it waited in the run queue for a
//! CPU — and `/proc/self/task/TID/stat` (the CPU it last ran on), as cheaply as `watch_tasks.rs`
//! can. The engine is not touched: threads that existed before `Watch::start` are left out, new
//! ones are followed until they end. The same sampler reads the run's live error and completion
//! counts at each pass, for their [`Timeline`]s. It wakes once per [`period`], on one timer, and
//! `finish` wakes it at once to stop.

use crate::kernel::TcpCounters;
use crate::network::{self, Link};
use crate::timeline::Timeline;
use crate::watch_tasks::{task_ids, Seen, Tasks};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use webstand_results::Live;

/// The sampler's period once the run has lasted `elapsed`: half the error timeline's interval for
/// a run that long (50 ms for the first 10 s, then 100 ms up to 20 s, …), so that every error is
/// dated in its interval or, at most half an interval late, the next, and a half-second stall, the
/// shortest event the timeline is made to date, is named to the interval. The load threads need
/// less: their shares are taken between their first and last readings, which a pass every 50 ms
/// brings within 50 ms of each end (a thread watched for less than two periods is left out).
fn period(elapsed: Duration) -> Duration {
    crate::timeline::interval_for(elapsed) / 2
}

/// One load thread as the scheduler saw it over the part of its life that was sampled.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LoadThread {
    /// Share of the wall-clock time it was running (CPU time ÷ time watched).
    pub busy: f64,
    /// Share of the wall-clock time it was runnable but waiting for a CPU (run-queue delay).
    pub waited: f64,
    /// The CPU it last ran on.
    pub cpu: Option<usize>,
}

/// What was measured around one run.
#[derive(Clone, Debug, Default)]
pub struct Watched {
    /// Kernel TCP counters, after − before (host-wide).
    pub tcp: TcpCounters,
    /// Threads the run started, busiest first.
    pub threads: Vec<LoadThread>,
    /// The link the target is reached over, when its speed is known (given, or from sysfs).
    pub link: Option<Link>,
    /// The run's errors per interval.
    pub errors: Timeline,
    /// The run's completed requests per interval.
    pub completions: Timeline,
    /// The ephemeral ports (net.ipv4.ip_local_port_range) when the run began.
    pub port_range: Option<(u64, u64)>,
}

/// What the sampler found: the load threads, and the live error and completion counts at times
/// since the start.
type Sampled = (Vec<LoadThread>, Vec<(Duration, u64)>, Vec<(Duration, u64)>);

/// A watch in progress: start it right before the engine runs and finish it right after.
pub struct Watch {
    tcp: TcpCounters,
    link: Option<Link>,
    port_range: Option<(u64, u64)>,
    stop: Arc<AtomicBool>,
    sampler: Option<JoinHandle<Sampled>>,
}

impl Watch {
    /// Starts watching a run against `target` (its first address; None when unknown) whose live
    /// counters are `live`, over a link of `link_mbit` Mbit/s when the user said so.
    pub fn start(target: Option<SocketAddr>, live: Arc<Live>, link_mbit: Option<f64>) -> Watch {
        let known = task_ids();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let sampler = std::thread::Builder::new()
            .name("diagnosis".into())
            .spawn(move || sample(known, &live, &flag))
            .ok();
        Watch {
            tcp: TcpCounters::read(),
            link: target.and_then(|t| network::link_to(t, link_mbit)),
            port_range: crate::limits::port_range(),
            stop,
            sampler,
        }
    }

    pub fn finish(mut self) -> Watched {
        let tcp = TcpCounters::read().since(&self.tcp);
        self.stop_sampler();
        let (mut threads, errors, completions) = self
            .sampler
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        threads.sort_by(|a, b| (b.busy + b.waited).total_cmp(&(a.busy + a.waited)));
        Watched {
            tcp,
            threads,
            link: self.link.take(),
            errors: Timeline::from_samples(&errors),
            completions: Timeline::from_samples(&completions),
            port_range: self.port_range,
        }
    }
}

impl Watch {
    /// Tells the sampler to stop and wakes it, so that it does not finish its sleep first.
    fn stop_sampler(&self) {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = &self.sampler {
            h.thread().unpark();
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop_sampler();
    }
}

fn sample(known: BTreeSet<u32>, live: &Live, stop: &AtomicBool) -> Sampled {
    let mut tasks = Tasks::new(known);
    let began = Instant::now();
    let errors = || live.failed.load(Ordering::Relaxed) + live.non_2xx.load(Ordering::Relaxed);
    let done = || live.complete.load(Ordering::Relaxed);
    let mut dated = vec![(Duration::ZERO, errors())];
    let mut completed = vec![(Duration::ZERO, done())];
    let mut next = began;
    while !stop.load(Ordering::Acquire) {
        let now = Instant::now();
        // Only changes are kept: a long clean run costs nothing.
        let count = errors();
        if dated.last().is_some_and(|(_, before)| *before != count) {
            dated.push((now.duration_since(began), count));
        }
        completed.push((now.duration_since(began), done()));
        tasks.pass(now);
        // Passes keep to a grid: a late one neither pushes the next back nor is made up for.
        while next <= Instant::now() {
            next += period(next - began);
        }
        sleep_until(next, stop);
    }
    // The run has ended by now: its last errors and completions are counted.
    let end = began.elapsed();
    dated.push((end, errors()));
    completed.push((end, done()));
    let seen = tasks.into_seen();
    (seen.iter().filter_map(share).collect(), dated, completed)
}

/// One timer per pass: parked until `deadline`, or until [`Watch::finish`] unparks it to stop.
fn sleep_until(deadline: Instant, stop: &AtomicBool) {
    while !stop.load(Ordering::Acquire) {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            return;
        };
        std::thread::park_timeout(left);
    }
}

/// A thread's shares of the time between its first and last reading (None if it was watched for
/// less than two of the first periods, 100 ms).
fn share(s: &Seen) -> Option<LoadThread> {
    let wall = s.last.0.duration_since(s.first.0).as_nanos() as f64;
    if wall < period(Duration::ZERO).as_nanos() as f64 * 2.0 {
        return None;
    }
    let (a, b) = (s.first.1, s.last.1);
    Some(LoadThread {
        busy: b.ran_ns.saturating_sub(a.ran_ns) as f64 / wall,
        waited: b.waited_ns.saturating_sub(a.waited_ns) as f64 / wall,
        cpu: b.cpu,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread spinning for 300 ms is seen as a busy load thread; threads older than the watch are not.
    #[test]
    fn a_spinning_thread_started_during_the_watch_is_seen_busy() {
        let live = Arc::new(Live::default());
        let watch = Watch::start(Some("127.0.0.1:80".parse().unwrap()), live.clone(), None);
        let t = std::thread::spawn(|| {
            let end = Instant::now() + Duration::from_millis(300);
            let mut x = 0u64;
            while Instant::now() < end {
                x = x.wrapping_add(1);
            }
            x
        });
        t.join().unwrap();
        live.non_2xx.store(7, Ordering::Relaxed);
        let w = watch.finish();
        assert_eq!(
            w.errors.total(),
            7,
            "the live errors at the end are counted"
        );
        // Sorted busiest first; other tests' short-lived threads may be listed after it.
        let busy = w.threads.first().map(|t| t.busy + t.waited);
        assert!(
            busy > Some(0.8),
            "spinning thread ran or waited {busy:?}: {:?}",
            w.threads
        );
        assert!(w.tcp.present());
        assert_eq!(w.link, None, "loopback has no speed");
    }
}
