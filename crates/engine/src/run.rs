//! Carrying out a plan: the protocol picked (the one place it is), then one load thread per share
//! of the connections (each a loop of its own, `driver.rs`, over the protocol's connections), their
//! results merged into one.
//!
//! Nothing is shared between threads per request: each thread owns its connections outright, and the
//! only cross-thread state is the plan, the expectations set by the first responses, and the `Live`
//! counters a thread adds to once per pass (`shared.rs`).

use crate::affinity;
use crate::connection::Connection;
use crate::driver::Driver;
use crate::h1::conn::H1Conn;
use crate::h2::conn::H2Conn;
use crate::h3::conn::H3Conn;
use crate::reach::Reach;
use crate::share::Share;
use crate::shared::Shared;
use crate::spin;
use crate::transport::socket_setup::SocketSetup;
use crate::transport::tls_config::TlsSetup;
use anyhow::bail;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier, OnceLock};
use std::time::Instant;
use webstand_results::live::Live;
use webstand_results::plan::{Pick, Plan, Shape, TlsVersions};
use webstand_results::result::RunResult;
use webstand_results::script::ThreadScript;

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
    // The protocol every connection of the run speaks: HTTP/3 with `--h3`, HTTP/2 with `--h2`,
    // else HTTP/1.x.
    match (&plan.h3, &plan.h2) {
        (Some(_), _) => carry_out::<H3Conn>(plan, &live, wait_for_start),
        (None, Some(_)) => carry_out::<H2Conn>(plan, &live, wait_for_start),
        (None, None) => carry_out::<H1Conn>(plan, &live, wait_for_start),
    }
}

