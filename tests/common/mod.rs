//! Helpers shared by the end-to-end tests: run the real `webstand` binary, find free loopback ports,
//! start `webstand serve` and stop it when the test ends.
#![allow(dead_code)]

pub mod aioquic;
pub mod h2;
pub mod h2_client;
pub mod h2_frames;
pub mod h3;
pub mod junit;
pub mod lab;
pub mod lab_up;
pub mod listen;
pub mod netns;
pub mod nginx;
pub mod offline;
pub mod paced;
pub mod php_fpm;
pub mod recording_server;
pub mod test_server;

#[allow(unused_imports)] // each test file uses some of them
pub use nginx::{lab_nginx, start_nginx, start_nginx_in, www_with_page, Daemon};

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The binary under test. Its default history lives in the test process's [`scratch`] directory
/// (XDG_DATA_HOME), so a test without `--db` neither reads nor writes the user's history (one
/// written by a newer webstand would add a warning line to every run).
pub fn webstand() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_webstand"));
    c.env("XDG_DATA_HOME", xdg_data_home());
    c
}

/// The XDG_DATA_HOME of the binary under test (its default history): in [`scratch`].
pub fn xdg_data_home() -> PathBuf {
    scratch().join("xdg-data")
}

/// This test process's own directory for what outlives one test (histories kept across runs,
/// the binary's default history), under the build's temporary directory: made on first use and
/// removed when the process exits, so a test run leaves nothing behind for the next one.
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    extern "C" fn remove() {
        if let Some(dir) = DIR.get() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("webstand-test-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("a scratch directory in the build's temporary directory")
            .keep();
        // SAFETY: `remove` is an extern "C" fn without arguments, as atexit requires; it runs once,
        // when the harness exits (after every test, passed or failed).
        let registered = unsafe { libc::atexit(remove) };
        assert_eq!(registered, 0, "atexit");
        dir
    })
}

/// Runs `webstand ARGS…` to completion with a bound on its running time.
pub fn run(args: &[&str]) -> Output {
    run_with_timeout(args, Duration::from_secs(120))
}

pub fn run_with_timeout(args: &[&str], limit: Duration) -> Output {
    run_with_env(args, &[], limit)
}

/// `run_with_timeout` with extra environment variables (a TMPDIR of the test's own, a PATH).
pub fn run_with_env(args: &[&str], env: &[(&str, &str)], limit: Duration) -> Output {
    output_within(webstand().envs(env.iter().copied()).args(args), limit)
}

/// Runs `cmd` to completion with a bound on its running time (killed, and the test failed, past it).
pub fn output_within(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn webstand");
    // Both pipes are drained while the command runs: one that fills (64 KiB) would block it.
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let out_reader = drain(Box::new(child.stdout.take().unwrap()));
    let err_reader = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{cmd:?} did not finish within {:?}\nstdout: {}\nstderr: {}",
                limit,
                String::from_utf8_lossy(&out_reader.join().unwrap()),
                String::from_utf8_lossy(&err_reader.join().unwrap())
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

/// The JSON document a command printed on stdout; the test fails with both streams if it is none.
pub fn json_stdout(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)))
}

/// The finding whose limit is `limit` ("errors", "error-burst") in a `--json` diagnosis object.
pub fn diagnosis_finding<'a>(
    d: &'a serde_json::Value,
    limit: &str,
) -> Option<&'a serde_json::Value> {
    d["findings"]
        .as_array()?
        .iter()
        .find(|f| f["limit"] == limit)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A loopback port nothing listens on while this lives: a socket holds it bound without listen(), so
/// Linux refuses every connect there, and neither another test's bind (the socket does not set
/// SO_REUSEADDR) nor an outgoing connection's source port can take it. For "nothing listens here"
/// cases: [`free_port`]'s port is only free when asked, and another test may start a server on it.
pub struct ClosedPort {
    _held: socket2::Socket,
    pub port: u16,
}

pub fn closed_port() -> ClosedPort {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    socket.bind(&any.into()).expect("bind 127.0.0.1:0");
    let port = socket.local_addr().unwrap().as_socket().unwrap().port();
    ClosedPort {
        _held: socket,
        port,
    }
}

