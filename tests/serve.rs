//! End-to-end tests of `webstand serve` as a client sees it: raw requests over 127.0.0.1 for the
//! protocol details, curl (a real client) for ranges, conditional GET, auth and CGI.

mod common;

use common::{raw_exchange, serve};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(5);

fn docroot() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("index.html"), "<h1>home</h1>\n").unwrap();
    std::fs::write(d.path().join("2k.html"), "a".repeat(2048)).unwrap();
    std::fs::write(d.path().join("style.css"), "body{}").unwrap();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    std::fs::write(d.path().join("sub/data.json"), "{}").unwrap();
    let big: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(d.path().join("big.bin"), big).unwrap();
    d
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Splits a response stream into (head, body) pairs using Content-Length.
fn responses(mut b: &[u8], head_only: &[bool]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(end) = b.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = text(&b[..end]);
        let len: usize = head
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length: ").map(|v| v.trim().parse().unwrap()))
            .unwrap_or(0);
        let len = if head_only.get(i).copied().unwrap_or(false) || head.contains(" 304 ") { 0 } else { len };
        out.push((head, b[end + 4..end + 4 + len].to_vec()));
        b = &b[end + 4 + len..];
        i += 1;
    }
    out
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn curl(args: &[&str]) -> (String, Vec<u8>) {
    let out = std::process::Command::new("curl")
        .args(["-s", "-S", "--max-time", "10", "-D", "-"])
        .args(args)
        .output()
        .expect("run curl");
    let all = out.stdout;
    let end = all.windows(4).position(|w| w == b"\r\n\r\n").expect("curl printed headers");
    (text(&all[..end]), all[end + 4..].to_vec())
}

