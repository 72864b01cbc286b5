//! The merge is exact: known values recorded by "ranks", sent through the wire form and added, give
//! the histogram one process recording every value would have.

use super::*;

/// A rank's result holding `values` (µs) as its total latencies, each a 100-byte response.
fn rank_result(values: &[u64], started_unix: f64, elapsed_ms: u64) -> RunResult {
    let mut r = RunResult {
        started_unix,
        elapsed: Duration::from_millis(elapsed_ms),
        complete: values.len() as u64,
        total_bytes: 100 * values.len() as u64,
        body_bytes: 60 * values.len() as u64,
        cpu: CpuTime {
            user: Duration::from_micros(30 * values.len() as u64),
            sys: Duration::from_micros(10 * values.len() as u64),
        },
        per_request: vec![values.len() as u64],
        ..Default::default()
    };
    for &v in values {
        r.histograms.total.record(v).unwrap();
        r.latency_sum_us += u128::from(v);
    }
    r
}

fn report(rank: usize, r: &RunResult, skew: f64) -> RankReport {
    // Through JSON, as over MPI.
    let rep = RankReport {
        rank,
        clients: 1,
        clock_offset: 0.0,
        start_skew: skew,
        // The whole process: 50 µs per request, 10 more than its load threads' 40.
        process_cpu_ns: 50_000 * r.complete,
        error: None,
        result: Some(WireResult::from(r)),
    };
    serde_json::from_str(&serde_json::to_string(&rep).unwrap()).unwrap()
}

#[test]
fn merged_histogram_equals_one_process_recording_everything() {
    // Awkward values: bucket edges, sub-bucket boundaries, a long tail.
    let a: Vec<u64> = (1..=5000).map(|i| i * 7 % 9973 + 1).collect();
    let b: Vec<u64> = (1..=3000).map(|i| 2048 + i * 13).collect();
    let c: Vec<u64> = vec![1, 2, 3, 1_000_000, 3_599_999_999, 65_535, 65_536, 65_537];
    let mut all = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    for v in a.iter().chain(&b).chain(&c) {
        all.record(*v).unwrap();
    }
    let reports = [
        report(2, &rank_result(&c, 100.002, 900), 0.0004),
        report(0, &rank_result(&a, 100.0, 1000), 0.0),
        report(1, &rank_result(&b, 100.001, 1500), -0.0002),
    ];
    let m = merge(3, &reports).unwrap();
    let h = &m.result.histograms.total;
    assert_eq!(h.len(), all.len());
    assert_eq!((h.min(), h.max()), (all.min(), all.max()));
    assert_eq!(h.mean(), all.mean());
    for q in [0.0, 0.5, 0.66, 0.9, 0.99, 0.999, 0.9999, 1.0] {
        assert_eq!(
            h.value_at_quantile(q),
            all.value_at_quantile(q),
            "quantile {q}"
        );
    }
    let buckets = |h: &Histogram<u64>| {
        h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect::<Vec<_>>()
    };
    assert_eq!(buckets(h), buckets(&all));
    // Counts add; the run spans the earliest start to the latest end (rank 1: 100.001 + 1.5 s).
    assert_eq!(m.result.complete, 8008);
    assert_eq!(m.result.total_bytes, 800_800);
    assert_eq!(m.result.body_bytes, 480_480);
    assert_eq!(m.result.per_request, vec![8008]);
    assert!((m.result.elapsed.as_secs_f64() - 1.501).abs() < 1e-6);
    assert_eq!(m.result.started_unix, 100.0);
    assert!((m.start_skew_ms - 0.4).abs() < 1e-9);
    assert!(m.missing.is_empty() && !m.result.interrupted);
    assert_eq!(m.ranks[1].requests, 3000);
    assert_eq!(m.ranks[1].cpu_us_per_request, Some(40.0));
    assert_eq!(m.ranks[1].process_cpu_us_per_request, Some(50.0));
}

#[test]
fn every_ranks_tls_handshakes_add_up() {
    let tls = |full, resumed| TlsSummary {
        protocol: "TLSv1.3".into(),
        cipher: "TLS_AES_128_GCM_SHA256".into(),
        cipher_bits: 128,
        full_handshakes: full,
        resumed_handshakes: resumed,
        full_handshake_us: 900 * full,
        ..Default::default()
    };
    let (mut a, mut b) = (
        rank_result(&[5; 30], 1.0, 10),
        rank_result(&[6; 20], 1.0, 10),
    );
    a.tls = Some(tls(10, 20));
    b.tls = Some(tls(20, 0));
    let m = merge(2, &[report(0, &a, 0.0), report(1, &b, 0.0)]).unwrap();
    let t = m
        .result
        .tls
        .expect("the ranks' TLS summaries travel and add");
    assert_eq!((t.full_handshakes, t.resumed_handshakes), (30, 20));
    assert_eq!(t.full_handshake_us, 900 * 30);
    assert_eq!((t.protocol.as_str(), t.cipher_bits), ("TLSv1.3", 128));
}