/// Waits until something accepts connections on `addr`.
pub fn wait_listening(addr: SocketAddr, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Waits until run 1 of the history `db` has at least `n` levels saved: the readiness signal of a
/// sweep or comparison in progress (each level is committed as it completes).
pub fn wait_for_levels(db: &Path, n: usize, limit: Duration) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(run) = webstand_store::Store::open_existing(Some(db)).and_then(|s| s.load_run(1))
        {
            if run.levels.len() >= n {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("run 1 of {} never had {n} levels saved", db.display());
}

/// A child process killed when dropped, so a failing test leaves nothing running.
pub struct Running {
    pub child: Child,
    pub addr: SocketAddr,
}

/// Sends `signal` to process `pid`: one the test started (and has not yet waited for) or found among
/// those it started. The test fails if there is no such process.
pub fn send_signal(pid: u32, signal: libc::c_int) {
    // SAFETY: kill(2) takes no memory; it only signals the process.
    let sent = unsafe { libc::kill(pid as libc::pid_t, signal) };
    assert_eq!(
        sent,
        0,
        "kill({pid}, {signal}): {}",
        std::io::Error::last_os_error()
    );
}

/// `child`'s exit status once it exits within `limit`; None past it (it is left running).
pub fn exit_within(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return Some(status);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Stops `child` as an operator would, with SIGTERM (it may finish what it is doing, flush its logs
/// and exit on its own, which a drop's SIGKILL allows none of); returns its exit status, which
/// must come within `limit`.
pub fn terminate(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    send_signal(child.id(), libc::SIGTERM);
    exit_within(child, limit).unwrap_or_else(|| panic!("no exit within {limit:?} after SIGTERM"))
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `webstand serve DIR --listen 127.0.0.1:PORT EXTRA…` and waits for it to listen.
pub fn serve(dir: &Path, extra: &[&str]) -> Running {
    start_serve(dir, None, extra).0
}

/// [`serve`] also listening for HTTPS with `cert` and `key` (`--listen-tls` on a port of its own,
/// chosen again with the plain one when either was taken); returns the HTTPS address, listening.
pub fn serve_tls(dir: &Path, cert: &Path, key: &Path, extra: &[&str]) -> (Running, SocketAddr) {
    let (running, tls) = start_serve(dir, Some((cert, key)), extra);
    (running, tls.expect("a TLS address"))
}

fn start_serve(
    dir: &Path,
    tls: Option<(&Path, &Path)>,
    extra: &[&str],
) -> (Running, Option<SocketAddr>) {
    // A port from `free_port` can be taken by another test before the server binds it: then the
    // server exits with "cannot listen" and is started again on other ports.
    for _ in 0..5 {
        let port = free_port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let tls_addr = tls.map(|_| SocketAddr::from(([127, 0, 0, 1], free_port())));
        let mut cmd = webstand();
        cmd.arg("serve")
            .arg(dir)
            .args(["--listen", &addr.to_string()]);
        if let (Some((cert, key)), Some(t)) = (tls, tls_addr) {
            cmd.args(["--listen-tls", &t.to_string(), "--tls-cert"])
                .arg(cert)
                .arg("--tls-key")
                .arg(key);
        }
        let child = cmd
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn webstand serve");
        let mut running = Running { child, addr };
        let limit = Duration::from_secs(10);
        let listens = |r: &mut Running, port: u16| {
            listen::listens_itself(&mut r.child, port, limit, "webstand serve")
        };
        if listens(&mut running, port) && tls_addr.is_none_or(|t| listens(&mut running, t.port())) {
            return (running, tls_addr);
        }
        let mut err = String::new();
        if let Some(mut e) = running.child.stderr.take() {
            std::io::Read::read_to_string(&mut e, &mut err).unwrap();
        }
        assert!(
            err.contains("cannot listen"),
            "webstand serve exited: {err}"
        );
    }
    panic!("webstand serve exited before listening, on five pairs of free ports in a row");
}

/// Sends raw bytes, then reads until the peer closes or `limit` passes; returns what came back.
pub fn raw_exchange(addr: SocketAddr, request: &[u8], limit: Duration) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(limit)).unwrap();
    s.write_all(request).expect("write");
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(_) => break,
        }
    }
    out
}

/// Where a program is, found the way the lab finds the servers it runs (PATH, then the sbin
/// directories a non-root PATH lacks: nginx, apache2 and mini_httpd live in /usr/sbin).
pub fn find(program: &str) -> Option<std::path::PathBuf> {
    webstand_lab::servers::find_program(program)
}

/// The Debian package that holds a program the tests run (scripts/install-deps.sh installs each).
fn package_of(program: &str) -> &str {
    match program {
        "nginx" => "nginx-light",
        "ab" | "htpasswd" => "apache2-utils",
        "apache2" => "apache2",
        "mini_httpd" => "mini-httpd",
        "chromium" => "chromium",
        "script" => "bsdutils",
        "time" => "time",
        "nghttp" | "h2load" => "nghttp2-client",
        other => other,
    }
}

/// The path of a program a test needs. CI installs every one (scripts/install-deps.sh), so a
/// missing program FAILS the test with a line saying how to install it: no test passes by skipping.
pub fn require(program: &str) -> std::path::PathBuf {
    find(program).unwrap_or_else(|| {
        panic!(
            "{program} is not installed: this test needs it (apt-get install {}, or run \
             scripts/install-deps.sh, as CI does)",
            package_of(program)
        )
    })
}

/// The last CPU, for a generator pinned to a CPU of its own (as the lab and the bench scripts run
/// it: `taskset -c CPU`).
pub fn last_cpu() -> usize {
    let out = Command::new("nproc")
        .arg("--all")
        .output()
        .expect("run nproc");
    let cpus: usize = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert!(
        cpus >= 2,
        "pinning the generator to a CPU of its own needs 2 CPUs, found {cpus}"
    );
    cpus - 1
}

/// A test that needs root (chroot, switching users) FAILS without it: CI runs as root.
pub fn require_root(why: &str) {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(euid, 0, "this test needs root ({why}); CI runs as root");
}

/// A deliberately slow HTTP/1.1 server for tests: `workers` threads each take the next accepted
/// connection, read one request, wait `delay`, answer `200` with `body` and close. Connections beyond
/// the workers queue, so latency grows with load. Stops accepting when dropped.
pub struct SlowServer {
    pub addr: SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl SlowServer {
    pub fn start(workers: usize, delay: Duration, body: &'static [u8]) -> SlowServer {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{mpsc, Arc, Mutex};
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel::<TcpStream>();
        let rx = Arc::new(Mutex::new(rx));
        for _ in 0..workers {
            let rx = rx.clone();
            std::thread::spawn(move || loop {
                let next = rx.lock().unwrap().recv();
                let Ok(mut s) = next else { return };
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let mut req = Vec::new();
                let mut buf = [0u8; 4096];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => req.extend_from_slice(&buf[..n]),
                    }
                }
                std::thread::sleep(delay);
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(head.as_bytes()).and_then(|_| s.write_all(body));
            });
        }
        let flag = stop.clone();
        std::thread::spawn(move || {
            for s in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    return;
                }
                if let Ok(s) = s {
                    let _ = tx.send(s);
                }
            }
        });
        SlowServer { addr, stop }
    }
}

