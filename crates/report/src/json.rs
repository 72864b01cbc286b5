//! A run as one JSON document: every raw count of a `RunResult`, every derived figure from
//! `webstand_results::figures` (`errors` = failed + non-2xx, which `error_pct` and `errors_per_sec`
//! count), and latency summaries in milliseconds. Used by `webstand bench --json`
//! and reused by exports; field names are stable.

use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};
use webstand_results::{RunResult, Verdict};

/// A command's outcome as JSON: the history's status, the exit status and why.
pub fn verdict_json(v: &Verdict) -> Value {
    json!({
        "status": v.outcome.status(),
        "exit_status": v.outcome.exit_code(),
        "reason": v.reason,
    })
}

/// Summary of one latency histogram, in milliseconds.
pub fn histogram_json(h: &Histogram<u64>) -> Value {
    let ms = |us: u64| us as f64 / 1000.0;
    if h.is_empty() {
        return json!({ "count": 0 });
    }
    let mut percentiles = Map::new();
    for q in [50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 98.0, 99.0, 99.9, 99.99] {
        percentiles.insert(format!("{q}"), json!(ms(h.value_at_quantile(q / 100.0))));
    }
    percentiles.insert("100".into(), json!(ms(h.max())));
    json!({
        "count": h.len(),
        "min_ms": ms(h.min()),
        "mean_ms": h.mean() / 1000.0,
        "stdev_ms": h.stdev() / 1000.0,
        "max_ms": ms(h.max()),
        "percentiles_ms": percentiles,
    })
}

/// An https run's negotiated parameters and handshakes: TCP connect apart from the TLS handshake,
/// full handshakes apart from resumed ones (means in milliseconds).
fn tls_json(t: &webstand_results::TlsSummary) -> Value {
    let handshakes = t.full_handshakes + t.resumed_handshakes;
    let mean_ms = |sum: u64, n: u64| (n > 0).then(|| sum as f64 / n as f64 / 1000.0);
    json!({
        "protocol": t.protocol,
        "cipher": t.cipher,
        "cipher_bits": t.cipher_bits,
        "server_key_bits": t.server_key_bits,
        "server_temp_key": t.temp_key,
        "server_name": t.server_name,
        "alpn": t.alpn,
        "handshakes": handshakes,
        "full_handshakes": t.full_handshakes,
        "resumed_handshakes": t.resumed_handshakes,
        "tcp_connect_mean_ms": mean_ms(t.tcp_connect_us, handshakes),
        "full_handshake_mean_ms": mean_ms(t.full_handshake_us, t.full_handshakes),
        "resumed_handshake_mean_ms": mean_ms(t.resumed_handshake_us, t.resumed_handshakes),
    })
}

/// The generator's time over the run, split into work and waiting (its load threads' added up), per
/// complete request too, with how it was set to wait and where it ran.
fn generator_json(r: &RunResult) -> Value {
    let g = r.generator_time();
    json!({
        "load_threads": r.thread_cpu.len(),
        "cpus": r.load_cpus,
        "pinned": crate::generator::pinned(r),
        "spin_window_us": r.spin_window.as_secs_f64() * 1e6,
        "cpu_secs": g.cpu.as_secs_f64(),
        "work_secs": g.work.as_secs_f64(),
        "spin_secs": g.spin.as_secs_f64(),
        "nap_secs": g.nap.as_secs_f64(),
        "block_secs": g.block.as_secs_f64(),
        "work_us_per_request": r.work_us_per_request(),
        "spin_us_per_request": r.spin_us_per_request(),
    })
}

