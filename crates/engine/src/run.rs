//! Carrying out a plan: one load thread per share of the connections (each an event loop of its
//! own, see [`crate::worker`]), their results merged into one.
//!
//! Nothing is shared between threads per request: each thread owns its connections outright, and the
//! only cross-thread state is the plan, the expectations set by the first responses, and the `Live`
//! counters a thread adds to once per event batch.

use crate::protocol::Protocol;
use crate::reach::Reach;
use crate::socket_setup::SocketSetup;
use crate::spin;
use crate::tls_config::TlsSetup;
use crate::{Pick, Plan, RunResult, Shape};
use anyhow::bail;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

/// Counters a run publishes while it goes, for progress displays and for stopping it early.
/// Threads add to them once per event batch, never per request.
#[derive(Debug, Default)]
pub struct Live {
    pub complete: AtomicU64,
    pub failed: AtomicU64,
    /// Complete answers whose status was not 2xx (with `failed`, the errors a diagnosis dates).
    pub non_2xx: AtomicU64,
    pub bytes: AtomicU64,
    /// Set by anyone (Ctrl-C handler) to end the run; the result then covers what completed.
    pub stop: AtomicBool,
}

/// Carries out `plan` and returns what it measured. Errors only for a plan that cannot start
/// (no target address, bad options); failures during the run are counted in the result.
pub fn run(plan: &Plan, live: Arc<Live>) -> anyhow::Result<RunResult> {
    run_at(plan, live, || {})
}

/// [`run`], with the run's set-up done before `wait_for_start` is called: the plan checked, the
/// request bytes and TLS configuration built, and the load threads spawned and parked. The run's
/// clocks (`started_unix`, the deadline) start the moment it returns, and the threads are released
/// then. webstand-dist's ranks sleep to their agreed start instant in it, so that the set-up's cost
/// (a thread spawn is tens of microseconds, more on a busy core) is not part of their start skew.
pub fn run_at(
    plan: &Plan,
    live: Arc<Live>,
    wait_for_start: impl FnOnce(),
) -> anyhow::Result<RunResult> {
    check(plan)?;
    let clients = plan.shape.clients();
    raise_fd_limit(clients as u64 + 64);
    let threads = load_threads(plan.threads, clients);
    let prepared = Shared {
        plan,
        reach: Reach::new(&plan.target.addrs),
        protocol: Protocol::of(plan),
        reqs: plan
            .requests
            .iter()
            .map(|r| Protocol::of(plan).request_bytes(plan, &r.path))
            .collect(),
        head_request: plan.method.eq_ignore_ascii_case("HEAD"),
        keep_alive: plan.keep_alive || plan.pipeline > 1,
        pipeline: plan.pipeline.max(1),
        doc_len: plan.requests.iter().map(|_| OnceLock::new()).collect(),
        first_digest: plan.requests.iter().map(|_| OnceLock::new()).collect(),
        server: OnceLock::new(),
        live: &live,
        setup: SocketSetup::of(plan),
        start: Instant::now(),
        deadline: None,
        tls: tls_setup(plan)?,
        spin: spin::limit_for(plan.spin, threads, &plan.shape, plan.h2.is_some()),
    };
    // The threads wait at `go` for the shared state, which holds the start instant: it is set only
    // once `wait_for_start` has returned.
    let armed: OnceLock<Shared> = OnceLock::new();
    let go = Barrier::new(threads + 1);
    let (started_unix, outs) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let share = Share::of(i, threads, clients, plan);
                let (armed, go) = (&armed, &go);
                s.spawn(move || {
                    go.wait();
                    let shared = armed
                        .get()
                        .expect("the shared state is set before the barrier");
                    shared.protocol.run_thread(shared, i, share)
                })
            })
            .collect();
        wait_for_start();
        let started_unix = unix_now();
        let start = Instant::now();
        let deadline = plan.stop.duration.map(|d| start + d);
        let _ = armed.set(Shared {
            start,
            deadline,
            ..prepared
        });
        go.wait();
        let outs: Vec<_> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a load thread panicked")))
            })
            .collect();
        (started_unix, outs)
    });
    let shared = armed.get().expect("set inside the scope");
    gather(shared, started_unix, outs)
}

