//! The rules: measured inputs in, findings out. Each rule looks at one kind of evidence and either
//! stays silent or names what limited the run, quotes the numbers that show it, and says what to do.
//! No finding without evidence: a rule that cannot see its evidence (no server process known, no
//! /proc/net) says nothing rather than guess.

use crate::errno::SocketError;
use crate::findings::{Diagnosis, Finding, Inputs, Limit, ServerUse};
use webstand_results::{Ended, RunResult};

/// At or above this share of a CPU (running, or running plus waiting for it) a thread is saturated.
pub const SATURATED: f64 = 0.9;
/// A load thread that waited in the run queue at least this share of the run, and at least three
/// quarters as long as it ran, was held back by another program on its CPU: its latencies and rates
/// include that wait. Not "longer than it ran": a thread sharing its CPU evenly with one busy program
/// waits about as long as it runs (the scheduler's fair share), so that tie is the typical starved
/// thread and must not fall either side by chance.
pub const WAITED: f64 = 0.2;
/// Connect times at or above this are SYN retries (Linux retries a lost SYN after 1 s, then 3 s).
const SYN_RETRY_US: u64 = 900_000;
/// Delayed-ACK timers: Linux's 40 ms minimum, and the 200 ms of BSD-derived and Windows stacks.
const FLOORS_MS: [f64; 2] = [40.0, 200.0];
/// At or above this share of its link's speed, a run's bytes are bound by the network.
const LINK_FULL: f64 = 0.9;
/// Saturation: clients grew at least this much over the previous level …
const MORE_CLIENTS: f64 = 1.5;
/// … while hits/s grew less than this (flat) …
const FLAT: f64 = 1.1;
/// … and the median latency grew at least this much.
const CLIMB: f64 = 1.5;