impl Drop for SlowServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

/// The max-users search's bed: 4 workers taking 150 ms per request (sleeps that never end early),
/// and the search's options. Up to 4 clients wait 150 ms, 5–8 wait 300 ms, and from 9 clients on
/// the first round's 9th request waits for two rounds before its own, 450 ms at the least. A p99
/// bound of 440 ms can only be broken by noise on the clean side: 8 clients then need 140 ms of
/// scheduling delay on top of their 300 ms to fail (the margin a loaded 2-core CI machine needs),
/// while 9 and more always break. So the search finds 8 ([`assert_max_users_of_the_bed`]).
pub fn max_users_bed() -> (SlowServer, String) {
    let slow = SlowServer::start(4, Duration::from_millis(150), b"slow");
    let url = format!("http://{}/", slow.addr);
    (slow, url)
}

/// The options of the search on [`max_users_bed`] (a p99 bound of 440 ms, up to 64 clients).
pub const MAX_USERS_SEARCH: [&str; 11] = [
    "--find-max-users",
    "--max-p99-ms",
    "440",
    "--max-clients",
    "64",
    "-n",
    "32",
    "-d",
    "20s",
    "--warmup",
    "0",
];

/// The search on [`max_users_bed`] found 8 clients, and broke at 9.
pub fn assert_max_users_of_the_bed(doc: &serde_json::Value) {
    assert_eq!(doc["max_users"], 8, "{doc:#}");
    assert_eq!(doc["first_broken"], 9, "{doc:#}");
}

/// The levels of a comparison: `servers` on `workloads` at the `clients` levels for `duration`
/// each, with no feature checks.
fn compare_levels<'a>(
    servers: &'a str,
    workloads: &'a str,
    clients: &'a str,
    duration: &'a str,
) -> Vec<&'a str> {
    vec![
        "--servers",
        servers,
        "--workloads",
        workloads,
        "-c",
        clients,
        "-d",
        duration,
        "--no-features",
    ]
}

/// The quickest comparison's options: `servers` on the 2k workload at 1 client for 300 ms (a row per
/// server at the least cost), no feature checks, then `extra` (which may set the warm-up and the
/// max-users search).
pub fn quick_compare<'a>(servers: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = compare_levels(servers, "2k", "1", "300ms");
    args.extend_from_slice(extra);
    args
}