#[test]
fn get_head_index_mime_404_405() {
    let d = docroot();
    let s = serve(d.path(), &["--threads", "1"]);
    let r = raw_exchange(s.addr, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", T);
    let rs = responses(&r, &[]);
    assert!(rs[0].0.starts_with("HTTP/1.1 200 OK"), "{}", rs[0].0);
    assert_eq!(rs[0].1, b"<h1>home</h1>\n");
    assert_eq!(header(&rs[0].0, "content-type"), Some("text/html; charset=utf-8"));
    assert!(header(&rs[0].0, "date").is_some_and(|d| d.ends_with(" GMT")));

    let r = raw_exchange(s.addr, b"HEAD /style.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", T);
    let head = text(&r);
    assert!(head.starts_with("HTTP/1.1 200 OK"));
    assert_eq!(header(&head, "content-length"), Some("6"));
    assert_eq!(header(&head, "content-type"), Some("text/css; charset=utf-8"));
    assert!(head.ends_with("\r\n\r\n"), "HEAD has no body: {head:?}");

    let r = text(&raw_exchange(s.addr, b"GET /missing.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", T));
    assert!(r.starts_with("HTTP/1.1 404 Not Found"), "{r}");

    let r = text(&raw_exchange(s.addr, b"DELETE /2k.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", T));
    assert!(r.starts_with("HTTP/1.1 405 Method Not Allowed"), "{r}");
    assert_eq!(header(&r, "allow"), Some("GET, HEAD"));

    let r = text(&raw_exchange(s.addr, b"GET /sub?x=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", T));
    assert!(r.starts_with("HTTP/1.1 301"), "{r}");
    assert_eq!(header(&r, "location"), Some("/sub/?x=1"));
    let r = text(&raw_exchange(s.addr, b"GET /sub/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", T));
    assert!(r.starts_with("HTTP/1.1 403"), "directory listing is off by default: {r}");
}

#[test]
fn pipelined_requests_are_answered_in_order_on_one_connection() {
    let d = docroot();
    let s = serve(d.path(), &["--threads", "1"]);
    let req = b"GET /style.css HTTP/1.1\r\nHost: x\r\n\r\nHEAD /2k.html HTTP/1.1\r\nHost: x\r\n\r\n\
GET /nope HTTP/1.1\r\nHost: x\r\n\r\nGET /2k.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let r = raw_exchange(s.addr, req, T);
    let rs = responses(&r, &[false, true, false, false]);
    assert_eq!(rs.len(), 4, "{}", text(&r));
    assert_eq!(rs[0].1, b"body{}");
    assert!(rs[1].0.starts_with("HTTP/1.1 200") && rs[1].1.is_empty());
    assert!(rs[2].0.starts_with("HTTP/1.1 404"));
    assert_eq!(rs[3].1.len(), 2048);
    assert_eq!(header(&rs[3].0, "connection"), Some("close"));
}

#[test]
fn keep_alive_follows_the_http_version() {
    let d = docroot();
    let s = serve(d.path(), &["--threads", "1"]);
    // HTTP/1.0 without keep-alive: answered, then closed by the server.
    let r = text(&raw_exchange(s.addr, b"GET /style.css HTTP/1.0\r\n\r\n", T));
    assert!(r.starts_with("HTTP/1.1 200") && r.ends_with("body{}"), "{r}");
    // HTTP/1.0 with keep-alive, then HTTP/1.1 on the same connection.
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(T)).unwrap();
    c.write_all(b"GET /style.css HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap();
    let mut buf = vec![0; 4096];
    let n = c.read(&mut buf).unwrap();
    let first = text(&buf[..n]);
    assert_eq!(header(&first, "connection"), Some("keep-alive"), "{first}");
    c.write_all(b"GET /sub/data.json HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let n = c.read(&mut buf).unwrap();
    let second = text(&buf[..n]);
    assert!(second.starts_with("HTTP/1.1 200") && second.ends_with("{}"), "{second}");
    assert_eq!(header(&second, "content-type"), Some("application/json"));
}

#[test]
fn large_files_arrive_whole_through_sendfile() {
    let d = docroot();
    let s = serve(d.path(), &["--threads", "1"]);
    let r = raw_exchange(s.addr, b"GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", T);
    let rs = responses(&r, &[]);
    assert_eq!(rs[0].1, std::fs::read(d.path().join("big.bin")).unwrap());
    let (head, body) = curl(&[&format!("http://{}/big.bin", s.addr)]);
    assert!(head.starts_with("HTTP/1.1 200"));
    assert_eq!(body.len(), 300_000);
}

#[test]
fn sigterm_exits_zero_after_printing_the_listening_line() {
    let d = docroot();
    let mut s = serve(d.path(), &["--threads", "2"]);
    let r = raw_exchange(s.addr, b"GET /2k.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", T);
    assert!(text(&r).starts_with("HTTP/1.1 200"));
    // An idle keep-alive connection must not hold the exit up.
    let _idle = TcpStream::connect(s.addr).unwrap();
    unsafe { libc::kill(s.child.id() as i32, libc::SIGTERM) };
    let start = Instant::now();
    let status = loop {
        if let Some(st) = s.child.try_wait().unwrap() {
            break st;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "no exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    let mut err = String::new();
    s.child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(err.lines().next(), Some(format!("listening on http://{}", s.addr).as_str()));
}

#[test]
fn bad_flags_and_config_give_one_line_and_nonzero_exit() {
    let d = docroot();
    let dir = d.path().to_str().unwrap();
    let cfg = d.path().join("bad.toml");
    std::fs::write(&cfg, "listen = \"127.0.0.1:1\"\nno_such = 3\n").unwrap();
    for args in [
        vec!["serve", "/nonexistent/dir"],
        vec!["serve", dir, "--header-timeout", "soon"],
        vec!["serve", dir, "--config", cfg.to_str().unwrap()],
        vec!["serve", dir, "--config", "/nonexistent.toml"],
        vec!["serve", dir, "--auth", "no-equals-sign"],
    ] {
        let o = common::run(&args);
        let err = common::stderr(&o);
        assert_ne!(o.status.code(), Some(0), "{args:?}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("webstand: error:"), "{args:?}: {err}");
    }
}