pub fn diagnose(i: &Inputs) -> Diagnosis {
    let server_busy = i.server.as_ref().map(|s| busy_share(s, i.result));
    let generator_busy = busiest_work(i.result);
    let only = |finding: Finding| Diagnosis {
        verdict: Some(finding.limit),
        findings: vec![finding],
        server_busy,
        generator_busy,
    };
    if let Some(finding) = no_http2(i).or_else(|| no_http3(i)) {
        // Nothing else was measured: the other rules would only restate the failed connect.
        return only(finding);
    }
    let sides = Sides {
        server: server_busy,
        generator: generator_busy,
    };
    let mut findings: Vec<Finding> = [
        target_lost(i),
        error_burst(i),
        errors(i),
        listen_queue(i),
        generator(i, sides),
        crate::pool::exhausted(i, sides.generator_saturated()),
        network(i),
        saturation(i, sides),
        latency_floor(i, server_busy),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !findings.iter().any(|f| f.limit == Limit::ListenQueue) {
        findings.extend(syn_retries(i));
    }
    findings.sort_by_key(|f| f.limit);
    let verdict = findings
        .first()
        .map(|f| f.limit)
        .or_else(|| sides.server_saturated().then_some(Limit::Server));
    Diagnosis {
        verdict,
        findings,
        server_busy,
        generator_busy,
    }
}

/// How busy each side of the run was: the server's CPUs (when its process is known) and the
/// generator's busiest load thread at work.
#[derive(Clone, Copy)]
struct Sides {
    server: Option<f64>,
    generator: Option<f64>,
}

impl Sides {
    fn server_saturated(&self) -> bool {
        self.server.is_some_and(|b| b >= SATURATED)
    }
    fn generator_saturated(&self) -> bool {
        self.generator.is_some_and(|b| b >= SATURATED)
    }
}

/// `--h3` against a server that does not speak HTTP/3 (it refused ALPN h3, or answered with a
/// version negotiation): the engine ended the run at that answer (`Ended::NoHttp3`).
fn no_http3(i: &Inputs) -> Option<Finding> {
    let r = i.result;
    if r.ended != Some(Ended::NoHttp3) {
        return None;
    }
    let why = r.first_error.as_deref().unwrap_or("no HTTP/3");
    Some(Finding {
        limit: Limit::NoHttp3,
        evidence: format!(
            "{} of {} requests failed to connect over HTTP/3, and the run stopped: {why}",
            r.failed.connect,
            r.attempted()
        ),
        advice: "turn HTTP/3 on in the server (Caddy serves it beside HTTPS by default; nginx 1.25 or later with `listen ... quic`; `webstand serve --listen-quic`), check that its UDP port is the URL's, or measure it without --h3".into(),
    })
}

/// The busiest load thread's work as a share of the run (`RunResult::thread_busy`: its CPU less
/// the time it spun); None without load threads.
fn busiest_work(r: &RunResult) -> Option<f64> {
    r.thread_busy().into_iter().reduce(f64::max)
}

/// `--h2` against a server that does not speak HTTP/2: the engine ended the run at its first
/// answer (`Ended::NoHttp2`), with that answer as the first error.
fn no_http2(i: &Inputs) -> Option<Finding> {
    let r = i.result;
    if r.ended != Some(Ended::NoHttp2) {
        return None;
    }
    let why = r.first_error.as_deref().unwrap_or("no HTTP/2");
    Some(Finding {
        limit: Limit::NoHttp2,
        evidence: format!(
            "{} of {} requests failed to connect over HTTP/2, and the run stopped: {why}",
            r.failed.connect,
            r.attempted()
        ),
        advice: "turn HTTP/2 on in the server (over TLS by ALPN: nginx `listen ... ssl http2`, Apache mod_http2 with `Protocols h2 http/1.1`, lighttpd `\"server.h2proto\" => \"enable\"` in server.feature-flags; on a plain port by prior knowledge, h2c: nginx `listen ... http2`, Apache `Protocols h2c http/1.1`, `webstand serve --h2c`), or measure it without --h2".into(),
    })
}

fn busy_share(s: &ServerUse, r: &RunResult) -> f64 {
    s.cpu.as_secs_f64() / r.elapsed.as_secs_f64().max(1e-9) / s.cpus.len().max(1) as f64
}

fn errors(i: &Inputs) -> Option<Finding> {
    let r = i.result;
    if r.attempted() == 0 || r.error_pct() <= i.max_error_pct {
        return None;
    }
    let f = r.failed;
    let statuses = match r.non_2xx_statuses.is_empty() {
        true => String::new(),
        false => format!(" ({})", crate::status::counts(&r.non_2xx_statuses)),
    };
    let mut evidence = format!(
        "{:.1} % of {} requests were errors: {} non-2xx answers{statuses}, failed: {} connect, {} receive, {} length, {} exceptions",
        r.error_pct(),
        r.attempted(),
        r.non_2xx,
        f.connect,
        f.receive,
        f.length,
        f.exceptions
    );
    if !r.socket_errors.is_empty() {
        let by = crate::errno::counts(&r.socket_errors);
        evidence.push_str(&format!("; by socket error: {by}"));
    }
    let known = crate::errno::most_common(&r.socket_errors);
    if let (Some(SocketError::EphemeralPorts), Some((lo, hi))) = (known, i.watched.port_range) {
        evidence.push_str(&format!(
            "; net.ipv4.ip_local_port_range is {lo} {hi}: {} ports per source address",
            hi.saturating_sub(lo) + 1
        ));
    }
    if let Some(e) = &r.first_error {
        evidence.push_str(&format!(" (first: {e})"));
    }
    let known = known.or_else(|| crate::errno::classify(r.first_error.as_deref()?));
    let advice = match known {
        Some(kind) if r.non_2xx < f.total() => kind.advice().to_string(),
        _ if r.non_2xx >= f.total() => crate::status::advice(&r.non_2xx_statuses),
        _ => "the figures describe failures, not service: see the failure classes above".into(),
    };
    Some(Finding {
        limit: Limit::Errors,
        evidence,
        advice,
    })
}

/// The engine ended the run because the target, which had answered, refused connection after
/// connection: the server went away (stopped, crashed, restarted). Said as such, not as a burst of
/// errors.
fn target_lost(i: &Inputs) -> Option<Finding> {
    let r = i.result;
    if r.ended != Some(Ended::TargetLost) {
        return None;
    }
    let t = &i.watched.errors;
    let from = t
        .counts
        .iter()
        .position(|&n| n > 0)
        .map(|first| format!(" from about {:.1} s", t.at(first)))
        .unwrap_or_default();
    let why = r
        .first_error
        .as_deref()
        .map(|e| format!(" ({e})"))
        .unwrap_or_default();
    Some(Finding {
        limit: Limit::TargetLost,
        evidence: format!(
            "the server answered {} requests, then refused connections{from} of the run's {:.1} s, and the run stopped{why}",
            r.complete,
            r.elapsed.as_secs_f64()
        ),
        advice: "the server stopped, crashed or was restarted during the run: the figures cover what it served before; look at its logs and how it ended".into(),
    })
}

/// Most of the run's errors (failed requests and non-2xx answers) inside a short stretch of it, by
/// the errors counted per interval ([`crate::timeline`]): an event during the run, not its steady
/// state. Above the error threshold or below it: a stall the run lived through is worth knowing.
fn error_burst(i: &Inputs) -> Option<Finding> {
    // A lost target's errors crowd at the end: the target-lost finding says why.
    if i.result.ended == Some(Ended::TargetLost) {
        return None;
    }
    // Out of descriptors or ports: the generator's own doing, which the errors finding names.
    let mine = crate::errno::most_common(&i.result.socket_errors);
    if matches!(
        mine,
        Some(SocketError::OpenFiles | SocketError::EphemeralPorts)
    ) {
        return None;
    }
    let t = &i.watched.errors;
    let b = t.burst()?;
    let per_interval: Vec<String> = t.counts[b.first..=b.last]
        .iter()
        .take(12)
        .map(u64::to_string)
        .collect();
    let more = if b.last - b.first >= 12 { ", …" } else { "" };
    Some(Finding {
        limit: Limit::ErrorBurst,
        evidence: format!(
            "{} of {} errors came between {:.1} s and {:.1} s of the run's {:.1} s (per {:.1} s: {}{more})",
            b.errors,
            t.total(),
            t.at(b.first),
            t.at(b.last + 1),
            i.result.elapsed.as_secs_f64(),
            t.interval.as_secs_f64(),
            per_interval.join(", ")
        ),
        advice: "the server stalled, restarted or shed load then, not throughout: look at its logs and the machine at that moment; outside it the figures are its steady service".into(),
    })
}

/// Connections that took a SYN retry or more to set up, and their share.
fn slow_connects(r: &RunResult) -> (u64, f64) {
    let h = &r.histograms.connect;
    let slow = h.count_between(SYN_RETRY_US, h.max().max(SYN_RETRY_US));
    (slow, slow as f64 * 100.0 / r.connections.max(1) as f64)
}

fn listen_queue(i: &Inputs) -> Option<Finding> {
    let tcp = &i.watched.tcp;
    let (overflows, drops) = (
        tcp.get("TcpExt.ListenOverflows"),
        tcp.get("TcpExt.ListenDrops"),
    );
    // The counters are host-wide: they count as this run's evidence only when its own connections
    // show the drops (a connect or a request that waited out a retransmission timer, or failed).
    let r = i.result;
    let felt = r.histograms.total.max() >= SYN_RETRY_US
        || r.histograms.connect.max() >= SYN_RETRY_US
        || r.failed.connect > 0;
    if (overflows == 0 && drops == 0) || !felt {
        return None;
    }
    let mut evidence = format!(
        "listen queue overflowed {overflows} times, {drops} SYNs dropped (ListenOverflows, ListenDrops; host-wide)"
    );
    let (slow, pct) = slow_connects(i.result);
    if slow > 0 {
        evidence.push_str(&format!(
            "; connect times show SYN retries: {slow} connections ({pct:.1} %) took 1 s or more"
        ));
    }
    Some(Finding {
        limit: Limit::ListenQueue,
        evidence,
        advice: "the server's accept backlog is too small or it accepts too slowly: raise its listen backlog (and net.core.somaxconn), or let it accept more per wake-up".into(),
    })
}

fn syn_retries(i: &Inputs) -> Option<Finding> {
    let (slow, pct) = slow_connects(i.result);
    if slow == 0 {
        return None;
    }
    let retrans = i.watched.tcp.get("TcpExt.TCPSynRetrans");
    Some(Finding {
        limit: Limit::SynRetries,
        evidence: format!(
            "{slow} connections ({pct:.1} %) took 1 s or more to connect, the SYN retry timer ({retrans} SYNs retransmitted, host-wide)"
        ),
        advice: "SYNs were dropped, usually by a full listen queue on the server's host: raise the server's backlog, or look for a firewall or rate limit".into(),
    })
}

/// Generator-bound: a load thread at work ≥ 90 % of the run by the engine's own figure (its CPU
/// time less its spin, ÷ elapsed: `RunResult::thread_busy`; never a thread busy only because it
/// spun), or starved of its CPU by another program (schedstat). Both sides saturated (the server
/// too at ≥ 90 % of its CPUs): neither can be named, and the finding says so.
fn generator(i: &Inputs, sides: Sides) -> Option<Finding> {
    let n = i.result.thread_cpu.len().max(i.watched.threads.len());
    let on = |t: Option<&crate::watch::LoadThread>| {
        t.and_then(|t| t.cpu)
            .map_or("its CPU".to_string(), |c| format!("CPU {c}"))
    };
    if sides.generator_saturated() {
        let work = sides.generator.unwrap_or_default();
        let spun = busiest_spin(i.result);
        let worked = format!(
            "the busiest of {n} load threads worked {:.0} % of {} (and spun {:.0} %)",
            work * 100.0,
            on(i.watched.threads.first()),
            spun * 100.0
        );
        if let Some(server) = sides.server.filter(|_| sides.server_saturated()) {
            return Some(Finding {
                limit: Limit::BothSaturated,
                evidence: format!("{worked}, and the server used {:.0} % of its CPUs", server * 100.0),
                advice: "neither side had room, so the figures are this pair's limit, not the server's alone: give the generator more CPU (--threads on more cores, a faster machine, mpirun on more) to see the server's own".into(),
            });
        }
        let server = sides
            .server
            .map(|b| format!(" while the server used {:.0} % of its CPUs", b * 100.0))
            .unwrap_or_default();
        return Some(Finding {
            limit: Limit::Generator,
            evidence: format!("{worked}{server}"),
            advice: "the figures are the generator's limit, not the server's: add --threads, give it another core, or run it under mpirun on more machines".into(),
        });
    }
    let t = i.watched.threads.first()?;
    if !(t.waited >= WAITED && t.waited >= 0.75 * t.busy) {
        return None;
    }
    Some(Finding {
        limit: Limit::Generator,
        evidence: format!(
            "the busiest of {n} load threads ran {:.0} % of the run and waited {:.0} % for {}, which another program was using",
            t.busy * 100.0,
            t.waited * 100.0,
            on(Some(t))
        ),
        advice: "latencies and rates include that wait: keep other programs off the generator's CPU, or pin it to a free one (taskset)".into(),
    })
}

/// The spin of the thread [`busiest_work`] names, as a share of the run.
fn busiest_spin(r: &RunResult) -> f64 {
    let busy = r.thread_busy();
    let Some(i) = (0..busy.len()).max_by(|&a, &b| busy[a].total_cmp(&busy[b])) else {
        return 0.0;
    };
    let spin = r.thread_spin.get(i).copied().unwrap_or_default();
    spin.as_secs_f64() / r.elapsed.as_secs_f64().max(1e-9)
}

/// The bytes/s of the busier direction near the speed of the link the target is reached over.
fn network(i: &Inputs) -> Option<Finding> {
    let link = i.watched.link.as_ref()?;
    let r = i.result;
    let secs = r.elapsed.as_secs_f64();
    if secs <= 0.0 {
        return None;
    }
    let mbit = |bytes: u64| bytes as f64 * 8.0 / 1e6 / secs;
    let (down, up) = (mbit(r.total_bytes), mbit(r.sent_bytes));
    let (direction, rate) = if down >= up {
        ("received", down)
    } else {
        ("sent", up)
    };
    let share = rate / link.mbit_per_sec.max(1e-9);
    if share < LINK_FULL {
        return None;
    }
    Some(Finding {
        limit: Limit::Network,
        evidence: format!(
            "{direction} {rate:.1} Mbit/s of HTTP over {}, whose link runs at {} Mbit/s ({}; {:.0} %, before TCP/IP headers)",
            link.interface,
            link.mbit_per_sec,
            link.source,
            share * 100.0
        ),
        advice: "the network, not the server, bounds the rate: use a faster link, smaller or compressed responses, or put the generator on the server's side of the link".into(),
    })
}

/// Throughput flat while latency climbs from the previous level: more clients bought no more hits/s,
/// only longer waits in queues. With the server's CPUs saturated (and the generator not) that is
/// the server's limit; with both saturated the generator's finding says so, and this one only
/// dates the knee.
fn saturation(i: &Inputs, sides: Sides) -> Option<Finding> {
    let p = i.previous?;
    let (a, b) = (p.result, i.result);
    if a.complete < 10 || b.complete < 10 || (i.clients as f64) < p.clients as f64 * MORE_CLIENTS {
        return None;
    }
    let (h1, h2) = (a.hits_per_sec(), b.hits_per_sec());
    let (l1, l2) = (a.latency_ms(0.5), b.latency_ms(0.5));
    if h2 >= h1 * FLAT || l2 < l1 * CLIMB {
        return None;
    }
    let evidence = format!(
        "from {} to {} clients hits/s went {h1:.0} → {h2:.0} ({:+.0} %) while the median latency went {l1:.2} → {l2:.2} ms ({:+.0} %)",
        p.clients,
        i.clients,
        (h2 / h1 - 1.0) * 100.0,
        (l2 / l1.max(1e-9) - 1.0) * 100.0
    );
    let knee = format!(
        "the run is past its knee, the peak near {} clients",
        p.clients
    );
    let (limit, advice) = match sides.server {
        Some(s) if s >= SATURATED && !sides.generator_saturated() => (
            Limit::Server,
            format!("the server used {:.0} % of its CPUs: its throughput limit is near {} clients; more clients only queue", s * 100.0, p.clients),
        ),
        Some(s) if s >= SATURATED => (
            Limit::Saturated,
            format!("{knee}, with the server and the generator both at their limit"),
        ),
        Some(s) => (
            Limit::Saturated,
            format!("{knee}, yet the server used only {:.0} % of its CPUs: something else is at its limit (a worker or connection cap, a lock, the disk, the generator)", s * 100.0),
        ),
        None => (
            Limit::Saturated,
            format!("{knee}: something is at its limit (the server's CPU, a worker or connection cap, a lock); pass --server-pid to see the server's CPU"),
        ),
    };
    Some(Finding {
        limit,
        evidence,
        advice,
    })
}

fn latency_floor(i: &Inputs, server_busy: Option<f64>) -> Option<Finding> {
    let r = i.result;
    if r.complete < 10 || server_busy.is_some_and(|b| b >= 0.5) {
        return None;
    }
    let (p10, p50) = (r.latency_ms(0.10), r.latency_ms(0.50));
    let floor = FLOORS_MS
        .into_iter()
        .find(|f| p10 >= 0.85 * f && p50 <= 1.5 * f)?;
    Some(Finding {
        limit: Limit::LatencyFloor,
        evidence: format!(
            "the fastest 10 % of responses took {p10:.1} ms or more (median {p50:.1} ms): a floor near {floor:.0} ms caps each connection at {:.0} hits/s",
            1000.0 / floor
        ),
        advice: "TCP's delayed ACK meeting Nagle: the server writes its answer in pieces (headers, then body); have it send them in one write, or set TCP_NODELAY".into(),
    })
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
