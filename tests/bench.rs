//! End-to-end tests of `webstand bench` and the engine over loopback: an in-test server produces each
//! response framing and each failure class; nginx (Debian's package) is a real target whose counts
//! must equal ab's on the same URL; bad input gets one error line and a non-zero exit.

mod common;

use common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the test server does with one request; returns whether to keep the connection open.
type Handler = Arc<dyn Fn(&mut TcpStream, &str, usize) -> bool + Send + Sync>;

/// Reads one request head (and ignores any body); None when the client closed.
fn read_request(s: &mut TcpStream, pending: &mut Vec<u8>) -> Option<String> {
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&pending[..end + 4]).into_owned();
            pending.drain(..end + 4);
            return Some(head);
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    }
}

/// A server on a free loopback port: each connection in its own thread, each request to `handler`
/// with the request head and its number on the connection (0-based).
fn test_server(
    handler: impl Fn(&mut TcpStream, &str, usize) -> bool + Send + Sync + 'static,
) -> SocketAddr {
    let handler: Handler = Arc::new(handler);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { continue };
            let h = handler.clone();
            std::thread::spawn(move || {
                let mut pending = Vec::new();
                let mut i = 0;
                while let Some(req) = read_request(&mut s, &mut pending) {
                    if !h(&mut s, &req, i) {
                        return;
                    }
                    i += 1;
                }
            });
        }
    });
    addr
}

/// A server that always answers with `response` and keeps the connection while the client asks.
fn fixed_server(response: &'static [u8], keep: bool) -> SocketAddr {
    test_server(move |s, req, _| {
        let _ = s.write_all(response);
        keep && !req.to_ascii_lowercase().contains("connection: close")
    })
}

/// A history database of its own for each run, in one temporary directory per test process.
fn db() -> String {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = DIR.get_or_init(|| tempfile::tempdir().unwrap());
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    dir.path()
        .join(format!("history-{n}.db"))
        .to_string_lossy()
        .into_owned()
}

fn bench_json(args: &[&str], limit: Duration) -> (Value, Duration) {
    let db = db();
    let mut all = vec!["bench", "--db", &db, "--json", "-q"];
    all.extend_from_slice(args);
    let t = Instant::now();
    let out = run_with_timeout(&all, limit);
    let took = t.elapsed();
    assert!(
        out.status.success(),
        "webstand {all:?} failed: {}",
        stderr(&out)
    );
    let v: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", stdout(&out)));
    (v, took)
}

fn url(addr: SocketAddr, path: &str) -> String {
    format!("http://{addr}{path}")
}

fn counts(v: &Value) -> (u64, u64, u64, u64, u64) {
    let f = &v["failed"];
    (
        v["complete"].as_u64().unwrap(),
        f["connect"].as_u64().unwrap(),
        f["receive"].as_u64().unwrap(),
        f["length"].as_u64().unwrap(),
        f["exceptions"].as_u64().unwrap(),
    )
}

const CL: &[u8] = b"HTTP/1.1 200 OK\r\nServer: t/1\r\nContent-Length: 5\r\n\r\nhello";

