//! The Prometheus text exposition (format 0.0.4) of a reading: every metric docs/METRICS.md lists,
//! each with its HELP and TYPE lines. Written here rather than through a client library because the
//! values are already counted (the engine's counters and HDR histogram): there is nothing to observe,
//! only to print, and the format is a few lines per metric.

use crate::reading::{Reading, BUCKETS};
use std::fmt::Write;

/// The exposition's content type.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Status classes as labelled (index as `ThreadView::statuses`).
pub const STATUS_CLASSES: [&str; 6] = ["other", "1xx", "2xx", "3xx", "4xx", "5xx"];

/// The whole exposition of `r`.
pub fn render(r: &Reading) -> String {
    let mut out = String::new();
    let o = &mut out;
    let v = &r.view;
    head(
        o,
        "webstand_responses_total",
        "counter",
        "Complete responses, by status class.",
    );
    for (class, n) in STATUS_CLASSES.iter().zip(v.statuses) {
        let _ = writeln!(
            o,
            "webstand_responses_total{{status_class=\"{class}\"}} {n}"
        );
    }
    head(
        o,
        "webstand_failures_total",
        "counter",
        "Failed requests, by ab's classes (connect, receive, length, exceptions).",
    );
    for (class, n) in r.failure_classes() {
        let _ = writeln!(o, "webstand_failures_total{{class=\"{class}\"}} {n}");
    }
    sample(
        o,
        "webstand_received_bytes_total",
        "counter",
        "Bytes received (HTTP bytes, as the report's Total transferred).",
        v.bytes as f64,
    );
    head(o, "webstand_latency_seconds", "histogram", "Latency of complete responses (open loop: from the intended send time), bucketed from the run's HDR histogram.");
    let counts = r.cumulative_buckets();
    for (le, n) in BUCKETS.iter().zip(&counts) {
        let _ = writeln!(o, "webstand_latency_seconds_bucket{{le=\"{le}\"}} {n}");
    }
    let count = counts.last().copied().unwrap_or(0);
    let _ = writeln!(o, "webstand_latency_seconds_bucket{{le=\"+Inf\"}} {count}");
    let _ = writeln!(o, "webstand_latency_seconds_sum {}", r.latency_sum());
    let _ = writeln!(o, "webstand_latency_seconds_count {count}");
    sample(
        o,
        "webstand_response_rate",
        "gauge",
        "Complete responses per second over the last interval.",
        r.rate,
    );
    sample(
        o,
        "webstand_connections_open",
        "gauge",
        "Connections the generator holds open.",
        v.connections_open as f64,
    );
    sample(
        o,
        "webstand_clients",
        "gauge",
        "Clients (concurrent connections) of the run or sweep level in progress.",
        r.stage.clients as f64,
    );
    sample(
        o,
        "webstand_target_rate",
        "gauge",
        "Open loop: the rate asked, requests per second (0 in a closed loop).",
        r.stage.target_rate.unwrap_or(0.0),
    );
    let level = r.stage.level.map_or(1, |(n, _)| n);
    sample(
        o,
        "webstand_level",
        "gauge",
        "The sweep level in progress, from 1 (1 for bench).",
        level as f64,
    );
    sample(o, "webstand_generator_busy_ratio", "gauge", "The load threads' working CPU (spinning excluded) over their wall time in the last interval, 0 to 1.", r.busy);
    sample(
        o,
        "webstand_load_threads",
        "gauge",
        "Load threads of the run.",
        v.threads as f64,
    );
    sample(
        o,
        "webstand_elapsed_seconds",
        "gauge",
        "Time since the run (or sweep level) started.",
        r.elapsed.as_secs_f64(),
    );
    out
}

fn head(o: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(o, "# HELP {name} {help}");
    let _ = writeln!(o, "# TYPE {name} {kind}");
}

fn sample(o: &mut String, name: &str, kind: &str, help: &str, value: f64) {
    head(o, name, kind, help);
    let _ = writeln!(o, "{name} {value}");
}
