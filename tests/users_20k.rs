//! 20,000 users (issue 15): under this machine's open-files hard limit of 20,000 per process,
//! `webstand serve` holds 19,500 keep-alive connections with no error, under 20 MiB resident, and
//! answers fresh requests as quickly as it did before they opened (against the test's own
//! baseline, not a clock figure: the machine is shared); `webstand bench` opens 19,500 connections at once
//! with its source addresses spread over 127.0.0.0/8 (`-B FIRST-LAST`), and refuses up front, naming
//! the limit, a `-c` the open-files limit cannot hold.
//!
//! The two 19,500-connection tests take the machine's descriptors: they run one after the other
//! (a lock), each bounded (connections are made and checked once, the bench by its request count).

use crate::common;

use socket2::{Domain, Socket, Type};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const USERS: usize = 19_500;
/// One at a time: two of these tests together would need 39,000 descriptors in this process.
static MANY: Mutex<()> = Mutex::new(());

/// A docroot with one small file.
fn docroot() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "hello, 20k users\n").unwrap();
    dir
}

/// The soft open-files limit raised to what `USERS` connections need (the hard limit allows it
/// here; a machine whose hard limit does not fails this test with a clear message).
fn raise_open_files() {
    webstand_engine::raise_fd_limit(USERS as u64 + 200);
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    assert!(
        lim.rlim_cur >= USERS as u64 + 200,
        "this test needs an open-files limit of {} (it is {}/{}): ulimit -n 20000",
        USERS + 200,
        lim.rlim_cur,
        lim.rlim_max
    );
}

const REQUEST: &[u8] = b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n";
const BODY: &str = "hello, 20k users\n";

/// Sends one request and reads its whole response (Content-Length framed): true on a 200 with the
/// file's bytes.
fn exchange(s: &mut TcpStream) -> bool {
    if s.write_all(REQUEST).is_err() {
        return false;
    }
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.ends_with(BODY.as_bytes()) {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    got.starts_with(b"HTTP/1.1 200 ")
}

/// A keep-alive connection to `to` from 127.0.0.(2 + i mod 250).
fn connect_from(i: usize, to: SocketAddr) -> std::io::Result<TcpStream> {
    let s = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    let from: SocketAddr = format!("127.0.0.{}:0", 2 + i % 250).parse().unwrap();
    s.bind(&from.into())?;
    s.connect(&to.into())?;
    let s: TcpStream = s.into();
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.set_nodelay(true)?;
    Ok(s)
}

/// How many fresh requests each side of the fresh-request comparison takes.
const FRESH: usize = 50;

/// The times of `FRESH` fresh connections to `to`, one after the other, each with one request
/// answered in full (or the test fails; a stalled answer fails it after 10 s): sorted, quickest
/// first.
fn fresh_times(to: SocketAddr) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..FRESH)
        .map(|i| {
            let t = Instant::now();
            let mut s = TcpStream::connect(to).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            assert!(
                exchange(&mut s),
                "fresh request {i} failed or stalled past 10 s"
            );
            t.elapsed()
        })
        .collect();
    times.sort();
    times
}

/// Fresh requests with the idle connections open (`during`) against the same before they opened
/// (`before`), both sorted: the quickest within 20 times the quickest before or 2 ms, the median
/// within 20 times the median before or 100 ms, whichever is larger. Not a clock figure to meet:
/// each takes 15–55 µs here, quiet or with two busy loops on each CPU, and scheduling delay alone
/// does not hold all 50 past 2 ms (the quickest), nor half of them past 100 ms. A server whose work
/// per event grows with its idle connections raises even the quickest; one that stalls new
/// connections behind them raises the median, or fails a request at its 10 s bound.
fn assert_fresh_requests_unslowed(before: &[Duration], during: &[Duration]) {
    let bound = |base: Duration, floor_ms: u64| (base * 20).max(Duration::from_millis(floor_ms));
    let (quickest, median) = (bound(before[0], 2), bound(before[FRESH / 2], 100));
    assert!(
        during[0] <= quickest && during[FRESH / 2] <= median,
        "fresh requests with {USERS} connections open: quickest {:?}, median {:?} (bounds {quickest:?} \
         and {median:?}; before they opened: quickest {:?}, median {:?})",
        during[0],
        during[FRESH / 2],
        before[0],
        before[FRESH / 2]
    );
}

