//! End-to-end tests of `webstand serve` as a client sees it: raw requests over 127.0.0.1 for the
//! protocol details, curl (a real client) for ranges, conditional GET, auth and CGI.

use crate::common;

use common::{raw_exchange, serve};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
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
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length: ")
                    .map(|v| v.trim().parse().unwrap())
            })
            .unwrap_or(0);
        let len = if head_only.get(i).copied().unwrap_or(false) || head.contains(" 304 ") {
            0
        } else {
            len
        };
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
    let out = std::process::Command::new(common::require("curl"))
        .args(["-s", "-S", "--max-time", "10", "-D", "-"])
        .args(args)
        .output()
        .expect("run curl");
    let all = out.stdout;
    let end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("curl printed headers");
    (text(&all[..end]), all[end + 4..].to_vec())
}

#[test]
fn get_head_index_mime_404_405() {
    let d = docroot();
    let s = serve(d.path(), &["--threads", "1"]);
    let r = raw_exchange(
        s.addr,
        b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        T,
    );
    let rs = responses(&r, &[]);
    assert!(rs[0].0.starts_with("HTTP/1.1 200 OK"), "{}", rs[0].0);
    assert_eq!(rs[0].1, b"<h1>home</h1>\n");
    assert_eq!(
        header(&rs[0].0, "content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(header(&rs[0].0, "date").is_some_and(|d| d.ends_with(" GMT")));

    let r = raw_exchange(
        s.addr,
        b"HEAD /style.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        T,
    );
    let head = text(&r);
    assert!(head.starts_with("HTTP/1.1 200 OK"));
    assert_eq!(header(&head, "content-length"), Some("6"));
    assert_eq!(
        header(&head, "content-type"),
        Some("text/css; charset=utf-8")
    );
    assert!(head.ends_with("\r\n\r\n"), "HEAD has no body: {head:?}");

    // Other spellings of a path name the same file.
    let r = text(&raw_exchange(
        s.addr,
        b"GET /style.css/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        T,
    ));
    assert!(
        r.starts_with("HTTP/1.1 404"),
        "a file named as a directory: {r}"
    );
    for spelling in [
        "//style.css",
        "/./style.css",
        "/style%2ecss",
        "/sub/../style.css",
    ] {
        let req = format!("GET {spelling} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let r = text(&raw_exchange(s.addr, req.as_bytes(), T));
        let want = if spelling.contains("..") {
            "HTTP/1.1 400"
        } else {
            "HTTP/1.1 200"
        };
        assert!(r.starts_with(want), "{spelling}: {r}");
        assert_eq!(
            r.ends_with("body{}"),
            want.ends_with("200"),
            "{spelling}: {r}"
        );
    }
    let r = text(&raw_exchange(
        s.addr,
        b"GET /missing.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        T,
    ));
    assert!(r.starts_with("HTTP/1.1 404 Not Found"), "{r}");

    let r = text(&raw_exchange(
        s.addr,
        b"DELETE /2k.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        T,
    ));
    assert!(r.starts_with("HTTP/1.1 405 Method Not Allowed"), "{r}");
    assert_eq!(header(&r, "allow"), Some("GET, HEAD"));

    let r = text(&raw_exchange(
        s.addr,
        b"GET /sub?x=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        T,
    ));
    assert!(r.starts_with("HTTP/1.1 301"), "{r}");
    assert_eq!(header(&r, "location"), Some("/sub/?x=1"));
    let r = text(&raw_exchange(
        s.addr,
        b"GET /sub/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        T,
    ));
    assert!(
        r.starts_with("HTTP/1.1 403"),
        "directory listing is off by default: {r}"
    );
}

#[test]
fn pipelined_requests_are_answered_in_order_on_one_connection() {
    let d = docroot();
    let s = serve(d.path(), &["--threads", "1"]);
    let req =
        b"GET /style.css HTTP/1.1\r\nHost: x\r\n\r\nHEAD /2k.html HTTP/1.1\r\nHost: x\r\n\r\n\
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
    assert!(
        r.starts_with("HTTP/1.1 200") && r.ends_with("body{}"),
        "{r}"
    );
    // HTTP/1.0 with keep-alive, then HTTP/1.1 on the same connection.
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(T)).unwrap();
    c.write_all(b"GET /style.css HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        .unwrap();
    let mut buf = vec![0; 4096];
    let n = c.read(&mut buf).unwrap();
    let first = text(&buf[..n]);
    assert_eq!(header(&first, "connection"), Some("keep-alive"), "{first}");
    c.write_all(b"GET /sub/data.json HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let n = c.read(&mut buf).unwrap();
    let second = text(&buf[..n]);
    assert!(
        second.starts_with("HTTP/1.1 200") && second.ends_with("{}"),
        "{second}"
    );
    assert_eq!(header(&second, "content-type"), Some("application/json"));
}

#[test]
fn large_files_arrive_whole_through_sendfile() {
    let d = docroot();
    let s = serve(d.path(), &["--threads", "1"]);
    let r = raw_exchange(
        s.addr,
        b"GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        T,
    );
    let rs = responses(&r, &[]);
    assert_eq!(rs[0].1, std::fs::read(d.path().join("big.bin")).unwrap());
    let (head, body) = curl(&[&format!("http://{}/big.bin", s.addr)]);
    assert!(head.starts_with("HTTP/1.1 200"));
    assert_eq!(body.len(), 300_000);
    // Requests pipelined behind a sendfile answer wait for it, then are answered in order.
    let req = b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\nGET /style.css HTTP/1.1\r\nHost: x\r\n\r\n\
HEAD /big.bin HTTP/1.0\r\n\r\n";
    let r = raw_exchange(s.addr, req, T);
    let rs = responses(&r, &[false, false, true]);
    assert_eq!(rs.len(), 3, "{}", text(&r[..r.len().min(300)]));
    assert_eq!(rs[0].1.len(), 300_000);
    assert_eq!(rs[1].1, b"body{}");
    assert_eq!(header(&rs[2].0, "content-length"), Some("300000"));
}

#[test]
fn sigterm_exits_zero_after_printing_the_listening_line() {
    let d = docroot();
    let mut s = serve(d.path(), &["--threads", "2"]);
    let r = raw_exchange(
        s.addr,
        b"GET /2k.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        T,
    );
    assert!(text(&r).starts_with("HTTP/1.1 200"));
    // An idle keep-alive connection must not hold the exit up.
    let _idle = TcpStream::connect(s.addr).unwrap();
    let status = common::terminate(&mut s.child, Duration::from_secs(5));
    assert_eq!(status.code(), Some(0));
    let mut err = String::new();
    s.child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(
        err.lines().next(),
        Some(format!("listening on http://{}", s.addr).as_str())
    );
}

#[test]
fn a_port_already_served_is_an_error_not_a_shared_listener() {
    let d = docroot();
    let s = serve(d.path(), &["--threads", "1"]);
    let o = common::run_with_timeout(
        &[
            "serve",
            d.path().to_str().unwrap(),
            "--listen",
            &s.addr.to_string(),
        ],
        Duration::from_secs(10),
    );
    assert_ne!(o.status.code(), Some(0));
    let err = common::stderr(&o);
    assert!(
        err.starts_with(&format!("webstand: error: cannot listen on {}", s.addr)),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
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
        vec!["serve", dir, "--backlog", "0"],
    ] {
        let o = common::run(&args);
        let err = common::stderr(&o);
        assert_ne!(o.status.code(), Some(0), "{args:?}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("webstand: error:"), "{args:?}: {err}");
    }
}

fn url(s: &common::Running, path: &str) -> String {
    format!("http://{}{}", s.addr, path)
}

#[test]
fn curl_ranges_single_multiple_and_unsatisfiable() {
    let d = docroot();
    let s = serve(d.path(), &["--threads", "1"]);
    let big = std::fs::read(d.path().join("big.bin")).unwrap();
    let two_k = std::fs::read(d.path().join("2k.html")).unwrap();
    for (path, bytes) in [("/big.bin", &big), ("/2k.html", &two_k)] {
        let (h, b) = curl(&["-r", "100-199", &url(&s, path)]);
        assert!(h.starts_with("HTTP/1.1 206"), "{h}");
        assert_eq!(
            header(&h, "content-range"),
            Some(format!("bytes 100-199/{}", bytes.len()).as_str())
        );
        assert_eq!(b, &bytes[100..200]);
        let (h, b) = curl(&["-r", "-10", &url(&s, path)]);
        assert!(h.starts_with("HTTP/1.1 206"));
        assert_eq!(b, &bytes[bytes.len() - 10..]);

        let (h, b) = curl(&["-r", "0-9,50-59,5-14", &url(&s, path)]);
        assert!(h.starts_with("HTTP/1.1 206"), "{h}");
        let ctype = header(&h, "content-type").unwrap();
        let boundary = ctype
            .strip_prefix("multipart/byteranges; boundary=")
            .expect(ctype);
        assert_eq!(
            header(&h, "content-length")
                .unwrap()
                .parse::<usize>()
                .unwrap(),
            b.len()
        );
        let body = text(&b);
        assert_eq!(
            body.matches(&format!("--{boundary}\r\n")).count(),
            2,
            "overlapping 0-9 and 5-14 merged: {body}"
        );
        assert!(body.contains(&format!("Content-Range: bytes 0-14/{}", bytes.len())));
        assert!(body.contains(&format!("Content-Range: bytes 50-59/{}", bytes.len())));
        assert!(body.ends_with(&format!("--{boundary}--\r\n")));
        let first = b.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        assert_eq!(&b[first..first + 15], &bytes[0..15]);

        let (h, _) = curl(&["-r", "999999999-", &url(&s, path)]);
        assert!(h.starts_with("HTTP/1.1 416"), "{h}");
        assert_eq!(
            header(&h, "content-range"),
            Some(format!("bytes */{}", bytes.len()).as_str())
        );
    }
    // If-Range with a stale validator: the whole file.
    let (h, b) = curl(&[
        "-r",
        "0-9",
        "-H",
        "If-Range: \"stale\"",
        &url(&s, "/2k.html"),
    ]);
    assert!(h.starts_with("HTTP/1.1 200"), "{h}");
    assert_eq!(b.len(), 2048);
}

#[test]
fn curl_conditional_get_gives_304() {
    let d = docroot();
    let s = serve(d.path(), &["--threads", "1"]);
    let (h, _) = curl(&[&url(&s, "/2k.html")]);
    let etag = header(&h, "etag").unwrap().to_string();
    let lm = header(&h, "last-modified").unwrap().to_string();
    let (h, b) = curl(&[
        "-H",
        &format!("If-None-Match: {etag}"),
        &url(&s, "/2k.html"),
    ]);
    assert!(h.starts_with("HTTP/1.1 304"), "{h}");
    assert!(b.is_empty());
    assert_eq!(header(&h, "etag"), Some(etag.as_str()));
    let (h, _) = curl(&[
        "-H",
        &format!("If-Modified-Since: {lm}"),
        &url(&s, "/2k.html"),
    ]);
    assert!(h.starts_with("HTTP/1.1 304"), "{h}");
    let (h, _) = curl(&["-z", "Thu, 01 Jan 2099 00:00:00 GMT", &url(&s, "/2k.html")]);
    assert!(h.starts_with("HTTP/1.1 304"), "{h}");
    let (h, b) = curl(&[
        "-H",
        "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT",
        &url(&s, "/2k.html"),
    ]);
    assert!(h.starts_with("HTTP/1.1 200") && b.len() == 2048, "{h}");
    // A non-matching If-None-Match wins over a matching If-Modified-Since.
    let (h, _) = curl(&[
        "-H",
        "If-None-Match: \"other\"",
        "-H",
        &format!("If-Modified-Since: {lm}"),
        &url(&s, "/2k.html"),
    ]);
    assert!(h.starts_with("HTTP/1.1 200"), "{h}");
    // The file changes (same size, a later modification time): the old validator no longer
    // matches. The server re-checks a cached file at most once a second, so the change shows within
    // a second; the bound is 3 s, the margin for a loaded machine.
    let file = d.path().join("2k.html");
    let was = std::fs::metadata(&file).unwrap().modified().unwrap();
    std::fs::write(&file, "b".repeat(2048)).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(was + Duration::from_secs(10))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(3);
    let (h, b) = loop {
        let (h, b) = curl(&[
            "-H",
            &format!("If-None-Match: {etag}"),
            &url(&s, "/2k.html"),
        ]);
        if !h.starts_with("HTTP/1.1 304") || Instant::now() > deadline {
            break (h, b);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(h.starts_with("HTTP/1.1 200"), "{h}");
    assert_eq!(b, "b".repeat(2048).as_bytes());
}

fn htpasswd(dir: &Path) -> std::path::PathBuf {
    let f = dir.join("users.htpasswd");
    let program = common::require("htpasswd");
    let ok = |args: &[&str]| {
        assert!(std::process::Command::new(&program)
            .args(args)
            .output()
            .unwrap()
            .status
            .success())
    };
    ok(&[
        "-c",
        "-b",
        "-B",
        "-C",
        "5",
        f.to_str().unwrap(),
        "ann",
        "bcrypt-pass",
    ]);
    ok(&["-b", "-s", f.to_str().unwrap(), "bob", "sha-pass"]);
    f
}

#[test]
fn curl_basic_auth_per_directory() {
    let d = docroot();
    std::fs::create_dir(d.path().join("private")).unwrap();
    std::fs::write(d.path().join("private/secret.txt"), "top secret").unwrap();
    let pw = htpasswd(d.path());
    let s = serve(
        d.path(),
        &[
            "--threads",
            "1",
            "--auth",
            &format!("/private/={}", pw.display()),
            "--realm",
            "Staff",
        ],
    );
    let (h, b) = curl(&["-u", "ann:bcrypt-pass", &url(&s, "/private/secret.txt")]);
    assert!(h.starts_with("HTTP/1.1 200"), "{h}");
    assert_eq!(b, b"top secret");
    let (h, b) = curl(&["-u", "bob:sha-pass", &url(&s, "/private/secret.txt")]);
    assert!(h.starts_with("HTTP/1.1 200") && b == b"top secret", "{h}");
    for creds in [&["-u", "ann:wrong"][..], &["-u", "nobody:bcrypt-pass"], &[]] {
        let mut args = creds.to_vec();
        let u = url(&s, "/private/secret.txt");
        args.push(&u);
        let (h, b) = curl(&args);
        assert!(h.starts_with("HTTP/1.1 401"), "{creds:?}: {h}");
        assert_eq!(
            header(&h, "www-authenticate"),
            Some("Basic realm=\"Staff\", charset=\"UTF-8\"")
        );
        assert!(!text(&b).contains("top secret"));
    }
    // Other spellings of the same path are covered too; other directories are open.
    let (h, _) = curl(&[&url(&s, "/priv%61te/secret.txt")]);
    assert!(h.starts_with("HTTP/1.1 401"), "{h}");
    let (h, _) = curl(&[&url(&s, "//private//secret.txt")]);
    assert!(h.starts_with("HTTP/1.1 401"), "{h}");
    let (h, _) = curl(&[&url(&s, "/2k.html")]);
    assert!(h.starts_with("HTTP/1.1 200"));
    // The htpasswd file itself is never served, though it lies in the docroot outside the prefix
    // (tests/serve_own_files.rs tries every other spelling and every other file the server uses).
    let (h, b) = curl(&[&url(&s, "/users.htpasswd")]);
    assert!(h.starts_with("HTTP/1.1 404"), "{h}");
    assert!(!text(&b).contains("ann:"));
}

fn cgi_script(root: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let dir = root.join("cgi-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `webstand serve` on one loop running /cgi-bin/* as CGI, with `extra` flags.
fn serve_cgi(root: &Path, extra: &[&str]) -> common::Running {
    let flags = [&["--threads", "1", "--cgi", "/cgi-bin/*"][..], extra].concat();
    serve(root, &flags)
}

#[test]
fn curl_cgi_environment_body_and_limits() {
    let d = docroot();
    cgi_script(
        d.path(),
        "env",
        "printf 'Content-Type: text/plain\\r\\n\\r\\n'\nenv | sort\n",
    );
    cgi_script(
        d.path(),
        "echo",
        "printf 'Status: 201 Made\\nContent-Type: text/plain\\n\\n'\ncat\n",
    );
    cgi_script(
        d.path(),
        "slow",
        "sleep 5\necho 'Content-Type: text/plain'\necho\necho late\n",
    );
    // "nap" says it has started (a file) and waits for the test's release (another file), at most
    // about 0.3 s, inside the 500 ms CGI timeout below.
    let marks = tempfile::tempdir().unwrap();
    let (started, release) = (marks.path().join("started"), marks.path().join("release"));
    cgi_script(
        d.path(),
        "nap",
        &format!(
            "touch '{}'\ni=0\nwhile [ ! -e '{}' ] && [ $i -lt 30 ]; do sleep 0.01; i=$((i+1)); done\n\
             printf 'Content-Type: text/plain\\n\\nawake'\n",
            started.display(),
            release.display()
        ),
    );
    cgi_script(
        d.path(),
        "flood",
        "echo 'Content-Type: text/plain'\necho\nhead -c 100000 /dev/zero\n",
    );
    let s = serve_cgi(
        d.path(),
        &["--cgi-timeout", "500ms", "--cgi-max-output", "5000"],
    );
    let (h, b) = curl(&[
        "-H",
        "Proxy: http://evil.example:8080",
        "-H",
        "X-Thing: 1",
        &url(&s, "/cgi-bin/env/extra/path?a=1&b=2"),
    ]);
    assert!(h.starts_with("HTTP/1.1 200"), "{h}");
    let env = text(&b);
    for want in [
        "GATEWAY_INTERFACE=CGI/1.1",
        "REQUEST_METHOD=GET",
        "QUERY_STRING=a=1&b=2",
        "SCRIPT_NAME=/cgi-bin/env",
        "PATH_INFO=/extra/path",
        "SERVER_PROTOCOL=HTTP/1.1",
        "REMOTE_ADDR=127.0.0.1",
        "HTTP_X_THING=1",
    ] {
        assert!(env.lines().any(|l| l == want), "missing {want} in\n{env}");
    }
    assert!(!env.contains("HTTP_PROXY"), "httpoxy: {env}");
    assert!(
        !env.contains("HOME=") && !env.contains("CARGO"),
        "the environment is built from scratch: {env}"
    );

    let (h, b) = curl(&["--data-binary", "posted body", &url(&s, "/cgi-bin/echo")]);
    assert!(h.starts_with("HTTP/1.1 201"), "{h}");
    assert_eq!(b, b"posted body");
    // A client that waits for "100 Continue" before sending its body gets it.
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(T)).unwrap();
    c.write_all(b"POST /cgi-bin/echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n\r\n").unwrap();
    let mut interim = [0u8; 25];
    c.read_exact(&mut interim).unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    c.write_all(b"hello").unwrap();
    let mut rest = Vec::new();
    c.read_to_end(&mut rest).unwrap();
    let rest = text(&rest);
    assert!(
        rest.starts_with("HTTP/1.1 201") && rest.ends_with("hello"),
        "{rest}"
    );

    let start = Instant::now();
    let (h, _) = curl(&[&url(&s, "/cgi-bin/slow")]);
    assert!(h.starts_with("HTTP/1.1 504"), "{h}");
    // The 500 ms CGI timeout, not the program's 5 s: 3.5 s of margin.
    assert!(start.elapsed() < Duration::from_secs(4));
    let (h, _) = curl(&[&url(&s, "/cgi-bin/flood")]);
    assert!(h.starts_with("HTTP/1.1 502"), "{h}");
    let (h, _) = curl(&[&url(&s, "/cgi-bin/missing")]);
    assert!(h.starts_with("HTTP/1.1 404"), "{h}");
    // A request that arrives while the program runs is read and answered after it.
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(T)).unwrap();
    c.write_all(b"GET /cgi-bin/nap HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let deadline = Instant::now() + T;
    while !started.exists() {
        assert!(Instant::now() < deadline, "the CGI program never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    c.write_all(b"GET /style.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    std::fs::write(&release, "").unwrap();
    let mut all = Vec::new();
    c.read_to_end(&mut all).unwrap();
    let rs = responses(&all, &[]);
    assert_eq!(rs.len(), 2, "{}", text(&all));
    assert_eq!(
        (rs[0].1.as_slice(), rs[1].1.as_slice()),
        (&b"awake"[..], &b"body{}"[..])
    );

    let (h, _) = curl(&["-X", "PUT", &url(&s, "/cgi-bin/env")]);
    assert_eq!(header(&h, "allow"), Some("GET, HEAD, POST"));
}

/// A CGI program that answers after the connection's header and idle timeouts but within the CGI
/// timeout is answered, on a fresh connection (header timeout) and on a kept-alive one after an
/// answer (idle timeout); the connection then serves on. The timeouts bound waiting for the
/// client: while a job produces the answer, the CGI timeout alone bounds it.
#[test]
fn a_cgi_program_slower_than_the_connection_timeouts_is_answered() {
    let d = docroot();
    cgi_script(
        d.path(),
        "late",
        "sleep 1.2\nprintf 'Content-Type: text/plain\\n\\nlate'\n",
    );
    let s = serve_cgi(
        d.path(),
        &[
            "--cgi-timeout",
            "10s",
            "--header-timeout",
            "200ms",
            "--idle-timeout",
            "400ms",
        ],
    );
    let fresh: &[u8] = b"GET /cgi-bin/late HTTP/1.1\r\nHost: x\r\n\r\n\
        GET /style.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let kept: &[u8] = b"GET /style.css HTTP/1.1\r\nHost: x\r\n\r\n\
        GET /cgi-bin/late HTTP/1.1\r\nHost: x\r\n\r\n\
        GET /style.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    for (what, requests, want) in [
        ("fresh", fresh, &[&b"late"[..], b"body{}"][..]),
        (
            "kept alive",
            kept,
            &[&b"body{}"[..], b"late", b"body{}"][..],
        ),
    ] {
        let mut c = TcpStream::connect(s.addr).unwrap();
        c.set_read_timeout(Some(T)).unwrap();
        c.write_all(requests).unwrap();
        let mut all = Vec::new();
        let _ = c.read_to_end(&mut all);
        let rs = responses(&all, &[]);
        let bodies: Vec<&[u8]> = rs.iter().map(|(_, b)| b.as_slice()).collect();
        assert_eq!(bodies, want, "{what}: {}", text(&all));
        assert!(
            rs.iter().all(|(h, _)| h.starts_with("HTTP/1.1 200")),
            "{what}"
        );
    }
}

#[test]
fn listing_is_off_by_default_and_escaped_when_on() {
    let d = docroot();
    std::fs::write(d.path().join("sub/<b>bold<b>&.txt"), "x").unwrap();
    let off = serve(d.path(), &["--threads", "1"]);
    let (h, _) = curl(&[&url(&off, "/sub/")]);
    assert!(h.starts_with("HTTP/1.1 403"), "{h}");
    let on = serve(d.path(), &["--threads", "1", "--listing"]);
    let (h, b) = curl(&[&url(&on, "/sub/")]);
    assert!(h.starts_with("HTTP/1.1 200"), "{h}");
    let html = text(&b);
    assert!(html.contains("&lt;b&gt;bold&lt;b&gt;&amp;.txt"), "{html}");
    assert!(!html.contains("<b>bold"), "{html}");
    assert!(html.contains("data.json"));
}

#[test]
fn access_log_is_common_log_format() {
    let d = docroot();
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("access.log");
    let mut s = serve(
        d.path(),
        &["--threads", "1", "--access-log", log.to_str().unwrap()],
    );
    curl(&[&url(&s, "/2k.html")]);
    curl(&[&url(&s, "/nope")]);
    common::terminate(&mut s.child, T);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    let clf = |l: &str, req: &str, tail: &str| {
        l.starts_with("127.0.0.1 - - [")
            && l.contains(" +0000] ")
            && l.contains(&format!("\"{req}\""))
            && l.ends_with(tail)
    };
    assert!(
        clf(lines[0], "GET /2k.html HTTP/1.1", " 200 2048"),
        "{}",
        lines[0]
    );
    assert!(
        clf(lines[1], "GET /nope HTTP/1.1", " 404 106"),
        "{}",
        lines[1]
    );
}

#[test]
fn throttle_paces_a_pattern_and_refuses_when_far_over() {
    let d = docroot();
    std::fs::create_dir(d.path().join("slow")).unwrap();
    std::fs::write(d.path().join("slow/a.bin"), vec![1u8; 40_000]).unwrap();
    std::fs::write(d.path().join("slow/huge.bin"), vec![2u8; 1_000_000]).unwrap();
    let rules = d.path().join("throttle.conf");
    std::fs::write(&rules, "# pattern  bytes/s\n/slow/*  40000\n").unwrap();
    let s = serve(
        d.path(),
        &["--threads", "2", "--throttle", rules.to_str().unwrap()],
    );
    // Two connections share the rule's 40 kB/s: 80 kB take 2 s at the limit; 1.4 s leaves the
    // pacer's initial burst 600 ms (an unthrottled fetch takes milliseconds).
    let start = Instant::now();
    let fetch = |u: String| std::thread::spawn(move || curl(&[&u]));
    let (a, b) = (fetch(url(&s, "/slow/a.bin")), fetch(url(&s, "/slow/a.bin")));
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    let took = start.elapsed();
    assert_eq!((a.1.len(), b.1.len()), (40_000, 40_000));
    assert!(
        took >= Duration::from_millis(1400),
        "80 kB at 40 kB/s took only {took:?}"
    );
    // Unthrottled files are not slowed.
    let start = Instant::now();
    let (_, big) = curl(&[&url(&s, "/big.bin")]);
    assert_eq!(big.len(), 300_000);
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "300 kB at 40 kB/s would take 7.5 s"
    );
    // 1 MB promised at 40 kB/s is 25 s of backlog: the next request is refused at once.
    let mut slow = TcpStream::connect(s.addr).unwrap();
    slow.write_all(b"GET /slow/huge.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 64];
    slow.set_read_timeout(Some(T)).unwrap();
    slow.read_exact(&mut first).unwrap();
    assert!(text(&first).starts_with("HTTP/1.1 200"));
    let (h, _) = curl(&[&url(&s, "/slow/a.bin")]);
    assert!(h.starts_with("HTTP/1.1 503"), "{h}");
    drop(slow);
}

#[test]
fn chroot_and_user_drop_privileges_after_binding() {
    common::require_root("chroot and --user");
    let jail = tempfile::tempdir().unwrap();
    let www = jail.path().join("www");
    std::fs::create_dir(&www).unwrap();
    std::fs::write(www.join("index.html"), "jailed").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(jail.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let s = serve(
        &www,
        &[
            "--threads",
            "1",
            "--chroot",
            jail.path().to_str().unwrap(),
            "--user",
            "nobody",
        ],
    );
    let (h, b) = curl(&[&url(&s, "/")]);
    assert!(h.starts_with("HTTP/1.1 200"), "{h}");
    assert_eq!(b, b"jailed");
    let status = std::fs::read_to_string(format!("/proc/{}/status", s.child.id())).unwrap();
    let uid_line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    assert!(
        uid_line.split_whitespace().skip(1).all(|u| u == "65534"),
        "{uid_line}"
    );
    let root = std::fs::read_link(format!("/proc/{}/root", s.child.id())).unwrap();
    assert_eq!(root, jail.path().canonicalize().unwrap());
    // A root outside the jail is a start-up error.
    let o = common::run(&[
        "serve",
        "/tmp",
        "--chroot",
        jail.path().to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
    ]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        common::stderr(&o).contains("not inside --chroot"),
        "{}",
        common::stderr(&o)
    );
}