/// How many load threads run `clients`: as asked, or one per CPU this process may use (0), never
/// more than the clients.
fn load_threads(asked: usize, clients: usize) -> usize {
    let threads = match asked {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    threads.min(clients).max(1)
}

/// The load threads' results added into the run's, with what the shared state learnt.
fn gather(
    shared: &Shared,
    started_unix: f64,
    outs: Vec<anyhow::Result<(RunResult, Instant)>>,
) -> anyhow::Result<RunResult> {
    let mut result = RunResult {
        started_unix,
        per_request: vec![0; shared.plan.requests.len()],
        ..Default::default()
    };
    let mut end = shared.start;
    for out in outs {
        let (r, t) = out?;
        merge(&mut result, &r);
        end = end.max(t);
    }
    result.elapsed = end - shared.start;
    result.interrupted = shared.live.stop.load(Ordering::Relaxed);
    result.ended = shared.reach.ended();
    result.document_length = shared.doc_len.iter().find_map(|l| l.get().copied());
    result.server_software = shared.server.get().cloned();
    result.spin_window = shared.spin;
    (result.load_cpus, result.online_cpus) = (spin::allowed_cpu_list(), spin::online_cpus());
    Ok(result)
}

/// The real-time clock in seconds since the Unix epoch (a run's `started_unix`).
fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The run's TLS configuration, with its files read (an error names the bad one).
fn tls_setup(plan: &Plan) -> anyhow::Result<Option<TlsSetup>> {
    let setup = |t| TlsSetup::new(t, &plan.target.host);
    let tls = plan.tls.as_ref().map(setup).transpose()?;
    Ok(tls.map(|t| match plan.h2 {
        Some(_) => crate::h2::alpn_h2(t),
        None => t,
    }))
}

/// Refuses a plan that cannot run, with the reason.
fn check(plan: &Plan) -> anyhow::Result<()> {
    if plan.stop.requests.is_none() && plan.stop.duration.is_none() {
        bail!("the plan has no stop condition (set a request count or a duration)");
    }
    if plan.requests.is_empty() {
        bail!("the plan has no requests");
    }
    if plan.shape.clients() == 0 {
        bail!("concurrency must be at least 1");
    }
    if let Pick::Weighted { weights, .. } = &plan.pick {
        if weights.len() != plan.requests.len() || weights.iter().all(|&w| w == 0) {
            bail!("weights must match the requests, one each, not all zero");
        }
    }
    if let Shape::Open { rate, .. } = plan.shape {
        if !(rate >= 0.001 && rate.is_finite()) {
            bail!("the request rate must be a number of requests per second of at least 0.001");
        }
    }
    if plan.target.addrs.is_empty() {
        bail!("the target has no address");
    }
    Ok(())
}

/// Raises the soft open-files limit toward `wanted` (up to the hard limit): a default soft limit of
/// 1024 would otherwise turn high concurrency into connect failures.
pub fn raise_fd_limit(wanted: u64) {
    // A failure leaves the limit as it was: the connections beyond it then fail visibly.
    let _ = rlimit::increase_nofile_limit(wanted);
}

fn merge(into: &mut RunResult, r: &RunResult) {
    into.add_counts(r);
    if into.first_error.is_none() {
        into.first_error = r.first_error.clone();
    }
}

/// What every thread reads: the plan and the per-request expectations set by the first responses.
pub(crate) struct Shared<'a> {
    pub plan: &'a Plan,
    /// Which address to connect to, and whether the target was lost (no probe connection).
    pub reach: Reach<'a>,
    /// What every connection speaks, and each request's bytes in it (built once).
    pub protocol: Protocol,
    pub reqs: Vec<Vec<u8>>,
    pub head_request: bool,
    pub keep_alive: bool,
    pub pipeline: usize,
    /// Body length of the first complete response per request (ab's Document Length baseline).
    pub doc_len: Vec<OnceLock<u64>>,
    /// Digest of the first complete response per request, for `BodyCheck::FirstFetch`.
    pub first_digest: Vec<OnceLock<[u8; 32]>>,
    pub server: OnceLock<String>,
    pub live: &'a Live,
    /// ab's `-b` and `-B` for every new socket.
    pub setup: SocketSetup,
    pub start: Instant,
    pub deadline: Option<Instant>,
    /// `https://`: what every connection's TLS is made with.
    pub tls: Option<TlsSetup>,
    /// How long a load thread may spin before it blocks (`spin.rs`; zero: never).
    pub spin: Duration,
}

/// A thread's part of the load.
pub(crate) struct Share {
    pub clients: usize,
    pub requests: Option<u64>,
    pub rate: f64,
}

