//! `--metrics-listen ADDR`: while bench runs, a real Prometheus server (Debian's) scrapes the
//! endpoint and its query API returns the run's series; the exposition passes `promtool check
//! metrics` and is served with the text format's content type.

use crate::common;

use common::{find, free_port, raw_exchange, serve, wait_listening, webstand};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process stopped with SIGTERM (then killed) when dropped.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        common::send_signal(self.0.id(), libc::SIGTERM);
        if common::exit_within(&mut self.0, Duration::from_secs(10)).is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// GET `path` on `addr`: the response's head and body.
fn get(addr: SocketAddr, path: &str) -> (String, String) {
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let resp =
        String::from_utf8(raw_exchange(addr, req.as_bytes(), Duration::from_secs(5))).unwrap();
    let (head, body) = resp.split_once("\r\n\r\n").unwrap_or((&resp, ""));
    (head.to_string(), body.to_string())
}

/// Prometheus's instant query `q`: the value of each series it returns.
fn query(prom: SocketAddr, q: &str) -> Vec<f64> {
    let encoded: String = q
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let (_, body) = get(prom, &format!("/api/v1/query?query={encoded}"));
    // The body may be chunked: the JSON document is the part between the outer braces.
    let json = &body[body.find('{').unwrap_or(0)..=body.rfind('}').unwrap_or(0)];
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(v["status"], "success", "{body}");
    v["data"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["value"][1].as_str().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn prometheus_scrapes_the_run_in_progress() {
    let prometheus = find("prometheus").expect("prometheus (scripts/install-deps.sh installs it)");
    let promtool = find("promtool").expect("promtool (Debian's prometheus package)");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("1k.html"), [b'x'; 1024]).unwrap();
    let server = serve(dir.path(), &[]);
    let metrics: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let url = format!("http://{}/1k.html", server.addr);
    // Long enough for Prometheus to start and scrape a few times; bounded, it stops by itself.
    let mut bench = webstand()
        .args([
            "bench",
            "-k",
            "-c",
            "3",
            "-t",
            "12",
            "-n",
            "100000000000",
            "--metrics-listen",
            &metrics.to_string(),
            &url,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        wait_listening(metrics, Duration::from_secs(10)),
        "the endpoint never listened"
    );

    // The exposition as served: its content type, and promtool's verdict on the text.
    let (head, body) = loop {
        let (head, body) = get(metrics, "/metrics");
        if body.contains("webstand_responses_total") {
            break (head, body);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    let file = dir.path().join("exposition.txt");
    std::fs::write(&file, &body).unwrap();
    let check = Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "promtool check metrics: {}{}\n{body}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    for line in [
        "# TYPE webstand_latency_seconds histogram",
        "# TYPE webstand_responses_total counter",
        "# TYPE webstand_generator_busy_ratio gauge",
    ] {
        assert!(body.contains(line), "no {line:?} in\n{body}");
    }

    // A real Prometheus on loopback scraping it twice a second, into a scratch store.
    let prom: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!("global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\nscrape_configs:\n  - job_name: webstand\n    static_configs:\n      - targets: ['{metrics}']\n"),
    )
    .unwrap();
    let _prom = Stopped(
        Command::new(prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("tsdb").display()
            ))
            .arg(format!("--web.listen-address={prom}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(wait_listening(prom, Duration::from_millis(200))
        && get(prom, "/-/ready").0.starts_with("HTTP/1.1 200"))
    {
        assert!(Instant::now() < deadline, "Prometheus never became ready");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Two scrapes of a growing counter: its series holds the run's responses.
    let grown = loop {
        let up = query(prom, "up{job=\"webstand\"}");
        let done = query(
            prom,
            "max_over_time(webstand_responses_total{status_class=\"2xx\"}[1m])",
        );
        let first = query(
            prom,
            "min_over_time(webstand_responses_total{status_class=\"2xx\"}[1m])",
        );
        if up == [1.0] && done.len() == 1 && first.len() == 1 && done[0] > first[0] {
            break done[0];
        }
        assert!(
            Instant::now() < deadline,
            "no growing series scraped: up {up:?}, responses {done:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    assert!(grown > 0.0);
    assert_eq!(query(prom, "webstand_clients"), [3.0]);
    assert_eq!(
        query(prom, "webstand_failures_total{class=\"connect\"}"),
        [0.0]
    );
    let buckets = query(prom, "webstand_latency_seconds_bucket{le=\"+Inf\"}");
    assert!(buckets.len() == 1 && buckets[0] > 0.0, "{buckets:?}");
    let p99 = query(
        prom,
        "histogram_quantile(0.99, webstand_latency_seconds_bucket)",
    );
    assert!(
        p99.len() == 1 && p99[0] > 0.0 && p99[0] < 1.0,
        "p99 {p99:?}"
    );
    let busy = query(prom, "webstand_generator_busy_ratio");
    assert!(
        busy.len() == 1 && (0.0..=1.0).contains(&busy[0]),
        "{busy:?}"
    );

    let status = common::exit_within(&mut bench, Duration::from_secs(60)).expect("bench ends");
    assert!(status.success());
    // The run over, nothing listens there any more.
    assert!(!wait_listening(metrics, Duration::from_millis(300)));
}

#[test]
fn a_bad_address_is_one_line() {
    let out = common::run(&[
        "bench",
        "-n",
        "1",
        "--metrics-listen",
        "localhost",
        "http://127.0.0.1:9/",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = common::stderr(&out);
    assert!(
        err.contains("--metrics-listen localhost") && err.lines().count() == 1,
        "{err}"
    );
}