#[test]
fn every_ranks_h2_figures_add_up_exactly() {
    let h2 = |streams: u64, status_2xx: u64, connect_us: &[u64], first_us: &[u64], limit| {
        let mut h = webstand_results::H2Summary::new(limit);
        (h.started, h.done, h.succeeded, h.errored, h.timeout) =
            (streams, streams, status_2xx, 1, 2);
        h.status[2] = status_2xx;
        h.status[4] = streams - status_2xx;
        (h.header_bytes, h.header_decoded_bytes) = (10 * streams, 40 * streams);
        (h.resets, h.goaways) = (1, 0);
        for &v in connect_us {
            h.connect.record(v).unwrap();
        }
        for &v in first_us {
            h.first_byte.record(v).unwrap();
        }
        h
    };
    let (mut a, mut b) = (
        rank_result(&[5; 30], 1.0, 10),
        rank_result(&[6; 20], 1.0, 10),
    );
    a.h2 = Some(h2(30, 28, &[100, 3000], &[250, 4001], 16));
    b.h2 = Some(h2(20, 20, &[70_000], &[90_001], 8));
    let m = merge(2, &[report(0, &a, 0.0), report(1, &b, 0.0)]).unwrap();
    let h = m.result.h2.expect("the ranks' h2 figures travel and add");
    assert_eq!(
        (h.started, h.done, h.succeeded, h.errored, h.timeout),
        (50, 50, 48, 2, 4)
    );
    assert_eq!(h.status, [0, 0, 48, 0, 2, 0]);
    assert_eq!((h.header_bytes, h.header_decoded_bytes), (500, 2000));
    assert_eq!((h.resets, h.goaways, h.max_streams), (2, 0, 8));
    let mut connect = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    for v in [100, 3000, 70_000] {
        connect.record(v).unwrap();
    }
    assert_eq!(h.connect, connect);
    assert_eq!((h.first_byte.len(), h.first_byte.max()), (3, 90_047));
    assert_eq!(h.first_byte.min(), 250);
    // A rank without HTTP/2 (an older build's report) leaves the figures as the others give them.
    let m = merge(
        2,
        &[
            report(0, &a, 0.0),
            report(1, &rank_result(&[6], 1.0, 10), 0.0),
        ],
    )
    .unwrap();
    assert_eq!(m.result.h2.map(|h| h.started), Some(30));
}

#[test]
fn every_ranks_socket_errors_add_up_by_errno() {
    let (mut a, mut b) = (
        rank_result(&[5; 30], 1.0, 10),
        rank_result(&[6; 20], 1.0, 10),
    );
    a.socket_errors.insert(libc_econnrefused(), 3);
    b.socket_errors.insert(libc_econnrefused(), 4);
    b.socket_errors.insert(99, 2); // EADDRNOTAVAIL on Linux
    let m = merge(2, &[report(0, &a, 0.0), report(1, &b, 0.0)]).unwrap();
    let got: Vec<(i32, u64)> = m.result.socket_errors.into_iter().collect();
    assert_eq!(got, [(99, 2), (libc_econnrefused(), 7)]);
}

/// ECONNREFUSED on Linux (the errno the Diagnosis names first when connects are refused).
fn libc_econnrefused() -> i32 {
    111
}

#[test]
fn a_missing_rank_makes_the_result_incomplete() {
    let reports = [report(0, &rank_result(&[10, 20], 5.0, 10), 0.0)];
    let m = merge(2, &reports).unwrap();
    assert_eq!(m.missing, vec![1]);
    assert!(m.result.interrupted);
    assert!(!m.ranks[1].loaded);
}

#[test]
fn an_unreachable_rank_ends_the_run_with_its_error() {
    let mut bad = rank_result(&[], 5.0, 1);
    bad.ended = Some(Ended::Unreachable);
    bad.failed.connect = 1;
    bad.first_error = Some("connect to 127.0.0.1:1: Connection refused".into());
    let reports = [report(0, &bad, 0.0), report(1, &bad, 0.0)];
    let m = merge(2, &reports).unwrap();
    assert_eq!(m.result.ended, Some(Ended::Unreachable));
    assert_eq!(
        m.result.first_error.as_deref(),
        Some("rank 0: connect to 127.0.0.1:1: Connection refused")
    );
    // One rank through, the other not: the target counts as lost, the run still ends badly.
    let reports = [
        report(0, &rank_result(&[5], 5.0, 1), 0.0),
        report(1, &bad, 0.0),
    ];
    let m = merge(2, &reports).unwrap();
    assert_eq!(m.result.ended, Some(Ended::TargetLost));
    assert!(m.result.first_error.unwrap().starts_with("rank 1: "));
}
