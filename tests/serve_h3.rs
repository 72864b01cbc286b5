//! `webstand serve --listen-quic` as an independent HTTP/3 client sees it: aioquic's (PyPI, pinned
//! by scripts/install-deps.sh; tests/h3/client.py), all requests of a case at once on one QUIC
//! connection. Files (bodies equal the files by md5; a 1 MiB and a 16 MiB one at once by sha256,
//! many times every flow-control window), HEAD, ranges, both conditional GETs, 404 and 405 answer
//! as over HTTP/1 and HTTP/2, and the access log names each request "HTTP/3.0" with the
//! status and the bytes the client got; CGI sees SERVER_PROTOCOL HTTP/3.0 and HTTPS on, request
//! bodies larger than a stream's flow-control window reach it whole, a body past --max-body is 413;
//! PHP through php-fpm (FastCGI) answers GET and POST; HTTPS answers (HTTP/1.1 and HTTP/2, curl)
//! carry Alt-Svc naming the QUIC port and plain ones do not; SIGTERM lets a running CGI answer
//! finish on its connection, which is then told GOAWAY, and the server exits 0. (curl here has no
//! HTTP/3: Debian's 7.88 is built without it.) Certificates are made at test time.

use crate::common;

use common::h3::H3Server;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The test's directory and its docroot (common::h3::docroot).
struct Site {
    dir: tempfile::TempDir,
}

impl Site {
    fn new() -> Site {
        let dir = tempfile::tempdir().unwrap();
        common::h3::docroot(dir.path());
        Site { dir }
    }

    fn doc(&self) -> PathBuf {
        self.dir.path().join("doc")
    }

    fn serve(&self, extra: &[&str]) -> H3Server {
        let mut args = vec!["--threads", "1", "--cgi", "/cgi-bin/*"];
        args.extend_from_slice(extra);
        H3Server::start(self.dir.path(), &self.doc(), &args)
    }
}

fn big() -> Vec<u8> {
    common::h3::big()
}

fn md5(bytes: &[u8]) -> String {
    let out = std::process::Command::new("md5sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(bytes)?;
            c.wait_with_output()
        })
        .unwrap();
    String::from_utf8_lossy(&out.stdout)[..32].to_string()
}

/// The answers of a fetch, in the order asked.
fn answers(v: &Value) -> &Vec<Value> {
    v["responses"].as_array().expect("responses")
}

/// Each request has its access log line saying its method, path, HTTP/3.0, the status and the
/// body bytes its answer carried (`lines`: the log's lines for these requests, in the order they
/// were answered, which for a job is when it ends).
fn assert_logged(lines: &[String], asked: &[Value], got: &[Value]) {
    assert_eq!(lines.len(), asked.len(), "{lines:#?}");
    let mut left: Vec<&String> = lines.iter().collect();
    for (req, answer) in asked.iter().zip(got) {
        let method = req["method"].as_str().unwrap_or("GET");
        let bytes = match method {
            "HEAD" => 0,
            _ => answer["length"].as_u64().unwrap(),
        };
        let expected = format!(
            "\"{method} {} HTTP/3.0\" {} {bytes}",
            req["path"].as_str().unwrap(),
            answer["status"]
        );
        let at = left.iter().position(|l| l.ends_with(&expected));
        let at = at.unwrap_or_else(|| panic!("no log line ends with {expected}: {lines:#?}"));
        left.remove(at);
    }
}

