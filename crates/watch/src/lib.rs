//! A run watched while it goes: one thread of ours reads the load threads' published views
//! (`webstand_results::Live::view`) a few times a second and feeds the outputs asked for — the
//! terminal view or its plain lines (`--live`), the Prometheus endpoint (`--metrics-listen`), the
//! OTLP push (`--otlp-endpoint`). The load threads only copy their counts into their slots every
//! 100 ms while watched; nothing is added per request.

mod endpoint;
pub mod exposition;
pub mod lines;
pub mod otlp;
pub mod reading;
mod view;

use endpoint::{Endpoint, Page};
use otlp::Otlp;
pub use reading::Stage;
use reading::{Reader, Reading};
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};
use webstand_results::Live;

/// How often the outputs are fed (the view redrawn, the exposition renewed).
const TICK: Duration = Duration::from_millis(250);
/// How often the rates are measured.
const RATE_EVERY: Duration = Duration::from_millis(1000);
/// How often the OTLP push goes out while a run goes (and once more at its end).
const PUSH_EVERY: Duration = Duration::from_secs(1);

/// What to feed, from the command line.
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    pub live: bool,
    pub metrics_listen: Option<SocketAddr>,
    pub otlp_endpoint: Option<String>,
}

impl Outputs {
    pub fn any(&self) -> bool {
        self.live || self.metrics_listen.is_some() || self.otlp_endpoint.is_some()
    }
}

/// The run in progress, as the command says when each starts.
struct Current {
    live: Arc<Live>,
    stage: Stage,
    started: Instant,
    started_wall: SystemTime,
}

struct Shared {
    current: Mutex<Option<Current>>,
    stop: AtomicBool,
    page: Page,
}

/// The watcher: stops (a last reading pushed, the view closed, the endpoint closed) when dropped.
pub struct Watch {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    endpoint: Option<Endpoint>,
}

impl Watch {
    /// Starts watching for `command` (bench, sweep), or None when no output is asked for. Fails on
    /// an endpoint it cannot listen on or push to.
    pub fn start(command: &str, o: &Outputs) -> anyhow::Result<Option<Watch>> {
        if !o.any() {
            return Ok(None);
        }
        let otlp = o.otlp_endpoint.as_deref().map(Otlp::new).transpose()?;
        let shared = Arc::new(Shared {
            current: Mutex::new(None),
            stop: AtomicBool::new(false),
            page: Page::default(),
        });
        let endpoint = match o.metrics_listen {
            Some(addr) => {
                let e = Endpoint::start(addr, shared.page.clone())?;
                eprintln!("webstand: metrics at http://{}/metrics", e.addr);
                Some(e)
            }
            None => None,
        };
        let display = match (o.live, std::io::stdout().is_terminal()) {
            (false, _) => Display::None,
            (true, true) => Display::View,
            (true, false) => Display::Lines,
        };
        let (sh, command) = (shared.clone(), command.to_string());
        let thread = std::thread::Builder::new()
            .name("watch".into())
            .spawn(move || watch(&sh, &command, display, otlp))?;
        Ok(Some(Watch {
            shared,
            thread: Some(thread),
            endpoint,
        }))
    }

    /// The metrics endpoint's address (its port when asked for port 0).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.endpoint.as_ref().map(|e| e.addr)
    }

    /// A run (or sweep level) starts on `live`: the load threads publish their views from now on.
    pub fn run_starting(&self, live: &Arc<Live>, stage: Stage) {
        live.watch();
        let mut c = self
            .shared
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *c = Some(Current {
            live: live.clone(),
            stage,
            started: Instant::now(),
            started_wall: SystemTime::now(),
        });
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        self.endpoint = None;
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Display {
    None,
    View,
    Lines,
}

/// The watcher's loop: a reading every tick, fed to every output; a last one when told to stop.
fn watch(sh: &Shared, command: &str, display: Display, otlp: Option<Otlp>) {
    let mut view = match display {
        Display::View => match view::View::open() {
            Ok(v) => Some(v),
            Err(e) => {
                eprintln!("webstand: --live: the terminal view could not open: {e}");
                None
            }
        },
        _ => None,
    };
    let mut lines = (display == Display::Lines).then(lines::Lines::default);
    let mut reader: Option<(Arc<Live>, Reader)> = None;
    let mut last_push: Option<Instant> = None;
    let mut push_failed = false;
    loop {
        let stopping = sh.stop.load(Ordering::SeqCst);
        if !stopping {
            std::thread::park_timeout(TICK);
        }
        let stopping = stopping || sh.stop.load(Ordering::SeqCst);
        let Some((reading, started_wall)) = read(sh, command, &mut reader, stopping) else {
            if stopping {
                break;
            }
            continue;
        };
        let now = Instant::now();
        *sh.page.lock().unwrap_or_else(|e| e.into_inner()) = exposition::render(&reading);
        if let Some(v) = view.as_mut() {
            let _ = v.draw(&reading);
        }
        if let Some(l) = lines.as_mut() {
            l.show(&reading, now, stopping);
        }
        if let Some(o) = &otlp {
            if stopping || last_push.is_none_or(|t| now.duration_since(t) >= PUSH_EVERY) {
                last_push = Some(now);
                if let Err(e) = o.push(&reading, started_wall) {
                    if !std::mem::replace(&mut push_failed, true) {
                        eprintln!(
                            "webstand: {e:#} (the run goes on; later failures are not shown)"
                        );
                    }
                }
            }
        }
        if stopping {
            break;
        }
    }
    drop(view);
}

/// A reading of the run in progress, if one has started and published (the `last`: whole-run rates).
fn read(
    sh: &Shared,
    command: &str,
    reader: &mut Option<(Arc<Live>, Reader)>,
    last: bool,
) -> Option<(Reading, SystemTime)> {
    let c = sh.current.lock().unwrap_or_else(|e| e.into_inner());
    let c = c.as_ref()?;
    if !reader
        .as_ref()
        .is_some_and(|(l, _)| Arc::ptr_eq(l, &c.live))
    {
        *reader = Some((c.live.clone(), Reader::new(c.started)));
    }
    let (live, r) = reader.as_mut()?;
    let view = live.view()?;
    let mut stage = c.stage.clone();
    stage.command = command.to_string();
    let now = Instant::now();
    let reading = match last {
        true => r.read_last(&stage, view, now),
        false => r.read(&stage, view, now, RATE_EVERY),
    };
    Some((reading, c.started_wall))
}
