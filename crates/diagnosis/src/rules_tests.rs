//! The rules on hand-made inputs: each fires on its evidence and stays silent without it.

use super::*;
use crate::findings::Previous;
use crate::kernel::TcpCounters;
use crate::watch::LoadThread;
use crate::watch::Watched;
use std::time::Duration;

/// A clean run: `n` requests of `latency_us` each over one second, one connection each.
fn run(n: u64, latency_us: u64) -> RunResult {
    let mut r = RunResult {
        complete: n,
        connections: n,
        elapsed: Duration::from_secs(1),
        latency_sum_us: (n * latency_us) as u128,
        ..Default::default()
    };
    for _ in 0..n {
        r.histograms.total.record(latency_us).unwrap();
        r.histograms.connect.record(50).unwrap();
    }
    r
}

fn diagnose_with(r: &RunResult, w: &Watched, server: Option<ServerUse>) -> Diagnosis {
    diagnose(&Inputs {
        result: r,
        clients: 1,
        previous: None,
        max_error_pct: 1.0,
        watched: w,
        server,
    })
}

/// Level `clients` diagnosed after level `previous`.
fn after(
    previous: (usize, &RunResult),
    clients: usize,
    r: &RunResult,
    server: Option<ServerUse>,
) -> Diagnosis {
    diagnose(&Inputs {
        result: r,
        clients,
        previous: Some(Previous {
            clients: previous.0,
            result: previous.1,
        }),
        max_error_pct: 1.0,
        watched: &Watched::default(),
        server,
    })
}

#[test]
fn throughput_flat_while_latency_climbs_is_saturation() {
    // 1000 hits/s at 4 clients (4 ms each), then 1020 hits/s at 8 clients (7.8 ms each).
    let (four, eight) = (run(1000, 4000), run(1020, 7800));
    let d = after((4, &four), 8, &eight, None);
    assert_eq!(d.verdict, Some(Limit::Saturated));
    let f = &d.findings[0];
    assert!(
        f.evidence
            .contains("from 4 to 8 clients hits/s went 1000 → 1020 (+2 %)"),
        "{}",
        f.evidence
    );
    assert!(
        f.evidence.contains("4.00 → 7.80 ms (+95 %)"),
        "{}",
        f.evidence
    );
    assert!(f.advice.contains("near 4 clients"), "{}", f.advice);
    // With the server's CPUs full, it is the server's limit.
    let server = ServerUse {
        cpu: Duration::from_millis(970),
        cpus: vec![0],
    };
    let d = after((4, &four), 8, &eight, Some(server));
    assert_eq!(d.verdict, Some(Limit::Server));
    assert!(d.findings[0].advice.contains("the server used 97 %"));
    // Throughput that still grows, or latency that does not climb, is not saturation.
    assert!(after((4, &four), 8, &run(1900, 4200), None)
        .findings
        .is_empty());
    assert!(after((4, &four), 8, &run(1000, 4100), None)
        .findings
        .is_empty());
    // Nor is a level with barely more clients.
    assert!(after((4, &four), 5, &eight, None).findings.is_empty());
}

fn tcp(pairs: &[(&str, u64)]) -> TcpCounters {
    TcpCounters(pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect())
}

#[test]
fn a_clean_run_has_no_finding_and_no_verdict() {
    let d = diagnose_with(&run(1000, 300), &Watched::default(), None);
    assert_eq!(d.verdict, None);
    assert!(d.findings.is_empty());
    assert_eq!(crate::render::headline(&d), "no problem found");
}

#[test]
fn a_busy_server_without_problems_is_server_bound() {
    let server = ServerUse {
        cpu: Duration::from_millis(950),
        cpus: vec![0],
    };
    let d = diagnose_with(&run(1000, 300), &Watched::default(), Some(server));
    assert_eq!(d.verdict, Some(Limit::Server));
    assert!(d.findings.is_empty());
    // One verdict: "server-bound", never beside "no problem found".
    let head = crate::render::headline(&d);
    assert!(head.starts_with("server-bound"), "{head}");
    assert!(!head.contains("no problem found"), "{head}");
}

