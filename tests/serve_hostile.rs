//! `webstand serve` under hostile input, each case as raw bytes over 127.0.0.1: size and count
//! limits, slowloris and idle timeouts, request-smuggling shapes, path traversal and symlinks,
//! range floods, descriptor exhaustion, and SIGTERM while a request is in flight.

use crate::common;

use common::{raw_exchange, serve};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(5);

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn docroot() -> (tempfile::TempDir, std::path::PathBuf) {
    let top = tempfile::tempdir().unwrap();
    let root = top.path().join("www");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("index.html"), "home").unwrap();
    std::fs::write(root.join("2k.html"), "a".repeat(2048)).unwrap();
    std::fs::write(top.path().join("secret.txt"), "TOP-SECRET").unwrap();
    std::os::unix::fs::symlink(top.path().join("secret.txt"), root.join("abs-link")).unwrap();
    std::os::unix::fs::symlink("../secret.txt", root.join("rel-link")).unwrap();
    std::os::unix::fs::symlink("../../secret.txt", root.join("sub/deep-link")).unwrap();
    std::os::unix::fs::symlink("2k.html", root.join("inside-link")).unwrap();
    (top, root)
}

/// Number of HTTP responses in a byte stream.
fn count_responses(b: &[u8]) -> usize {
    text(b).matches("HTTP/1.1 ").count()
}

#[test]
fn oversized_request_line_headers_and_header_count() {
    let (_t, root) = docroot();
    let s = serve(
        &root,
        &[
            "--threads",
            "1",
            "--max-request-line",
            "1024",
            "--max-header-bytes",
            "4096",
            "--max-headers",
            "20",
        ],
    );
    let long_target = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(2000));
    let r = text(&raw_exchange(s.addr, long_target.as_bytes(), T));
    assert!(r.starts_with("HTTP/1.1 414 "), "{r}");
    // The limit holds even before the line ends: a request line that never ends.
    let r = text(&raw_exchange(
        s.addr,
        format!("GET /{}", "a".repeat(3000)).as_bytes(),
        T,
    ));
    assert!(r.starts_with("HTTP/1.1 414 "), "{r}");
    let big_header = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "b".repeat(5000)
    );
    let r = text(&raw_exchange(s.addr, big_header.as_bytes(), T));
    assert!(r.starts_with("HTTP/1.1 431 "), "{r}");
    let many: String = (0..30).map(|i| format!("X-{i}: v\r\n")).collect();
    let r = text(&raw_exchange(
        s.addr,
        format!("GET / HTTP/1.1\r\nHost: x\r\n{many}\r\n").as_bytes(),
        T,
    ));
    assert!(r.starts_with("HTTP/1.1 431 "), "{r}");
    // Each of these closed the connection (raw_exchange returned at EOF, well before T = 5 s;
    // 3 s leaves a loaded machine its margin).
    let start = Instant::now();
    raw_exchange(s.addr, long_target.as_bytes(), T);
    assert!(start.elapsed() < Duration::from_secs(3));
}

#[test]
fn slowloris_gets_408_counted_from_the_first_byte() {
    let (_t, root) = docroot();
    let s = serve(&root, &["--threads", "1", "--header-timeout", "400ms"]);
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let start = Instant::now();
    c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
    let mut got = Vec::new();
    // Dribble a header line every 100 ms: the deadline must not move.
    while start.elapsed() < Duration::from_secs(3) {
        let _ = c.write_all(b"X-Slow: 1\r\n");
        let mut buf = [0u8; 1024];
        match c.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => break,
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let took = start.elapsed();
    // Time is the behaviour: 408 at the 400 ms header timeout (1.1 s of margin), although a
    // header line arrived every 50 ms.
    assert!(text(&got).starts_with("HTTP/1.1 408 "), "{}", text(&got));
    assert!(
        took < Duration::from_millis(1500),
        "closed only after {took:?}"
    );
}

#[test]
fn idle_keep_alive_connections_are_closed() {
    let (_t, root) = docroot();
    let s = serve(&root, &["--threads", "1", "--idle-timeout", "300ms"]);
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(T)).unwrap();
    c.write_all(b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut buf = [0u8; 4096];
    let n = c.read(&mut buf).unwrap();
    assert!(text(&buf[..n]).ends_with("home"));
    let start = Instant::now();
    let n = c.read(&mut buf).unwrap_or(0);
    assert_eq!(n, 0, "the server closes an idle connection");
    let took = start.elapsed();
    // The 300 ms idle timeout: the close comes no sooner than 200 ms (timers are checked on a
    // coarser tick) and 1.7 s of margin above.
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_secs(2),
        "{took:?}"
    );
    // A connection that never sends a byte is closed too.
    let mut quiet = TcpStream::connect(s.addr).unwrap();
    quiet.set_read_timeout(Some(T)).unwrap();
    assert_eq!(quiet.read(&mut buf).unwrap_or(0), 0);
}

