//! SIGINT (Ctrl-C), SIGTERM and SIGHUP stop every measuring command the same way. The first stops the
//! run in progress (which still reports what it measured) and every run after it; the command then
//! ends as it would have: its results printed and saved, the history run marked `interrupted`,
//! everything the lab started stopped and its directories removed, exit status 128 + the signal's
//! number (130, 143, 129, as a shell reports a command a signal ended). A second signal, or a
//! command still running [`GRACE`] after the first, kills every process the lab started (its
//! process groups and cgroups), removes its directories, marks the run interrupted and exits.
//!
//! signal-hook is the program's one signal mechanism (`webstand serve` and the MPI ranks use it
//! too): it is maintained, lets several parts of the program take the same signal, and hands the
//! signals to a thread of ours here, so what they do is ordinary code rather than the few calls a
//! signal handler may make.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;
use webstand_results::{Live, Outcome, StopSignal};
use webstand_store::{RunId, Store};

/// How long a command may take to end in order after the first signal: stopping a server takes at
/// most 8 s (SIGTERM, 5 s, SIGKILL), MariaDB 13 s, and at most one server runs beside it.
pub const GRACE: Duration = Duration::from_secs(30);

/// The first signal caught (0: none yet).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static CURRENT: Mutex<Option<Arc<Live>>> = Mutex::new(None);
/// The history run the command is saving into, to mark interrupted if it must end at once.
static RUN: Mutex<Option<(PathBuf, RunId)>> = Mutex::new(None);
static INSTALL: Once = Once::new();
/// Held by whoever ends the process: a stop at once, or the command's own end ([`exit`]), so that
/// neither cuts the other short.
static ENDING: Mutex<()> = Mutex::new(());

/// Takes SIGINT, SIGTERM and SIGHUP for the rest of the process (once; later calls do nothing).
/// Call it before the command starts anything, so no signal finds a child without its stop.
pub fn install() {
    INSTALL.call_once(|| {
        let signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]);
        let started = signals.and_then(|mut signals| {
            std::thread::Builder::new()
                .name("signals".into())
                .spawn(move || {
                    for signal in signals.forever() {
                        caught(signal);
                    }
                })
        });
        if let Err(e) = started {
            // Only the graceful stop is lost: the signals keep their default action.
            eprintln!("webstand: warning: signals not caught: {e}");
        }
    });
}

fn caught(signal: i32) {
    if SIGNAL
        .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        stop_now("a second signal");
    }
    if let Some(l) = CURRENT.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        l.stop.store(true, Ordering::SeqCst);
    }
    std::thread::spawn(|| {
        std::thread::sleep(GRACE);
        stop_now(&format!(
            "still running {} s after the signal",
            GRACE.as_secs()
        ));
    });
}

/// Ends the process at once: everything the lab started killed, its directories removed, the
/// history run marked interrupted.
fn stop_now(why: &str) -> ! {
    let _ending = ENDING.lock().unwrap_or_else(|e| e.into_inner());
    let killed = crate::leftovers::stop_everything();
    eprintln!("webstand: {why}: stopped at once ({killed} processes of the lab killed)");
    let run = RUN.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some((db, id)) = run {
        if let Ok(store) = Store::open(Some(&db)) {
            let _ = store.finish_run(id, Outcome::Interrupted(stop_signal()).status());
        }
    }
    std::process::exit(exit_status());
}

/// Ends the process with `code`, or, when a second signal is stopping everything at once, lets that
/// finish and end it.
pub fn exit(code: i32) -> ! {
    let _ending = ENDING.lock().unwrap_or_else(|e| e.into_inner());
    std::process::exit(code)
}

/// A fresh `Live` for the next run, stopped by the signals (already stopped after one).
pub fn live() -> Arc<Live> {
    install();
    let l = Arc::new(Live::default());
    if interrupted() {
        l.stop.store(true, Ordering::SeqCst);
    }
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = Some(l.clone());
    l
}

/// Whether a signal asked this command to stop.
pub fn interrupted() -> bool {
    SIGNAL.load(Ordering::SeqCst) != 0
}

/// The signal that asked this command to stop (Ctrl-C before any): what a verdict and a report
/// name, and what the exit status says.
pub fn stop_signal() -> StopSignal {
    StopSignal::from_number(SIGNAL.load(Ordering::SeqCst))
}

/// The exit status of an interrupted command: 128 + the signal's number (130 before any).
pub fn exit_status() -> i32 {
    128 + match SIGNAL.load(Ordering::SeqCst) {
        0 => SIGINT,
        s => s,
    }
}

/// The history run the command saves into (`None` once it is finished), so that a command ended at
/// once still marks it interrupted.
pub fn saving_into(run: Option<(PathBuf, RunId)>) {
    *RUN.lock().unwrap_or_else(|e| e.into_inner()) = run;
}