#[test]
fn errors_above_the_threshold_name_their_classes_and_errno() {
    let mut r = run(100, 300);
    r.failed.connect = 20;
    r.first_error = Some(format!(
        "connect: {}",
        std::io::Error::from_raw_os_error(libc::EADDRNOTAVAIL)
    ));
    let d = diagnose_with(&r, &Watched::default(), None);
    assert_eq!(d.verdict, Some(Limit::Errors));
    assert!(d.findings[0].evidence.contains("20 connect"));
    assert!(d.findings[0].advice.contains("ephemeral ports"));
    // Counted by errno, the most common one gives the advice whatever came first.
    r.socket_errors = [(libc::ECONNREFUSED, 15), (libc::EADDRNOTAVAIL, 5)]
        .into_iter()
        .collect();
    let d = diagnose_with(&r, &Watched::default(), None);
    let f = &d.findings[0];
    assert!(
        f.evidence
            .contains("by socket error: 15 ECONNREFUSED, 5 EADDRNOTAVAIL"),
        "{}",
        f.evidence
    );
    assert!(f.advice.contains("refused"), "{}", f.advice);
    let mut r = run(100, 300);
    r.failed.connect = 1; // 1 % is within the threshold
    assert!(diagnose_with(&r, &Watched::default(), None)
        .findings
        .is_empty());
}

#[test]
fn listen_overflows_count_only_when_this_run_felt_them() {
    let w = Watched {
        tcp: tcp(&[
            ("TcpExt.ListenOverflows", 3214),
            ("TcpExt.ListenDrops", 3214),
        ]),
        threads: vec![],
        ..Default::default()
    };
    // Someone else's overflows: our connects were all fast.
    assert!(diagnose_with(&run(100, 300), &w, None).findings.is_empty());
    let mut r = run(100, 300);
    r.histograms.connect.record(1_003_000).unwrap();
    let d = diagnose_with(&r, &w, None);
    assert_eq!(d.verdict, Some(Limit::ListenQueue));
    assert_eq!(
        d.findings.len(),
        1,
        "SYN retries are part of the listen-queue finding"
    );
    assert!(d.findings[0].evidence.contains("overflowed 3214 times"));
    assert!(d.findings[0].evidence.contains("1 connections"));
}

#[test]
fn slow_connects_without_counters_are_syn_retries() {
    let mut r = run(100, 300);
    for _ in 0..5 {
        r.histograms.connect.record(3_001_000).unwrap();
    }
    let d = diagnose_with(&r, &Watched::default(), None);
    assert_eq!(d.verdict, Some(Limit::SynRetries));
    assert!(d.findings[0].evidence.contains("5 connections (5.0 %)"));
}

#[test]
fn a_saturated_or_starved_load_thread_is_generator_bound() {
    let thread = |busy, waited| Watched {
        tcp: TcpCounters::default(),
        threads: vec![LoadThread {
            busy,
            waited,
            cpu: Some(1),
        }],
        ..Default::default()
    };
    let mut r = run(1000, 300);
    // The engine's own busy fraction decides saturation: 0.98 s of CPU over the 1 s run.
    r.thread_cpu = vec![webstand_results::CpuTime {
        user: Duration::from_millis(700),
        sys: Duration::from_millis(280),
    }];
    let d = diagnose_with(&r, &thread(0.5, 0.01), None);
    assert_eq!(d.verdict, Some(Limit::Generator));
    assert!(d.findings[0].evidence.contains("98 % of CPU 1"));
    let r = run(1000, 300);
    // A short wake-up delay now and then on a shared machine is not a finding.
    assert!(diagnose_with(&r, &thread(0.02, 0.15), None)
        .findings
        .is_empty());
    let d = diagnose_with(&r, &thread(0.3, 0.5), None);
    assert!(d.findings[0].evidence.contains("another program was using"));
    // A CPU shared evenly with one busy program: the wait about equals the run, either side of it.
    for (busy, waited) in [(0.52, 0.48), (0.48, 0.52)] {
        let d = diagnose_with(&r, &thread(busy, waited), None);
        assert_eq!(d.verdict, Some(Limit::Generator), "{busy} {waited}");
    }
    assert!(diagnose_with(&r, &thread(0.5, 0.1), None)
        .findings
        .is_empty());
    assert!(diagnose_with(&r, &thread(0.6, 0.3), None)
        .findings
        .is_empty());
}

