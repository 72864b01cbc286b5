//! `webstand serve --fastcgi`: PHP through a real php-fpm (started here in the foreground with its
//! own config, a unix socket and a TCP port), and every bad-backend case against an in-test fake
//! FastCGI backend. After each failure the server still serves static files. Over HTTP/2 (h2c, the
//! raw-frame client tests/h2/jobs.py, curl, nghttp and h2load): PHP pages run at once on one
//! connection (proved by order: one waits for a file the other writes), 32 streams each get their
//! own body, uploads reach PHP whole, HEAD and 304 keep their shapes, a reset stream or a
//! closed connection aborts its PHP request with no descriptor left, and a flood of PHP streams on
//! one connection takes turns for the backend with another connection's request (by order).

use crate::common;

use common::h2_client::{fds_line, jobs, md5, open_fds, uploads, within_10s};
use common::php_fpm::{as_root, pool_ids, start_php_fpm, start_php_fpm_pools, PhpFpm};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The real uid of every process whose parent is `pid`.
fn children_uids(pid: u32) -> Vec<u32> {
    let field = |status: &str, name: &str| -> Option<u32> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("status")).ok())
        .filter(|status| field(status, "PPid:") == Some(pid))
        .filter_map(|status| field(&status, "Uid:"))
        .collect()
}

fn php_root() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let w = |name: &str, body: &str| std::fs::write(d.path().join(name), body).unwrap();
    w(
        "index.php",
        r#"<?php header("X-Php: yes"); echo "script=", $_SERVER["SCRIPT_NAME"], " file=", $_SERVER["SCRIPT_FILENAME"], " info=", $_SERVER["PATH_INFO"] ?? "", " query=", $_SERVER["QUERY_STRING"], " method=", $_SERVER["REQUEST_METHOD"], " uri=", $_SERVER["REQUEST_URI"], " port=", $_SERVER["SERVER_PORT"], " remote=", $_SERVER["REMOTE_ADDR"], " type=", $_SERVER["CONTENT_TYPE"] ?? "", " length=", $_SERVER["CONTENT_LENGTH"] ?? "", " ua=", $_SERVER["HTTP_USER_AGENT"] ?? "", " proxy=", getenv("HTTP_PROXY") ?: ($_SERVER["HTTP_PROXY"] ?? "none"), " https=", $_SERVER["HTTPS"] ?? "off", " root=", $_SERVER["DOCUMENT_ROOT"], " body=", file_get_contents("php://input");"#,
    );
    w(
        "moved.php",
        r#"<?php header("Location: /index.php?from=moved");"#,
    );
    w(
        "gone.php",
        r#"<?php http_response_code(404); echo "no such thing";"#,
    );
    w(
        "big.php",
        r#"<?php for ($i = 0; $i < 30000; $i++) { echo str_pad((string)$i, 99, "."), "\n"; }"#,
    );
    w("static.txt", "static file\n");
    std::fs::create_dir(d.path().join("sub")).unwrap();
    w(
        "sub/deep.php",
        r#"<?php echo "deep=", $_SERVER["SCRIPT_NAME"];"#,
    );
    d
}

/// curl's head and body for a request (-D - then the body).
fn curl(args: &[&str]) -> (String, Vec<u8>) {
    let out = Command::new(common::require("curl"))
        .args(["-s", "-S", "--max-time", "10", "-D", "-"])
        .args(args)
        .output()
        .expect("run curl");
    let all = out.stdout.clone();
    let end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("curl printed no head: {}", common::stderr(&out)));
    (
        String::from_utf8_lossy(&all[..end]).into_owned(),
        all[end + 4..].to_vec(),
    )
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The big page as PHP writes it.
fn big_page() -> Vec<u8> {
    let mut v = Vec::new();
    for i in 0..30000 {
        v.extend_from_slice(format!("{i:.<99}\n").as_bytes());
    }
    v
}