/// The whole result as a JSON object.
pub fn result_json(r: &RunResult) -> Value {
    let f = &r.failed;
    let h = &r.histograms;
    let answered = r.complete > 0;
    json!({
        "started_unix": r.started_unix,
        "elapsed_secs": r.elapsed.as_secs_f64(),
        "interrupted": r.interrupted,
        "ended": r.ended.map(|e| e.name()),
        "complete": r.complete,
        "attempted": r.attempted(),
        "failed": {
            "total": f.total(),
            "connect": f.connect,
            "receive": f.receive,
            "length": f.length,
            "exceptions": f.exceptions,
        },
        "write_errors": r.write_errors,
        "non_2xx": r.non_2xx,
        "errors": r.errors(),
        "successful": r.successful(),
        "mostly_errors": r.mostly_errors(),
        "keep_alive_requests": r.keep_alive_requests,
        "connections": r.connections,
        "total_bytes": r.total_bytes,
        "body_bytes": r.body_bytes,
        "sent_bytes": r.sent_bytes,
        "document_length": r.document_length,
        "server_software": r.server_software,
        "latency_sum_us": r.latency_sum_us as f64,
        "late_sends": r.late_sends,
        "per_request": r.per_request,
        "first_error": r.first_error,
        "cpu": {
            "user_secs": r.cpu.user.as_secs_f64(),
            "sys_secs": r.cpu.sys.as_secs_f64(),
        },
        "load_threads": r.thread_cpu.iter().zip(r.thread_busy()).zip(r.thread_times()).enumerate().map(|(i, ((c, busy), t))| {
            let waits = r.thread_waits.get(i).copied().unwrap_or_default();
            json!({
                "user_secs": c.user.as_secs_f64(),
                "sys_secs": c.sys.as_secs_f64(),
                "busy_fraction": busy,
                "work_secs": t.work.as_secs_f64(),
                "spin_secs": t.spin.as_secs_f64(),
                "nap_secs": t.nap.as_secs_f64(),
                "block_secs": t.block.as_secs_f64(),
                "halfway_blocks": waits.blocks,
                "halfway_naps": waits.naps,
            })
        }).collect::<Vec<_>>(),
        "generator": generator_json(r),
        "non_2xx_statuses": r.non_2xx_statuses.iter().map(|(s, n)| (s.to_string(), json!(n))).collect::<Map<String, Value>>(),
        "figures": {
            "hits_per_sec": r.hits_per_sec(),
            "conns_per_sec": r.conns_per_sec(),
            "kbytes_per_sec": r.kbytes_per_sec(),
            "mbits_per_sec": r.mbits_per_sec(),
            "errors_per_sec": r.errors_per_sec(),
            "error_pct": r.error_pct(),
            // Figures per complete request: null without one (no made-up zeros).
            "littles_load": answered.then(|| r.littles_load()),
            "mean_latency_secs": answered.then(|| r.mean_latency_secs()),
            "keep_alive_share": answered.then(|| r.keep_alive_share()),
            "cpu_us_per_request": r.cpu_us_per_request_of(r.cpu),
        },
        "cpu_us_per_request": r.cpu_us_per_request_of(r.cpu),
        "tls": r.tls.as_ref().map(tls_json),
        "latency": {
            "total": histogram_json(&h.total),
            "connect": histogram_json(&h.connect),
            "waiting": histogram_json(&h.waiting),
            "processing": histogram_json(&h.processing),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn carries_counts_and_figures() {
        let mut r = RunResult {
            elapsed: Duration::from_secs(2),
            complete: 100,
            total_bytes: 204_800,
            ..Default::default()
        };
        r.cpu.user = Duration::from_millis(1);
        r.thread_cpu = vec![r.cpu];
        r.failed.length = 3;
        r.histograms.total.record(1500).unwrap();
        let v = result_json(&r);
        assert_eq!(v["complete"], 100);
        assert_eq!(v["failed"]["length"], 3);
        assert_eq!(v["attempted"], 103);
        assert_eq!(
            (v["errors"].as_u64(), v["mostly_errors"].as_bool()),
            (Some(3), Some(false))
        );
        assert_eq!(v["figures"]["hits_per_sec"], 50.0);
        assert_eq!(v["figures"]["kbytes_per_sec"], 100.0);
        assert_eq!(v["cpu_us_per_request"], 10.0);
        assert_eq!(v["load_threads"][0]["busy_fraction"], 0.0005);
        assert_eq!(v["load_threads"][0]["user_secs"], 0.001);
        assert_eq!(v["latency"]["total"]["max_ms"], 1.5);
        assert_eq!(v["latency"]["connect"]["count"], 0);
        // Without a complete request, what is per request is null, not 0.
        let refused = RunResult {
            elapsed: Duration::from_secs(1),
            ..Default::default()
        };
        let v = result_json(&refused);
        for figure in [
            "littles_load",
            "mean_latency_secs",
            "keep_alive_share",
            "cpu_us_per_request",
        ] {
            assert!(v["figures"][figure].is_null(), "{figure}: {v}");
        }
        assert!(v["cpu_us_per_request"].is_null(), "{v}");
        assert_eq!(v["figures"]["hits_per_sec"], 0.0);
    }
}
