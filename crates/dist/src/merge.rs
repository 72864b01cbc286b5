//! What one rank sends back, and how rank 0 adds the ranks up into one result.
//!
//! Counts add; the four latency histograms travel in HdrHistogram's V2 encoding (lossless: every
//! bucket's count) and are added bucket by bucket, so the merged percentiles are exactly those of one
//! process that recorded every request. Time is laid on rank 0's clock: a rank's start is its own
//! start minus its clock offset, the merged run spans the earliest start to the latest end.

use anyhow::Context;
use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use webstand_results::{
    CpuTime, Ended, Failures, Histograms, QuicSummary, RunResult, Sample, TlsSummary,
};

/// One rank's account of its run, as sent to rank 0.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RankReport {
    pub rank: usize,
    /// The rank's share of the connections (-c).
    pub clients: usize,
    /// The rank's clock minus rank 0's, in seconds (0 on rank 0's host: one clock).
    pub clock_offset: f64,
    /// When the rank's engine began, minus the agreed start, on rank 0's clock, in seconds.
    pub start_skew: f64,
    /// The whole rank process's CPU time over its share (the load threads, the thread polling MPI
    /// and MPI's own), in nanoseconds.
    #[serde(default)]
    pub process_cpu_ns: u64,
    /// Set when the rank's engine could not run its plan at all.
    pub error: Option<String>,
    /// None for a rank with no share (more ranks than connections).
    pub result: Option<WireResult>,
}

impl RankReport {
    /// The rank could not run its share, or could not reach (or lost) the target.
    pub fn failed(&self) -> bool {
        self.error.is_some() || self.result.as_ref().is_some_and(|r| r.ended.is_some())
    }
}

/// A [`RunResult`] in a form serde can carry: histograms V2-encoded, durations in nanoseconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WireResult {
    started_unix: f64,
    elapsed_ns: u64,
    complete: u64,
    failed: [u64; 4],
    write_errors: u64,
    non_2xx: u64,
    keep_alive_requests: u64,
    connections: u64,
    total_bytes: u64,
    sent_bytes: u64,
    body_bytes: u64,
    document_length: Option<u64>,
    server_software: Option<String>,
    latency_sum_us: u128,
    /// total, connect, waiting, processing: base64 of the V2 encoding.
    histograms: [String; 4],
    /// The threads' request-rate samples, encoded as the histograms.
    #[serde(default)]
    request_rates: String,
    cpu_ns: [u64; 2],
    /// Each load thread's [user, sys] CPU time.
    thread_cpu_ns: Vec<[u64; 2]>,
    /// Each load thread's time spent spinning for a response (part of its CPU time).
    #[serde(default)]
    thread_spin_ns: Vec<u64>,
    /// Each load thread's halfway waits: [blocks, naps].
    #[serde(default)]
    thread_waits: Vec<[u64; 2]>,
    /// Each load thread's time off its CPU: [napped, blocked].
    #[serde(default)]
    thread_wait_ns: Vec<[u64; 2]>,
    /// The spin window the rank's load threads had, the CPUs they could use and the rank
    /// machine's online CPUs.
    #[serde(default)]
    spin_window_ns: u64,
    #[serde(default)]
    load_cpus: Vec<usize>,
    #[serde(default)]
    online_cpus: usize,
    /// Non-2xx answers by status.
    #[serde(default)]
    non_2xx_statuses: std::collections::BTreeMap<u16, u64>,
    late_sends: u64,
    /// The rank's share of an open-loop rate (None: closed loop).
    #[serde(default)]
    asked_rate: Option<f64>,
    per_request: Vec<u64>,
    /// ab's `-g`/`-e` samples: [start, connect, waiting, total] in µs, the start from the rank's own
    /// start (empty unless the plan keeps samples).
    #[serde(default)]
    samples: Vec<[u64; 4]>,
    first_error: Option<String>,
    interrupted: bool,
    ended: Option<String>,
    /// `https://`: the rank's handshakes (added up) and what its first one negotiated.
    #[serde(default)]
    tls: Option<TlsSummary>,
    /// Failed requests by socket error (errno), added up across ranks for the Diagnosis.
    #[serde(default)]
    socket_errors: std::collections::BTreeMap<i32, u64>,
    /// `--h2`: the rank's h2load figures (streams, status classes, header bytes, connect and
    /// first-byte times).
    #[serde(default)]
    h2: Option<h2::WireH2>,
    /// `--h3`: the rank's QUIC figures (added up as a thread's are).
    #[serde(default)]
    quic: Option<QuicSummary>,
}

