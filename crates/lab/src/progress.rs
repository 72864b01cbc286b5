//! Progress display for runs longer than a couple of seconds: an `indicatif` bar with live hits/s and
//! failed requests (non-2xx answers are only counted at the end, so it says "failed", not "errors")
//! when stderr is a terminal, a plain line every few seconds otherwise (CI logs), nothing when
//! quiet. It only reads the engine's `Live` counters, from its own thread; the guard stops it on drop.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use webstand_results::Live;

/// Nothing is shown for a run that ends before this: short runs stay clean.
const SHOW_AFTER: Duration = Duration::from_secs(2);
/// How often the bar is refreshed (and the live rate measured).
const TICK: Duration = Duration::from_millis(250);
/// How often a plain line is written when stderr is not a terminal.
const LINE_EVERY: Duration = Duration::from_secs(5);

/// Stops the display when dropped.
pub struct Progress {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// Starts showing `live`'s counters: a bar on a terminal, periodic lines otherwise, nothing if `quiet`.
/// `requests` / `duration` are the run's bounds, for the bar's length.
pub fn start(
    label: &str,
    live: Arc<Live>,
    requests: Option<u64>,
    duration: Option<Duration>,
    quiet: bool,
) -> Progress {
    let stop = Arc::new(AtomicBool::new(false));
    if quiet {
        return Progress { stop, thread: None };
    }
    let display = if std::io::stderr().is_terminal() {
        Display::Bar
    } else {
        Display::Lines
    };
    let label = label.to_string();
    let flag = stop.clone();
    let thread = std::thread::Builder::new()
        .name("progress".into())
        .spawn(move || watch(&label, &live, requests, duration, display, &flag))
        .ok();
    Progress { stop, thread }
}

#[derive(Clone, Copy, PartialEq)]
enum Display {
    Bar,
    Lines,
}

/// What the counters say at one moment.
#[derive(Clone, Copy, Default)]
struct Sample {
    complete: u64,
    failed: u64,
    bytes: u64,
}

impl Sample {
    fn read(live: &Live) -> Sample {
        Sample {
            complete: live.complete.load(Ordering::Relaxed),
            failed: live.failed.load(Ordering::Relaxed),
            bytes: live.bytes.load(Ordering::Relaxed),
        }
    }
}

/// One status text: counts so far and the rate over the last interval.
fn status(now: Sample, hits_per_sec: f64) -> String {
    format!(
        "{} done, {:.0} hits/s, {} failed, {:.1} MB read",
        now.complete,
        hits_per_sec,
        now.failed,
        now.bytes as f64 / 1e6
    )
}

fn watch(
    label: &str,
    live: &Live,
    requests: Option<u64>,
    duration: Option<Duration>,
    display: Display,
    stop: &AtomicBool,
) {
    let began = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    let mut last = (began, Sample::default());
    let mut last_line = began;
    let mut rate = 0.0;
    while !stop.load(Ordering::SeqCst) && !live.stop.load(Ordering::SeqCst) {
        std::thread::park_timeout(TICK);
        let t = Instant::now();
        let now = Sample::read(live);
        // The live rate: over the last second or so, not the whole run, so a stall shows at once.
        let dt = t.duration_since(last.0).as_secs_f64();
        if dt >= 1.0 {
            rate = now.complete.saturating_sub(last.1.complete) as f64 / dt;
            last = (t, now);
        }
        let age = t.duration_since(began);
        if age < SHOW_AFTER {
            continue;
        }
        match display {
            Display::Bar => {
                let b = bar.get_or_insert_with(|| new_bar(label, requests, duration, age));
                match (requests, duration) {
                    (_, Some(_)) => b.set_position(age.as_millis() as u64),
                    (Some(_), None) => b.set_position(now.complete + now.failed),
                    _ => b.tick(),
                }
                b.set_message(format!("{:.0} hits/s, {} failed", rate, now.failed));
            }
            Display::Lines => {
                if t.duration_since(last_line) >= LINE_EVERY {
                    last_line = t;
                    eprintln!(
                        "webstand: {label}: {:.0} s, {}",
                        age.as_secs_f64(),
                        status(now, rate)
                    );
                }
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

/// The bar, created `age` into the run (its clock starts there, not at zero).
fn new_bar(
    label: &str,
    requests: Option<u64>,
    duration: Option<Duration>,
    age: Duration,
) -> ProgressBar {
    // Narrow enough for an 80-column terminal with the message.
    let (bar, template, prefix) = match (requests, duration) {
        // The duration is a hard stop, so time is the bar's length whenever there is one.
        (_, Some(d)) => (
            ProgressBar::new(d.as_millis() as u64),
            "{prefix} [{bar:20}] {elapsed} {msg}",
            format!("{label} ({}s)", d.as_secs()),
        ),
        (Some(n), None) => (
            ProgressBar::new(n),
            "{prefix} [{bar:20}] {pos}/{len} {msg}",
            label.to_string(),
        ),
        (None, None) => (
            ProgressBar::new_spinner(),
            "{prefix} {spinner} {elapsed} {msg}",
            label.to_string(),
        ),
    };
    bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(prefix);
    bar.with_elapsed(age)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_stops_the_watcher_promptly() {
        let live = Arc::new(Live::default());
        let t = Instant::now();
        drop(start("test", live, Some(10), None, false));
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "stopping took {:?}",
            t.elapsed()
        );
    }

    #[test]
    fn status_reports_counts_and_rate() {
        let s = status(
            Sample {
                complete: 1500,
                failed: 3,
                bytes: 2_500_000,
            },
            750.4,
        );
        assert_eq!(s, "1500 done, 750 hits/s, 3 failed, 2.5 MB read");
    }
}
