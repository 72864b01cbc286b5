//! Ctrl-C: the first one stops the current run (which still reports what it measured) and every run
//! after it in the same command; the handler is installed once per process.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once};
use webstand_engine::Live;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static CURRENT: Mutex<Option<Arc<Live>>> = Mutex::new(None);
static INSTALL: Once = Once::new();

/// A fresh `Live` for the next run, wired to Ctrl-C.
pub fn live() -> Arc<Live> {
    INSTALL.call_once(|| {
        // Failing to install (another handler exists) only loses the graceful stop.
        let _ = ctrlc::set_handler(|| {
            INTERRUPTED.store(true, Ordering::SeqCst);
            if let Some(l) = CURRENT.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                l.stop.store(true, Ordering::SeqCst);
            }
        });
    });
    let l = Arc::new(Live::default());
    if interrupted() {
        l.stop.store(true, Ordering::SeqCst);
    }
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = Some(l.clone());
    l
}

/// Whether Ctrl-C was pressed during this command.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
