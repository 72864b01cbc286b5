//! What a load thread counts: every complete response, recorded once its body is checked (latency
//! histograms, counters, the sample if kept), every failed request by ab's classes with its error,
//! the bytes received, and the deltas the thread adds to the run's `Live` counters once per pass.
//! The one place a response is recorded, and so where a script's `response()` is called
//! ([`Record::response`], with the head and body the connection kept for it).

use crate::clock::{micros, thread_cpu};
use crate::shared::Shared;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use webstand_results::live::Live;
use webstand_results::plan::BodyCheck;
use webstand_results::result::{CpuTime, HalfwayWaits, RunResult, Sample};
use webstand_results::script::ThreadScript;
use webstand_results::{status_class, ThreadView};

/// How a failed request is counted (ab's classes; a failed write counts as an exception too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    Connect,
    Receive,
    Exceptions,
    Write,
}

/// A complete response, as any protocol saw it.
pub(crate) struct Response {
    /// Which of the plan's requests it answers.
    pub req: usize,
    /// The request's send time (closed loop) or intended send time (open loop).
    pub start: Instant,
    /// When its last byte arrived.
    pub end: Instant,
    /// The connection's set-up time on the first request it carried, else 0.
    pub connect_us: u64,
    /// When the request was written, and when the response's first byte arrived.
    pub written: Instant,
    pub first_byte: Option<Instant>,
    pub status: u16,
    pub body_len: u64,
    /// The body's SHA-256, when the request's body is checked.
    pub digest: Option<[u8; 32]>,
}

/// A thread's counts: its part of the run's result, and what it has not yet added to `Live`.
pub(crate) struct Record {
    pub r: RunResult,
    /// Requests on reused connections (connect time 0), added to the histogram at the end.
    zero_connects: u64,
    /// Keep-alive connections the server closed, after a response that said so or before the next
    /// one (the halfway wait is only for a server that keeps them open: `halfway.rs`).
    pub server_closes: u64,
    // Deltas not yet added to the shared Live counters.
    live_complete: u64,
    live_failed: u64,
    live_non_2xx: u64,
    live_bytes: u64,
}

impl Record {
    /// An empty record for a plan of `requests` requests.
    pub(crate) fn new(requests: usize) -> Record {
        Record {
            r: RunResult {
                per_request: vec![0; requests],
                ..Default::default()
            },
            zero_connects: 0,
            server_closes: 0,
            live_complete: 0,
            live_failed: 0,
            live_non_2xx: 0,
            live_bytes: 0,
        }
    }

    /// `n` bytes read from a socket.
    pub(crate) fn received(&mut self, n: usize) {
        self.r.total_bytes += n as u64;
        self.live_bytes += n as u64;
    }

    /// A complete response: recorded if its body is the one expected (true), else counted as a
    /// failed request of ab's Length class (false).
    /// [`Record::response`] for a script that reads responses: it gets the response's `head` and
    /// `body` first; its error is returned for the thread to stop on.
    pub(crate) fn scripted_response(
        &mut self,
        sh: &Shared,
        resp: &Response,
        script: &mut dyn ThreadScript,
        head: &[u8],
        body: &[u8],
    ) -> anyhow::Result<bool> {
        script.response(resp.status, head, body)?;
        Ok(self.response(sh, resp))
    }

    pub(crate) fn response(&mut self, sh: &Shared, resp: &Response) -> bool {
        if !body_ok(sh, resp.req, resp.body_len, resp.digest) {
            self.r.failed.length += 1;
            self.live_failed += 1;
            return false;
        }
        let total = micros(resp.end.saturating_duration_since(resp.start));
        let waiting = micros(
            resp.first_byte
                .unwrap_or(resp.end)
                .saturating_duration_since(resp.written),
        );
        let h = &mut self.r.histograms;
        h.total.saturating_record(total);
        if resp.connect_us == 0 {
            self.zero_connects += 1; // added to the histogram in one go at the end
        } else {
            h.connect.saturating_record(resp.connect_us);
        }
        h.waiting.saturating_record(waiting);
        h.processing
            .saturating_record(total.saturating_sub(resp.connect_us));
        self.r.latency_sum_us += total as u128;
        self.r.complete += 1;
        self.r.per_request[resp.req] += 1;
        self.live_complete += 1;
        if !(200..300).contains(&resp.status) {
            self.r.non_2xx += 1;
            self.live_non_2xx += 1;
            *self.r.non_2xx_statuses.entry(resp.status).or_default() += 1;
        }
        if sh.plan.keep_samples {
            self.r.samples.push(Sample {
                start_us: micros(resp.start.saturating_duration_since(sh.start)),
                connect_us: resp.connect_us,
                waiting_us: waiting,
                total_us: total,
            });
        }
        true
    }