fn php_requests_through(address: &str) {
    let d = php_root();
    let tcp = address.contains("PORT");
    let fpm = start_php_fpm_pools(d.path(), 2, tcp);
    assert_pool_unprivileged(&fpm, if tcp { 4 } else { 2 });
    let address = address
        .replace("SOCK", &fpm.socket.display().to_string())
        .replace("PORT", &fpm.port.unwrap_or(0).to_string());
    // The issue's spelling: `*.php` passes scripts at any depth (sub/deep.php below).
    let rule = format!("*.php={address}");
    let s = common::serve(
        d.path(),
        &[
            "--threads",
            "1",
            "--index",
            "index.php",
            "--fastcgi",
            &rule,
            "--fastcgi-connections",
            "2",
        ],
    );
    let url = |p: &str| format!("http://{}{}", s.addr, p);
    let root = std::fs::canonicalize(d.path()).unwrap();
    let (h, b) = curl(&[
        "-H",
        "Proxy: http://evil:1",
        &url("/index.php/extra/info?a=1&b=2"),
    ]);
    let b = text(&b);
    assert!(h.starts_with("HTTP/1.1 200 OK"), "{h}");
    assert!(
        h.contains("X-Php: yes") && h.contains("Content-Length: "),
        "{h}"
    );
    for want in [
        "script=/index.php ".to_string(),
        format!("file={}/index.php ", root.display()),
        "info=/extra/info ".into(),
        "query=a=1&b=2 ".into(),
        "method=GET ".into(),
        "uri=/index.php/extra/info?a=1&b=2 ".into(),
        format!("port={} ", s.addr.port()),
        "remote=127.0.0.1 ".into(),
        "ua=curl/".into(),
        "proxy=none ".into(),
        "https=off ".into(),
        format!("root={} ", root.display()),
    ] {
        assert!(b.contains(&want), "{want:?} missing in {b}");
    }
    let (h, b) = curl(&[&url("/sub/deep.php")]);
    assert!(h.starts_with("HTTP/1.1 200"), "{h}");
    assert_eq!(text(&b), "deep=/sub/deep.php");
    // POST body, and index.php answering for the directory URL.
    let (h, b) = curl(&["--data-binary", "posted=yes", &url("/")]);
    let b = text(&b);
    assert!(h.starts_with("HTTP/1.1 200"), "{h}");
    assert!(
        b.contains("method=POST ") && b.contains("body=posted=yes"),
        "{b}"
    );
    assert!(
        b.contains("type=application/x-www-form-urlencoded length=10 "),
        "{b}"
    );
    // Location and Status.
    let (h, _) = curl(&[&url("/moved.php")]);
    assert!(h.starts_with("HTTP/1.1 302 Found"), "{h}");
    assert!(h.contains("Location: /index.php?from=moved"), "{h}");
    let (h, b) = curl(&[&url("/gone.php")]);
    assert!(h.starts_with("HTTP/1.1 404"), "{h}");
    assert_eq!(b, b"no such thing");
    let (h, _) = curl(&[&url("/missing.php")]);
    assert!(h.starts_with("HTTP/1.1 404"), "{h}");
    // A large answer streams chunked.
    let (h, b) = curl(&[&url("/big.php")]);
    assert!(h.contains("Transfer-Encoding: chunked"), "{h}");
    assert!(b == big_page(), "big page differs ({} bytes)", b.len());
    // Several PHP requests, the large one among them, on one client connection.
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut reader = BufReader::new(c.try_clone().unwrap());
    for path in ["/index.php?n=1", "/big.php", "/gone.php", "/index.php?n=4"] {
        write!(c, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let (status, body) = read_answer(&mut reader);
        let want = if path == "/gone.php" { 404 } else { 200 };
        assert_eq!(status, want, "{path}");
        if path == "/big.php" {
            assert!(body == big_page());
        }
    }
    let (h, b) = curl(&[&url("/static.txt")]);
    assert!(
        h.starts_with("HTTP/1.1 200") && b == b"static file\n",
        "{h}"
    );
    drop(fpm);
}

/// Reads one answer (Content-Length or chunked) off a keep-alive connection.
fn read_answer(r: &mut BufReader<TcpStream>) -> (u16, Vec<u8>) {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let status: u16 = line
        .split(' ')
        .nth(1)
        .expect("status line")
        .parse()
        .unwrap();
    let (mut length, mut chunked) = (None, false);
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        let l = line.trim_end().to_ascii_lowercase();
        if l.is_empty() {
            break;
        }
        if let Some(v) = l.strip_prefix("content-length: ") {
            length = Some(v.parse::<usize>().unwrap());
        }
        chunked |= l == "transfer-encoding: chunked";
        assert!(l != "connection: close", "the connection was not kept");
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            r.read_line(&mut line).unwrap();
            let n = usize::from_str_radix(line.trim_end(), 16).unwrap();
            let mut piece = vec![0; n + 2];
            r.read_exact(&mut piece).unwrap();
            body.extend_from_slice(&piece[..n]);
            if n == 0 {
                break;
            }
        }
    } else {
        body.resize(length.expect("a length or chunks"), 0);
        r.read_exact(&mut body).unwrap();
    }
    (status, body)
}

/// The pools' PHP processes (`children` in all) run as [`POOL_USER`](common::php_fpm::POOL_USER) when the tests run as root,
/// and the socket's directory is the test user's alone. php-fpm listens before its children have
/// all started and dropped root, so their uids are awaited (10 s at most).
fn assert_pool_unprivileged(fpm: &PhpFpm, children: usize) {
    use std::os::unix::fs::MetadataExt;
    let dir = std::fs::metadata(fpm.socket.parent().unwrap()).unwrap();
    assert_eq!(
        dir.mode() & 0o777,
        0o700,
        "the socket's directory is private"
    );
    // SAFETY: geteuid has no preconditions.
    let want = if as_root() {
        pool_ids().0
    } else {
        unsafe { libc::geteuid() }
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let uids = children_uids(fpm.child.id());
        if uids.len() == children && uids.iter().all(|&u| u == want) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "pool uids {uids:?}, want {children} of {want}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn php_over_a_unix_socket() {
    php_requests_through("unix:SOCK");
}

#[test]
fn php_over_tcp() {
    php_requests_through("127.0.0.1:PORT");
}

/// What a fake backend does with each request it reads.
#[derive(Clone, Copy, PartialEq)]
enum Fake {
    /// A proper answer naming the connection and its request count; keeps the connection.
    Answer,
    /// Reads the request and never answers.
    Silent,
    /// Answers with bytes that are not FastCGI records.
    Garbage,
    /// A header block that never ends (80 KiB of fields).
    HugeHead,
    /// A body of 5000 bytes.
    LongBody,
    /// A bare `Location: /static.txt` (a local redirect).
    LocalRedirect,
}

/// A FastCGI backend on a unix socket in the test's directory: counts accepted connections, and
/// records the parameter names of the last request.
struct FakeBackend {
    socket: PathBuf,
    accepts: Arc<AtomicUsize>,
    params: Arc<std::sync::Mutex<Vec<String>>>,
}

fn fake_backend(dir: &Path, mode: Fake) -> FakeBackend {
    let socket = dir.join(format!("fake-{}.sock", common::free_port()));
    let listener = UnixListener::bind(&socket).unwrap();
    let accepts = Arc::new(AtomicUsize::new(0));
    let params = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (a, p) = (accepts.clone(), params.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let n = a.fetch_add(1, Ordering::SeqCst) + 1;
            let p = p.clone();
            std::thread::spawn(move || serve_fake(stream, mode, n, &p));
        }
    });
    FakeBackend {
        socket,
        accepts,
        params,
    }
}