/// A short comparison's options: [`compare_levels`], no warm-up and no max-users search, then
/// `extra`.
pub fn short_compare<'a>(
    servers: &'a str,
    workloads: &'a str,
    clients: &'a str,
    duration: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = compare_levels(servers, workloads, clients, duration);
    args.extend_from_slice(&["--warmup", "0", "--max-users", "none"]);
    args.extend_from_slice(extra);
    args
}

/// The rows of the seeds' sweep table in `text`, each split at white space: those after its header
/// ("Clients Hits/Sec. Kbytes/Sec. …"); the test fails if there is none.
pub fn sweep_table(text: &str) -> Vec<Vec<&str>> {
    let mut lines = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>());
    lines
        .position(|r| r.starts_with(&["Clients", "Hits/Sec.", "Kbytes/Sec."]))
        .unwrap_or_else(|| panic!("no sweep table in {text}"));
    lines.collect()
}

/// Runs ab (apache2-utils) with `args`, bounded by their `-n` and by 120 s here; it must exit 0.
pub fn ab(args: &[&str]) -> Output {
    let out = output_within(
        Command::new(require("ab")).args(args),
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "ab {args:?}: {}", stderr(&out));
    out
}

/// The report [`ab`] printed.
pub fn ab_report(args: &[&str]) -> String {
    stdout(&ab(args))
}

/// The value of the ab report line that starts with `name`.
pub fn field<'a>(report: &'a str, name: &str) -> &'a str {
    field_in(report, name).unwrap_or_else(|| panic!("no {name} in\n{report}"))
}

/// [`field`], or None where the report has no such line.
fn field_in<'a>(report: &'a str, name: &str) -> Option<&'a str> {
    report
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .map(str::trim)
}

/// The report lines of a keep-alive run whose values must equal ab's: its counts (issue 10).
pub const KEEP_ALIVE_COUNTS: [&str; 5] = [
    "Complete requests:",
    "Failed requests:",
    "Keep-Alive requests:",
    "Total transferred:",
    "HTML transferred:",
];

/// How the first load thread of a `--json` run waited halfway down its queue (`halfway.rs`):
/// (blocks on one socket, naps); the test fails naming the thread if the JSON lacks either.
pub fn halfway_waits(run: &serde_json::Value) -> (u64, u64) {
    let thread = &run["load_threads"][0];
    let count = |k: &str| {
        thread[k]
            .as_u64()
            .unwrap_or_else(|| panic!("no {k} in load thread {thread}"))
    };
    (count("halfway_blocks"), count("halfway_naps"))
}

/// Each of the report lines `names` has the same value in our report as in ab's (`label` says which
/// run failed: the options, the server). The first difference fails the test naming the line and
/// both values, then both reports; a line missing from either report fails it too.
pub fn assert_fields_equal(ours: &str, abs: &str, names: &[&str], label: &str) {
    assert_fields_match(("our", ours), ("ab's", abs), names, label);
}

/// [`assert_fields_equal`] between any two reports in ab's layout, each with a possessive name
/// that fits "NAME report" (`("the 4 ranks'", text)`).
pub fn assert_fields_match(a: (&str, &str), b: (&str, &str), names: &[&str], label: &str) {
    let value = |(whose, report): (&str, &str), name: &str| {
        field_in(report, name)
            .unwrap_or_else(|| panic!("{label}: no {name:?} in {whose} report\n{report}"))
            .to_string()
    };
    for name in names {
        let (va, vb) = (value(a, name), value(b, name));
        assert!(
            va == vb,
            "{label}: {name:?} differs: {} {va:?}, {} {vb:?}\n--- {} report\n{}\n--- {} report\n{}",
            a.0,
            b.0,
            a.0,
            a.1,
            b.0,
            b.1
        );
    }
}

/// Lab tests that load the server's CPU (comparisons with PHP, CGI or large levels) and a test whose
/// verdict is the server's availability under attack once ran in separate test binaries, so never
/// side by side; in one binary they would (the lab pins every server to the same first CPU).
/// `busy_lab` lets the loading tests run beside each other; `alone_in_lab` waits until none runs.
static LAB: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Taken by a test whose servers load the lab's CPU (see `LAB`).
pub fn busy_lab() -> std::sync::RwLockReadGuard<'static, ()> {
    LAB.read().unwrap_or_else(|e| e.into_inner())
}

/// Taken by a test that measures a server's availability: no `busy_lab` test runs meanwhile.
pub fn alone_in_lab() -> std::sync::RwLockWriteGuard<'static, ()> {
    LAB.write().unwrap_or_else(|e| e.into_inner())
}