fn encode(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2Serializer::new()
        .serialize(h, &mut bytes)
        .expect("a histogram serialises into memory");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn decode(s: &str) -> anyhow::Result<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(s)?;
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| anyhow::anyhow!("bad histogram from a rank: {e:?}"))
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u128::from(u64::MAX)) as u64
}

impl From<&RunResult> for WireResult {
    fn from(r: &RunResult) -> WireResult {
        // Destructured whole, so a field added to RunResult cannot be forgotten here.
        let RunResult {
            started_unix,
            elapsed,
            complete,
            failed,
            write_errors,
            non_2xx,
            non_2xx_statuses,
            keep_alive_requests,
            connections,
            total_bytes,
            sent_bytes,
            body_bytes,
            document_length,
            server_software,
            latency_sum_us,
            histograms: h,
            cpu,
            thread_cpu,
            thread_spin,
            thread_waits,
            spin_window,
            load_cpus,
            online_cpus,
            late_sends,
            asked_rate,
            per_request,
            samples,
            first_error,
            interrupted,
            ended,
            tls,
            socket_errors,
            h2,
            quic,
        } = r;
        WireResult {
            started_unix: *started_unix,
            elapsed_ns: nanos(*elapsed),
            complete: *complete,
            failed: [
                failed.connect,
                failed.receive,
                failed.length,
                failed.exceptions,
            ],
            write_errors: *write_errors,
            non_2xx: *non_2xx,
            keep_alive_requests: *keep_alive_requests,
            connections: *connections,
            total_bytes: *total_bytes,
            sent_bytes: *sent_bytes,
            body_bytes: *body_bytes,
            document_length: *document_length,
            server_software: server_software.clone(),
            latency_sum_us: *latency_sum_us,
            histograms: [&h.total, &h.connect, &h.waiting, &h.processing].map(encode),
            request_rates: encode(&h.requests),
            cpu_ns: [nanos(cpu.user), nanos(cpu.sys)],
            thread_cpu_ns: thread_cpu
                .iter()
                .map(|c| [nanos(c.user), nanos(c.sys)])
                .collect(),
            thread_spin_ns: thread_spin.iter().map(|&d| nanos(d)).collect(),
            thread_waits: thread_waits.iter().map(|w| [w.blocks, w.naps]).collect(),
            thread_wait_ns: thread_waits
                .iter()
                .map(|w| [nanos(w.napped), nanos(w.blocked)])
                .collect(),
            spin_window_ns: nanos(*spin_window),
            load_cpus: load_cpus.clone(),
            online_cpus: *online_cpus,
            non_2xx_statuses: non_2xx_statuses.clone(),
            late_sends: *late_sends,
            asked_rate: *asked_rate,
            per_request: per_request.clone(),
            samples: samples
                .iter()
                .map(|s| [s.start_us, s.connect_us, s.waiting_us, s.total_us])
                .collect(),
            first_error: first_error.clone(),
            interrupted: *interrupted,
            ended: ended.map(|e| e.name().to_string()),
            tls: tls.clone(),
            socket_errors: socket_errors.clone(),
            h2: h2.as_ref().map(h2::WireH2::from),
            quic: quic.clone(),
        }
    }
}