/// Serves requests on one backend connection until the server closes it.
fn serve_fake(
    mut s: std::os::unix::net::UnixStream,
    mode: Fake,
    conn_no: usize,
    params: &std::sync::Mutex<Vec<String>>,
) {
    for request_no in 1.. {
        let Some((keep, names)) = read_fake_request(&mut s) else {
            return;
        };
        *params.lock().unwrap() = names;
        let stdout = |content: &[u8]| {
            let mut r = vec![1, 6, 0, 1];
            r.extend_from_slice(&(content.len() as u16).to_be_bytes());
            r.extend_from_slice(&[0, 0]);
            r.extend_from_slice(content);
            r
        };
        let reply = match mode {
            Fake::Silent => {
                std::thread::sleep(Duration::from_secs(30));
                return;
            }
            Fake::Garbage => b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi".to_vec(),
            Fake::HugeHead => {
                let mut r = Vec::new();
                for _ in 0..2 {
                    r.extend(stdout(&[b"X-Filler: ".as_slice(), &[b'f'; 40_000], b"\r\n"].concat()));
                }
                r
            }
            Fake::LongBody => stdout(&[b"Content-Type: text/plain\r\n\r\n".as_slice(), &[b'b'; 5000]].concat()),
            Fake::LocalRedirect => stdout(b"Location: /static.txt\r\n\r\n"),
            Fake::Answer => stdout(
                format!("Content-Type: text/plain\r\n\r\nconnection {conn_no} request {request_no} keep {keep}")
                    .as_bytes(),
            ),
        };
        let mut end = reply;
        end.extend_from_slice(&[1, 3, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        if s.write_all(&end).is_err() || !keep {
            return;
        }
    }
}

/// Reads BEGIN_REQUEST, PARAMS and STDIN up to the empty STDIN record: (keep_conn, param names).
fn read_fake_request(s: &mut std::os::unix::net::UnixStream) -> Option<(bool, Vec<String>)> {
    let (mut keep, mut pairs) = (false, Vec::new());
    loop {
        let mut h = [0u8; 8];
        s.read_exact(&mut h).ok()?;
        let len = usize::from(u16::from_be_bytes([h[4], h[5]])) + usize::from(h[6]);
        let mut content = vec![0; len];
        s.read_exact(&mut content).ok()?;
        match h[1] {
            1 => keep = content[2] & 1 == 1,
            4 => pairs.extend_from_slice(&content[..len - usize::from(h[6])]),
            5 if len == 0 => return Some((keep, param_names(&pairs))),
            _ => {}
        }
    }
}

fn param_names(mut b: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    let len = |b: &mut &[u8]| -> usize {
        if b[0] < 0x80 {
            let n = usize::from(b[0]);
            *b = &b[1..];
            n
        } else {
            let n = u32::from_be_bytes([b[0] & 0x7f, b[1], b[2], b[3]]) as usize;
            *b = &b[4..];
            n
        }
    };
    while !b.is_empty() {
        let (n, v) = (len(&mut b), len(&mut b));
        names.push(String::from_utf8_lossy(&b[..n]).into_owned());
        b = &b[n + v..];
    }
    names
}

fn serve_fake_backend(dir: &Path, socket: &Path, extra: &[&str]) -> common::Running {
    let rule = fake_backend_rule(dir, socket);
    let mut args = vec!["--threads", "1", "--fastcgi", &rule];
    args.extend_from_slice(extra);
    common::serve(dir, &args)
}

/// The `--fastcgi` rule that routes `*.php` to the fake backend at `socket`; writes the files.
fn fake_backend_rule(dir: &Path, socket: &Path) -> String {
    std::fs::write(dir.join("static.txt"), "static file\n").unwrap();
    std::fs::write(dir.join("app.php"), "not run here").unwrap();
    format!("*.php=unix:{}", socket.display())
}

/// The server's stderr once it is stopped.
fn stop_and_read_stderr(mut s: common::Running) -> String {
    let _ = s.child.kill();
    let mut err = String::new();
    if let Some(mut e) = s.child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    err
}

fn assert_static_still_served(s: &common::Running) {
    let (h, b) = curl(&[&format!("http://{}/static.txt", s.addr)]);
    assert!(
        h.starts_with("HTTP/1.1 200") && b == b"static file\n",
        "{h}"
    );
}

#[test]
fn kept_backend_connections_are_reused_and_httpoxy_is_closed() {
    let d = tempfile::tempdir().unwrap();
    let fake = fake_backend(d.path(), Fake::Answer);
    let s = serve_fake_backend(d.path(), &fake.socket, &["--fastcgi-connections", "1"]);
    let url = format!("http://{}/app.php", s.addr);
    for i in 1..=5 {
        let (h, b) = curl(&["-H", "Proxy: http://evil:1", &url]);
        assert!(h.starts_with("HTTP/1.1 200"), "{h}");
        assert_eq!(text(&b), format!("connection 1 request {i} keep true"));
    }
    assert_eq!(
        fake.accepts.load(Ordering::SeqCst),
        1,
        "one backend connection for 5 requests"
    );
    let names = fake.params.lock().unwrap().clone();
    for want in [
        "SCRIPT_FILENAME",
        "SCRIPT_NAME",
        "REQUEST_URI",
        "REMOTE_PORT",
        "HTTP_HOST",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing in {names:?}"
        );
    }
    assert!(
        !names.iter().any(|n| n == "HTTP_PROXY"),
        "httpoxy: {names:?}"
    );
    // Concurrent clients beyond the one connection wait for it and are all answered.
    let handles: Vec<_> = (0..6)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || curl(&[&url]))
        })
        .collect();
    for h in handles {
        let (head, _) = h.join().unwrap();
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    }
    assert_eq!(fake.accepts.load(Ordering::SeqCst), 1);
}

#[test]
fn local_redirects_serve_the_named_path() {
    let d = tempfile::tempdir().unwrap();
    let fake = fake_backend(d.path(), Fake::LocalRedirect);
    let s = serve_fake_backend(d.path(), &fake.socket, &[]);
    let (h, b) = curl(&[&format!("http://{}/app.php", s.addr)]);
    assert!(h.starts_with("HTTP/1.1 200"), "{h}");
    assert_eq!(b, b"static file\n");
}