/// Resident memory of a process, KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn serve_holds_19500_keep_alive_connections_small_and_responsive() {
    let _one = MANY.lock().unwrap_or_else(|e| e.into_inner());
    raise_open_files();
    let dir = docroot();
    let server = common::serve(dir.path(), &[]);
    let before = fresh_times(server.addr);
    let mut held = Vec::with_capacity(USERS);
    let mut errors = 0;
    for i in 0..USERS {
        match connect_from(i, server.addr) {
            Ok(mut s) => match exchange(&mut s) {
                true => held.push(s),
                false => errors += 1,
            },
            _ => errors += 1,
        }
    }
    assert_eq!(errors, 0, "{errors} of {USERS} connections failed");
    let rss = rss_kib(server.child.id());
    // Fresh connections and requests while all of them are open.
    let during = fresh_times(server.addr);
    // Every held connection is still open and answers again.
    let lost = held.iter_mut().map(exchange).filter(|ok| !ok).count();
    assert_eq!(
        lost, 0,
        "{lost} of {USERS} held connections no longer answered"
    );
    assert!(
        rss < 20 * 1024,
        "webstand serve used {rss} KiB resident with {USERS} connections (limit 20 MiB)"
    );
    assert_fresh_requests_unslowed(&before, &during);
}

#[test]
fn bench_opens_19500_connections_from_a_range_of_source_addresses() {
    let _one = MANY.lock().unwrap_or_else(|e| e.into_inner());
    let dir = docroot();
    let server = common::serve(dir.path(), &[]);
    let url = format!("http://{}/index.html", server.addr);
    let db = dir.path().join("h.db");
    let (users, requests) = (USERS.to_string(), (2 * USERS).to_string());
    let args = [
        "bench",
        "--json",
        "-k",
        "-c",
        &users,
        "-n",
        &requests,
        "-s",
        "20",
        "-B",
        "127.0.0.2-127.0.0.254",
        "--db",
        db.to_str().unwrap(),
        &url,
    ];
    let out = common::run_with_timeout(&args, Duration::from_secs(120));
    assert!(out.status.success(), "{}", common::stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = |k: &str| doc[k].as_u64().unwrap_or_else(|| panic!("no {k} in {doc}"));
    assert_eq!(n("complete"), 2 * USERS as u64, "{doc}");
    assert_eq!(n("errors"), 0, "{doc}");
    // Keep-alive: one connection per client, all of them open at once.
    assert_eq!(n("connections"), USERS as u64, "{doc}");
}

/// The addresses of `-B FIRST-LAST` are taken in turn: an in-test listener sees each of them.
#[test]
fn bench_spreads_connections_over_the_source_range() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = std::thread::spawn(move || {
        let mut peers = std::collections::BTreeSet::new();
        for _ in 0..6 {
            let (mut s, peer) = listener.accept().unwrap();
            peers.insert(peer.ip().to_string());
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok");
        }
        peers
    });
    let url = format!("http://{addr}/");
    let history = tempfile::tempdir().unwrap();
    let db = history.path().join("h.db");
    let b = [
        "bench",
        "-n",
        "6",
        "-c",
        "1",
        "-B",
        "127.0.0.5-127.0.0.7",
        "--db",
    ];
    let out = common::run(&[&b[..], &[db.to_str().unwrap(), &url]].concat());
    assert!(out.status.success(), "{}", common::stderr(&out));
    let peers: Vec<String> = seen.join().unwrap().into_iter().collect();
    assert_eq!(peers, ["127.0.0.5", "127.0.0.6", "127.0.0.7"]);
}

#[test]
fn bench_refuses_bad_ranges_and_too_many_clients_in_one_line() {
    let url = "http://127.0.0.1:9/";
    for (b, says) in [
        ("127.0.0.9-127.0.0.2", "the range must go up"),
        (
            "127.0.0.2-::1",
            "both ends of a range must be IPv4, or both IPv6",
        ),
        ("127.0.0.2-192.0.2.1", "cannot bind to 192.0.2.1"),
    ] {
        let out = common::run(&["bench", "-B", b, url]);
        let err = common::stderr(&out);
        assert_eq!(out.status.code(), Some(1), "-B {b}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "-B {b}: {err}");
        assert!(err.contains(says), "-B {b}: {err}");
    }
    // Beyond the open-files hard limit (lowered for the child, soft first: a hard limit below the
    // soft one is refused): refused before any connection.
    let script = format!(
        "ulimit -n 4096 && ulimit -Hn 4096 && exec \"$0\" bench -c {USERS} -n {USERS} {url}"
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &script, env!("CARGO_BIN_EXE_webstand")])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("open-files limit (RLIMIT_NOFILE) is 4096"),
        "{err}"
    );
    assert!(err.contains("ulimit -n"), "{err}");
}