/// [`run_at`] in protocol `C`.
fn carry_out<C: Connection>(
    plan: &Plan,
    live: &Live,
    wait_for_start: impl FnOnce(),
) -> anyhow::Result<RunResult> {
    let clients = plan.shape.clients();
    raise_fd_limit(clients as u64 + 64);
    let threads = load_threads(plan.threads, clients);
    let scripts = thread_scripts(plan, threads)?;
    // A script's request() may hold several requests: they go out pipelined, as wrk sends them.
    let per_call = scripts
        .iter()
        .flatten()
        .map(|s| s.requests_per_call())
        .max();
    let script_responses = scripts.iter().flatten().any(|s| s.calls().response);
    let prepared = Shared {
        plan,
        reach: Reach::new(&plan.target.addrs),
        reqs: plan
            .requests
            .iter()
            .map(|r| C::request(plan, &r.path))
            .collect(),
        head_request: plan.method.eq_ignore_ascii_case("HEAD"),
        keep_alive: plan.keep_alive || plan.pipeline > 1,
        pipeline: plan.pipeline.max(per_call.unwrap_or(1)).max(1),
        doc_len: plan.requests.iter().map(|_| OnceLock::new()).collect(),
        first_digest: plan.requests.iter().map(|_| OnceLock::new()).collect(),
        server: OnceLock::new(),
        live,
        setup: SocketSetup::of(plan),
        start: Instant::now(),
        deadline: None,
        tls: tls_setup(plan)?.map(C::tls),
        spin: spin::limit_for(plan.spin, threads, &plan.shape, C::MULTIPLEXED),
        script_responses,
    };
    // The threads wait at `go` for the shared state, which holds the start instant: it is set only
    // once `wait_for_start` has returned.
    let armed: OnceLock<Shared> = OnceLock::new();
    let go = Barrier::new(threads + 1);
    let (started_unix, outs) = std::thread::scope(|s| {
        let handles: Vec<_> = scripts
            .into_iter()
            .enumerate()
            .map(|(i, script)| {
                let share = Share::of(i, threads, clients, plan);
                let (armed, go) = (&armed, &go);
                s.spawn(move || {
                    go.wait();
                    let shared = armed
                        .get()
                        .expect("the shared state is set before the barrier");
                    let out = Driver::<C>::new(shared, i, share, script).and_then(|d| d.run());
                    match out {
                        Ok((r, end, script)) => {
                            if let (Some(s), Some(p)) = (script, &plan.script) {
                                p.0.returned(i, s);
                            }
                            Ok((r, end))
                        }
                        Err(e) => {
                            // A script's error ends the whole run.
                            shared.live.stop.store(true, Ordering::Relaxed);
                            Err(e)
                        }
                    }
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

/// Each load thread's script state (none without a script), made here, in thread order: wrk runs
/// `setup` for each thread before any starts.
fn thread_scripts(
    plan: &Plan,
    threads: usize,
) -> anyhow::Result<Vec<Option<Box<dyn ThreadScript>>>> {
    let Some(script) = &plan.script else {
        return Ok((0..threads).map(|_| None).collect());
    };
    let addr = plan.target.addrs[0];
    (0..threads)
        .map(|i| script.0.thread(i, threads, addr).map(Some))
        .collect()
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
    result.asked_rate = match shared.plan.shape {
        Shape::Open { rate, .. } => Some(rate),
        Shape::Closed { .. } => None,
    };
    (result.load_cpus, result.online_cpus) = (affinity::allowed_cpus(), affinity::online_cpus());
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
    plan.tls.as_ref().map(setup).transpose()
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
    if plan.h3.is_some() {
        match &plan.tls {
            None => bail!("HTTP/3 runs over QUIC, which is always TLS: give an https:// URL"),
            Some(t) if t.versions == TlsVersions::Tls12 => {
                bail!("HTTP/3 runs over QUIC, which is TLS 1.3: a TLS 1.2 run does not apply")
            }
            Some(_) => {}
        }
        if plan.h2.is_some() {
            bail!("give one protocol: HTTP/2 or HTTP/3");
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::Io;
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
        let t = webstand_results::plan::Target {
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
            .map(|s| webstand_results::plan::RequestSpec {
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

    /// A connection with a timer of its own, as QUIC's will have, over UDP: each request waits
    /// [`Timed::DELAY`] after it is taken before its datagram goes, and completes when the echo
    /// comes back. The driver must wake it at its timer, not at its next timeout sweep or poll
    /// bound (50 ms at least here).
    struct Timed {
        sock: Option<mio::net::UdpSocket>,
        /// The request taken, when it was, and when its datagram is due.
        taken: Option<(usize, Instant)>,
        due: Option<Instant>,
        sent: Option<Instant>,
    }

    impl Timed {
        const DELAY: Duration = Duration::from_millis(5);
    }

    impl Connection for Timed {
        type Thread = ();
        const MULTIPLEXED: bool = false;
        const TIMERS: bool = true;

        fn request(_: &Plan, path: &str) -> Vec<u8> {
            path.as_bytes().to_vec()
        }
        fn thread(_: &Shared) {}
        fn new(_: &Shared, _: &(), _: Instant) -> Timed {
            Timed {
                sock: None,
                taken: None,
                due: None,
                sent: None,
            }
        }
        fn start(&mut self, io: &mut Io, _: &mut (), slot: usize, now: Instant) {
            if self.sock.is_none() {
                let mut s = mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
                s.connect(io.sh.reach.addr()).unwrap();
                let r = io.poll.registry();
                r.register(&mut s, mio::Token(slot), mio::Interest::READABLE)
                    .unwrap();
                self.sock = Some(s);
            }
            if self.taken.is_none() {
                self.taken = io.requests.next(now);
                self.due = self.taken.map(|_| Instant::now() + Timed::DELAY);
            }
        }
        fn takes_more(&self, _: &()) -> bool {
            self.taken.is_none()
        }
        fn connected(&self) -> bool {
            false
        }
        fn timer(&self) -> Option<Instant> {
            self.due
        }
        fn on_timer(&mut self, io: &mut Io, _: &mut (), _: usize, now: Instant) {
            let (Some((req, _)), Some(s)) = (self.taken, self.sock.as_ref()) else {
                return;
            };
            s.send(&io.sh.reqs[req]).unwrap();
            (self.due, self.sent) = (None, Some(now));
        }
        fn on_event(&mut self, io: &mut Io, _: &mut (), slot: usize, _: bool, _: bool) {
            let mut b = [0u8; 64];
            while let Some(Ok(n)) = self.sock.as_ref().map(|s| s.recv(&mut b)) {
                let (Some((req, start)), Some(sent)) = (self.taken.take(), self.sent) else {
                    continue;
                };
                let end = Instant::now();
                io.requests.done(end);
                io.record.received(n);
                let response = crate::record::Response {
                    req,
                    start,
                    end,
                    connect_us: 0,
                    written: sent,
                    first_byte: Some(end),
                    status: 200,
                    body_len: n as u64,
                    digest: None,
                };
                io.record.response(io.sh, &response);
                io.ready.push(slot);
            }
        }
        fn check_timeout(&mut self, _: &mut Io, _: &mut (), _: usize, _: Instant, _: Duration) {}
        fn waiting(&self) -> crate::connection::Waiting {
            crate::connection::Waiting::Idle
        }
        fn queue(_: &[Timed], outstanding: u64) -> usize {
            outstanding as usize
        }
        fn finish(_: &mut [Timed], _: (), _: &mut RunResult) {}
    }

    #[test]
    fn a_connection_is_woken_at_its_own_timer() {
        let echo = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = echo.local_addr().unwrap();
        echo.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        // Echoes every datagram; ends 2 s after the last one.
        std::thread::spawn(move || {
            let mut b = [0u8; 64];
            while let Ok((n, from)) = echo.recv_from(&mut b) {
                let _ = echo.send_to(&b[..n], from);
            }
        });
        let mut p = plan(addr, 40, 2, true);
        p.threads = 1;
        p.stop.duration = Some(Duration::from_secs(10));
        let r = carry_out::<Timed>(&p, &Live::default(), || {}).unwrap();
        assert_eq!((r.complete, r.failed.total()), (40, 0));
        // Each request waited its 5 ms and little more: not a 50 ms poll bound nor a 100 ms sweep.
        let mean = r.mean_latency_ms();
        assert!((5.0..25.0).contains(&mean), "mean latency {mean} ms");
    }
}