impl WireResult {
    pub fn to_result(&self) -> anyhow::Result<RunResult> {
        let [total, connect, waiting, processing] = &self.histograms;
        Ok(RunResult {
            started_unix: self.started_unix,
            elapsed: Duration::from_nanos(self.elapsed_ns),
            complete: self.complete,
            failed: Failures {
                connect: self.failed[0],
                receive: self.failed[1],
                length: self.failed[2],
                exceptions: self.failed[3],
            },
            write_errors: self.write_errors,
            non_2xx: self.non_2xx,
            non_2xx_statuses: self.non_2xx_statuses.clone(),
            keep_alive_requests: self.keep_alive_requests,
            connections: self.connections,
            total_bytes: self.total_bytes,
            sent_bytes: self.sent_bytes,
            body_bytes: self.body_bytes,
            document_length: self.document_length,
            server_software: self.server_software.clone(),
            latency_sum_us: self.latency_sum_us,
            histograms: Histograms {
                total: decode(total)?,
                connect: decode(connect)?,
                waiting: decode(waiting)?,
                processing: decode(processing)?,
                requests: match self.request_rates.is_empty() {
                    true => Histograms::new().requests,
                    false => decode(&self.request_rates)?,
                },
            },
            cpu: CpuTime {
                user: Duration::from_nanos(self.cpu_ns[0]),
                sys: Duration::from_nanos(self.cpu_ns[1]),
            },
            thread_cpu: self
                .thread_cpu_ns
                .iter()
                .map(|&[user, sys]| CpuTime {
                    user: Duration::from_nanos(user),
                    sys: Duration::from_nanos(sys),
                })
                .collect(),
            thread_spin: self
                .thread_spin_ns
                .iter()
                .map(|&n| Duration::from_nanos(n))
                .collect(),
            thread_waits: self
                .thread_waits
                .iter()
                .enumerate()
                .map(|(i, &[blocks, naps])| {
                    let [napped, blocked] = self.thread_wait_ns.get(i).copied().unwrap_or_default();
                    webstand_results::HalfwayWaits {
                        blocks,
                        naps,
                        napped: Duration::from_nanos(napped),
                        blocked: Duration::from_nanos(blocked),
                    }
                })
                .collect(),
            spin_window: Duration::from_nanos(self.spin_window_ns),
            load_cpus: self.load_cpus.clone(),
            online_cpus: self.online_cpus,
            late_sends: self.late_sends,
            asked_rate: self.asked_rate,
            per_request: self.per_request.clone(),
            samples: self
                .samples
                .iter()
                .map(|&[start_us, connect_us, waiting_us, total_us]| Sample {
                    start_us,
                    connect_us,
                    waiting_us,
                    total_us,
                })
                .collect(),
            first_error: self.first_error.clone(),
            interrupted: self.interrupted,
            ended: self.ended.as_deref().and_then(Ended::from_name),
            tls: self.tls.clone(),
            socket_errors: self.socket_errors.clone(),
            h2: self.h2.as_ref().map(h2::WireH2::to_summary).transpose()?,
            quic: self.quic.clone(),
        })
    }
}

/// One row of the per-rank table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankRow {
    pub rank: usize,
    /// False for a rank with no share, or one that sent nothing (see `Merged::missing`).
    pub loaded: bool,
    /// The rank's share of the connections (-c).
    pub clients: usize,
    /// Complete requests.
    pub requests: u64,
    pub failures: u64,
    /// The load threads' CPU per complete request (the engine's figure, as one process reports it).
    pub cpu_us_per_request: Option<f64>,
    /// The whole rank process's CPU per complete request: the load threads plus the distribution's
    /// cost (polling MPI, MPI's own threads).
    pub process_cpu_us_per_request: Option<f64>,
    pub start_skew_ms: f64,
}

/// The ranks added up.
#[derive(Clone, Debug)]
pub struct Merged {
    pub result: RunResult,
    pub ranks: Vec<RankRow>,
    /// Ranks that sent no result (died or were killed): the merged result is incomplete.
    pub missing: Vec<usize>,
    /// The largest |start skew| of the ranks that ran, in milliseconds.
    pub start_skew_ms: f64,
    /// What the distribution added to the run, in milliseconds: from rank 0's call to the agreed
    /// start, plus from the last rank's end to the merged result (set by the protocol).
    pub protocol_ms: f64,
}