#[test]
fn smuggling_shapes_get_400_and_close() {
    let (_t, root) = docroot();
    let s = serve(&root, &["--threads", "1"]);
    let follow = "GET /2k.html HTTP/1.1\r\nHost: x\r\n\r\n";
    let shapes = [
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nabcdef",
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nabcde",
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 5\r\n\r\nabcde",
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0x5\r\n\r\nabcde",
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n",
        "GET / HTTP/1.1\nHost: x\n\n",
        "GET / HTTP/1.1\r\nHost: x\nX: y\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\rX: y\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\n X-Folded: y\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        "GET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/2.0\r\nHost: x\r\n\r\n",
    ];
    for shape in shapes {
        let start = Instant::now();
        let r = raw_exchange(s.addr, format!("{shape}{follow}").as_bytes(), T);
        let t = text(&r);
        assert!(t.starts_with("HTTP/1.1 400 "), "{shape:?} → {t}");
        assert_eq!(
            count_responses(&r),
            1,
            "nothing after a 400 is answered: {shape:?} → {t}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{shape:?}: the server closed the connection"
        );
    }
    // A well-formed chunked body is fine (and the next request on the connection is answered).
    let ok = "POST /2k.html HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let r = raw_exchange(
        s.addr,
        format!("{ok}GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        T,
    );
    let t = text(&r);
    assert!(t.starts_with("HTTP/1.1 405 "), "{t}");
    assert!(t.ends_with("home"), "{t}");
}

#[test]
fn traversal_and_escaping_symlinks_are_refused() {
    let (_t, root) = docroot();
    let s = serve(&root, &["--threads", "1"]);
    for target in [
        "/../secret.txt",
        "/sub/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E/secret.txt",
        "/.%2e/secret.txt",
        "/%252e%252e/secret.txt",
        "/%252e%252e%252fsecret.txt",
        "/..%5csecret.txt",
        "/..\\secret.txt",
        "/%c0%ae%c0%ae/secret.txt",
        "/%c0%af../secret.txt",
        "/%e0%80%ae%e0%80%ae/secret.txt",
        "/2k.html%00.txt",
        "/abs-link",
        "/rel-link",
        "/sub/deep-link",
        "http://x/../secret.txt",
    ] {
        let req = format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let t = text(&raw_exchange(s.addr, req.as_bytes(), T));
        let status: u16 = t.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
        assert!(matches!(status, 400 | 403 | 404), "{target} → {t}");
        assert!(!t.contains("TOP-SECRET"), "{target} leaked the file");
    }
    // A NUL byte in the raw request line is refused by the parser itself.
    let t = text(&raw_exchange(
        s.addr,
        b"GET /2k.html\0 HTTP/1.1\r\nHost: x\r\n\r\n",
        T,
    ));
    assert!(t.starts_with("HTTP/1.1 400 "), "{t}");
    // A symlink that stays inside the root is served.
    let t = text(&raw_exchange(
        s.addr,
        b"GET /inside-link HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        T,
    ));
    assert!(t.starts_with("HTTP/1.1 200 "), "{t}");
}