#[test]
fn a_backend_that_is_down_is_502_at_once() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("nobody.sock");
    let s = serve_fake_backend(d.path(), &missing, &[]);
    let started = Instant::now();
    let (h, _) = curl(&[&format!("http://{}/app.php", s.addr)]);
    assert!(h.starts_with("HTTP/1.1 502"), "{h}");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_static_still_served(&s);
    // A TCP port nobody listens on.
    let closed = common::closed_port();
    let rule = format!("*.php=127.0.0.1:{}", closed.port);
    let t = common::serve(d.path(), &["--threads", "1", "--fastcgi", &rule]);
    let (h, _) = curl(&[&format!("http://{}/app.php", t.addr)]);
    assert!(h.starts_with("HTTP/1.1 502"), "{h}");
    assert_static_still_served(&t);
    assert!(stop_and_read_stderr(s).contains("fastcgi backend unix:"));
}

#[test]
fn a_silent_backend_is_504_after_the_timeout() {
    let d = tempfile::tempdir().unwrap();
    let fake = fake_backend(d.path(), Fake::Silent);
    let s = serve_fake_backend(d.path(), &fake.socket, &["--fastcgi-timeout", "1s"]);
    let started = Instant::now();
    let (h, _) = curl(&[&format!("http://{}/app.php", s.addr)]);
    let took = started.elapsed();
    assert!(h.starts_with("HTTP/1.1 504"), "{h}");
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "{took:?}"
    );
    assert_static_still_served(&s);
    assert!(stop_and_read_stderr(s).contains("no answer within 1s"));
}

#[test]
fn garbage_huge_heads_and_long_bodies_are_502_with_a_log_line() {
    for (mode, logged) in [
        (Fake::Garbage, "not a FastCGI/1.0 record"),
        (Fake::HugeHead, "header block over 64 KiB"),
        (Fake::LongBody, "body beyond the limit"),
    ] {
        let d = tempfile::tempdir().unwrap();
        let fake = fake_backend(d.path(), mode);
        let s = serve_fake_backend(d.path(), &fake.socket, &["--fastcgi-max-output", "1000"]);
        let (h, _) = curl(&[&format!("http://{}/app.php", s.addr)]);
        assert!(h.starts_with("HTTP/1.1 502"), "{logged}: {h}");
        assert_static_still_served(&s);
        let err = stop_and_read_stderr(s);
        assert!(err.contains(logged), "{logged} not in {err}");
    }
}

#[test]
fn bad_fastcgi_rules_are_one_line_errors() {
    let d = tempfile::tempdir().unwrap();
    for bad in ["*.php", "=unix:/x", "*.php=unix:relative", "*.php=nowhere"] {
        let o = common::run(&["serve", d.path().to_str().unwrap(), "--fastcgi", bad]);
        assert!(!o.status.success(), "{bad}");
        let err = common::stderr(&o);
        assert!(
            err.contains("fastcgi rule") && err.lines().count() == 1,
            "{bad}: {err}"
        );
    }
}

#[test]
fn https_on_only_over_tls() {
    let d = tempfile::tempdir().unwrap();
    let (cert, key) = (d.path().join("cert.pem"), d.path().join("key.pem"));
    let out = Command::new(common::require("openssl"))
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
        ])
        .args(["-nodes", "-days", "1", "-subj", "/CN=localhost", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("run openssl");
    assert!(out.status.success(), "{out:?}");
    let fake = fake_backend(d.path(), Fake::Answer);
    let rule = fake_backend_rule(d.path(), &fake.socket);
    let args = ["--threads", "1", "--fastcgi", &rule];
    let (s, tls) = common::serve_tls(d.path(), &cert, &key, &args);
    let (h, _) = curl(&[&format!("http://{}/app.php", s.addr)]);
    assert!(h.starts_with("HTTP/1.1 200"), "{h}");
    assert!(!fake.params.lock().unwrap().iter().any(|n| n == "HTTPS"));
    // curl offers h2 by ALPN and gets it: FastCGI answers on an HTTP/2 stream too.
    let (h, _) = curl(&["-k", &format!("https://{tls}/app.php")]);
    assert!(h.starts_with("HTTP/2 200"), "{h}");
    assert!(fake.params.lock().unwrap().iter().any(|n| n == "HTTPS"));
}

/// A file of `len` pseudo-random bytes (a body the server cannot have seen) and its MD5 as md5sum
/// computes it.
fn body_file(dir: &Path, name: &str, len: usize) -> (PathBuf, String) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ len as u64;
    let bytes: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, &bytes).unwrap();
    (path, md5(&bytes))
}

