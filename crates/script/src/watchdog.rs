//! The bound on a script's callbacks. LuaJIT runs a hot loop as compiled code that no debug hook
//! interrupts (a `while true do end` never returns), so a watchdog thread watches every state's
//! calls instead: each [`Watch::around`] counts once going in and once coming out (two relaxed
//! additions per call), and a count left odd and unchanged for longer than the run's request
//! timeout is a callback that never returned. The watchdog then ends the process with one line
//! and a non-zero status: the thread running the callback cannot be taken back from LuaJIT.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the watchdog looks.
const EVERY: Duration = Duration::from_millis(50);

/// The exit status of a run whose script never returned from a callback.
pub const RUNAWAY_STATUS: i32 = 1;

/// One state's call counter.
#[derive(Clone, Default)]
pub(crate) struct Watch(Arc<AtomicU64>);

impl Watch {
    /// Runs `f` (a call into Lua) counted in and out.
    pub(crate) fn around<T>(&self, f: impl FnOnce() -> T) -> T {
        self.0.fetch_add(1, Ordering::Relaxed);
        let out = f();
        self.0.fetch_add(1, Ordering::Relaxed);
        out
    }
}

/// The watchdog thread of one script's run, stopped when dropped.
pub(crate) struct Watchdog {
    watches: Arc<Mutex<Vec<Watch>>>,
    stop: Arc<AtomicBool>,
}

impl Watchdog {
    /// Starts watching: a callback that runs longer than `bound` ends the process with a line
    /// naming `script`.
    pub(crate) fn start(script: &str, bound: Duration) -> Watchdog {
        let watches: Arc<Mutex<Vec<Watch>>> = Arc::default();
        let stop: Arc<AtomicBool> = Arc::default();
        let (w, s, name) = (watches.clone(), stop.clone(), script.to_string());
        std::thread::Builder::new()
            .name("script watchdog".into())
            .spawn(move || watch(&w, &s, &name, bound))
            .expect("a thread for the script's watchdog");
        Watchdog { watches, stop }
    }

    /// A new state's counter, watched from now on.
    pub(crate) fn watch(&self) -> Watch {
        let w = Watch::default();
        self.watches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(w.clone());
        w
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn watch(watches: &Mutex<Vec<Watch>>, stop: &AtomicBool, name: &str, bound: Duration) {
    // Per watched state: the count last seen and since when it has not moved.
    let mut seen: Vec<(u64, Instant)> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(EVERY);
        let now = Instant::now();
        let watches = watches.lock().unwrap_or_else(|p| p.into_inner());
        seen.resize(watches.len(), (0, now));
        for (w, (last, since)) in watches.iter().zip(seen.iter_mut()) {
            let count = w.0.load(Ordering::Relaxed);
            if count != *last {
                (*last, *since) = (count, now);
            } else if count % 2 == 1 && now - *since > bound {
                eprintln!(
                    "webstand: error: script {name}: a callback did not return within {:.1} s \
                     (the run's request timeout, -s SECONDS); the run was stopped",
                    bound.as_secs_f64()
                );
                std::process::exit(RUNAWAY_STATUS);
            }
        }
    }
}
