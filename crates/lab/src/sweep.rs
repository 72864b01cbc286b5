//! Sweeps: one workload at rising concurrency, a measured engine run per level after a warm-up.
//!
//! [`run`] carries out a [`SweepSpec`] over a base [`Plan`] (target, requests, options) and returns a
//! [`SweepResult`]: one [`Level`] per client count, each holding the engine's `RunResult` (every figure
//! comes from `webstand_results::figures`). An [`Observer`] hears about each level as it starts and ends,
//! so the command line can wire Ctrl-C, progress and the history without this module knowing them.
//! After an interrupted level, or one whose target was lost or unreachable, the sweep stops and
//! returns what completed.

use anyhow::{bail, Context, Result};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use webstand_results::{figures, Level, Live, Plan, RunResult, Shape, Stop, SweepResult};

/// One level: how many clients (connections) and when its measured run stops.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelSpec {
    pub clients: usize,
    pub stop: Stop,
}

/// Open-loop pacing: `rate` requests per second in total across the level's connections.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    pub rate: f64,
    pub jitter: bool,
}

/// What a sweep does.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSpec {
    pub levels: Vec<LevelSpec>,
    /// A run before each level whose result is thrown away (connections, caches, CPU clocks warm up).
    pub warmup: Option<Stop>,
    /// Open loop at this rate instead of closed-loop clients.
    pub rate: Option<Rate>,
    /// Errors (failed + non-2xx, % of attempted) above which a level cannot be the peak.
    pub max_error_pct: f64,
}

impl SweepSpec {
    /// Every level with the same stop.
    pub fn uniform(clients: &[usize], stop: Stop, warmup: Option<Stop>) -> SweepSpec {
        SweepSpec {
            levels: clients
                .iter()
                .map(|&c| LevelSpec {
                    clients: c,
                    stop: stop.clone(),
                })
                .collect(),
            warmup,
            rate: None,
            max_error_pct: figures::DEFAULT_MAX_ERROR_PCT,
        }
    }
}

/// Hooks the caller supplies; every method has a do-nothing default.
pub trait Observer {
    /// A fresh `Live` for the next run (the CLI wires it to Ctrl-C). Setting its `stop` ends the run.
    fn live(&mut self) -> Arc<Live> {
        Arc::new(Live::default())
    }
    /// A run is starting: `label` says what it is ("warm-up 8 clients", "8 clients").
    fn run_starting(&mut self, label: &str, plan: &Plan, live: &Arc<Live>) {
        let _ = (label, plan, live);
    }
    /// Carries out one run (the CLI spreads it over MPI ranks when mpirun started it).
    fn execute(&mut self, plan: &Plan, live: Arc<Live>) -> Result<RunResult> {
        webstand_engine::run(plan, live)
    }
    /// The run started by the last `run_starting` ended (warm-ups included).
    fn run_ended(&mut self) {}
    /// A measured level is done (an error here, e.g. the history failing, ends the sweep).
    fn level_done(&mut self, level: &Level) -> Result<()> {
        let _ = level;
        Ok(())
    }
}

/// An observer that does nothing (library callers and tests).
pub struct Quiet;
impl Observer for Quiet {}

/// Runs every level of `spec` over `base` (its target, requests and options; shape and stop are set
/// per level). Errors when a run cannot start; an interrupt ends the sweep with what completed.
pub fn run(
    spec: &SweepSpec,
    base: &Plan,
    workload: &str,
    obs: &mut dyn Observer,
) -> Result<SweepResult> {
    if spec.levels.is_empty() {
        bail!("a sweep needs at least one client level");
    }
    let mut out = SweepResult {
        workload: workload.to_string(),
        max_error_pct: spec.max_error_pct,
        ..Default::default()
    };
    for level in &spec.levels {
        match measure_level(spec, level, base, obs)? {
            Measured::Done(l) => {
                let (interrupted, ended) = (l.result.interrupted, l.result.ended.is_some());
                obs.level_done(&l)?;
                out.levels.push(*l);
                out.interrupted |= interrupted;
                if interrupted || ended {
                    break;
                }
            }
            Measured::InterruptedInWarmup => {
                out.interrupted = true;
                break;
            }
        }
    }
    Ok(out)
}

pub(crate) enum Measured {
    Done(Box<Level>),
    InterruptedInWarmup,
}

/// The plan for one level: `base` with this level's shape and stop.
pub fn level_plan(base: &Plan, clients: usize, stop: &Stop, rate: Option<Rate>) -> Plan {
    let mut plan = base.clone();
    plan.shape = match rate {
        None => Shape::Closed { clients },
        Some(r) => Shape::Open {
            clients,
            rate: r.rate,
            jitter: r.jitter,
        },
    };
    plan.stop = stop.clone();
    plan
}