/// The server's peak resident memory (VmHWM) in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn request_bodies_stream_to_php_in_bounded_memory() {
    let d = php_root();
    std::fs::write(
        d.path().join("echo.php"),
        r#"<?php $b = file_get_contents("php://input"); echo strlen($b), " ", md5($b), " ", $_SERVER["CONTENT_LENGTH"] ?? "none";"#,
    )
    .unwrap();
    let fpm = start_php_fpm(d.path(), 2);
    let bodies = tempfile::tempdir().unwrap();
    let rule = format!("*.php=unix:{}", fpm.socket.display());
    let s = common::serve(
        d.path(),
        &[
            "--threads",
            "1",
            "--fastcgi",
            &rule,
            "--max-body",
            "6291456",
        ],
    );
    let url = format!("http://{}/echo.php", s.addr);
    let octets = "Content-Type: application/octet-stream";
    let before = peak_rss_kib(s.child.id());
    // 5 MiB by Content-Length: streamed, PHP sees every byte.
    let (big, big_md5) = body_file(bodies.path(), "big", 5 << 20);
    let upload = format!("@{}", big.display());
    let (h, b) = curl(&["-H", octets, "--data-binary", &upload, &url]);
    // curl asks `Expect: 100-continue` for a body this large: the go-ahead comes first.
    assert_eq!(h, "HTTP/1.1 100 Continue");
    let end = b.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    assert!(b.starts_with(b"HTTP/1.1 200"), "{}", text(&b));
    assert_eq!(text(&b[end + 4..]), format!("5242880 {big_md5} 5242880"));
    // Its peak memory grew by far less than the body: it never held the body whole.
    let grown = peak_rss_kib(s.child.id()).saturating_sub(before);
    assert!(
        grown < 2048,
        "peak RSS grew by {grown} KiB for a 5120 KiB body"
    );
    // Chunked: collected (PHP needs the length), then passed on with it.
    let (small, small_md5) = body_file(bodies.path(), "small", 300_000);
    let upload = format!("@{}", small.display());
    let chunked = "Transfer-Encoding: chunked";
    let (h, b) = curl(&["-H", octets, "-H", chunked, "--data-binary", &upload, &url]);
    assert!(h.starts_with("HTTP/1.1 200"), "{h}");
    assert_eq!(text(&b), format!("300000 {small_md5} 300000"));
    // Over --max-body: 413 before a byte of the body is read.
    let head = format!(
        "POST /echo.php HTTP/1.1\r\nHost: x\r\n{octets}\r\nContent-Length: 7340032\r\n\r\n"
    );
    let answer = common::raw_exchange(s.addr, head.as_bytes(), Duration::from_secs(5));
    assert!(
        text(&answer).starts_with("HTTP/1.1 413"),
        "{}",
        text(&answer)
    );
    // A streamed body sent slowly, then a second request right behind it on the connection.
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut reader = BufReader::new(c.try_clone().unwrap());
    let body = std::fs::read(&small).unwrap();
    write!(
        c,
        "POST /echo.php HTTP/1.1\r\nHost: x\r\n{octets}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    for piece in body.chunks(70_000) {
        c.write_all(piece).unwrap();
        std::thread::sleep(Duration::from_millis(30));
    }
    c.write_all(b"GET /index.php?after=1 HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let (status, first) = read_answer(&mut reader);
    assert_eq!(status, 200);
    assert_eq!(text(&first), format!("300000 {small_md5} 300000"));
    let (status, second) = read_answer(&mut reader);
    assert_eq!(status, 200);
    assert!(
        text(&second).contains("query=after=1 "),
        "{}",
        text(&second)
    );
    // A streamed body for a script that does not exist: 404, and the connection closes cleanly.
    let head = format!(
        "POST /nothing.php HTTP/1.1\r\nHost: x\r\n{octets}\r\nContent-Length: 300000\r\n\r\n"
    );
    let mut request = head.into_bytes();
    request.extend_from_slice(&body);
    let answer = common::raw_exchange(s.addr, &request, Duration::from_secs(5));
    assert!(
        text(&answer).starts_with("HTTP/1.1 404"),
        "{}",
        text(&answer)
    );
    assert_static_still_served(&s);
    drop(fpm);
}

/// `gzip -dc` of `bytes`: the decompression is checked by another implementation.
fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut child = Command::new(common::require("gzip"))
        .arg("-dc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "gzip -dc refused the body");
    out.stdout
}

#[test]
fn fastcgi_gzip_compresses_pages_for_clients_that_accept_it() {
    let d = php_root();
    std::fs::write(
        d.path().join("page.php"),
        r#"<?php for ($i = 0; $i < 400; $i++) { echo "<p>row ", $i, "</p>\n"; }"#,
    )
    .unwrap();
    let page: String = (0..400).map(|i| format!("<p>row {i}</p>\n")).collect();
    let fpm = start_php_fpm(d.path(), 2);
    let rule = format!("*.php=unix:{}", fpm.socket.display());
    let s = common::serve(d.path(), &["--fastcgi", &rule, "--fastcgi-gzip"]);
    let url = format!("http://{}/page.php", s.addr);
    let (h, b) = curl(&["-H", "Accept-Encoding: br, gzip", &url]);
    assert!(
        h.contains("Content-Encoding: gzip") && h.contains("Vary: Accept-Encoding"),
        "{h}"
    );
    assert!(h.contains(&format!("Content-Length: {}", b.len())), "{h}");
    assert!(b.len() < page.len() / 2, "{} bytes", b.len());
    assert_eq!(text(&gunzip(&b)), page);
    // Not accepted, refused by q=0, or not worth it (a 404, static files): as they are.
    for ae in [None, Some("gzip;q=0")] {
        let mut args = vec![];
        if let Some(v) = ae {
            args.extend(["-H".to_string(), format!("Accept-Encoding: {v}")]);
        }
        args.push(url.clone());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (h, b) = curl(&args);
        assert!(!h.contains("Content-Encoding"), "{h}");
        assert_eq!(text(&b), page);
    }
    let gone = format!("http://{}/gone.php", s.addr);
    let (h, b) = curl(&["-H", "Accept-Encoding: gzip", &gone]);
    assert!(
        h.starts_with("HTTP/1.1 404") && !h.contains("Content-Encoding"),
        "{h}"
    );
    assert_eq!(b, b"no such thing");
    drop(fpm);
}

#[test]
fn php_over_h2_keeps_the_connections_other_streams_going() {
    let d = php_root();
    std::fs::write(
        d.path().join("slow.php"),
        "<?php usleep(1000000); echo 'slow';",
    )
    .unwrap();
    let fpm = start_php_fpm(d.path(), 2);
    let rule = format!("*.php=unix:{}", fpm.socket.display());
    let s = common::serve(d.path(), &["--threads", "1", "--h2c", "--fastcgi", &rule]);
    // Stream 1 waits a second in PHP; stream 3 (a file) is answered meanwhile; stream 5 (PHP
    // again) gets the connection's FastCGI slot once stream 1 is done.
    let paths = ["interleaved", "/slow.php", "/static.txt", "/index.php"];
    let events = common::h2_client::run(s.addr.port(), &paths);
    let at = |needle: &str| {
        events
            .find(needle)
            .unwrap_or_else(|| panic!("no {needle:?} in {events}"))
    };
    for stream in [1, 3, 5] {
        assert!(events.contains(&format!("STATUS {stream} 200")), "{events}");
    }
    assert!(at("END 3") < at("END 1"), "{events}");
    // A body larger than the first flow-control window reaches PHP whole over HTTP/2.
    let body = "x".repeat(100_000);
    let (h, b) = curl(&[
        "--http2-prior-knowledge",
        "--data-binary",
        &body,
        &format!("http://{}/index.php", s.addr),
    ]);
    assert!(h.starts_with("HTTP/2 200"), "{h}");
    let b = text(&b);
    assert!(b.contains(" length=100000 "), "{b}");
    assert!(b.ends_with(&format!("body={body}")), "{}", &b[..200]);
}