    /// One failed request of `class`.
    pub(crate) fn failure(&mut self, class: Class) {
        self.live_failed += 1;
        let f = &mut self.r.failed;
        match class {
            Class::Connect => f.connect += 1,
            Class::Receive => f.receive += 1,
            Class::Exceptions => f.exceptions += 1,
            Class::Write => {
                f.exceptions += 1;
                self.r.write_errors += 1;
            }
        }
    }

    /// What failed a request: its OS error, if one (counted by errno), and its description, kept
    /// if it is the run's first.
    pub(crate) fn error(&mut self, errno: Option<i32>, what: impl FnOnce() -> String) {
        if let Some(code) = errno {
            *self.r.socket_errors.entry(code).or_default() += 1;
        }
        self.r.first_error.get_or_insert_with(what);
    }

    /// Adds what the `Live` counters have not seen yet.
    pub(crate) fn flush(&mut self, live: &Live) {
        if self.live_complete > 0 {
            live.complete
                .fetch_add(std::mem::take(&mut self.live_complete), Ordering::Relaxed);
        }
        if self.live_failed > 0 {
            live.failed
                .fetch_add(std::mem::take(&mut self.live_failed), Ordering::Relaxed);
        }
        if self.live_non_2xx > 0 {
            live.non_2xx
                .fetch_add(std::mem::take(&mut self.live_non_2xx), Ordering::Relaxed);
        }
        if self.live_bytes > 0 {
            live.bytes
                .fetch_add(std::mem::take(&mut self.live_bytes), Ordering::Relaxed);
        }
    }

    /// Copies what the thread measured so far into its published `view` (`view.rs`).
    pub(crate) fn fill_view(&self, v: &mut ThreadView, connections_open: u64, busy: Duration) {
        let r = &self.r;
        v.complete = r.complete;
        v.failed = r.failed;
        v.statuses = [0; 6];
        v.statuses[2] = r.complete - r.non_2xx;
        for (&status, &n) in &r.non_2xx_statuses {
            v.statuses[status_class(status)] += n;
        }
        v.bytes = r.total_bytes;
        v.connections_open = connections_open;
        v.busy = busy;
        v.threads = 1;
        v.latency.reset();
        // Same bounds on both sides, so this neither fails nor allocates.
        let _ = v.latency.add(&r.histograms.total);
    }

    /// The thread's result: what it counted, its own CPU time since `cpu0` (of which `spun` was
    /// spent spinning), how it waited halfway, its late sends.
    pub(crate) fn finish(
        mut self,
        live: &Live,
        cpu0: CpuTime,
        spun: Duration,
        waits: HalfwayWaits,
        late_sends: u64,
    ) -> RunResult {
        self.flush(live);
        self.r
            .histograms
            .connect
            .saturating_record_n(0, self.zero_connects);
        let cpu = thread_cpu();
        self.r.cpu = CpuTime {
            user: cpu.user.saturating_sub(cpu0.user),
            sys: cpu.sys.saturating_sub(cpu0.sys),
        };
        self.r.thread_cpu = vec![self.r.cpu];
        self.r.thread_spin = vec![spun];
        self.r.thread_waits = vec![waits];
        self.r.late_sends += late_sends;
        self.r
    }
}

/// Whether the body that just completed for request `req` is the one expected: its digest, the
/// first fetch's digest, or (ab's check) the first response's length.
fn body_ok(sh: &Shared, req: usize, body_len: u64, digest: Option<[u8; 32]>) -> bool {
    let doc_len = *sh.doc_len[req].get_or_init(|| body_len);
    match &sh.plan.requests[req].expect {
        Some(BodyCheck::Digest { len, sha256 }) => {
            *len == body_len && digest.as_ref() == Some(sha256)
        }
        Some(BodyCheck::FirstFetch) => match digest {
            Some(d) => *sh.first_digest[req].get_or_init(|| d) == d,
            None => false,
        },
        None => sh.plan.variable_length || doc_len == body_len,
    }
}