#[test]
fn a_latency_floor_near_40_or_200_ms_is_named_unless_the_server_is_busy() {
    let d = diagnose_with(&run(100, 40_500), &Watched::default(), None);
    assert_eq!(d.verdict, Some(Limit::LatencyFloor));
    assert!(d.findings[0].evidence.contains("near 40 ms"));
    let d = diagnose_with(&run(100, 201_000), &Watched::default(), None);
    assert!(d.findings[0].evidence.contains("near 200 ms"));
    // Latencies spread from 1 ms up: no floor.
    let mut r = run(50, 1000);
    for _ in 0..50 {
        r.histograms.total.record(45_000).unwrap();
    }
    assert!(diagnose_with(&r, &Watched::default(), None)
        .findings
        .is_empty());
    // A saturated server explains its latency itself.
    let server = ServerUse {
        cpu: Duration::from_millis(900),
        cpus: vec![0],
    };
    let d = diagnose_with(&run(100, 40_500), &Watched::default(), Some(server));
    assert_eq!(d.verdict, Some(Limit::Server));
}

#[test]
fn the_most_decisive_finding_gives_the_verdict() {
    let mut r = run(100, 40_500);
    r.non_2xx = 100;
    let d = diagnose_with(&r, &Watched::default(), None);
    assert_eq!(d.verdict, Some(Limit::Errors));
    assert_eq!(d.findings.len(), 2);
    let text = crate::render::section(&d);
    assert!(
        text.starts_with("\nDiagnosis: limited by errors\n  - "),
        "{text}"
    );
}

#[test]
fn bytes_near_the_link_speed_are_limited_by_the_network() {
    let w = |mbit_per_sec| Watched {
        link: Some(crate::network::Link {
            interface: "eth0".into(),
            mbit_per_sec,
            source: "sysfs",
        }),
        ..Default::default()
    };
    // 11,500 responses of 10 KiB in one second: 942.1 Mbit/s received.
    let mut r = run(11_500, 300);
    r.total_bytes = 11_500 * 10_240;
    let d = diagnose_with(&r, &w(1000.0), None);
    assert_eq!(d.verdict, Some(Limit::Network));
    let f = &d.findings[0].evidence;
    assert!(
        f.contains(
            "received 942.1 Mbit/s of HTTP over eth0, whose link runs at 1000 Mbit/s (sysfs; 94 %"
        ),
        "{f}"
    );
    // The same bytes on a gigabit link, or on a link of unknown speed, are no finding.
    assert!(diagnose_with(&r, &w(10_000.0), None).findings.is_empty());
    assert!(diagnose_with(&r, &Watched::default(), None)
        .findings
        .is_empty());
}

#[test]
fn most_errors_in_half_a_second_are_a_burst_and_evenly_spread_ones_are_not() {
    let mut counts = vec![1; 30];
    counts[12..17].copy_from_slice(&[80, 120, 110, 90, 12]);
    let timeline = |counts: Vec<u64>| Watched {
        errors: crate::timeline::Timeline {
            interval: Duration::from_millis(100),
            counts,
        },
        ..Default::default()
    };
    let mut r = run(1000, 300);
    r.elapsed = Duration::from_secs(3);
    r.failed.receive = 437;
    let d = diagnose_with(&r, &timeline(counts), None);
    assert_eq!(d.verdict, Some(Limit::ErrorBurst));
    let f = &d.findings[0];
    assert!(
        f.evidence.starts_with(
            "412 of 437 errors came between 1.2 s and 1.7 s of the run's 3.0 s (per 0.1 s: 80, 120, 110, 90, 12)"
        ),
        "{f:?}"
    );
    assert!(f.advice.contains("stalled, restarted"), "{f:?}");
    assert_eq!(d.findings[1].limit, Limit::Errors, "{d:?}");
    // The same errors over the whole run: the errors finding alone.
    let d = diagnose_with(&r, &timeline(vec![15; 30]), None);
    let limits: Vec<Limit> = d.findings.iter().map(|f| f.limit).collect();
    assert_eq!(limits, [Limit::Errors]);
}