/// Warm-up (result discarded) then the measured run of one level.
pub(crate) fn measure_level(
    spec: &SweepSpec,
    level: &LevelSpec,
    base: &Plan,
    obs: &mut dyn Observer,
) -> Result<Measured> {
    let clients = level.clients;
    if clients == 0 {
        bail!("a level needs at least 1 client");
    }
    if let Some(warmup) = &spec.warmup {
        let plan = level_plan(base, clients, warmup, spec.rate);
        let live = obs.live();
        obs.run_starting(&format!("warm-up, {clients} clients"), &plan, &live);
        let r = obs.execute(&plan, live.clone());
        obs.run_ended();
        r.with_context(|| format!("warm-up at {clients} clients"))?;
        if live.stop.load(Ordering::SeqCst) {
            return Ok(Measured::InterruptedInWarmup);
        }
    }
    let plan = level_plan(base, clients, &level.stop, spec.rate);
    let live = obs.live();
    obs.run_starting(&format!("{clients} clients"), &plan, &live);
    let r = obs.execute(&plan, live.clone());
    obs.run_ended();
    let mut result = r.with_context(|| format!("level of {clients} clients"))?;
    result.interrupted |= live.stop.load(Ordering::SeqCst);
    Ok(Measured::Done(Box::new(Level { clients, result })))
}