#[test]
fn hundreds_of_overlapping_ranges_are_merged() {
    let (_t, root) = docroot();
    let s = serve(&root, &["--threads", "1"]);
    let specs: Vec<String> = (0..600)
        .map(|i| format!("{}-{}", i % 1000, 1000 + i % 1000))
        .collect();
    let req = format!(
        "GET /2k.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\nRange: bytes={}\r\n\r\n",
        specs.join(",")
    );
    let r = raw_exchange(s.addr, req.as_bytes(), T);
    let t = text(&r);
    assert!(t.starts_with("HTTP/1.1 206 "), "{}", &t[..t.len().min(300)]);
    assert!(
        t.contains("Content-Range: bytes 0-1599/2048\r\n"),
        "one merged range: {}",
        &t[..t.len().min(400)]
    );
    assert!(
        r.len() < 2048 + 400,
        "the answer is not amplified: {} bytes",
        r.len()
    );
    // Many disjoint small ranges: the whole file instead of hundreds of parts.
    let specs: Vec<String> = (0..200)
        .map(|i| format!("{}-{}", i * 10, i * 10 + 1))
        .collect();
    let req = format!(
        "GET /2k.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\nRange: bytes={}\r\n\r\n",
        specs.join(",")
    );
    let r = raw_exchange(s.addr, req.as_bytes(), T);
    assert!(text(&r).starts_with("HTTP/1.1 200 "));
    assert!(r.len() < 2048 + 400);
}

#[test]
fn descriptor_exhaustion_is_answered_503_and_never_exits() {
    let (_t, root) = docroot();
    let port = common::free_port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let bin = env!("CARGO_BIN_EXE_webstand");
    let child = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -n 48 && exec {bin} serve {} --listen {addr} --threads 1 --idle-timeout 1500ms",
            root.display()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed when dropped, should the test fail before it stops the server itself.
    let mut server = common::Running { child, addr };
    assert!(common::wait_listening(addr, T));
    let mut conns: Vec<TcpStream> = (0..90).map(|_| TcpStream::connect(addr).unwrap()).collect();
    for c in &mut conns {
        c.write_all(b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        c.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
    }
    let (mut ok, mut busy) = (0, 0);
    for c in &mut conns {
        let mut buf = [0u8; 1024];
        let n = c.read(&mut buf).unwrap_or(0);
        let t = text(&buf[..n]);
        if t.starts_with("HTTP/1.1 200") {
            ok += 1;
        } else if t.starts_with("HTTP/1.1 503") {
            busy += 1;
        }
    }
    eprintln!("out of descriptors: served {ok}, refused {busy}");
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "the server must not exit when out of descriptors"
    );
    assert!(ok >= 20, "served {ok}, refused {busy}");
    assert!(
        busy >= 1,
        "some clients were answered 503 while descriptors ran out (served {ok})"
    );
    assert_eq!(ok + busy, 90, "every client got an answer");
    drop(conns);
    // Served again once the server has seen the clients close (it answers 503 until then).
    let mut last = String::new();
    wait_until(T, "served again afterwards", || {
        last = text(&raw_exchange(
            addr,
            b"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            T,
        ));
        last.starts_with("HTTP/1.1 200")
    });
    assert!(last.ends_with("home"), "{last}");
    assert_eq!(common::terminate(&mut server.child, T).code(), Some(0));
}

