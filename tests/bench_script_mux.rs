//! `bench -s FILE` over HTTP/2 and HTTP/3: the script's requests reach the server as it wrote them
//! (method, path, header fields, body: `webstand serve`'s CGI program records what it was given;
//! nginx's access log over h2), `response()` gets each response's status, fields and body, and
//! `delay()` and `thread:stop()` pace and end the run as they do over HTTP/1.1.

use crate::common;
use common::h2;
use common::h3::{certificate, H3Server};
use common::nginx::access_lines;
use common::{run_with_timeout, scratch, stderr, stdout};
use std::path::{Path, PathBuf};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// A CGI program that appends what it was given (protocol, method, URI, the X-Token field, the
/// body) to DIR/seen.log, and answers `ok` with an `X-Seen` field.
const SEEN: &str = "#!/bin/sh\nbody=$(cat)\n\
    printf '%s %s %s token=%s body=%s\\n' \"$SERVER_PROTOCOL\" \"$REQUEST_METHOD\" \
    \"$REQUEST_URI\" \"$HTTP_X_TOKEN\" \"$body\" >> \"$DOCUMENT_ROOT/../seen.log\"\n\
    printf 'Content-Type: text/plain\\r\\nX-Seen: yes\\r\\n\\r\\nok'\n";

/// `webstand serve` over TLS (h2 by ALPN) and QUIC in a directory of its own, with the CGI
/// program [`SEEN`] at /cgi-bin/seen and a small file at /x.txt.
fn server(name: &str) -> (H3Server, PathBuf) {
    let dir = scratch().join(name);
    let doc = dir.join("doc");
    std::fs::create_dir_all(doc.join("cgi-bin")).unwrap();
    std::fs::write(doc.join("x.txt"), "hello").unwrap();
    let seen = doc.join("cgi-bin/seen");
    std::fs::write(&seen, SEEN).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&seen, std::fs::Permissions::from_mode(0o755)).unwrap();
    certificate(&dir);
    let srv = H3Server::start(&dir, &doc, &["--cgi", "/cgi-bin/*"]);
    (srv, dir)
}

fn script(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// `webstand bench ARGS` to completion: its stdout (the run must succeed).
fn bench(args: &[&str]) -> String {
    let db = scratch().join("bench_script_mux.db");
    let mut all = vec!["bench", "--db", db.to_str().unwrap()];
    all.extend(args);
    let out = run_with_timeout(&all, LIMIT);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}\n{}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// Each call a new POST with its own path, field and body; each response checked (its field name
/// in HTTP/2's and HTTP/3's lower case); done() counts the good ones across threads.
const REQUESTS: &str = r#"
local threads = {}
function setup(thread) table.insert(threads, thread) end
local n = 0
good = 0
function request()
  n = n + 1
  return wrk.format("POST", "/cgi-bin/seen?n=" .. n, { ["X-Token"] = "t" .. n }, "body" .. n)
end
function response(status, headers, body)
  if status == 200 and headers["x-seen"] == "yes" and body == "ok" then good = good + 1 end
end
function done(summary)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("good") end
  print("good " .. total .. " of " .. summary.requests)
end
"#;

#[test]
fn request_and_response_run_over_h2_and_h3() {
    let (srv, dir) = server("script-mux");
    let file = script(&dir, "requests.lua", REQUESTS);
    let seen = dir.join("seen.log");
    for (proto, addr, label) in [
        ("--h2", srv.tls, "HTTP/2.0"),
        ("--h3", srv.quic, "HTTP/3.0"),
    ] {
        let _ = std::fs::remove_file(&seen);
        let url = format!("https://{addr}/");
        let args = [
            proto,
            "-c",
            "2",
            "--threads",
            "2",
            "-n",
            "12",
            "-s",
            &file,
            &url,
        ];
        let out = bench(&args);
        assert!(out.contains("good 12 of 12"), "{proto}: {out}");
        let text = std::fs::read_to_string(&seen).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 12, "{proto}: {text}");
        let mut ns: Vec<u32> = Vec::new();
        for l in &lines {
            // "HTTP/2.0 POST /cgi-bin/seen?n=K token=tK body=bodyK": the script's call K, whole.
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!((f[0], f[1]), (label, "POST"), "{l}");
            let n = f[2].strip_prefix("/cgi-bin/seen?n=").expect(l);
            assert_eq!(f[3], format!("token=t{n}"), "{l}");
            assert_eq!(f[4], format!("body=body{n}"), "{l}");
            ns.push(n.parse().unwrap());
        }
        // Two threads, six requests each; each thread's first call was made before the run (as
        // wrk does, to count the requests one call returns), so each sent calls 2 to 7.
        ns.sort();
        let want: Vec<u32> = (2..=7).flat_map(|n| [n, n]).collect();
        assert_eq!(ns, want, "{proto}");
    }
}