/// PHP pages for the HTTP/2 job tests: a waits for the file b writes; n echoes its query; sum
/// gives its body's length and MD5; hold
/// writes output until its client goes away, then says whether PHP saw it abort; etag answers
/// 304 to its own validator.
fn php_h2_root() -> tempfile::TempDir {
    let d = php_root();
    let w = |name: &str, body: &str| std::fs::write(d.path().join(name), body).unwrap();
    w(
        "a.php",
        r#"<?php for ($i = 0; $i < 250 && !file_exists(__DIR__ . "/b.flag"); $i++) { usleep(20000); clearstatcache(); } echo file_exists(__DIR__ . "/b.flag") ? "a saw b" : "a gave up";"#,
    );
    w("b.php", r#"<?php touch(__DIR__ . "/b.flag"); echo "b";"#);
    w(
        "sum.php",
        r#"<?php $b = file_get_contents("php://input"); echo strlen($b), " ", md5($b);"#,
    );
    w(
        "n.php",
        r#"<?php echo "i=", $_GET["i"] ?? "", "\n", str_repeat("x", 1000);"#,
    );
    w(
        "hold.php",
        r#"<?php while (ob_get_level()) { ob_end_flush(); }
register_shutdown_function(function () { file_put_contents(__DIR__ . "/hold.end", connection_aborted() ? "aborted" : "finished"); });
echo "started\n"; flush();
file_put_contents(__DIR__ . "/hold.tmp", getmypid()); rename(__DIR__ . "/hold.tmp", __DIR__ . "/hold.marker");
for ($i = 0; $i < 100; $i++) { usleep(50000); echo str_repeat(".", 64), "\n"; flush(); }"#,
    );
    // Reads 64 KiB of its body, says so in the marker ?m= (its pid), and reads on only once the
    // file ?g= exists (30 s at most).
    w(
        "slow.php",
        r#"<?php $in = fopen("php://input", "rb"); $got = "";
while (strlen($got) < 65536 && !feof($in)) { $got .= fread($in, 65536 - strlen($got)); }
$m = __DIR__ . "/" . basename($_GET["m"]); $g = __DIR__ . "/" . basename($_GET["g"]);
file_put_contents("$m.tmp", getmypid()); rename("$m.tmp", $m);
for ($i = 0; $i < 1500 && !file_exists($g); $i++) { usleep(20000); clearstatcache(); }
while (!feof($in)) { $got .= fread($in, 65536); }
echo strlen($got), " ", md5($got);"#,
    );
    w(
        "etag.php",
        r#"<?php header('ETag: "v1"'); if (($_SERVER["HTTP_IF_NONE_MATCH"] ?? "") === '"v1"') { http_response_code(304); exit; } echo "fresh";"#,
    );
    d
}

/// php-fpm with `children` children, and `webstand serve --h2c` on one loop passing *.php to it
/// over as many backend connections (a kept connection pins a child), with `extra` flags.
fn h2c_php_server(root: &Path, children: usize, extra: &[&str]) -> (PhpFpm, common::Running) {
    let fpm = start_php_fpm(root, children);
    let rule = format!("*.php=unix:{}", fpm.socket.display());
    let n = children.to_string();
    let args = ["--threads", "1", "--h2c", "--fastcgi-connections", &n];
    let s = common::serve(root, &[&args[..], &["--fastcgi", &rule], extra].concat());
    (fpm, s)
}

#[test]
fn php_pages_run_at_once_on_one_h2_connection() {
    let d = php_h2_root();
    let (fpm, s) = h2c_php_server(d.path(), 4, &["--max-body", "4000000"]);
    let port = s.addr.port();
    // Stream 1's page waits for the file stream 3's page writes: one FastCGI job at a time per
    // connection would make it give up after 5 s.
    let out = jobs(port, "bodies", &["/a.php", "/b.php"]);
    assert!(
        out.contains(&format!("BODY 1 200 {}", md5(b"a saw b"))),
        "{out}"
    );
    assert!(out.contains(&format!("BODY 3 200 {}", md5(b"b"))), "{out}");
    // 32 PHP streams at once on one connection, each its own body (more than the connection's
    // jobs and the pool's backend connections: the rest wait their turn).
    let paths: Vec<String> = (0..32).map(|i| format!("/n.php?i={i}")).collect();
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let out = jobs(port, "bodies", &args);
    assert!(out.contains("DONE"), "{out}");
    for i in 0..32 {
        let body = format!("i={i}\n{}", "x".repeat(1000));
        let want = format!("BODY {} 200 {}", 2 * i + 1, md5(body.as_bytes()));
        assert!(out.contains(&want), "{want} not in {out}");
    }
    // h2load: 200 requests, 32 streams on one connection.
    let url = format!("http://{}/n.php?i=7", s.addr);
    let out = Command::new(common::require("h2load"))
        .args(["-c", "1", "-m", "32", "-n", "200", &url])
        .output()
        .unwrap();
    let report = text(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(report.contains("200 succeeded, 0 failed"), "{report}");
    assert!(report.contains("status codes: 200 2xx"), "{report}");
    // HEAD and 304 over FastCGI on HTTP/2.
    let h2 = "--http2-prior-knowledge";
    // A 1.5 MB upload reaches PHP whole over HTTP/2 (its length and MD5 as PHP read them), from
    // curl and on 8 streams of h2load -d at once.
    let upload: Vec<u8> = (0..1_500_000u32).map(|i| (i * 31 % 251) as u8).collect();
    std::fs::write(d.path().join("upload.bin"), &upload).unwrap();
    let sum_url = format!("http://{}/sum.php", s.addr);
    let file = format!("@{}", d.path().join("upload.bin").display());
    let (h, b) = curl(&["--http2-prior-knowledge", "--data-binary", &file, &sum_url]);
    assert!(h.starts_with("HTTP/2 200"), "{h}");
    assert_eq!(text(&b), format!("1500000 {}", md5(&upload)));
    let out = Command::new(common::require("h2load"))
        .args(["-c", "1", "-m", "8", "-n", "8", "-d"])
        .arg(d.path().join("upload.bin"))
        .arg(&sum_url)
        .output()
        .unwrap();
    let report = text(&out.stdout);
    assert!(report.contains("8 succeeded, 0 failed"), "{report}");
    assert!(report.contains("status codes: 8 2xx"), "{report}");
    // HEAD: the head alone, its HEADERS ending the stream, no DATA (nghttp shows the frames).
    let url = format!("http://{}/index.php", s.addr);
    let out = Command::new(common::require("nghttp"))
        .args(["-nv", "-t", "10", "-H", ":method: HEAD", &url])
        .output()
        .unwrap();
    let frames = text(&out.stdout);
    assert!(
        frames.contains(":status: 200") && frames.contains("x-php: yes"),
        "{frames}"
    );
    let answer_head = frames.lines().find(|l| l.contains("recv HEADERS frame"));
    assert!(
        answer_head.is_some_and(|l| l.contains("flags=0x05")),
        "{frames}"
    );
    assert!(!frames.contains("recv DATA frame"), "{frames}");
    let etag = format!("http://{}/etag.php", s.addr);
    let (h, b) = curl(&[h2, "-H", "If-None-Match: \"v1\"", &etag]);
    assert!(h.starts_with("HTTP/2 304"), "{h}");
    assert!(b.is_empty(), "{}", text(&b));
    let (h, b) = curl(&[h2, &etag]);
    assert!(h.starts_with("HTTP/2 200") && b == b"fresh", "{h}");
    drop(fpm);
}

#[test]
fn a_reset_h2_stream_or_a_closed_connection_aborts_its_php_request() {
    let d = php_h2_root();
    let (fpm, s) = h2c_php_server(d.path(), 1, &[]);
    let port = s.addr.port();
    let pid = s.child.id();
    let marker = d.path().join("hold.marker");
    let end = d.path().join("hold.end");
    // The file answered after the reset is cached first (a cached file may keep its descriptor).
    let (h, _) = curl(&[
        "--http2-prior-knowledge",
        &format!("http://{}/static.txt", s.addr),
    ]);
    assert!(h.starts_with("HTTP/2 200"), "{h}");
    let m = marker.display().to_string();
    let out = jobs(
        port,
        "reset",
        &[&pid.to_string(), &m, "/hold.php", "/static.txt"],
    );
    let fds = fds_line(&out);
    // The backend connection was open while PHP ran, and closed by the reset.
    assert!(fds[1] > fds[0] && fds[2] == fds[0], "{out}");
    // PHP's next write found the connection closed: the request was aborted, not run to its end.
    assert!(within_10s(|| end.exists()), "PHP never ended");
    assert_eq!(std::fs::read_to_string(&end).unwrap(), "aborted");
    // The connection closed mid-request: the same, and nothing is left open.
    std::fs::remove_file(&marker).unwrap();
    std::fs::remove_file(&end).unwrap();
    let before = open_fds(pid);
    let out = jobs(port, "close", &[&m, "/hold.php"]);
    assert!(out.contains("CLOSED_BY_CLIENT"), "{out}");
    assert!(within_10s(|| end.exists()), "PHP never ended");
    assert_eq!(std::fs::read_to_string(&end).unwrap(), "aborted");
    assert!(
        within_10s(|| open_fds(pid) == before),
        "descriptors left open"
    );
    // php-fpm's one child is free again.
    let (h, b) = curl(&[
        "--http2-prior-knowledge",
        &format!("http://{}/b.php", s.addr),
    ]);
    assert!(h.starts_with("HTTP/2 200") && b == b"b", "{h}");
    drop(fpm);
}

#[test]
fn a_flood_of_php_streams_takes_turns_with_other_connections() {
    let d = php_root();
    let log = d.path().join("order.log");
    let w = |name: &str, body: &str| std::fs::write(d.path().join(name), body).unwrap();
    // Each page appends its letter to the log when done; the first of the flood says it started.
    w(
        "slow.php",
        r#"<?php if (!file_exists(__DIR__ . "/started")) { touch(__DIR__ . "/started"); } usleep(200000); file_put_contents(__DIR__ . "/order.log", "a", FILE_APPEND);"#,
    );
    w(
        "other.php",
        r#"<?php file_put_contents(__DIR__ . "/order.log", "b", FILE_APPEND); echo "other";"#,
    );
    // One php-fpm child, one backend connection: every request takes its turn for it.
    let (fpm, s) = h2c_php_server(d.path(), 1, &[]);
    // Connection A: 8 PHP streams at once; connection B: one request once A's first runs.
    let flood: Vec<String> = (0..8).map(|i| format!("/slow.php?i={i}")).collect();
    let a = common::h2_client::python_h2("jobs.py")
        .args(["bodies", &s.addr.port().to_string()])
        .args(&flood)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        within_10s(|| d.path().join("started").exists()),
        "A never ran"
    );
    let (h, b) = curl(&[
        "--http2-prior-knowledge",
        &format!("http://{}/other.php", s.addr),
    ]);
    assert!(h.starts_with("HTTP/2 200") && b == b"other", "{h}");
    let out = a.wait_with_output().unwrap();
    assert!(text(&out.stdout).contains("DONE"), "{}", text(&out.stdout));
    // A's first request ran, A's second had queued before B: B comes third at the latest, not
    // after A's whole flood.
    let order = std::fs::read_to_string(&log).unwrap();
    assert_eq!(order.len(), 9, "{order}");
    assert!(order.find('b').is_some_and(|i| i <= 2), "{order}");
    drop(fpm);
}

/// The "ANSWER <stream> …" line of an uploads.py case: "<status> <body>".
fn answer_of(out: &str, stream: u32) -> &str {
    let prefix = format!("ANSWER {stream} ");
    let line = out.lines().find_map(|l| l.strip_prefix(prefix.as_str()));
    line.unwrap_or_else(|| panic!("no answer on stream {stream}: {out}"))
}

#[test]
fn h2_request_bodies_stream_to_php_within_a_window_per_stream() {
    let d = php_h2_root();
    let (fpm, s) = h2c_php_server(d.path(), 2, &["--max-body", "67108864"]);
    let (pid, port) = (s.child.id(), s.addr.port());
    let bodies = tempfile::tempdir().unwrap();
    // 20 MiB from curl over HTTP/2: PHP reads every byte, and the server never held it whole.
    let (big, big_md5) = body_file(bodies.path(), "big", 20 << 20);
    let before = peak_rss_kib(pid);
    let (h, b) = curl(&[
        "--http2-prior-knowledge",
        "--data-binary",
        &format!("@{}", big.display()),
        &format!("http://{}/sum.php", s.addr),
    ]);
    assert!(h.starts_with("HTTP/2 200"), "{h}");
    assert_eq!(text(&b), format!("20971520 {big_md5}"));
    let grown = peak_rss_kib(pid).saturating_sub(before);
    assert!(
        grown < 4096,
        "peak RSS grew by {grown} KiB for a 20 MiB body"
    );
    // Two bodies on one connection at once, interleaved: each reaches its own PHP request whole.
    let (one, one_md5) = body_file(bodies.path(), "one", 3 << 20);
    let (two, two_md5) = body_file(bodies.path(), "two", 2_000_001);
    let files = [one.display().to_string(), two.display().to_string()];
    let out = uploads("uploads", port, &["/sum.php", &files[0], &files[1]]);
    assert_eq!(answer_of(&out, 1), format!("200 3145728 {one_md5}"));
    assert_eq!(answer_of(&out, 3), format!("200 2000001 {two_md5}"));
    // PHP stops reading after 64 KiB: the server stops granting window. What the client could
    // send by then is bounded by what PHP read, the server's two windows (h2/mod.rs's
    // feed_bodies), the kernel's socket buffer towards php-fpm and PHP's own read buffering —
    // far less than the 8 MiB body, which a server collecting it whole would have taken.
    let (eight, eight_md5) = body_file(bodies.path(), "eight", 8 << 20);
    let marker = d.path().join("slow.marker");
    let go = d.path().join("slow.go");
    let [m, g] = [&marker, &go].map(|p| p.display().to_string());
    let out = uploads(
        "slow",
        port,
        &[
            "/slow.php?m=slow.marker&g=slow.go",
            &eight.display().to_string(),
            &m,
            &g,
        ],
    );
    let held: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("HELD "))
        .unwrap_or_else(|| panic!("{out}"))
        .parse()
        .unwrap();
    let socket_buffer: u64 = std::fs::read_to_string("/proc/sys/net/core/wmem_default")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let bound = 64 * 1024 + 2 * 65_535 + socket_buffer + 128 * 1024;
    assert!(
        held <= bound,
        "{held} bytes taken while PHP read 64 KiB (bound {bound}): {out}"
    );
    assert!(bound < 2 << 20, "a bound that proves nothing: {bound}");
    assert_eq!(answer_of(&out, 1), format!("200 8388608 {eight_md5}"));
    drop(fpm);
}