#[test]
fn files_ranges_conditionals_and_errors_answer_as_the_access_log_counts_them() {
    let site = Site::new();
    let server = site.serve(&[]);
    let first = server.fetch(&json!([{"path": "/2k.html"}]));
    assert_eq!(first["alpn"], "h3");
    let head = &answers(&first)[0]["headers"];
    let (etag, modified) = (
        head["etag"].as_str().unwrap(),
        head["last-modified"].as_str(),
    );
    let asked = json!([
        {"path": "/2k.html"},
        {"path": "/big.bin"},
        {"method": "HEAD", "path": "/2k.html"},
        {"path": "/2k.html", "headers": [["range", "bytes=0-9"]]},
        {"path": "/big.bin", "headers": [["range", "bytes=1000000-1000099"]]},
        {"path": "/2k.html", "headers": [["if-none-match", etag]]},
        {"path": "/2k.html", "headers": [["if-modified-since", modified.unwrap()]]},
        {"path": "/nope.html"},
        {"method": "DELETE", "path": "/2k.html"},
    ]);
    let got = server.fetch(&asked);
    let got = answers(&got);
    let status: Vec<u64> = got.iter().map(|a| a["status"].as_u64().unwrap()).collect();
    assert_eq!(status, [200, 200, 200, 206, 206, 304, 304, 404, 405]);
    assert_eq!(got[0]["md5"], md5("a".repeat(2048).as_bytes()));
    assert_eq!(got[1]["md5"], md5(&big()));
    assert_eq!(got[1]["length"], 3_000_000);
    assert_eq!(got[2]["length"], 0);
    assert_eq!(got[2]["headers"]["content-length"], "2048");
    assert_eq!(got[3]["body"], "aaaaaaaaaa");
    assert_eq!(got[3]["headers"]["content-range"], "bytes 0-9/2048");
    assert_eq!(got[4]["md5"], md5(&big()[1_000_000..1_000_100]));
    assert_eq!(
        (got[5]["length"].as_u64(), got[6]["length"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(got[0]["headers"]["server"], "webstand");
    let lines = server.log_lines(1 + got.len());
    assert_logged(&lines[1..], asked.as_array().unwrap(), got);
}

/// FILE's sha256, by coreutils' sha256sum.
fn sha256(file: &std::path::Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg(file)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)[..64].to_string()
}

#[test]
fn large_files_reach_aioquic_whole_with_ranges_and_conditionals() {
    let site = Site::new();
    let (one, sixteen) = (site.doc().join("1m.bin"), site.doc().join("16m.bin"));
    std::fs::write(&one, common::h3::pattern(1 << 20)).unwrap();
    let big = common::h3::pattern(16 << 20);
    std::fs::write(&sixteen, &big).unwrap();
    let server = site.serve(&[]);
    let head = server.fetch(&json!([{"method": "HEAD", "path": "/16m.bin"}]));
    let etag = answers(&head)[0]["headers"]["etag"].clone();
    // Both files at once on one connection: each many times the windows either side grants
    // (aioquic's 1 MiB per stream and connection; our send window).
    let asked = json!([
        {"path": "/1m.bin"},
        {"path": "/16m.bin"},
        {"path": "/16m.bin", "headers": [["range", "bytes=15000000-"]]},
        {"path": "/16m.bin", "headers": [["if-none-match", etag]]},
    ]);
    let got = server.fetch(&asked);
    let got = answers(&got);
    let status: Vec<u64> = got.iter().map(|a| a["status"].as_u64().unwrap()).collect();
    assert_eq!(status, [200, 200, 206, 304]);
    assert_eq!(got[0]["length"], 1 << 20);
    assert_eq!(got[0]["sha256"], sha256(&one));
    assert_eq!(got[1]["length"], 16 << 20);
    assert_eq!(got[1]["sha256"], sha256(&sixteen));
    let tail = &big[15_000_000..];
    assert_eq!(got[2]["length"], tail.len());
    assert_eq!(got[2]["md5"], md5(tail));
    assert_eq!(
        got[2]["headers"]["content-range"],
        format!("bytes 15000000-{}/{}", big.len() - 1, big.len())
    );
    assert_eq!(got[3]["length"], 0);
    assert_logged(&server.log_lines(5)[1..], asked.as_array().unwrap(), got);
}

#[test]
fn cgi_sees_http3_and_request_bodies_arrive_whole_within_the_limit() {
    let site = Site::new();
    let server = site.serve(&[]);
    let asked = json!([
        {"path": "/cgi-bin/env?a=b"},
        {"method": "POST", "path": "/cgi-bin/len", "body_size": 300_000},
        {"method": "POST", "path": "/cgi-bin/len", "body_size": 1_100_000},
    ]);
    let got = server.fetch(&asked);
    let got = answers(&got);
    assert_eq!(got[0]["status"], 200);
    assert_eq!(got[0]["body"], "HTTP/3.0 GET a=b on\n");
    assert_eq!(got[1]["status"], 200);
    assert_eq!(got[1]["body"], "300000\n");
    assert_eq!(got[2]["status"], 413, "{:?}", got[2]);
    assert_logged(&server.log_lines(3), asked.as_array().unwrap(), got);
}

#[test]
fn php_answers_get_and_post_through_fastcgi() {
    let site = Site::new();
    let fpm = common::php_fpm::start_php_fpm(site.dir.path(), 2);
    std::fs::write(
        site.doc().join("echo.php"),
        r#"<?php echo $_SERVER["REQUEST_METHOD"], " https=", $_SERVER["HTTPS"] ?? "off", " q=", $_SERVER["QUERY_STRING"], " body=", file_get_contents("php://input");"#,
    )
    .unwrap();
    let rule = format!("**.php=unix:{}", fpm.socket.display());
    let server = site.serve(&["--fastcgi", &rule]);
    let asked = json!([
        {"path": "/echo.php?x=1"},
        {"method": "POST", "path": "/echo.php", "body": "hello=world",
         "headers": [["content-type", "application/x-www-form-urlencoded"]]},
    ]);
    let got = server.fetch(&asked);
    let got = answers(&got);
    assert_eq!(got[0]["status"], 200);
    assert_eq!(got[0]["body"], "GET https=on q=x=1 body=");
    assert_eq!(got[1]["body"], "POST https=on q= body=hello=world");
    assert_logged(&server.log_lines(2), asked.as_array().unwrap(), got);
}

/// curl's header block for `url` with `flags`.
fn curl_head(flags: &[&str], url: &str) -> String {
    let curl = common::require("curl");
    let out = common::output_within(
        std::process::Command::new(curl)
            .args(["-sk", "-D", "-", "-o", "/dev/null"])
            .args(flags)
            .arg(url),
        Duration::from_secs(20),
    );
    String::from_utf8_lossy(&out.stdout).to_ascii_lowercase()
}

#[test]
fn https_answers_advertise_http3_and_plain_ones_do_not() {
    let site = Site::new();
    let server = site.serve(&[]);
    let expected = format!("alt-svc: h3=\":{}\"; ma=86400", server.quic.port());
    let https = format!("https://{}/2k.html", server.tls);
    for flags in [&["--http1.1"][..], &["--http2"][..]] {
        let head = curl_head(flags, &https);
        assert!(head.contains(&expected), "{flags:?}: {head}");
    }
    let plain = curl_head(&[], &format!("http://{}/2k.html", server.plain));
    assert!(
        plain.starts_with("http/1.1 200") && !plain.contains("alt-svc"),
        "{plain}"
    );
}

#[test]
fn sigterm_lets_a_running_answer_finish_then_says_goaway_and_exits() {
    let site = Site::new();
    let mut server = site.serve(&[]);
    let flag = site.dir.path().join("slow.flag");
    let probe = server.client();
    let client = std::thread::spawn(move || probe.fetch(&json!([{"path": "/cgi-bin/slow"}])));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !flag.exists() {
        assert!(Instant::now() < deadline, "the CGI program never ran");
        std::thread::sleep(Duration::from_millis(10));
    }
    common::send_signal(server.child.id(), libc::SIGTERM);
    let got = client.join().unwrap();
    assert_eq!(answers(&got)[0]["status"], 200, "{got}");
    assert_eq!(answers(&got)[0]["body"], "slow\n");
    assert_eq!(
        got["goaway"], 4,
        "GOAWAY names the first stream not taken: {got}"
    );
    let status = common::exit_within(&mut server.child, Duration::from_secs(10));
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    assert!(!server.alive());
}
