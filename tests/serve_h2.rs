//! `webstand serve` over HTTP/2 as third-party clients see it: curl (`--http2` over TLS by ALPN,
//! `--http2-prior-knowledge` over h2c), nghttp, h2load and a raw-frame client (tests/h2/hostile.py).
//! Bodies equal the files (md5 by the test), HEAD, ranges, conditional GET (both validators),
//! listings, basic auth (its challenge, its password file never served), refusals (403, 404, 405),
//! throttling and CGI answer as over HTTP/1, request bodies larger than the first flow-control
//! window reach a CGI program whole (curl and h2load -d), a slow CGI program does not hold back
//! the connection's other streams, several CGI programs run at once for one connection's streams
//! (proved by order: one waits for a file the other writes), a reset stream or a closed connection
//! kills its program (and the program's child) and leaves no descriptor behind, the access log says HTTP/2.0, h2load's 2000 requests over 4
//! connections × 16 streams all succeed, and without `--h2c` a plain listener does not speak
//! HTTP/2. Certificates are made at test time.

use crate::common;

use common::h2_client::{fds_line, file_md5, jobs, md5, open_fds, within_10s};
use common::{require, serve};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let doc = dir.path().join("doc");
        std::fs::create_dir_all(doc.join("list")).unwrap();
        std::fs::create_dir_all(doc.join("private")).unwrap();
        std::fs::create_dir_all(doc.join("cgi-bin")).unwrap();
        std::fs::write(doc.join("2k.html"), "a".repeat(2048)).unwrap();
        let big: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(doc.join("big.bin"), big).unwrap();
        std::fs::write(doc.join("list/one.txt"), "one").unwrap();
        std::fs::write(doc.join("private/s.txt"), "secret").unwrap();
        let cgi = doc.join("cgi-bin/env");
        std::fs::write(
            &cgi,
            "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n\\r\\n'\necho \"$SERVER_PROTOCOL $REQUEST_METHOD $QUERY_STRING\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cgi, std::fs::Permissions::from_mode(0o755)).unwrap();
        for (name, script) in [
            // The length of the body it was given, as stdin had it.
            (
                "len",
                "printf 'Content-Type: text/plain\\r\\n\\r\\n'\nwc -c | tr -d ' '\n",
            ),
            // Answers after a second: the other streams must not wait for it.
            (
                "slow",
                "sleep 1\nprintf 'Content-Type: text/plain\\r\\n\\r\\nslow\\n'\n",
            ),
            // Waits (5 s at most) until `b` has run: only several jobs at once let it see that.
            (
                "a",
                "i=0\nwhile [ ! -e \"$DOCUMENT_ROOT/../b.flag\" ] && [ $i -lt 250 ]; do sleep 0.02; i=$((i+1)); done\nprintf 'Content-Type: text/plain\\r\\n\\r\\n'\nif [ -e \"$DOCUMENT_ROOT/../b.flag\" ]; then echo 'a saw b'; else echo 'a gave up'; fi\n",
            ),
            (
                "b",
                "touch \"$DOCUMENT_ROOT/../b.flag\"\nprintf 'Content-Type: text/plain\\r\\n\\r\\nb\\n'\n",
            ),
            // Runs (with a child of its own) until killed; its pids written, the marker last.
            (
                "hold",
                "sleep 30 &\necho $! > \"$DOCUMENT_ROOT/../hold.child\"\necho $$ > \"$DOCUMENT_ROOT/../hold.tmp\"\nmv \"$DOCUMENT_ROOT/../hold.tmp\" \"$DOCUMENT_ROOT/../hold.pid\"\nwait\n",
            ),
        ] {
            let path = doc.join("cgi-bin").join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{script}")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::create_dir_all(doc.join("slow")).unwrap();
        std::fs::write(doc.join("slow/paced.bin"), vec![5u8; 600_000]).unwrap();
        std::fs::write(dir.path().join("throttle.conf"), "/slow/* 200000\n").unwrap();
        // Outside the root: a symlink to it is refused (403).
        std::fs::write(dir.path().join("outside.txt"), "outside").unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside.txt"), doc.join("out.txt")).unwrap();
        // {SHA} of "pw", as htpasswd -s writes it; inside the root, where it must never be served.
        std::fs::write(
            doc.join("users.pw"),
            "user:{SHA}GpHWL3ymc5liWkNopqtdSjuqYHM=\n",
        )
        .unwrap();
        let f = Fixture { dir };
        let out = Command::new(require("openssl"))
            .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
            .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
            .args([
                "-keyout",
                "key.pem",
                "-out",
                "cert.pem",
                "-subj",
                "/CN=localhost",
            ])
            .args(["-addext", "subjectAltName=DNS:localhost"])
            .current_dir(f.dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        f
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn p(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }
}

/// A server with a TLS listener and an h2c plain listener; its stderr's "listening on" lines.
struct Server {
    child: std::process::Child,
    tls: u16,
    plain: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(f: &Fixture, extra: &[&str]) -> Server {
    let auth = format!("/private={}", f.p("doc/users.pw"));
    let mut child = common::webstand()
        .arg("serve")
        .arg(f.path("doc"))
        .args(["--listen", "127.0.0.1:0", "--listen-tls", "127.0.0.1:0"])
        .args(["--tls-cert", &f.p("cert.pem"), "--tls-key", &f.p("key.pem")])
        .args(["--threads", "1", "--listing", "--cgi", "/cgi-bin/*"])
        .args(["--auth", &auth, "--access-log", &f.p("access.log")])
        .args(["--throttle", &f.p("throttle.conf")])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (mut tls, mut plain) = (0, 0);
    while tls == 0 || plain == 0 {
        let line = lines.next().expect("serve says where it listens").unwrap();
        let port = |a: &str| a.rsplit(':').next().unwrap().parse().unwrap();
        if let Some(a) = line.strip_prefix("listening on https://") {
            tls = port(a);
        } else if let Some(a) = line.strip_prefix("listening on http://") {
            plain = port(a);
        }
    }
    Server { child, tls, plain }
}

/// curl over HTTP/2 (TLS by ALPN, or h2c with `h2c`): (status line fields, body).
fn curl(f: &Fixture, args: &[&str]) -> (String, Vec<u8>) {
    let out = Command::new(require("curl"))
        .args(["-s", "-S", "--max-time", "20", "--cacert", &f.p("cert.pem")])
        .args(["-w", "\n%{http_version} %{http_code}"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "curl {args:?}: {out:?}");
    let mut body = out.stdout;
    let nl = body.iter().rposition(|&b| b == b'\n').unwrap();
    let status = String::from_utf8(body.split_off(nl)).unwrap();
    (status.trim().to_string(), body)
}

#[test]
fn curl_gets_every_kind_of_answer_over_h2_by_alpn_and_h2c() {
    let f = Fixture::new();
    let mut s = start(&f, &["--h2c"]);
    for base in [
        format!("https://localhost:{}", s.tls),
        format!("http://127.0.0.1:{}", s.plain),
    ] {
        let h2 = if base.starts_with("https") {
            "--http2"
        } else {
            "--http2-prior-knowledge"
        };
        let get = |path: &str, more: &[&str]| {
            let url = format!("{base}{path}");
            let mut args = vec![h2, url.as_str()];
            args.extend_from_slice(more);
            curl(&f, &args)
        };
        for name in ["2k.html", "big.bin"] {
            let (status, body) = get(&format!("/{name}"), &[]);
            assert_eq!(status, "2 200", "{name}");
            assert_eq!(md5(&body), file_md5(&f.path("doc").join(name)), "{name}");
        }
        let (status, body) = get("/big.bin", &["-I"]);
        assert_eq!(status, "2 200");
        assert!(String::from_utf8_lossy(&body).contains("content-length: 3000000"));
        let (status, body) = get("/big.bin", &["-r", "1000-1999"]);
        assert_eq!((status.as_str(), body.len()), ("2 206", 1000));
        let (status, body) = get("/2k.html", &["-r", "0-9,100-109"]);
        assert_eq!(status, "2 206");
        assert!(String::from_utf8_lossy(&body).contains("aaaaaaaaaa\r\n--"));
        let (_, head) = get("/2k.html", &["-I"]);
        let etag = String::from_utf8_lossy(&head)
            .lines()
            .find_map(|l| l.strip_prefix("etag: ").map(str::to_string))
            .expect("an etag");
        let (status, body) = get("/2k.html", &["-H", &format!("If-None-Match: {etag}")]);
        assert_eq!((status.as_str(), body.len()), ("2 304", 0));
        let (status, body) = get("/list/", &[]);
        assert_eq!(status, "2 200");
        assert!(String::from_utf8_lossy(&body).contains("one.txt"));
        assert_eq!(get("/private/s.txt", &[]).0, "2 401");
        let (status, body) = get("/private/s.txt", &["-u", "user:pw"]);
        assert_eq!(
            (status.as_str(), body.as_slice()),
            ("2 200", &b"secret"[..])
        );
        let (status, body) = get("/cgi-bin/env?q=1", &[]);
        assert_eq!(status, "2 200");
        assert_eq!(String::from_utf8_lossy(&body), "HTTP/2.0 GET q=1\n");
        assert_eq!(get("/missing", &[]).0, "2 404");
    }
    // The log is flushed once a second and at exit: stop the server as an operator would
    // (SIGTERM, then wait), not by drop's SIGKILL, which loses a second's lines.
    common::terminate(&mut s.child, std::time::Duration::from_secs(10));
    drop(s);
    let log = std::fs::read_to_string(f.path("access.log")).unwrap();
    assert!(log.contains("\"GET /2k.html HTTP/2.0\" 200 2048"), "{log}");
    assert!(
        log.contains("\"GET /cgi-bin/env?q=1 HTTP/2.0\" 200"),
        "{log}"
    );
}

#[test]
fn h2load_2000_requests_over_4_connections_of_16_streams_all_succeed() {
    let f = Fixture::new();
    let s = start(&f, &["--h2c"]);
    for url in [
        format!("https://localhost:{}/2k.html", s.tls),
        format!("http://127.0.0.1:{}/2k.html", s.plain),
    ] {
        common::h2::h2load_all_succeed(2000, &["-c", "4", "-m", "16", "-n", "2000", &url]);
    }
}

#[test]
fn nghttp_fetches_several_streams_at_once_and_the_server_sends_its_settings() {
    let f = Fixture::new();
    let s = start(&f, &["--h2c"]);
    let base = format!("http://127.0.0.1:{}", s.plain);
    let out = Command::new(require("nghttp"))
        .args(["-v", "-n", "-t", "10"])
        .args([
            format!("{base}/2k.html"),
            format!("{base}/big.bin"),
            format!("{base}/list/"),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("SETTINGS_MAX_CONCURRENT_STREAMS(0x03):128"),
        "{text}"
    );
    assert!(
        text.contains("SETTINGS_MAX_HEADER_LIST_SIZE(0x06)"),
        "{text}"
    );
    assert_eq!(text.matches(":status: 200").count(), 3, "{text}");
}

#[test]
fn without_h2c_a_plain_listener_speaks_http1_only() {
    let f = Fixture::new();
    let s = serve(&f.path("doc"), &[]);
    let out = Command::new(require("curl"))
        .args(["-s", "--max-time", "5", "--http2-prior-knowledge"])
        .arg(format!("http://{}/2k.html", s.addr))
        .output()
        .unwrap();
    assert!(!out.status.success(), "h2c answered without --h2c");
    // HTTP/1.1 is unchanged, and a client asking for an upgrade stays on HTTP/1.1.
    let (status, _) = curl(&f, &["--http2", &format!("http://{}/2k.html", s.addr)]);
    assert_eq!(status, "1.1 200");
}

#[test]
fn more_http1_features_answer_the_same_over_h2() {
    let f = Fixture::new();
    let s = start(&f, &[]);
    let base = format!("https://localhost:{}", s.tls);
    let get = |path: &str, more: &[&str]| {
        let url = format!("{base}{path}");
        let mut args = vec!["--http2", url.as_str()];
        args.extend_from_slice(more);
        curl(&f, &args)
    };
    let (_, head) = get("/2k.html", &["-I"]);
    let head = String::from_utf8_lossy(&head).into_owned();
    let modified = head
        .lines()
        .find_map(|l| l.strip_prefix("last-modified: "))
        .expect("a last-modified field");
    let since = format!("If-Modified-Since: {modified}");
    let (status, body) = get("/2k.html", &["-H", since.trim_end()]);
    assert_eq!((status.as_str(), body.len()), ("2 304", 0));
    let (status, head) = get("/private/s.txt", &["-I"]);
    assert_eq!(status, "2 401");
    assert!(
        String::from_utf8_lossy(&head).contains("www-authenticate: Basic realm="),
        "{}",
        String::from_utf8_lossy(&head)
    );
    // The password file lies in the root: as if it were not there.
    assert_eq!(get("/users.pw", &[]).0, "2 404");
    assert_eq!(get("/out.txt", &[]).0, "2 403");
    let (status, head) = get("/2k.html", &["-X", "DELETE", "-D", "-", "-o", "/dev/null"]);
    assert_eq!(status, "2 405");
    assert!(String::from_utf8_lossy(&head).contains("allow: GET, HEAD"));
    // 600 kB under a 200 kB/s rule: paced to its end (3 s, less the bucket's 50 kB first burst;
    // the answer leaves in several flushes of at most 256 KiB, each of them paced), where an
    // unthrottled fetch of a larger file takes milliseconds.
    let t = std::time::Instant::now();
    let (status, body) = get("/slow/paced.bin", &[]);
    assert_eq!((status.as_str(), body.len()), ("2 200", 600_000));
    assert!(t.elapsed().as_secs_f64() > 2.2, "{:?}", t.elapsed());
}

#[test]
fn request_bodies_past_the_first_window_reach_a_cgi_program_whole() {
    let f = Fixture::new();
    let s = start(&f, &["--h2c"]);
    // 1 MiB (the default --max-body): sixteen times the initial 64 KiB windows.
    let body: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 253) as u8).collect();
    std::fs::write(f.path("body.bin"), &body).unwrap();
    let upload = format!("@{}", f.p("body.bin"));
    for (h2, url) in [
        (
            "--http2",
            format!("https://localhost:{}/cgi-bin/len", s.tls),
        ),
        (
            "--http2-prior-knowledge",
            format!("http://127.0.0.1:{}/cgi-bin/len", s.plain),
        ),
    ] {
        let (status, answer) = curl(&f, &[h2, "--data-binary", &upload, &url]);
        assert_eq!(status, "2 200", "{url}");
        assert_eq!(String::from_utf8_lossy(&answer).trim(), "1048576", "{url}");
    }
    // One byte more is 413, then RST_STREAM NO_ERROR (nghttp sends no content-length: the body
    // crosses the limit as it comes). curl 7.88 reports no answer at all for this exchange, from
    // nginx too (it ends the stream the same way), so nghttp is the witness here.
    std::fs::write(f.path("over.bin"), vec![1u8; (1 << 20) + 1]).unwrap();
    let url = format!("http://127.0.0.1:{}/cgi-bin/len", s.plain);
    let out = Command::new(require("nghttp"))
        .args(["-nv", "-t", "10", "-d", &f.p("over.bin"), &url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(":status: 413"), "{text}");
    assert!(text.contains("error_code=NO_ERROR"), "{text}");
    // h2load posts the file on every stream (-d): 40 requests, 2 connections × 4 streams.
    let out = Command::new(require("h2load"))
        .args([
            "-c",
            "2",
            "-m",
            "4",
            "-n",
            "40",
            "-d",
            &f.p("body.bin"),
            &url,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("40 succeeded, 0 failed"), "{text}");
    assert!(text.contains("status codes: 40 2xx"), "{text}");
}

#[test]
fn a_slow_cgi_program_does_not_hold_back_the_connections_other_streams() {
    let f = Fixture::new();
    let s = start(&f, &["--h2c"]);
    // Streams 1 (slow CGI), 3 (a file), 5 (a second CGI, which waits for the first's slot),
    // 7 (a listing), all on one connection.
    let paths = ["/cgi-bin/slow", "/2k.html", "/cgi-bin/env", "/list/"];
    let mut case = vec!["interleaved"];
    case.extend_from_slice(&paths);
    let events = common::h2_client::run(s.plain, &case);
    let at = |needle: &str| {
        events
            .find(needle)
            .unwrap_or_else(|| panic!("no {needle:?} in {events}"))
    };
    for stream in 1..=4 {
        assert!(
            events.contains(&format!("STATUS {} 200", 2 * stream - 1)),
            "{events}"
        );
    }
    assert!(at("END 3") < at("END 1"), "{events}");
    assert!(at("END 7") < at("END 1"), "{events}");
}

/// Whether a process is gone (a zombie counts: it runs no more and holds nothing but its pid).
fn process_gone(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[test]
fn two_cgi_programs_run_at_once_on_one_connection() {
    let f = Fixture::new();
    let s = start(&f, &["--h2c"]);
    // Stream 1's program waits for the file stream 3's program writes: with one job at a time
    // per connection it would give up after 5 s ("a gave up").
    let out = jobs(s.plain, "bodies", &["/cgi-bin/a", "/cgi-bin/b"]);
    assert!(out.contains("DONE"), "{out}");
    assert!(
        out.contains(&format!("BODY 1 200 {}", md5(b"a saw b\n"))),
        "{out}"
    );
    assert!(
        out.contains(&format!("BODY 3 200 {}", md5(b"b\n"))),
        "{out}"
    );
}

#[test]
fn a_reset_stream_or_a_closed_connection_kills_its_cgi_program() {
    let f = Fixture::new();
    let s = start(&f, &["--h2c"]);
    let pid = s.child.id().to_string();
    let marker = f.p("hold.pid");
    // The file answered after the reset is cached first (a cached file may keep its descriptor).
    let url = format!("http://127.0.0.1:{}/2k.html", s.plain);
    assert_eq!(curl(&f, &["--http2-prior-knowledge", &url]).0, "2 200");
    let out = jobs(
        s.plain,
        "reset",
        &[&pid, &marker, "/cgi-bin/hold", "/2k.html"],
    );
    let fds = fds_line(&out);
    // The program's pipe was open while it ran, and closed with the reset (same connection).
    assert!(fds[1] > fds[0] && fds[2] == fds[0], "{out}");
    for file in ["hold.pid", "hold.child"] {
        let pid = std::fs::read_to_string(f.path(file)).unwrap();
        let pid = pid.trim();
        assert!(within_10s(|| process_gone(pid)), "{file} {pid} still runs");
    }
    // The connection closed mid-job: the same.
    std::fs::remove_file(&marker).unwrap();
    let before = open_fds(s.child.id());
    let out = jobs(s.plain, "close", &[&marker, "/cgi-bin/hold"]);
    assert!(out.contains("CLOSED_BY_CLIENT"), "{out}");
    for file in ["hold.pid", "hold.child"] {
        let pid = std::fs::read_to_string(f.path(file)).unwrap();
        let pid = pid.trim();
        assert!(within_10s(|| process_gone(pid)), "{file} {pid} still runs");
    }
    assert!(
        within_10s(|| open_fds(s.child.id()) == before),
        "{} descriptors open, {before} before",
        open_fds(s.child.id())
    );
    // The server answers on.
    let (status, body) = curl(&f, &["--http2-prior-knowledge", &url]);
    assert_eq!((status.as_str(), body.len()), ("2 200", 2048));
}