/// Adds up the reports of a run over `ranks` ranks (`reports` in any order, some maybe missing).
pub fn merge(ranks: usize, reports: &[RankReport]) -> anyhow::Result<Merged> {
    let mut result = RunResult::default();
    let mut rows = Vec::with_capacity(ranks);
    let mut missing = Vec::new();
    let (mut first_start, mut last_end) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut start_skew_ms: f64 = 0.0;
    let mut endings = Vec::new();
    for rank in 0..ranks {
        let Some(rep) = reports.iter().find(|r| r.rank == rank) else {
            missing.push(rank);
            rows.push(idle_row(rank));
            continue;
        };
        if let Some(e) = &rep.error {
            result
                .first_error
                .get_or_insert_with(|| format!("rank {rank}: {e}"));
            endings.push(Ended::Unreachable);
        }
        let Some(wire) = &rep.result else {
            rows.push(idle_row(rank));
            continue;
        };
        let r = wire
            .to_result()
            .with_context(|| format!("rank {rank}'s result"))?;
        let start = r.started_unix - rep.clock_offset;
        first_start = first_start.min(start);
        last_end = last_end.max(start + r.elapsed.as_secs_f64());
        start_skew_ms = start_skew_ms.max(rep.start_skew.abs() * 1e3);
        rows.push(RankRow {
            rank,
            loaded: true,
            clients: rep.clients,
            requests: r.complete,
            failures: r.failed.total(),
            cpu_us_per_request: r.cpu_us_per_request_of(r.cpu),
            process_cpu_us_per_request: r.cpu_us_per_request_of(CpuTime {
                user: Duration::from_nanos(rep.process_cpu_ns),
                sys: Duration::ZERO,
            }),
            start_skew_ms: rep.start_skew * 1e3,
        });
        // The error shown is the first rank's that ended the run, else the first rank's at all.
        if let Some(e) = r.first_error.as_deref() {
            if result.first_error.is_none() || (r.ended.is_some() && endings.is_empty()) {
                result.first_error = Some(format!("rank {rank}: {e}"));
            }
        }
        endings.extend(r.ended);
        add(&mut result, &r);
    }
    if first_start.is_finite() {
        result.started_unix = first_start;
        result.elapsed = Duration::from_secs_f64((last_end - first_start).max(0.0));
    }
    result.ended = ending(&endings, result.complete);
    result.interrupted |= !missing.is_empty();
    Ok(Merged {
        result,
        ranks: rows,
        missing,
        start_skew_ms,
        protocol_ms: 0.0,
    })
}

fn idle_row(rank: usize) -> RankRow {
    RankRow {
        rank,
        loaded: false,
        clients: 0,
        requests: 0,
        failures: 0,
        cpu_us_per_request: None,
        process_cpu_us_per_request: None,
        start_skew_ms: 0.0,
    }
}

/// A rank that never reached the target ends the whole run; when others did get through, the
/// target counts as lost rather than never reached.
fn ending(endings: &[Ended], complete: u64) -> Option<Ended> {
    if endings.contains(&Ended::TargetLost) || (!endings.is_empty() && complete > 0) {
        Some(Ended::TargetLost)
    } else {
        endings.first().copied()
    }
}

/// Adds one rank's counts into the total (time span, errors and endings are the caller's).
fn add(into: &mut RunResult, r: &RunResult) {
    // Every rank's load threads keep one entry each in thread_cpu (ranks in order).
    into.add_counts(r);
    into.document_length = into.document_length.or(r.document_length);
    if into.server_software.is_none() {
        into.server_software = r.server_software.clone();
    }
    into.interrupted |= r.interrupted;
    // How the load waited: the longest window any rank's threads had; where it ran: the first
    // rank's machine (each rank pins on its own).
    into.spin_window = into.spin_window.max(r.spin_window);
    if into.load_cpus.is_empty() {
        (into.load_cpus, into.online_cpus) = (r.load_cpus.clone(), r.online_cpus);
    }
}

mod h2;
#[cfg(test)]
mod tests;
