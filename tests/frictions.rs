//! The small frictions a new user meets, removed: no hidden probe connection before a run (a server
//! counts only the real ones), a target's second address tried when the first refuses, `bench
//! --url-file` without a URL, `serve --listen PORT` and `HOST:PORT`, one-line errors of our own for
//! unknown ab options and for wrk's `-t`, and the history naming the embedded server as such.

use crate::common;

use common::{closed_port, free_port, run, run_with_timeout, stderr, stdout, webstand};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A loopback server that answers one request per connection and counts the connections it accepts.
fn counting_server() -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { continue };
            count.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut req = Vec::new();
                let mut buf = [0u8; 4096];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => req.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = s.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                );
            });
        }
    });
    (addr, accepted)
}

fn db() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db").to_string_lossy().into_owned();
    (dir, path)
}

#[test]
fn a_bench_opens_only_the_connections_it_measures() {
    let (addr, accepted) = counting_server();
    let (_dir, h) = db();
    let out = run(&[
        "bench",
        "-n",
        "7",
        "-c",
        "1",
        "-q",
        "--db",
        &h,
        &format!("http://{addr}/"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Complete requests:      7\n"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        7,
        "a probe connection was opened besides the 7 requests"
    );
}

#[test]
fn a_refused_first_address_moves_to_the_next_without_a_failure() {
    let (addr, accepted) = counting_server();
    // Nothing listens on [::1]:port (or IPv6 is off); the server is on 127.0.0.1:port.
    let target = webstand_results::Target {
        host: "localhost".into(),
        port: addr.port(),
        addrs: vec![
            SocketAddr::from(([0, 0, 0, 0, 0, 0, 0, 1], addr.port())),
            addr,
        ],
    };
    let mut plan = webstand_results::Plan::new(target, "/");
    plan.stop.requests = Some(20);
    plan.stop.duration = Some(Duration::from_secs(20));
    plan.shape = webstand_results::Shape::Closed { clients: 2 };
    let r = webstand_engine::run(&plan, Default::default()).unwrap();
    assert_eq!(
        (r.complete, r.failed.total(), r.ended),
        (20, 0, None),
        "{r:?}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 20);
}

#[test]
fn bench_takes_its_target_from_a_url_file_of_full_urls() {
    let (addr, accepted) = counting_server();
    let (dir, h) = db();
    let list = dir.path().join("urls.txt");
    std::fs::write(
        &list,
        format!("http://{addr}/a.html\nhttp://{addr}/b.html\n"),
    )
    .unwrap();
    let out = run(&[
        "bench",
        "--url-file",
        list.to_str().unwrap(),
        "-n",
        "10",
        "-q",
        "--db",
        &h,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Complete requests:      10\n"),
        "{}",
        stdout(&out)
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 10);
    // A file of paths names no server: one line saying so.
    std::fs::write(&list, "/a.html\n/b.html\n").unwrap();
    let out = run(&[
        "bench",
        "--url-file",
        list.to_str().unwrap(),
        "-n",
        "10",
        "--db",
        &h,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("lists only paths; give the server's URL too"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn unknown_ab_options_and_wrks_t_get_one_line_of_our_own() {
    let closed = closed_port();
    let url = format!("http://127.0.0.1:{}/", closed.port);
    let out = run(&["bench", "-G", &url]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("unknown option '-G'") && err.contains("an ab option webstand does not have"),
        "{err}"
    );
    assert!(!err.contains("-- -G") && !err.contains("tip"), "{err}");
    let out = run(&["sweep", "--frobnicate", &url]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("`webstand sweep --help` lists the options"),
        "{}",
        stderr(&out)
    );
    // wrk's thread count collides with ab's time limit.
    let out = run(&["bench", "-t", "2", "-c", "10", "-d", "5s", &url]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("use --threads 2"), "{}", stderr(&out));
    // Help still works, and says what -t is.
    let help = stdout(&run(&["bench", "--help"]));
    assert!(help.contains("Not wrk's -t"), "{help}");
}

/// Starts `webstand serve DIR --listen LISTEN` and returns the address it says it listens on.
fn listening_on(dir: &std::path::Path, listen: &str) -> String {
    let mut child = webstand()
        .args(["serve", dir.to_str().unwrap(), "--listen", listen])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !seen.contains(&b'\n') {
        match err.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    String::from_utf8_lossy(&seen).trim().to_string()
}

#[test]
fn serve_listens_on_a_bare_port_or_a_host_name() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    assert_eq!(
        listening_on(dir.path(), &port.to_string()),
        format!("listening on http://127.0.0.1:{port}")
    );
    let port = free_port();
    assert_eq!(
        listening_on(dir.path(), &format!("localhost:{port}")),
        format!("listening on http://127.0.0.1:{port}")
    );
    let out = run_with_timeout(
        &["serve", dir.path().to_str().unwrap(), "--listen", ":80x"],
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("expected PORT, HOST:PORT or [IPv6]:PORT"),
        "{err}"
    );
}

#[test]
fn the_history_names_the_embedded_server_not_its_temporary_port() {
    let (_dir, h) = db();
    let out = run(&[
        "sweep", "-c", "1", "-n", "200", "--warmup", "0", "-q", "--db", &h,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let list = stdout(&run(&["history", "--db", &h]));
    let row = list.lines().nth(1).unwrap();
    assert!(
        row.ends_with("embedded webstand serve") && !row.contains("127.0.0.1"),
        "{list}"
    );
}