impl Share {
    /// Thread `i`'s clients, and its requests and rate in proportion to them, so threads finish together.
    pub(crate) fn of(i: usize, threads: usize, clients: usize, plan: &Plan) -> Share {
        let (t, c) = (threads as u64, clients as u64);
        let first_client = |i: u64| i * (c / t) + i.min(c % t);
        let (lo, hi) = (first_client(i as u64), first_client(i as u64 + 1));
        let my_clients = (hi - lo) as usize;
        let rate = match plan.shape {
            Shape::Open { rate, .. } => rate * my_clients as f64 / clients as f64,
            Shape::Closed { .. } => 0.0,
        };
        let portion = |n: u64| {
            ((n as u128 * hi as u128) / c as u128 - (n as u128 * lo as u128) / c as u128) as u64
        };
        Share {
            clients: my_clients,
            requests: plan.stop.requests.map(portion),
            rate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::net::SocketAddr;
    use std::time::Duration;

    /// A tiny keep-alive server: answers every request with a 5-byte body until the client closes.
    fn hello_server(max_conns: usize) -> (SocketAddr, std::thread::JoinHandle<()>) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let h = std::thread::spawn(move || {
            for s in l.incoming().take(max_conns) {
                let s = s.unwrap();
                std::thread::spawn(move || {
                    let mut w = s.try_clone().unwrap();
                    let mut r = BufReader::new(s);
                    let mut line = String::new();
                    loop {
                        let mut close = false;
                        loop {
                            line.clear();
                            if r.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            close |= line.eq_ignore_ascii_case("connection: close\r\n");
                            if line == "\r\n" {
                                break;
                            }
                        }
                        let _ = w.write_all(
                            b"HTTP/1.1 200 OK\r\nServer: t\r\nContent-Length: 5\r\n\r\nhello",
                        );
                        if close {
                            return;
                        }
                    }
                });
            }
        });
        (addr, h)
    }

    fn plan(addr: SocketAddr, n: u64, c: usize, keep_alive: bool) -> Plan {
        let t = crate::Target {
            host: "127.0.0.1".into(),
            port: addr.port(),
            addrs: vec![addr],
        };
        let mut p = Plan::new(t, "/");
        p.stop.requests = Some(n);
        p.stop.duration = Some(Duration::from_secs(20));
        p.shape = Shape::Closed { clients: c };
        p.threads = 2;
        p.keep_alive = keep_alive;
        p.timeout = Duration::from_secs(5);
        p
    }

    #[test]
    fn closed_loop_new_connection_per_request() {
        let (addr, _h) = hello_server(200);
        let r = run(&plan(addr, 200, 4, false), Arc::default()).unwrap();
        assert_eq!((r.complete, r.failed.total(), r.connections), (200, 0, 200));
        assert_eq!(
            (r.body_bytes, r.document_length, r.keep_alive_requests),
            (1000, Some(5), 0)
        );
        assert_eq!(r.total_bytes, 200 * 54);
        assert_eq!(r.histograms.total.len(), 200);
        assert_eq!(r.server_software.as_deref(), Some("t"));
        assert_eq!(r.per_request, vec![200]);
    }

    #[test]
    fn weighted_pick_follows_the_weights() {
        let (addr, _h) = hello_server(4);
        let mut p = plan(addr, 4000, 4, true);
        p.requests = ["/a", "/b"]
            .iter()
            .map(|s| crate::RequestSpec {
                path: s.to_string(),
                expect: None,
            })
            .collect();
        p.pick = Pick::Weighted {
            weights: vec![1, 3],
            seed: 7,
        };
        let r = run(&p, Arc::default()).unwrap();
        assert_eq!(r.complete, 4000);
        let share_b = r.per_request[1] as f64 / 4000.0;
        assert!(
            (0.70..0.80).contains(&share_b),
            "weight 3 of 4 gave {share_b}"
        );
    }

    #[test]
    fn stop_flag_ends_a_run_with_interrupted_set() {
        let (addr, _h) = hello_server(4);
        let mut p = plan(addr, u64::MAX, 2, true);
        p.stop.duration = Some(Duration::from_secs(30));
        let live = Arc::new(Live::default());
        let l2 = live.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            l2.stop.store(true, Ordering::SeqCst);
        });
        let t = Instant::now();
        let r = run(&p, live.clone()).unwrap();
        assert!(r.interrupted && r.complete > 0 && t.elapsed() < Duration::from_secs(5));
        assert_eq!(
            live.complete.load(Ordering::SeqCst),
            r.complete,
            "live counters are flushed at the end"
        );
    }

    #[test]
    fn closed_loop_keep_alive_and_pipelined() {
        let (addr, _h) = hello_server(8);
        let r = run(&plan(addr, 500, 4, true), Arc::default()).unwrap();
        assert_eq!(
            (
                r.complete,
                r.failed.total(),
                r.connections,
                r.keep_alive_requests
            ),
            (500, 0, 4, 500)
        );
        assert!(
            r.cpu.total() > Duration::ZERO && r.cpu.total() < r.elapsed * 2,
            "the load threads' own CPU: {:?}",
            r.cpu
        );
        let (addr, _h) = hello_server(8);
        let mut p = plan(addr, 500, 2, true);
        p.pipeline = 8;
        let r = run(&p, Arc::default()).unwrap();
        assert_eq!((r.complete, r.failed.total(), r.connections), (500, 0, 2));
    }
}

#[cfg(test)]
mod share_tests {
    use super::*;

    #[test]
    fn shares_add_up_and_follow_clients() {
        let t = crate::Target {
            host: "h".into(),
            port: 1,
            addrs: vec![],
        };
        let mut p = Plan::new(t, "/");
        for (n, c, threads) in [
            (1000u64, 3usize, 2usize),
            (7, 7, 3),
            (10, 1, 1),
            (100_000, 32, 2),
            (5, 5, 5),
        ] {
            p.stop.requests = Some(n);
            p.shape = Shape::Closed { clients: c };
            let shares: Vec<Share> = (0..threads).map(|i| Share::of(i, threads, c, &p)).collect();
            assert_eq!(shares.iter().map(|s| s.clients).sum::<usize>(), c);
            assert_eq!(shares.iter().map(|s| s.requests.unwrap()).sum::<u64>(), n);
            assert!(shares
                .iter()
                .all(|s| s.requests.unwrap() >= s.clients as u64));
        }
    }
}