#[test]
fn content_length_new_connection_per_request() {
    let addr = fixed_server(CL, true);
    let (v, _) = bench_json(
        &["-n", "40", "-c", "4", "-s", "5", &url(addr, "/x")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (40, 0, 0, 0, 0));
    assert_eq!(v["connections"], 40);
    assert_eq!(v["total_bytes"], 40 * CL.len() as u64);
    assert_eq!(v["body_bytes"], 200);
    assert_eq!(v["document_length"], 5);
    assert_eq!(v["server_software"], "t/1");
}

#[test]
fn chunked_with_extensions_and_trailers_keep_alive() {
    let resp: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;a=b\r\nwiki\r\n6;q=\"x;y\"\r\npedia \r\n0\r\nX-Trailer: 1\r\n\r\n";
    let addr = fixed_server(resp, true);
    let (v, _) = bench_json(
        &["-k", "-n", "60", "-c", "3", "-s", "5", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (60, 0, 0, 0, 0));
    assert_eq!(v["connections"], 3, "keep-alive reuses connections");
    assert_eq!(v["keep_alive_requests"], 60);
    assert_eq!(v["body_bytes"], 600, "decoded payload is 10 bytes");
    assert_eq!(v["total_bytes"], 60 * resp.len() as u64);
}

#[test]
fn close_delimited_body() {
    let addr = fixed_server(
        b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end",
        false,
    );
    let (v, _) = bench_json(
        &["-k", "-n", "20", "-c", "2", "-s", "5", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (20, 0, 0, 0, 0));
    assert_eq!(v["body_bytes"], 20 * 13);
    assert_eq!(v["keep_alive_requests"], 0);
}

#[test]
fn head_204_304_and_interim_responses_have_no_body() {
    // HEAD: Content-Length announces a body that never comes; waiting for it would time out.
    let addr = fixed_server(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", true);
    let (v, took) = bench_json(
        &[
            "-k",
            "-m",
            "HEAD",
            "-n",
            "20",
            "-c",
            "2",
            "-s",
            "3",
            &url(addr, "/"),
        ],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (20, 0, 0, 0, 0));
    assert_eq!(v["body_bytes"], 0);
    assert!(
        took < Duration::from_secs(3),
        "HEAD responses must not wait for a body"
    );

    let addr = fixed_server(b"HTTP/1.1 204 No Content\r\n\r\n", true);
    let (v, _) = bench_json(
        &["-k", "-n", "20", "-c", "2", "-s", "3", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (20, 0, 0, 0, 0));
    assert_eq!(v["connections"], 2);

    let addr = fixed_server(
        b"HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n",
        true,
    );
    let (v, _) = bench_json(
        &["-k", "-n", "20", "-c", "2", "-s", "3", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (20, 0, 0, 0, 0));
    assert_eq!(v["non_2xx"], 20);

    let interim: &[u8] =
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
    let addr = fixed_server(interim, true);
    let (v, _) = bench_json(
        &["-k", "-n", "20", "-c", "2", "-s", "3", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (20, 0, 0, 0, 0));
    assert_eq!(
        (v["body_bytes"].as_u64(), v["non_2xx"].as_u64()),
        (Some(40), Some(0))
    );
}

#[test]
fn keep_alive_connection_closed_by_the_server_is_retried_not_failed() {
    // Says nothing about closing, then closes after every second response.
    let addr = test_server(|s, _, i| {
        let _ = s.write_all(CL);
        i % 2 == 0
    });
    let (v, _) = bench_json(
        &["-k", "-n", "50", "-c", "2", "-s", "5", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (50, 0, 0, 0, 0));
    assert!(v["connections"].as_u64().unwrap() >= 25);
}

/// Sends an RST instead of a FIN when the stream is dropped.
fn reset_on_close(s: &TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setsockopt with a valid fd and a correctly sized struct.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &linger as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

#[test]
fn reset_connections_are_receive_failures() {
    let addr = test_server(|s, _, _| {
        reset_on_close(s);
        false
    });
    let (v, took) = bench_json(
        &["-n", "10", "-c", "2", "-s", "5", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (0, 0, 10, 0, 0));
    assert!(took < Duration::from_secs(5));
}

#[test]
fn short_body_is_a_receive_failure() {
    let addr = fixed_server(
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this",
        false,
    );
    let (v, _) = bench_json(
        &["-n", "10", "-c", "2", "-s", "5", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (0, 0, 10, 0, 0));
}

#[test]
fn garbage_is_an_exception() {
    let addr = fixed_server(b"this is not HTTP at all\r\n\r\n", false);
    let (v, _) = bench_json(
        &["-n", "10", "-c", "2", "-s", "5", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (0, 0, 0, 0, 10));
    let addr = fixed_server(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nnothex\r\n",
        false,
    );
    let (v, _) = bench_json(
        &["-n", "10", "-c", "2", "-s", "5", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (0, 0, 0, 0, 10));
}

#[test]
fn stall_past_the_timeout_is_an_exception_and_the_run_ends() {
    let addr = test_server(|_, _, _| {
        std::thread::sleep(Duration::from_secs(20));
        false
    });
    let (v, took) = bench_json(
        &["-n", "4", "-c", "2", "-s", "1", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (0, 0, 0, 0, 4));
    assert!(
        took < Duration::from_secs(6),
        "two rounds of a 1 s timeout took {took:?}"
    );
}

#[test]
fn varying_lengths_are_length_failures_unless_l() {
    let addr = test_server(|s, _, i| {
        let _ = s.write_all(if i % 2 == 0 {
            CL
        } else {
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"
        });
        true
    });
    let (v, _) = bench_json(
        &["-k", "-n", "20", "-c", "1", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (10, 0, 0, 10, 0));
    let (v, _) = bench_json(
        &["-k", "-l", "-n", "20", "-c", "1", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (20, 0, 0, 0, 0));
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let addr = fixed_server(CL, true);
    let (v, _) = bench_json(
        &["--pipeline", "8", "-n", "400", "-c", "2", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (400, 0, 0, 0, 0));
    assert_eq!(v["connections"], 2);
}

#[test]
fn request_carries_method_headers_and_body() {
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let tx = std::sync::Mutex::new(tx);
    let addr = test_server(move |s, req, _| {
        let _ = tx.lock().unwrap().send(req.to_string());
        let _ = s.write_all(CL);
        false
    });
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("body.json");
    std::fs::write(&body, b"{\"a\":1}").unwrap();
    let (v, _) = bench_json(
        &[
            "-n",
            "1",
            "-p",
            body.to_str().unwrap(),
            "-T",
            "application/json",
            "-H",
            "X-Test: yes",
            "--http1.0",
            &url(addr, "/p?q=1"),
        ],
        Duration::from_secs(30),
    );
    assert_eq!(v["complete"], 1);
    let req = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(req.starts_with("POST /p?q=1 HTTP/1.0\r\n"), "{req}");
    assert!(
        req.contains("Content-Type: application/json\r\n") && req.contains("Content-Length: 7\r\n")
    );
    assert!(req.contains("X-Test: yes\r\n") && req.contains(&format!("Host: {addr}\r\n")));
}

#[test]
fn open_loop_rate_is_paced() {
    let addr = fixed_server(CL, true);
    let (v, took) = bench_json(
        &[
            "-k",
            "-c",
            "4",
            "--rate",
            "200",
            "-d",
            "2s",
            &url(addr, "/"),
        ],
        Duration::from_secs(30),
    );
    let done = v["complete"].as_u64().unwrap();
    assert!((380..=420).contains(&done), "200/s for 2 s gave {done}");
    assert!(took < Duration::from_secs(5));
}

#[test]
fn duration_stops_an_unbounded_run() {
    let addr = fixed_server(CL, true);
    let (v, took) = bench_json(
        &["-k", "-c", "2", "-d", "1s", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert!(v["complete"].as_u64().unwrap() > 100);
    assert!((0.9..1.5).contains(&v["elapsed_secs"].as_f64().unwrap()));
    assert!(took < Duration::from_secs(4));
}

#[test]
fn json_carries_each_load_threads_busy_fraction() {
    // Every answer takes 5 ms: both load threads spend nearly all the run waiting on the server.
    let addr = test_server(|s, _, _| {
        std::thread::sleep(Duration::from_millis(5));
        let _ = s.write_all(CL);
        true
    });
    let (v, _) = bench_json(
        &[
            "-k",
            "--threads",
            "2",
            "-c",
            "4",
            "-d",
            "1s",
            &url(addr, "/"),
        ],
        Duration::from_secs(30),
    );
    assert!(v["complete"].as_u64().unwrap() > 100);
    let threads = v["load_threads"].as_array().expect("load_threads");
    assert_eq!(threads.len(), 2, "one entry per load thread");
    let elapsed = v["elapsed_secs"].as_f64().unwrap();
    let (mut user, mut sys) = (0.0, 0.0);
    for t in threads {
        let secs = |k: &str| t[k].as_f64().unwrap();
        let busy = secs("busy_fraction");
        let own = (secs("user_secs") + secs("sys_secs")) / elapsed;
        assert!(
            (busy - own).abs() < 1e-9,
            "busy {busy} is not CPU ÷ elapsed {own}"
        );
        assert!(
            busy > 0.0 && busy < 0.3,
            "a thread waiting on a slow server was busy {busy}"
        );
        user += secs("user_secs");
        sys += secs("sys_secs");
    }
    let cpu = &v["cpu"];
    assert!((user - cpu["user_secs"].as_f64().unwrap()).abs() < 1e-9);
    assert!((sys - cpu["sys_secs"].as_f64().unwrap()).abs() < 1e-9);
}

#[test]
fn engine_counts_refused_connections() {
    let port = free_port(); // nothing listens here
    let (target, path) = webstand_engine::parse_url(&format!("http://127.0.0.1:{port}/")).unwrap();
    let mut plan = webstand_engine::Plan::new(target, &path);
    plan.stop.requests = Some(25);
    plan.stop.duration = Some(Duration::from_secs(10));
    plan.shape = webstand_engine::Shape::Closed { clients: 5 };
    let r = webstand_engine::run(&plan, Default::default()).unwrap();
    assert_eq!(
        (r.complete, r.failed.connect, r.failed.total()),
        (0, 25, 25)
    );
    assert!(r.first_error.unwrap().contains("refused"));
}

fn assert_one_line_error(args: &[&str], expect: &str) {
    let out = run_with_timeout(args, Duration::from_secs(30));
    assert!(!out.status.success(), "{args:?} should fail");
    let err = stderr(&out);
    assert!(
        err.contains(expect),
        "{args:?}: stderr {err:?} lacks {expect:?}"
    );
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: more than one line: {err}"
    );
    assert!(stdout(&out).is_empty() || !stdout(&out).contains("Complete requests"));
}

#[test]
fn bad_input_gets_one_clear_line() {
    let port = free_port();
    let refused = format!("http://127.0.0.1:{port}/");
    let db = db();
    let b = ["bench", "--db", db.as_str(), "-q"];
    let with = |extra: &[&'static str], u: &str| -> Vec<String> {
        b.iter()
            .chain(extra.iter())
            .map(|s| s.to_string())
            .chain([u.to_string()])
            .collect()
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            with(&["-n", "5", "-c", "10"], "http://127.0.0.1:1/"),
            "cannot be greater than the number of requests",
        ),
        (
            with(&["-H", "NoColonHere"], "http://127.0.0.1:1/"),
            "malformed header",
        ),
        (with(&[], "https://127.0.0.1/"), "only http:// is supported"),
        (
            with(&[], "ftp://127.0.0.1/"),
            "unsupported URL scheme 'ftp'",
        ),
        (with(&[], "http://no-such-host.invalid/"), "unknown host"),
        (with(&[], "not a url"), "invalid URL"),
        (with(&["-n", "3"], &refused), "Connection refused"),
        (with(&["-k", "-d", "60s"], &refused), "could not connect"),
    ];
    for (args, expect) in cases {
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        assert_one_line_error(&args, expect);
    }
}

#[test]
fn ctrl_c_prints_the_report_of_what_completed() {
    // The server says when the run has begun, so the signal cannot beat the handler's installation.
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let tx = std::sync::Mutex::new(tx);
    let addr = test_server(move |s, _, _| {
        let _ = tx.lock().unwrap().send(());
        let _ = s.write_all(CL);
        true
    });
    let child = webstand()
        .args([
            "bench",
            "--db",
            &db(),
            "-q",
            "-k",
            "-c",
            "2",
            "-d",
            "30s",
            &url(addr, "/"),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    rx.recv_timeout(Duration::from_secs(20))
        .expect("the run never reached the server");
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5));
    let text = stdout(&out);
    assert!(
        text.contains("Complete requests:") && text.contains("interrupted"),
        "{text}"
    );
    let done: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("Complete requests:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap();
    assert!(done > 0);
    let taken: f64 = field(&text, "Time taken for tests:")
        .trim_end_matches(" seconds")
        .parse()
        .unwrap();
    assert!(taken < 10.0, "interrupted after {taken} s of a 30 s run");
}

/// nginx from Debian's package on a free port with a one-file docroot; killed when dropped. One
/// process (`master_process off`), so the kill leaves no orphaned worker holding the port.
struct Nginx {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_nginx() -> Option<Nginx> {
    if !have("nginx") {
        eprintln!("skipping: nginx is not installed (scripts/install-deps.sh installs it)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("www");
    std::fs::create_dir(&root).unwrap();
    let page: Vec<u8> = (0..6397u32)
        .map(|i| b"abcdefghijklmnopqrstuvwxyz\n"[(i % 27) as usize])
        .collect();
    std::fs::write(root.join("page.html"), page).unwrap();
    let port = free_port();
    let d = dir.path().display();
    let conf = format!(
        "master_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\nevents {{ worker_connections 512; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {d}/tmp;\n  proxy_temp_path {d}/tmp;\n  fastcgi_temp_path {d}/tmp;\n  \
         uwsgi_temp_path {d}/tmp;\n  scgi_temp_path {d}/tmp;\n  \
         server {{ listen 127.0.0.1:{port}; root {}; }}\n}}\n",
        root.display()
    );
    let conf_path = dir.path().join("nginx.conf");
    std::fs::write(&conf_path, conf).unwrap();
    let child = std::process::Command::new("nginx")
        .args([
            "-c",
            conf_path.to_str().unwrap(),
            "-p",
            dir.path().to_str().unwrap(),
            "-e",
            &format!("{d}/error.log"),
            "-g",
            "daemon off;",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start nginx");
    let n = Nginx {
        child,
        port,
        _dir: dir,
    };
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    assert!(
        wait_listening(addr, Duration::from_secs(10)),
        "nginx did not listen"
    );
    Some(n)
}

fn field<'a>(report: &'a str, name: &str) -> &'a str {
    report
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .unwrap_or_else(|| panic!("no {name} in\n{report}"))
        .trim()
}

#[test]
fn nginx_counts_equal_abs() {
    let Some(ngx) = start_nginx() else { return };
    if !have("ab") {
        eprintln!("skipping: ab is not installed (apache2-utils)");
        return;
    }
    let u = format!("http://127.0.0.1:{}/page.html", ngx.port);
    for extra in [&[][..], &["-k"][..]] {
        let mut ab_args: Vec<&str> = extra.to_vec();
        ab_args.extend(["-q", "-n", "500", "-c", "5", &u]);
        let ab = std::process::Command::new("ab")
            .args(&ab_args)
            .output()
            .unwrap();
        assert!(
            ab.status.success(),
            "ab failed: {}",
            String::from_utf8_lossy(&ab.stderr)
        );
        let ab = String::from_utf8_lossy(&ab.stdout).into_owned();
        let db = db();
        let mut ws_args = vec!["bench", "--db", db.as_str()];
        ws_args.extend(&ab_args);
        let ws = run_with_timeout(&ws_args, Duration::from_secs(60));
        assert!(ws.status.success(), "{}", stderr(&ws));
        let ws = stdout(&ws);
        for name in [
            "Server Software:",
            "Document Length:",
            "Complete requests:",
            "Failed requests:",
            "Total transferred:",
            "HTML transferred:",
            "Concurrency Level:",
            "Document Path:",
        ] {
            assert_eq!(field(&ws, name), field(&ab, name), "{name} with {extra:?}");
        }
        if !extra.is_empty() {
            assert_eq!(
                field(&ws, "Keep-Alive requests:"),
                field(&ab, "Keep-Alive requests:")
            );
        }
        for line in [
            "Connection Times (ms)",
            "Percentage of the requests served within a certain time (ms)",
            " 100%  ",
        ] {
            assert!(ws.contains(line), "missing {line:?}");
        }
    }
}

#[test]
fn checksum_catches_a_changed_body_of_the_same_length() {
    // The 4th response of each connection has the same length but other bytes.
    let addr = test_server(|s, _, i| {
        let _ = s.write_all(if i == 3 {
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHELLO"
        } else {
            CL
        });
        true
    });
    let (v, _) = bench_json(
        &["-k", "-n", "10", "-c", "1", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(
        counts(&v),
        (10, 0, 0, 0, 0),
        "lengths agree: no failure without --checksum"
    );
    let (v, _) = bench_json(
        &["-k", "--checksum", "-n", "10", "-c", "1", &url(addr, "/")],
        Duration::from_secs(30),
    );
    assert_eq!(counts(&v), (9, 0, 0, 1, 0));
}

#[test]
fn url_file_spreads_requests_over_its_paths() {
    let addr = fixed_server(CL, true);
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("urls.txt");
    std::fs::write(&list, "/a.html\n/b.html\n/c.html\n").unwrap();
    let (v, _) = bench_json(
        &[
            "-k",
            "--url-file",
            list.to_str().unwrap(),
            "-n",
            "3000",
            "-c",
            "4",
            &url(addr, "/"),
        ],
        Duration::from_secs(30),
    );
    assert_eq!(v["complete"], 3000);
    let per: Vec<u64> = v["per_request"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(per.len(), 3);
    assert!(
        per.iter().all(|&n| (850..=1150).contains(&n)),
        "uniform pick gave {per:?}"
    );
}

#[test]
fn open_loop_latency_counts_from_the_intended_send_time() {
    // The 20th request on each connection stalls 500 ms. A closed loop sees one slow request; an open
    // loop at 100/s also charges the ~50 sends that were due during the stall (coordinated omission).
    let stall = || {
        test_server(|s, _, i| {
            if i == 19 {
                std::thread::sleep(Duration::from_millis(500));
            }
            let _ = s.write_all(CL);
            true
        })
    };
    let p90 = |v: &Value| {
        v["latency"]["total"]["percentiles_ms"]["90"]
            .as_f64()
            .unwrap()
    };
    let (open, _) = bench_json(
        &[
            "-k",
            "-c",
            "1",
            "--rate",
            "100",
            "-d",
            "2s",
            &url(stall(), "/"),
        ],
        Duration::from_secs(30),
    );
    assert!(
        open["late_sends"].as_u64().unwrap() >= 30,
        "late sends: {}",
        open["late_sends"]
    );
    assert!(
        p90(&open) > 100.0,
        "open-loop p90 {} ms should include the queued sends",
        p90(&open)
    );
    assert!(open["latency"]["total"]["max_ms"].as_f64().unwrap() >= 450.0);
    let (closed, _) = bench_json(
        &["-k", "-c", "1", "-n", "200", &url(stall(), "/")],
        Duration::from_secs(30),
    );
    assert!(p90(&closed) < 50.0, "closed-loop p90 {} ms", p90(&closed));
    assert_eq!(closed["late_sends"], 0);
}

#[test]
fn a_history_error_only_warns_and_the_report_stays() {
    let addr = fixed_server(CL, true);
    let out = run_with_timeout(
        &[
            "bench",
            "--db",
            "/proc/no-such-dir/history.db",
            "-q",
            "-n",
            "5",
            &url(addr, "/"),
        ],
        Duration::from_secs(30),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(field(&stdout(&out), "Complete requests:"), "5");
    assert!(
        stderr(&out).contains("warning") && stderr(&out).contains("not saved"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_run_is_saved_in_the_history() {
    let addr = fixed_server(CL, true);
    let db = db();
    let out = run_with_timeout(
        &[
            "bench",
            "--db",
            &db,
            "-q",
            "-k",
            "-n",
            "20",
            "-c",
            "2",
            &url(addr, "/saved"),
        ],
        Duration::from_secs(30),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let hist = run_with_timeout(&["history", "--db", &db], Duration::from_secs(30));
    let text = stdout(&hist);
    assert!(
        text.contains("bench") && text.contains("/saved") && text.contains("complete"),
        "{text}"
    );
}