#[test]
fn wrk_fields_alone_and_a_counter_reach_nginx_over_h2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    h2::certificate(dir.path());
    let server = format!(
        "access_log {d}/access.log tests; ssl_certificate {d}/cert.pem; ssl_certificate_key {d}/key.pem;"
    );
    let ngx = common::start_nginx_in(dir, "ssl http2", &server);
    let log = PathBuf::from(ngx.path("access.log"));
    let scripts = scratch().join("script-mux-nginx");
    std::fs::create_dir_all(&scripts).unwrap();
    let url = format!("https://127.0.0.1:{}/page.html", ngx.port);
    // wrk.* only: one request, built once, as set.
    let fixed = script(
        &scripts,
        "fixed.lua",
        "wrk.method = \"HEAD\"\nwrk.path = \"/page.html?from=script\"\n",
    );
    bench(&["--h2", "-c", "1", "-n", "20", "-s", &fixed, &url]);
    let lines = access_lines(&log, 0, 20);
    assert_eq!(lines.len(), 20);
    for l in &lines {
        assert_eq!(
            (l.method.as_str(), l.uri.as_str()),
            ("HEAD", "/page.html?from=script")
        );
    }
    // request(): one stream at a time (-m 1), so the server sees the calls in order.
    let counter = script(
        &scripts,
        "counter.lua",
        "local n = 0\nfunction request()\n  n = n + 1\n  \
         return wrk.format(nil, \"/page.html?n=\" .. n)\nend\n",
    );
    bench(&[
        "--h2", "-m", "1", "-c", "1", "-n", "15", "-s", &counter, &url,
    ]);
    let lines = access_lines(&log, 20, 15);
    let uris: Vec<&str> = lines.iter().map(|l| l.uri.as_str()).collect();
    let want: Vec<String> = (2..=16).map(|n| format!("/page.html?n={n}")).collect();
    assert_eq!(uris, want);
    assert!(lines.iter().all(|l| l.method == "GET"));
}

#[test]
fn a_request_nginx_did_not_take_before_its_goaway_goes_again_as_request_built_it() {
    // nginx ends each connection after 3 requests (keepalive_requests) with a GOAWAY; with 8
    // streams in flight, the ones above its last stream are sent again on a new connection, as
    // request() built them: every count reaches nginx once, none is skipped or sent twice.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    h2::certificate(dir.path());
    let server = format!(
        "access_log {d}/access.log tests; keepalive_requests 3; \
         ssl_certificate {d}/cert.pem; ssl_certificate_key {d}/key.pem;"
    );
    let ngx = common::start_nginx_in(dir, "ssl http2", &server);
    let log = PathBuf::from(ngx.path("access.log"));
    let scripts = scratch().join("script-mux-goaway");
    std::fs::create_dir_all(&scripts).unwrap();
    let counter = script(
        &scripts,
        "counter.lua",
        "local n = 0\nfunction request()\n  n = n + 1\n  \
         return wrk.format(nil, \"/page.html?n=\" .. n)\nend\n",
    );
    let url = format!("https://127.0.0.1:{}/page.html", ngx.port);
    let out = bench(&[
        "--h2", "-m", "8", "-c", "1", "-n", "30", "--json", "-s", &counter, &url,
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["complete"], 30, "{v}");
    assert!(v["h2"]["goaways_received"].as_u64().unwrap() >= 9, "{v}");
    let mut counts: Vec<u64> = access_lines(&log, 0, 30)
        .iter()
        .map(|l| l.uri.rsplit('=').next().unwrap().parse().unwrap())
        .collect();
    counts.sort_unstable();
    let first = counts[0];
    let want: Vec<u64> = (first..first + 30).collect();
    assert_eq!(counts, want, "each count once, none skipped");
}

#[test]
fn stop_and_delay_pace_h2_and_h3_runs() {
    let (srv, dir) = server("script-mux-pace");
    let stop = script(
        &dir,
        "stop.lua",
        "local n = 0\nfunction response()\n  n = n + 1\n  \
         if n == 5 then wrk.thread:stop() end\nend\n",
    );
    let delay = script(
        &dir,
        "delay.lua",
        "function delay() return 100 end\n\
         function done(summary) print(\"took \" .. summary.duration .. \" for \" .. summary.requests) end\n",
    );
    let mut logged = 0;
    for (proto, addr) in [("--h2", srv.tls), ("--h3", srv.quic)] {
        let url = format!("https://{addr}/x.txt");
        // thread:stop() after the fifth response: a 30 s run ends at once, five requests sent.
        let started = std::time::Instant::now();
        bench(&[proto, "-m", "1", "-c", "1", "-d", "30s", "-s", &stop, &url]);
        assert!(started.elapsed() < Duration::from_secs(15), "{proto}");
        logged += 5;
        let lines = srv.log_lines(logged);
        assert_eq!(lines.len(), logged, "{proto}: {lines:#?}");
        // delay() of 100 ms before each of five requests on one connection: at least 400 ms.
        let out = bench(&[proto, "-c", "1", "-n", "5", "-s", &delay, &url]);
        let took = out
            .lines()
            .find_map(|l| l.strip_prefix("took "))
            .expect(&out);
        let (us, n) = took.split_once(" for ").unwrap();
        assert_eq!(n, "5", "{proto}: {out}");
        let us: f64 = us.parse().unwrap();
        assert!(
            us >= 400_000.0,
            "{proto}: {us} µs for five delayed requests"
        );
        logged += 5;
    }
}