/// Polls `ready` every 10 ms until it holds; fails the test after `limit` with `what`.
fn wait_until(limit: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ready() {
        assert!(Instant::now() < deadline, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn sigterm_drains_a_request_in_flight_then_exits_zero() {
    use std::os::unix::fs::PermissionsExt;
    let (top, root) = docroot();
    std::fs::create_dir(root.join("cgi-bin")).unwrap();
    // The program says it has started (a file), then waits for the test to release it (another
    // file; bounded at 10 s), so the request is in flight for exactly as long as the test needs.
    let (started, release) = (top.path().join("started"), top.path().join("release"));
    let script = root.join("cgi-bin/slow");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntouch '{}'\ni=0\nwhile [ ! -e '{}' ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done\n\
             printf 'Content-Type: text/plain\\n\\nfinished'\n",
            started.display(),
            release.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut s = serve(&root, &["--threads", "1", "--cgi", "/cgi-bin/*"]);
    let addr = s.addr;
    let in_flight = std::thread::spawn(move || {
        raw_exchange(addr, b"GET /cgi-bin/slow HTTP/1.1\r\nHost: x\r\n\r\n", T)
    });
    wait_until(T, "the CGI program started", || started.exists());
    common::send_signal(s.child.id(), libc::SIGTERM);
    // Draining: new connections are refused while the request is still in flight.
    wait_until(T, "no new connections once draining", || {
        TcpStream::connect(addr).is_err()
    });
    assert!(!in_flight.is_finished(), "answered before it was released");
    std::fs::write(&release, "").unwrap();
    let r = text(&in_flight.join().unwrap());
    assert!(
        r.starts_with("HTTP/1.1 200") && r.ends_with("finished"),
        "{r}"
    );
    assert!(r.contains("Connection: close\r\n"), "{r}");
    let status = common::exit_within(&mut s.child, T).expect("no exit after the drain");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn a_flood_of_pipelined_requests_is_answered_in_full() {
    let (_t, root) = docroot();
    let s = serve(&root, &["--threads", "1"]);
    let mut req = "GET /2k.html HTTP/1.1\r\nHost: x\r\n\r\n".repeat(1999);
    req.push_str("GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(T)).unwrap();
    let writer = {
        let mut c = c.try_clone().unwrap();
        std::thread::spawn(move || c.write_all(req.as_bytes()))
    };
    let mut all = Vec::new();
    c.read_to_end(&mut all).unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(count_responses(&all), 2000);
    assert!(text(&all).ends_with("home"));
}

#[test]
fn a_body_may_take_longer_than_the_header_timeout_while_it_progresses() {
    let (_t, root) = docroot();
    let s = serve(
        &root,
        &[
            "--threads",
            "1",
            "--header-timeout",
            "300ms",
            "--io-timeout",
            "1500ms",
        ],
    );
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(T)).unwrap();
    c.write_all(
        b"POST /2k.html HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    for _ in 0..4 {
        std::thread::sleep(Duration::from_millis(200));
        c.write_all(b"12345").unwrap();
    }
    let mut r = Vec::new();
    c.read_to_end(&mut r).unwrap();
    assert!(
        text(&r).starts_with("HTTP/1.1 405 "),
        "the body arrived in time: {}",
        text(&r)
    );
    // A body that stops arriving gets 408 after the I/O timeout.
    let start = Instant::now();
    let r = raw_exchange(
        s.addr,
        b"POST /2k.html HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n12345",
        T,
    );
    assert!(text(&r).starts_with("HTTP/1.1 408 "), "{}", text(&r));
    // The 1.5 s I/O timeout, 2.5 s of margin (T, 5 s, would mean no timeout fired).
    assert!(start.elapsed() < Duration::from_secs(4));
}

#[test]
fn connections_over_the_limit_are_answered_503() {
    let (_t, root) = docroot();
    let s = serve(&root, &["--threads", "1", "--max-connections", "2"]);
    let mut held: Vec<TcpStream> = Vec::new();
    for _ in 0..2 {
        let mut c = TcpStream::connect(s.addr).unwrap();
        c.set_read_timeout(Some(T)).unwrap();
        c.write_all(b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut buf = [0u8; 1024];
        let n = c.read(&mut buf).unwrap();
        assert!(text(&buf[..n]).starts_with("HTTP/1.1 200"));
        held.push(c);
    }
    let t = text(&raw_exchange(
        s.addr,
        b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n",
        T,
    ));
    assert!(t.starts_with("HTTP/1.1 503 "), "{t}");
    drop(held);
    // Answered again once the server has seen the two clients close (503 until then).
    let mut last = String::new();
    wait_until(T, "served again after the held connections closed", || {
        last = text(&raw_exchange(
            s.addr,
            b"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            T,
        ));
        last.starts_with("HTTP/1.1 200 ")
    });
    assert!(last.ends_with("home"), "{last}");
}
