//! `bench -s FILE`: wrk's example scripts (written here from wrk's documented behaviour) run
//! unchanged under webstand and under wrk 4.1 against an in-test server that records what it saw;
//! the server's views agree, and done()'s figures agree with webstand's own. Bad scripts fail in
//! one line with the file and line.

use crate::common;
use common::recording_server::{RecordingServer, Seen};
use common::{require, run_with_timeout, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn script(name: &str, text: &str) -> PathBuf {
    let dir = common::scratch().join("scripts");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// webstand's run of `file` for one second on one connection: what the server saw, and stdout.
fn ours(file: &Path, conns: &str, args: &[&str]) -> (Vec<Seen>, String) {
    let srv = RecordingServer::start();
    let url = srv.url("/start");
    let f = file.to_str().unwrap();
    let mut a = vec![
        "bench",
        "-k",
        "-c",
        conns,
        "--threads",
        conns,
        "-d",
        "1s",
        "-q",
        "-s",
        f,
    ];
    a.push(&url);
    if !args.is_empty() {
        a.push("--");
        a.extend_from_slice(args);
    }
    let out = run_with_timeout(&a, LIMIT);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    (srv.take(), stdout(&out))
}

/// wrk 4.1's run of the same script, the same way.
fn wrks(file: &Path, args: &[&str]) -> (Vec<Seen>, String) {
    let srv = RecordingServer::start();
    let mut c = Command::new(require("wrk"));
    c.args(["-t1", "-c1", "-d1s", "-s", file.to_str().unwrap()]);
    c.arg(srv.url("/start"));
    if !args.is_empty() {
        c.arg("--").args(args);
    }
    let out = common::output_within(&mut c, LIMIT);
    assert!(out.status.success(), "{}", stderr(&out));
    (srv.take(), stdout(&out))
}

/// What every request of a run looked like, ignoring order and count.
fn shapes(seen: &[Seen]) -> std::collections::BTreeSet<String> {
    seen.iter()
        .map(|s| {
            let h: Vec<_> = s.headers.iter().filter(|(n, _)| *n != "host").collect();
            format!(
                "{} {} {h:?} {:?}",
                s.method,
                s.path,
                String::from_utf8_lossy(&s.body)
            )
        })
        .collect()
}

#[test]
fn post_and_auth_send_what_wrk_sends() {
    let post = script(
        "post.lua",
        "wrk.method = \"POST\"\nwrk.body = \"foo=bar&baz=quux\"\n\
         wrk.headers[\"Content-Type\"] = \"application/x-www-form-urlencoded\"\n",
    );
    let auth = script(
        "auth.lua",
        "wrk.headers[\"Authorization\"] = \"Basic dXNlcjpzZWNyZXQ=\"\n",
    );
    for file in [post, auth] {
        let (a, _) = ours(&file, "1", &[]);
        let (b, _) = wrks(&file, &[]);
        assert!(a.len() > 10 && b.len() > 10, "{} {}", a.len(), b.len());
        assert_eq!(shapes(&a), shapes(&b), "{}", file.display());
        assert_eq!(shapes(&a).len(), 1, "one request, built once");
        let host = |s: &Seen| s.headers["host"].starts_with("127.0.0.1:");
        assert!(a.iter().all(host) && b.iter().all(host));
    }
}

#[test]
fn counter_paths_follow_request_calls_in_order() {
    let file = script(
        "counter.lua",
        "counter = 0\nrequest = function()\n  path = \"/\" .. counter\n  \
         wrk.headers[\"X-Counter\"] = counter\n  counter = counter + 1\n  \
         return wrk.format(nil, path)\nend\n",
    );
    for (seen, tool) in [
        (ours(&file, "1", &[]).0, "webstand"),
        (wrks(&file, &[]).0, "wrk"),
    ] {
        assert!(seen.len() > 10, "{tool}");
        for (i, s) in seen.iter().enumerate() {
            // The first call counts the requests it returns (wrk's check before the run).
            assert_eq!(s.path, format!("/{}", i + 1), "{tool}");
            assert_eq!(s.headers["x-counter"], (i + 1).to_string(), "{tool}");
        }
    }
}

#[test]
fn pipeline_sends_three_requests_per_write() {
    let file = script(
        "pipeline.lua",
        "init = function(args)\n  local r = {}\n  r[1] = wrk.format(nil, \"/?foo\")\n  \
         r[2] = wrk.format(nil, \"/?bar\")\n  r[3] = wrk.format(nil, \"/?baz\")\n  \
         req = table.concat(r)\nend\nrequest = function()\n  return req\nend\n",
    );
    for (seen, tool) in [
        (ours(&file, "1", &[]).0, "webstand"),
        (wrks(&file, &[]).0, "wrk"),
    ] {
        assert!(seen.len() >= 30, "{tool}: {}", seen.len());
        for (i, s) in seen.iter().enumerate() {
            assert_eq!(s.path, ["/?foo", "/?bar", "/?baz"][i % 3], "{tool}");
            assert_eq!(s.batch, 3, "{tool}: all three in one write");
        }
    }
}

#[test]
fn init_gets_the_arguments_after_the_double_dash() {
    let file = script(
        "args.lua",
        "function init(args)\n  print(\"args: \" .. table.concat(args, \",\"))\n  \
         wrk.path = \"/\" .. args[1]\nend\n",
    );
    let (a, out) = ours(&file, "1", &["one", "two"]);
    let (b, wout) = wrks(&file, &["one", "two"]);
    assert!(
        out.contains("args: one,two") && wout.contains("args: one,two"),
        "{out}"
    );
    assert_eq!(shapes(&a), shapes(&b));
    assert!(a.iter().all(|s| s.path == "/one"));
}

#[test]
fn stop_ends_the_thread_after_its_hundredth_response() {
    let file = script(
        "stop.lua",
        "local counter = 1\nfunction response()\n  if counter == 100 then\n    \
         wrk.thread:stop()\n  end\n  counter = counter + 1\nend\n",
    );
    let (a, _) = ours(&file, "1", &[]);
    let (b, _) = wrks(&file, &[]);
    assert_eq!(a.len(), 100);
    assert_eq!(b.len(), 100);
}

#[test]
fn delay_spaces_the_requests() {
    let file = script("delay.lua", "function delay()\n  return 100\nend\n");
    for (seen, tool) in [
        (ours(&file, "1", &[]).0, "webstand"),
        (wrks(&file, &[]).0, "wrk"),
    ] {
        assert!((5..=11).contains(&seen.len()), "{tool}: {}", seen.len());
        for w in seen.windows(2) {
            let gap = w[1].at - w[0].at;
            assert!(gap >= Duration::from_millis(90), "{tool}: {gap:?}");
        }
    }
}

#[test]
fn response_sees_status_headers_and_body_and_done_agrees_with_the_report() {
    let file = script(
        "report.lua",
        "local seen = 0\nfunction response(status, headers, body)\n  \
         if status == 200 and headers[\"X-Seen\"] == \"yes\" and body == \"hello\" then\n    \
         seen = seen + 1\n  end\nend\n\
         function done(summary, latency, requests)\n  \
         print(string.format(\"done requests=%d bytes=%d errors=%d p99=%d max=%d min=%d\", \
         summary.requests, summary.bytes, summary.errors.status + summary.errors.connect, \
         latency:percentile(99), latency.max, latency.min))\nend\n",
    );
    let srv = RecordingServer::start();
    let f = file.to_str().unwrap();
    let url = srv.url("/");
    let out = run_with_timeout(
        &[
            "bench", "-k", "-c", "2", "-n", "500", "--json", "-s", f, &url,
        ],
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = common::json_stdout(&out);
    let printed = v["script_output"].as_str().unwrap();
    let expected = format!("done requests=500 bytes={} errors=0", v["total_bytes"]);
    assert!(printed.starts_with(&expected), "{printed}");
    assert_eq!(srv.take().len(), 500);
}

/// done()'s `requests` is wrk's: each thread's requests per second sampled every 100 ms, so with
/// two threads its mean is about half the run's rate (one value of the whole rate would be twice).
#[test]
fn done_gets_each_threads_sampled_request_rate() {
    let file = script(
        "rates.lua",
        "function done(summary, latency, requests)\n  \
         print(string.format(\"rates %d %d %d %f %d %d\", requests.min, requests:percentile(50), \
         requests.max, requests.mean, summary.requests, summary.duration))\nend\n",
    );
    let (_, out) = ours(&file, "2", &[]);
    let line = out.lines().find(|l| l.starts_with("rates ")).expect(&out);
    let f: Vec<f64> = line[6..].split(' ').map(|v| v.parse().unwrap()).collect();
    let [min, p50, max, mean, requests, duration_us] = f[..] else {
        panic!("{line}")
    };
    assert!(min > 0.0 && min <= p50 && p50 <= max, "{line}");
    assert!(min <= mean && mean <= max, "{line}");
    let per_thread = requests / (duration_us / 1e6) / 2.0;
    assert!(
        (mean - per_thread).abs() <= 0.4 * per_thread,
        "mean {mean}/s per thread, the run's rate per thread {per_thread}/s: {line}"
    );
}

#[test]
fn setup_threads_share_values_and_done_reads_them() {
    let file = script(
        "setup.lua",
        "local counter = 1\nlocal threads = {}\nfunction setup(thread)\n  \
         thread:set(\"id\", counter)\n  table.insert(threads, thread)\n  counter = counter + 1\nend\n\
         function init(args)\n  requests = 0\n  responses = 0\n  \
         print(string.format(\"thread %d created\", id))\nend\n\
         function request()\n  requests = requests + 1\n  return wrk.request()\nend\n\
         function response(status, headers, body)\n  responses = responses + 1\nend\n\
         function done(summary, latency, requests)\n  local total = 0\n  \
         for index, thread in ipairs(threads) do\n    total = total + thread:get(\"responses\")\n    \
         print(string.format(\"thread %d made %d requests and got %d responses\", \
         thread:get(\"id\"), thread:get(\"requests\"), thread:get(\"responses\")))\n  end\n  \
         print(\"total \" .. total .. \" of \" .. summary.requests)\nend\n",
    );
    let (seen, out) = ours(&file, "2", &[]);
    assert!(
        out.contains("thread 1 created") && out.contains("thread 2 created"),
        "{out}"
    );
    assert!(out.contains("thread 2 made "), "{out}");
    let line = out.lines().find(|l| l.starts_with("total ")).expect(&out);
    let (total, of) = line[6..].split_once(" of ").unwrap();
    assert_eq!(total, of, "{out}");
    assert!(seen.len() >= total.parse::<usize>().unwrap());
    let conns: std::collections::BTreeSet<_> = seen.iter().map(|s| s.conn).collect();
    assert_eq!(conns.len(), 2, "one connection per thread");
}

#[test]
fn addr_lookup_and_connect_reach_the_server() {
    let file = script(
        "addr.lua",
        "local addrs = nil\nfunction setup(thread)\n  if not addrs then\n    \
         addrs = wrk.lookup(wrk.host, wrk.port or \"http\")\n    \
         for i = #addrs, 1, -1 do\n      if not wrk.connect(addrs[i]) then\n        \
         table.remove(addrs, i)\n      end\n    end\n  end\n  \
         thread.addr = addrs[math.random(#addrs)]\nend\n\
         function init(args)\n  print(\"thread addr: \" .. tostring(wrk.thread.addr))\nend\n",
    );
    let (seen, out) = ours(&file, "1", &[]);
    let (_, wout) = wrks(&file, &[]);
    // Each run has a server of its own: the same line but for the port.
    let line = |o: &str| {
        o.lines().find_map(|l| {
            l.strip_prefix("thread addr: 127.0.0.1:")?
                .parse::<u16>()
                .ok()
        })
    };
    assert!(
        line(&out).is_some() && line(&wout).is_some(),
        "{out}\n{wout}"
    );
    assert!(!seen.is_empty());
}

/// A bad script's run: its exit status and its stderr.
fn fails(name: &str, text: &str, extra: &[&str]) -> (Option<i32>, String) {
    let file = script(name, text);
    let srv = RecordingServer::start();
    let url = srv.url("/");
    let mut a = vec!["bench", "-k", "-c", "1", "-d", "3s", "-q", "--script"];
    a.push(file.to_str().unwrap());
    a.extend_from_slice(extra);
    a.push(&url);
    let out = run_with_timeout(&a, Duration::from_secs(20));
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    (out.status.code(), err)
}

#[test]
fn script_errors_are_one_line_with_file_and_line() {
    let (code, err) = fails("syntax.lua", "function request(\n  return 1\n", &[]);
    assert_ne!(code, Some(0));
    assert!(err.contains("syntax.lua:2:"), "{err}");
    let (code, err) = fails(
        "runtime.lua",
        "function request()\n  local t = nil\n  return t.x\nend\n",
        &[],
    );
    assert_ne!(code, Some(0));
    assert!(
        err.contains("runtime.lua:3:") && err.contains("nil"),
        "{err}"
    );
    let (code, err) = fails(
        "wrongtype.lua",
        "\n\nfunction request()\n  return 42\nend\n",
        &[],
    );
    assert_ne!(code, Some(0));
    assert!(
        err.contains("wrongtype.lua:3") && err.contains("number"),
        "{err}"
    );
    let (code, err) = fails(
        "badresponse.lua",
        "function response(status)\n  error(\"no \" .. status)\nend\n",
        &[],
    );
    assert_ne!(code, Some(0));
    assert!(err.contains("badresponse.lua:2: no 200"), "{err}");
}

#[test]
fn a_callback_that_never_returns_is_stopped_by_the_timeout() {
    let started = std::time::Instant::now();
    let (code, err) = fails(
        "runaway.lua",
        "local n = 0\nfunction response()\n  n = n + 1\n  if n == 5 then\n    \
         while true do end\n  end\nend\n",
        &["-s", "1"],
    );
    assert_ne!(code, Some(0));
    assert!(
        err.contains("runaway.lua") && err.contains("did not return"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_script_runs_over_https_and_h2() {
    let dir = common::scratch().join("script-tls");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("x.txt"), "hello").unwrap();
    let key = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let (cert, pem) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, key.cert.pem()).unwrap();
    std::fs::write(&pem, key.key_pair.serialize_pem()).unwrap();
    let (_server, addr) = common::serve_tls(&dir, &cert, &pem, &[]);
    let file = script(
        "tls.lua",
        "local n = 0\nfunction request()\n  return wrk.format(\"GET\", \"/x.txt\")\nend\n\
         function response(status, headers, body)\n  if body == \"hello\" then n = n + 1 end\nend\n\
         function done(summary)\n  print(\"bodies \" .. summary.requests)\nend\n",
    );
    let url = format!("https://{addr}/x.txt");
    let f = file.to_str().unwrap();
    let out = run_with_timeout(
        &["bench", "-k", "-c", "2", "-n", "50", "-s", f, &url],
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("bodies 50"), "{}", stdout(&out));
    let out = run_with_timeout(
        &["bench", "--h2", "-c", "2", "-n", "50", "-s", f, &url],
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("bodies 50"), "{}", stdout(&out));
}
