//! `--otlp-endpoint URL`: the same metrics as the Prometheus exposition, pushed as OpenTelemetry
//! metrics over OTLP/HTTP (a protobuf `ExportMetricsServiceRequest` POSTed to `URL/v1/metrics`),
//! cumulative from the run's (or sweep level's) start. The messages are the protocol's own
//! definitions (opentelemetry-proto), encoded by prost and posted by ureq over plain HTTP.

use crate::exposition::STATUS_CLASSES;
use crate::reading::{Reading, BUCKETS};
use anyhow::{bail, Context};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::{
    metric, number_data_point, AggregationTemporality, Gauge, Histogram, HistogramDataPoint,
    Metric, NumberDataPoint, ResourceMetrics, ScopeMetrics, Sum,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A push that takes longer than this is given up (the next one tries again).
const TIMEOUT: Duration = Duration::from_secs(5);

/// Where the metrics go.
pub struct Otlp {
    url: String,
    agent: ureq::Agent,
}

impl Otlp {
    /// For `endpoint`, an `http://` base URL (`/v1/metrics` is added unless it ends so already).
    pub fn new(endpoint: &str) -> anyhow::Result<Otlp> {
        let Some(rest) = endpoint.strip_prefix("http://") else {
            bail!("--otlp-endpoint {endpoint}: give an http:// URL (a collector on this machine or a local forwarder; https is not pushed)");
        };
        if rest.is_empty() || rest.starts_with('/') {
            bail!("--otlp-endpoint {endpoint}: the URL has no host");
        }
        let base = endpoint.trim_end_matches('/');
        let url = match base.ends_with("/v1/metrics") {
            true => base.to_string(),
            false => format!("{base}/v1/metrics"),
        };
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            .http_status_as_error(true)
            .build()
            .new_agent();
        Ok(Otlp { url, agent })
    }

    /// Pushes `r`, cumulative since `start` (the run's start, as Unix time).
    pub fn push(&self, r: &Reading, start: SystemTime) -> anyhow::Result<()> {
        let body = request(r, start, SystemTime::now()).encode_to_vec();
        self.agent
            .post(&self.url)
            .header("Content-Type", "application/x-protobuf")
            .send(&body[..])
            .with_context(|| format!("OTLP push to {}", self.url))?;
        Ok(())
    }
}

fn nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn attr(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(value.into())),
        }),
        ..Default::default()
    }
}

/// The export request for one reading.
pub fn request(r: &Reading, start: SystemTime, now: SystemTime) -> ExportMetricsServiceRequest {
    let (start, now) = (nanos(start), nanos(now));
    let point = |attrs: Vec<KeyValue>, value: number_data_point::Value| NumberDataPoint {
        attributes: attrs,
        start_time_unix_nano: start,
        time_unix_nano: now,
        value: Some(value),
        ..Default::default()
    };
    let int = |attrs, n: u64| point(attrs, number_data_point::Value::AsInt(n as i64));
    let double = |v: f64| point(vec![], number_data_point::Value::AsDouble(v));
    let counter = |name: &str, unit: &str, help: &str, points| Metric {
        name: name.into(),
        unit: unit.into(),
        description: help.into(),
        data: Some(metric::Data::Sum(Sum {
            data_points: points,
            aggregation_temporality: AggregationTemporality::Cumulative as i32,
            is_monotonic: true,
        })),
        ..Default::default()
    };
    let gauge = |name: &str, unit: &str, help: &str, v: f64| Metric {
        name: name.into(),
        unit: unit.into(),
        description: help.into(),
        data: Some(metric::Data::Gauge(Gauge {
            data_points: vec![double(v)],
        })),
        ..Default::default()
    };
    let v = &r.view;
    let metrics = vec![
        counter(
            "webstand.responses",
            "{response}",
            "Complete responses, by status class.",
            STATUS_CLASSES
                .iter()
                .zip(v.statuses)
                .map(|(c, n)| int(vec![attr("status_class", c)], n))
                .collect(),
        ),
        counter(
            "webstand.failures",
            "{request}",
            "Failed requests, by ab's classes.",
            (r.failure_classes().into_iter())
                .map(|(c, n)| int(vec![attr("class", c)], n))
                .collect(),
        ),
        counter(
            "webstand.received_bytes",
            "By",
            "Bytes received.",
            vec![int(vec![], v.bytes)],
        ),
        latency(r, start, now),
        gauge(
            "webstand.response_rate",
            "{response}/s",
            "Complete responses per second over the last interval.",
            r.rate,
        ),
        gauge(
            "webstand.connections_open",
            "{connection}",
            "Connections the generator holds open.",
            v.connections_open as f64,
        ),
        gauge(
            "webstand.clients",
            "{client}",
            "Clients of the run or sweep level in progress.",
            r.stage.clients as f64,
        ),
        gauge(
            "webstand.target_rate",
            "{request}/s",
            "Open loop: the rate asked (0 in a closed loop).",
            r.stage.target_rate.unwrap_or(0.0),
        ),
        gauge(
            "webstand.level",
            "1",
            "The sweep level in progress, from 1 (1 for bench).",
            r.stage.level.map_or(1, |(n, _)| n) as f64,
        ),
        gauge(
            "webstand.generator_busy_ratio",
            "1",
            "The load threads' working CPU over their wall time in the last interval.",
            r.busy,
        ),
        gauge(
            "webstand.load_threads",
            "{thread}",
            "Load threads of the run.",
            v.threads as f64,
        ),
        gauge(
            "webstand.elapsed",
            "s",
            "Time since the run (or sweep level) started.",
            r.elapsed.as_secs_f64(),
        ),
    ];
    ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: Some(Resource {
                attributes: vec![
                    attr("service.name", "webstand"),
                    attr("webstand.command", &r.stage.command),
                ],
                ..Default::default()
            }),
            scope_metrics: vec![ScopeMetrics {
                scope: Some(InstrumentationScope {
                    name: "webstand".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..Default::default()
                }),
                metrics,
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
}

/// The latency histogram: the run's HDR histogram counted into [`BUCKETS`] (OTLP counts each
/// bucket apart, not cumulatively), with its sum, count, least and most.
fn latency(r: &Reading, start: u64, now: u64) -> Metric {
    let v = &r.view;
    let cumulative = r.cumulative_buckets();
    let mut per_bucket: Vec<u64> = cumulative
        .iter()
        .scan(0, |below, &n| {
            let here = n - *below;
            *below = n;
            Some(here)
        })
        .collect();
    per_bucket.truncate(BUCKETS.len() + 1);
    Metric {
        name: "webstand.latency".into(),
        unit: "s".into(),
        description: "Latency of complete responses, bucketed from the run's HDR histogram.".into(),
        data: Some(metric::Data::Histogram(Histogram {
            data_points: vec![HistogramDataPoint {
                start_time_unix_nano: start,
                time_unix_nano: now,
                count: v.latency.len(),
                sum: Some(r.latency_sum()),
                bucket_counts: per_bucket,
                explicit_bounds: BUCKETS.to_vec(),
                min: (!v.latency.is_empty()).then(|| v.latency.min() as f64 / 1e6),
                max: (!v.latency.is_empty()).then(|| v.latency.max() as f64 / 1e6),
                ..Default::default()
            }],
            aggregation_temporality: AggregationTemporality::Cumulative as i32,
        })),
        ..Default::default()
    }
}