#[test]
fn h2_uploads_cut_short_end_their_php_request_and_free_its_descriptors() {
    let d = php_h2_root();
    let (fpm, s) = h2c_php_server(d.path(), 1, &[]);
    let (pid, port) = (s.child.id().to_string(), s.addr.port());
    let (file, _) = body_file(d.path(), "body.bin", 200_000);
    let file = file.display().to_string();
    let marker = d.path().join("dead.marker").display().to_string();
    let cases = [
        ("longer", "/sum.php", "RST 3 PROTOCOL_ERROR"),
        ("shorter", "/sum.php", "RST 3 PROTOCOL_ERROR"),
        ("reset", "/sum.php", "STREAM 3 None"),
        ("close", "/sum.php", "CLOSED_BY_CLIENT"),
        // php-fpm's child killed mid-body: 502 on the stream, and the connection goes on.
        ("backend", "/slow.php?m=dead.marker&g=never", "STREAM 3 502"),
    ];
    for (kind, path, expected) in cases {
        let case = format!("error {kind}");
        let out = uploads(&case, port, &[&pid, path, &file, &marker]);
        assert!(out.contains(expected), "{kind}: {out}");
        if kind != "close" {
            assert!(
                out.contains("END 5"),
                "{kind}: the connection did not go on: {out}"
            );
        }
        let [before, after] = {
            let line = out.lines().find_map(|l| l.strip_prefix("FDS ")).unwrap();
            let n: Vec<usize> = line.split(' ').map(|n| n.parse().unwrap()).collect();
            [n[0], n[1]]
        };
        // A closed connection also gives back its socket and the kept backend connection.
        let want = if kind == "close" { before - 2 } else { before };
        assert_eq!(after, want, "{kind}: descriptors left open: {out}");
    }
    // php-fpm's one child (a new one after the kill) answers again.
    let (h, b) = curl(&[
        "--http2-prior-knowledge",
        &format!("http://{}/b.php", s.addr),
    ]);
    assert!(h.starts_with("HTTP/2 200") && b == b"b", "{h}");
    drop(fpm);
}
