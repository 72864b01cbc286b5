//! `--otlp-endpoint URL`: bench pushes its metrics over OTLP/HTTP while it runs and at its end, to a
//! receiver made here on the protocol's own definitions (opentelemetry-proto) over a real loopback
//! socket; the last push holds exactly what the run's report says.

use crate::common;

use common::{json_stdout, run, serve};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point, Metric};
use prost::Message;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};

/// What the receiver took: each request's path, content type and decoded body.
type Pushes = Arc<Mutex<Vec<(String, String, ExportMetricsServiceRequest)>>>;

/// An OTLP/HTTP receiver on a loopback port: every POST decoded and answered 200 (a body that is
/// not an export request is answered 400 and kept out).
fn receiver() -> (SocketAddr, Pushes) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let pushes = Pushes::default();
    let kept = pushes.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut s) = conn else { continue };
            let kept = kept.clone();
            std::thread::spawn(move || {
                while let Some((path, kind, body)) = read_post(&mut s) {
                    let status = match ExportMetricsServiceRequest::decode(&body[..]) {
                        Ok(req) => {
                            kept.lock().unwrap().push((path, kind, req));
                            "200 OK"
                        }
                        Err(_) => "400 Bad Request",
                    };
                    let head = format!("HTTP/1.1 {status}\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n");
                    if s.write_all(head.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, pushes)
}

/// One request on a keep-alive connection: its path, content type and body.
fn read_post(s: &mut std::net::TcpStream) -> Option<(String, String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16384];
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut req = httparse::Request::new(&mut headers);
        if let Ok(httparse::Status::Complete(head)) = req.parse(&buf) {
            let header = |name: &str| {
                req.headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case(name))
                    .map(|h| String::from_utf8_lossy(h.value).into_owned())
            };
            let len: usize = header("content-length")?.parse().ok()?;
            let (path, kind) = (req.path?.to_string(), header("content-type")?);
            while buf.len() < head + len {
                let n = s.read(&mut chunk).ok().filter(|&n| n > 0)?;
                buf.extend_from_slice(&chunk[..n]);
            }
            return Some((path, kind, buf[head..head + len].to_vec()));
        }
        let n = s.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn metric<'a>(req: &'a ExportMetricsServiceRequest, name: &str) -> &'a Metric {
    req.resource_metrics[0].scope_metrics[0]
        .metrics
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no metric {name}"))
}

/// A counter's or gauge's value at the point whose attribute `key` is `value` (or the only point).
fn value(m: &Metric, attr: Option<(&str, &str)>) -> f64 {
    let points = match &m.data {
        Some(metric::Data::Sum(s)) => {
            assert!(s.is_monotonic, "{} is a monotonic sum", m.name);
            &s.data_points
        }
        Some(metric::Data::Gauge(g)) => &g.data_points,
        other => panic!("{}: not a number: {other:?}", m.name),
    };
    let p = points
        .iter()
        .find(|p| match attr {
            None => p.attributes.is_empty(),
            Some((k, v)) => p.attributes.iter().any(|a| {
                a.key == k
                    && matches!(&a.value, Some(x) if matches!(&x.value,
                        Some(opentelemetry_proto::tonic::common::v1::any_value::Value::StringValue(s)) if s == v))
            }),
        })
        .unwrap_or_else(|| panic!("{}: no point {attr:?}", m.name));
    match p.value {
        Some(number_data_point::Value::AsInt(n)) => n as f64,
        Some(number_data_point::Value::AsDouble(d)) => d,
        None => panic!("{}: no value", m.name),
    }
}

#[test]
fn the_last_push_holds_the_reports_figures() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("1k.html"), [b'x'; 1024]).unwrap();
    let server = serve(dir.path(), &[]);
    let (addr, pushes) = receiver();
    let url = format!("http://{}/1k.html", server.addr);
    let endpoint = format!("http://{addr}");
    // Long enough for pushes during the run (one a second) as well as the last one.
    let out = run(&[
        "bench",
        "--json",
        "-k",
        "-c",
        "4",
        "-t",
        "3",
        "-n",
        "100000000",
        "--otlp-endpoint",
        &endpoint,
        &url,
    ]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let report = json_stdout(&out);
    let pushes = pushes.lock().unwrap();
    assert!(pushes.len() >= 3, "{} pushes for a 3 s run", pushes.len());
    for (path, kind, _) in pushes.iter() {
        assert_eq!(path, "/v1/metrics");
        assert_eq!(kind, "application/x-protobuf");
    }
    let last = &pushes.last().unwrap().2;
    let complete = report["complete"].as_u64().unwrap();
    assert!(complete > 100, "{complete} requests in 3 s");
    let responses = metric(last, "webstand.responses");
    assert_eq!(
        value(responses, Some(("status_class", "2xx"))),
        complete as f64
    );
    assert_eq!(value(responses, Some(("status_class", "4xx"))), 0.0);
    for class in ["connect", "receive", "length", "exceptions"] {
        assert_eq!(
            value(metric(last, "webstand.failures"), Some(("class", class))),
            0.0
        );
    }
    assert_eq!(
        value(metric(last, "webstand.received_bytes"), None),
        report["total_bytes"].as_u64().unwrap() as f64
    );
    assert_eq!(value(metric(last, "webstand.clients"), None), 4.0);
    assert_eq!(value(metric(last, "webstand.target_rate"), None), 0.0);
    let Some(metric::Data::Histogram(h)) = &metric(last, "webstand.latency").data else {
        panic!("webstand.latency is not a histogram");
    };
    let p = &h.data_points[0];
    assert_eq!(p.count, complete);
    assert_eq!(p.bucket_counts.len(), p.explicit_bounds.len() + 1);
    assert_eq!(p.bucket_counts.iter().sum::<u64>(), complete);
    // The report's slowest response, within the histogram's 3 significant digits.
    let max_ms = report["latency"]["total"]["max_ms"].as_f64().unwrap();
    let pushed_max_ms = p.max.unwrap() * 1e3;
    assert!(
        (pushed_max_ms - max_ms).abs() <= max_ms * 0.002 + 0.001,
        "{pushed_max_ms} vs {max_ms}"
    );
    // Counters only grow from one push to the next.
    let sent: Vec<f64> = pushes
        .iter()
        .map(|(_, _, r)| {
            value(
                metric(r, "webstand.responses"),
                Some(("status_class", "2xx")),
            )
        })
        .collect();
    assert!(sent.windows(2).all(|w| w[0] <= w[1]), "{sent:?}");
}

#[test]
fn a_bad_endpoint_is_one_line() {
    for (endpoint, says) in [
        ("https://127.0.0.1:4318", "give an http:// URL"),
        ("127.0.0.1:4318", "give an http:// URL"),
        ("http://", "no host"),
    ] {
        let out = run(&[
            "bench",
            "-n",
            "1",
            "--otlp-endpoint",
            endpoint,
            "http://127.0.0.1:9/",
        ]);
        assert_eq!(out.status.code(), Some(1), "{endpoint}");
        let err = common::stderr(&out);
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{endpoint}: {err}"
        );
    }
}