#[test]
fn a_server_without_http2_is_named_and_nothing_else_is() {
    let mut r = RunResult {
        elapsed: Duration::from_millis(3),
        ended: Some(webstand_results::Ended::NoHttp2),
        first_error: Some("h2c to 127.0.0.1:8080: the server does not speak HTTP/2 here (it answered the preface with \"HTTP/1.1 400 Bad Request\")".into()),
        ..Default::default()
    };
    r.failed.connect = 1;
    let mut w = Watched::default();
    w.errors.counts = vec![1];
    let d = diagnose_with(&r, &w, None);
    assert_eq!(d.verdict, Some(Limit::NoHttp2));
    assert_eq!(d.findings.len(), 1, "{:?}", d.findings);
    let f = &d.findings[0];
    assert!(f
        .evidence
        .starts_with("1 of 1 requests failed to connect over HTTP/2"));
    assert!(f
        .evidence
        .ends_with("(it answered the preface with \"HTTP/1.1 400 Bad Request\")"));
    assert!(f.advice.contains("--h2c") && f.advice.contains("without --h2"));
    assert_eq!(
        crate::render::headline(&d),
        "the server does not speak HTTP/2"
    );
    assert_eq!(crate::render::bound_cell(&d), "no HTTP/2");
    // The history's copy reads back the same.
    let back = crate::render::from_json(&crate::render::json(&d, &w)).unwrap();
    assert_eq!(back.verdict, Some(Limit::NoHttp2));
    // The same errors without the engine's ending are the errors rule's.
    r.ended = Some(webstand_results::Ended::Unreachable);
    assert_eq!(diagnose_with(&r, &w, None).verdict, Some(Limit::Errors));
}

#[test]
fn the_generator_is_judged_on_work_and_both_saturated_is_inconclusive() {
    let server = |ms| ServerUse {
        cpu: Duration::from_millis(ms),
        cpus: vec![0],
    };
    // The readings that once got opposite verdicts: a load thread on its CPU 98.8 % of the run,
    // half of it spinning, beside a server at 98.3 %: the server's limit, not the generator's.
    let mut r = run(1000, 300);
    r.thread_cpu = vec![webstand_results::CpuTime {
        user: Duration::from_millis(400),
        sys: Duration::from_millis(588),
    }];
    r.thread_spin = vec![Duration::from_millis(500)];
    let d = diagnose_with(&r, &Watched::default(), Some(server(983)));
    assert_eq!(d.verdict, Some(Limit::Server), "{d:?}");
    let head = crate::render::headline(&d);
    assert!(
        head.starts_with("server-bound (the server used 98 % of its CPUs; the generator's busiest thread worked 49 %)"),
        "{head}"
    );
    // Spinning alone never makes it generator-bound.
    let d = diagnose_with(&r, &Watched::default(), None);
    assert_eq!(d.verdict, None, "{d:?}");
    // Working 95 % of the run with the server at 95 %: neither can be named.
    r.thread_spin = vec![Duration::from_millis(38)];
    let d = diagnose_with(&r, &Watched::default(), Some(server(950)));
    assert_eq!(d.verdict, Some(Limit::BothSaturated), "{d:?}");
    assert_eq!(d.findings.len(), 1, "one verdict, one finding: {d:?}");
    assert!(
        crate::render::headline(&d).starts_with("both saturated: inconclusive for this pair"),
        "{d:?}"
    );
    assert!(d.findings[0].evidence.contains("worked 95 %"), "{d:?}");
    assert!(
        d.findings[0].evidence.contains("the server used 95 %"),
        "{d:?}"
    );
    // The server not saturated: the generator's limit.
    let d = diagnose_with(&r, &Watched::default(), Some(server(500)));
    assert_eq!(d.verdict, Some(Limit::Generator), "{d:?}");
}

#[test]
fn only_a_run_without_the_servers_process_is_told_to_pass_server_pid() {
    let (four, eight) = (run(1000, 4000), run(1020, 7800));
    let unknown = after((4, &four), 8, &eight, None);
    assert!(unknown.findings[0].advice.contains("--server-pid"));
    let known = ServerUse {
        cpu: Duration::from_millis(300),
        cpus: vec![0],
    };
    let d = after((4, &four), 8, &eight, Some(known));
    assert_eq!(d.verdict, Some(Limit::Saturated));
    let advice = &d.findings[0].advice;
    assert!(!advice.contains("--server-pid"), "{advice}");
    assert!(advice.contains("the server used only 30 %"), "{advice}");
}