/// Parses a list of client levels: comma-separated items, each `N`, `A..B/STEP` (arithmetic, both ends
/// included when reached) or `A..B*FACTOR` (geometric). Examples: `1,2,4,8,16,32`, `16..128/16`,
/// `10..200/10`, `1..1024*2`.
pub fn parse_clients(text: &str) -> Result<Vec<usize>> {
    let expected = "expected client levels like 1,2,4,8 or 16..128/16 or 1..1024*2";
    let bad = |why: &str| anyhow::anyhow!("bad client levels {text:?}: {why} ({expected})");
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(bad("empty item"));
        }
        let num = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| bad(&format!("{s:?} is not a whole number")))
        };
        if let Some((from, rest)) = item.split_once("..") {
            let (to, step, geometric) = if let Some((to, step)) = rest.split_once('/') {
                (to, step, false)
            } else if let Some((to, factor)) = rest.split_once('*') {
                (to, factor, true)
            } else {
                return Err(bad(&format!("range {item:?} has no /STEP or *FACTOR")));
            };
            let (from, to, step) = (num(from)?, num(to)?, num(step)?);
            if from == 0 || from > to {
                return Err(bad(&format!(
                    "range {item:?} must run from at least 1 up to its end"
                )));
            }
            if step == 0 || (geometric && step < 2) {
                return Err(bad(&format!("range {item:?} never advances")));
            }
            let mut c = from;
            while c <= to {
                out.push(c);
                c = if geometric {
                    c.saturating_mul(step)
                } else {
                    c.saturating_add(step)
                };
            }
        } else {
            let c = num(item)?;
            if c == 0 {
                return Err(bad("0 clients"));
            }
            out.push(c);
        }
    }
    if out.len() > 10_000 {
        return Err(bad("more than 10000 levels"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn client_levels_parse() {
        assert_eq!(
            parse_clients("1,2,4,8,16,32").unwrap(),
            [1, 2, 4, 8, 16, 32]
        );
        assert_eq!(
            parse_clients("16..128/16").unwrap(),
            [16, 32, 48, 64, 80, 96, 112, 128]
        );
        assert_eq!(parse_clients("10..200/10").unwrap().len(), 20);
        assert_eq!(parse_clients("1..100*2").unwrap(), [1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(parse_clients("1, 5..6/2").unwrap(), [1, 5]);
        for bad in [
            "", "0", "a", "1,,2", "4..2/1", "1..8", "1..8/0", "1..8*1", "-3",
        ] {
            let e = parse_clients(bad).unwrap_err().to_string();
            assert!(e.starts_with("bad client levels"), "{bad}: {e}");
        }
    }

    /// A tiny loopback server answering every request on a connection with a 5-byte body.
    fn hello_server() -> std::net::SocketAddr {
        use std::io::{Read, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut s = s;
                    let mut buf = [0u8; 4096];
                    let mut seen = Vec::new();
                    while let Ok(n) = s.read(&mut buf) {
                        if n == 0 {
                            return;
                        }
                        seen.extend_from_slice(&buf[..n]);
                        while let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                            seen.drain(..end + 4);
                            let _ =
                                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
                        }
                    }
                });
            }
        });
        addr
    }

    /// Records what the sweep told it; asks to stop after `stop_after` measured levels.
    #[derive(Default)]
    struct Recorder {
        events: Vec<String>,
        lives: Vec<Arc<Live>>,
        stop_after: Option<usize>,
        done: usize,
    }

    impl Observer for Recorder {
        fn live(&mut self) -> Arc<Live> {
            let l = Arc::new(Live::default());
            if self.stop_after.is_some_and(|n| self.done >= n) {
                l.stop.store(true, Ordering::SeqCst);
            }
            self.lives.push(l.clone());
            l
        }
        fn run_starting(&mut self, label: &str, plan: &Plan, _live: &Arc<Live>) {
            self.events
                .push(format!("start {label} {:?}", plan.stop.requests));
        }
        fn level_done(&mut self, level: &Level) -> Result<()> {
            self.done += 1;
            self.events
                .push(format!("done {} {}", level.clients, level.result.complete));
            Ok(())
        }
    }

    fn base_plan() -> Plan {
        let addr = hello_server();
        let target = webstand_results::Target {
            host: "127.0.0.1".into(),
            port: addr.port(),
            addrs: vec![addr],
        };
        let mut plan = Plan::new(target, "/");
        plan.threads = 1;
        plan
    }

    #[test]
    fn levels_run_in_order_after_their_warm_ups() {
        let plan = base_plan();
        let warm = Stop {
            requests: Some(7),
            duration: Some(Duration::from_secs(10)),
        };
        let spec = SweepSpec::uniform(
            &[1, 3],
            Stop {
                requests: Some(30),
                duration: Some(Duration::from_secs(10)),
            },
            Some(warm),
        );
        let mut rec = Recorder::default();
        let out = run(&spec, &plan, "/", &mut rec).unwrap();
        assert_eq!(
            rec.events,
            [
                "start warm-up, 1 clients Some(7)",
                "start 1 clients Some(30)",
                "done 1 30",
                "start warm-up, 3 clients Some(7)",
                "start 3 clients Some(30)",
                "done 3 30"
            ]
        );
        assert_eq!(
            out.levels
                .iter()
                .map(|l| (l.clients, l.result.complete))
                .collect::<Vec<_>>(),
            [(1, 30), (3, 30)]
        );
        assert!(!out.interrupted);
        assert!(out.levels.iter().all(|l| l.result.failed.total() == 0));
    }

    #[test]
    fn an_interrupt_ends_the_sweep_with_the_levels_done() {
        let plan = base_plan();
        let spec = SweepSpec::uniform(
            &[1, 2, 4],
            Stop {
                requests: Some(20),
                duration: Some(Duration::from_secs(10)),
            },
            None,
        );
        // Every Live after the first level's comes already stopped, as after Ctrl-C.
        let mut rec = Recorder {
            stop_after: Some(1),
            ..Default::default()
        };
        let out = run(&spec, &plan, "/", &mut rec).unwrap();
        assert!(out.interrupted);
        assert_eq!(out.levels[0].result.complete, 20);
        assert_eq!(out.levels.len(), 2, "the sweep went on after the interrupt");
        assert!(!out.levels[0].result.interrupted);
        assert!(out.levels[1].result.interrupted);
    }

    #[test]
    fn peak_is_the_clean_level_with_most_hits() {
        let lvl = |clients, complete, non_2xx| Level {
            clients,
            result: RunResult {
                complete,
                non_2xx,
                elapsed: Duration::from_secs(1),
                ..Default::default()
            },
        };
        let s = SweepResult {
            levels: vec![lvl(1, 10, 0), lvl(2, 30, 0), lvl(4, 20, 0), lvl(8, 90, 9)],
            ..Default::default()
        };
        assert_eq!(
            s.peak().unwrap().clients,
            2,
            "8 clients answered 10 % errors"
        );
        let all_404 = SweepResult {
            levels: vec![lvl(1, 10, 10)],
            ..Default::default()
        };
        assert!(all_404.peak().is_none());
    }

    #[test]
    fn a_dead_target_ends_the_sweep_at_its_first_level() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port(); // free a moment ago: nothing listens
        let addr: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
        let target = webstand_results::Target {
            host: "127.0.0.1".into(),
            port,
            addrs: vec![addr],
        };
        let spec = SweepSpec::uniform(
            &[1, 2, 4],
            Stop {
                requests: None,
                duration: Some(Duration::from_secs(20)),
            },
            None,
        );
        let t = std::time::Instant::now();
        let out = run(&spec, &Plan::new(target, "/"), "/", &mut Quiet).unwrap();
        assert_eq!(out.levels.len(), 1, "the sweep went on against a dead port");
        let r = &out.levels[0].result;
        assert_eq!(r.ended, Some(webstand_results::Ended::Unreachable));
        assert!(r.complete == 0 && r.failed.connect >= 1, "{r:?}");
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "no fail-fast: {:?}",
            t.elapsed()
        );
    }
}
