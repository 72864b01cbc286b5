//! What a run measured. Raw counts and histograms only; derived figures live in [`crate::figures`].

use hdrhistogram::Histogram;
use std::time::Duration;

/// Failed requests by ab's classes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Failures {
    /// The connection could not be made (refused, unreachable, connect timeout).
    pub connect: u64,
    /// Reading failed: reset, or the peer closed before a complete response.
    pub receive: u64,
    /// The body length differed from the first response's (unless variable length is accepted),
    /// or a checksum did not match.
    pub length: u64,
    /// Everything else: framing violations, garbage, timeouts, poll errors.
    pub exceptions: u64,
}

impl Failures {
    pub fn total(&self) -> u64 {
        self.connect + self.receive + self.length + self.exceptions
    }
    pub fn add(&mut self, o: &Failures) {
        self.connect += o.connect;
        self.receive += o.receive;
        self.length += o.length;
        self.exceptions += o.exceptions;
    }
}

/// A send later than its intended time by more than this counts as late
/// ([`RunResult::late_sends`]); a poll wakes with millisecond resolution, so anything closer is timer
/// noise.
pub const LATE_SEND: Duration = Duration::from_millis(2);

/// Refused connects in a row that end a run whose target answered before (ab gives up after ten
/// connect failures, too).
pub const LOST_AFTER_REFUSALS: u64 = 10;

/// Why the engine ended a run before its stop condition (a Ctrl-C is `RunResult::interrupted`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// No connection could be made at the start (every address refused or failed): nothing measured.
    Unreachable,
    /// Connections worked, then were refused again and again: the server went away mid-run.
    TargetLost,
    /// The server answered but does not speak HTTP/2 (`--h2`: no ALPN `h2` over TLS, or no SETTINGS
    /// after the h2c preface): as for an unreachable target, nothing was measured.
    NoHttp2,
    /// The server answered but does not speak HTTP/3 (`--h3`: it refused ALPN `h3`, or answered
    /// with a version negotiation without QUIC v1): nothing was measured.
    NoHttp3,
}

impl Ended {
    /// The name saved in the history and shown in tables.
    pub fn name(self) -> &'static str {
        match self {
            Ended::Unreachable => "unreachable",
            Ended::TargetLost => "target lost",
            Ended::NoHttp2 => "without HTTP/2",
            Ended::NoHttp3 => "without HTTP/3",
        }
    }
    /// The server answered in another protocol than the one asked for: nothing was measured,
    /// and the engine's first error is the one line that says what it answered.
    pub fn refused_protocol(self) -> bool {
        matches!(self, Ended::NoHttp2 | Ended::NoHttp3)
    }
    pub fn from_name(name: &str) -> Option<Ended> {
        match name {
            "unreachable" => Some(Ended::Unreachable),
            "target lost" => Some(Ended::TargetLost),
            "without HTTP/2" => Some(Ended::NoHttp2),
            "without HTTP/3" => Some(Ended::NoHttp3),
            _ => None,
        }
    }
}

/// Latency histograms in microseconds, as ab's "Connection Times" splits a request.
#[derive(Clone, Debug)]
pub struct Histograms {
    /// Send (or intended send, open loop) to last byte.
    pub total: Histogram<u64>,
    /// Connection set-up (zero for a request on a reused connection).
    pub connect: Histogram<u64>,
    /// Request written to first response byte.
    pub waiting: Histogram<u64>,
    /// Total minus connect.
    pub processing: Histogram<u64>,
    /// Not a latency: requests per second, sampled per load thread every 100 ms (`rates.rs`;
    /// wrk's `requests` statistics).
    pub requests: Histogram<u64>,
}

impl Histograms {
    /// Empty histograms covering 1 µs to 1 hour at 3 significant figures.
    pub fn new() -> Histograms {
        let h = || Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid histogram bounds");
        Histograms {
            total: h(),
            connect: h(),
            waiting: h(),
            processing: h(),
            requests: h(),
        }
    }
    pub fn merge(&mut self, o: &Histograms) {
        // Same bounds everywhere, so adding cannot fail.
        self.total.add(&o.total).expect("same bounds");
        self.connect.add(&o.connect).expect("same bounds");
        self.waiting.add(&o.waiting).expect("same bounds");
        self.processing.add(&o.processing).expect("same bounds");
        self.requests.add(&o.requests).expect("same bounds");
    }
}

impl Default for Histograms {
    fn default() -> Self {
        Histograms::new()
    }
}

/// One complete request's times, kept only when the plan asks (`Plan::keep_samples`, for ab's `-g`
/// and `-e` files, which list or sort every request).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// When the request started (its connection's start for a new connection), µs after the run began.
    pub start_us: u64,
    /// Connection set-up (0 on a reused connection).
    pub connect_us: u64,
    /// Request written to first response byte.
    pub waiting_us: u64,
    /// Start to last byte.
    pub total_us: u64,
}

/// User and system CPU time of a process (tree).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuTime {
    pub user: Duration,
    pub sys: Duration,
}

impl CpuTime {
    pub fn total(&self) -> Duration {
        self.user + self.sys
    }
}

/// How a load thread waited off its CPU: how often it waited halfway down its queue instead of
/// spinning (`halfway.rs`: blocked on one socket, or napped), and how long it napped and blocked in
/// all (in the poller or on one socket). With the time it spun (`RunResult::thread_spin`) and its CPU
/// time this splits its run into work and waiting; the JSON's `load_threads` shows them, so a user
/// (and a test) can see which wait a run took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HalfwayWaits {
    pub blocks: u64,
    pub naps: u64,
    /// Time asleep in naps.
    pub napped: Duration,
    /// Time blocked: in the poller with a timeout, or on the halfway socket.
    pub blocked: Duration,
}

#[derive(Clone, Debug, Default)]
pub struct RunResult {
    /// Wall-clock start, seconds since the Unix epoch.
    pub started_unix: f64,
    /// From the first send to the last completion (or the stop).
    pub elapsed: Duration,
    /// Requests whose response was fully received and correctly framed.
    pub complete: u64,
    pub failed: Failures,
    /// Requests that could not be written completely.
    pub write_errors: u64,
    /// Complete responses whose status was not 2xx.
    pub non_2xx: u64,
    /// Those responses by status (404, 503 …), so a diagnosis can name it.
    pub non_2xx_statuses: std::collections::BTreeMap<u16, u64>,
    /// Complete responses that arrived on a connection that stays open (ab's "Keep-Alive requests").
    pub keep_alive_requests: u64,
    /// TCP connections opened successfully.
    pub connections: u64,
    /// Every byte read from sockets: status lines, headers and bodies.
    pub total_bytes: u64,
    /// Every byte written to sockets: request lines, headers and bodies (ab's "Total body sent").
    pub sent_bytes: u64,
    /// Body bytes only (ab's "HTML transferred"): payload after de-chunking.
    pub body_bytes: u64,
    /// Body length of the first complete response (ab's "Document Length").
    pub document_length: Option<u64>,
    /// The first response's Server header.
    pub server_software: Option<String>,
    /// Sum of every complete request's latency, in microseconds (Little's load factor).
    pub latency_sum_us: u128,
    pub histograms: Histograms,
    /// The generator's own CPU time during the run (the sum of `thread_cpu`).
    pub cpu: CpuTime,
    /// Each load thread's own CPU time during the run, one entry per thread.
    pub thread_cpu: Vec<CpuTime>,
    /// Of that, the time each load thread spun waiting for a response (`spin.rs`): CPU time, but not
    /// work. One entry per thread, or none (results that do not carry it).
    pub thread_spin: Vec<Duration>,
    /// How each load thread waited off its CPU (`halfway.rs`, the poller), one entry per thread,
    /// or none (results that do not carry it).
    pub thread_waits: Vec<HalfwayWaits>,
    /// The longest a load thread might spin before it blocked (`spin.rs`): zero when no thread
    /// could spin (`--spin off`, `--rate`, or `auto` for `--h2` or without a CPU of its own).
    pub spin_window: Duration,
    /// The CPUs the load threads were allowed to run on (empty if unknown), and how many the
    /// machine has online: fewer than online means the generator was pinned.
    pub load_cpus: Vec<usize>,
    pub online_cpus: usize,
    /// Open loop only: the rate asked, requests per second (None for a closed-loop run).
    pub asked_rate: Option<f64>,
    /// Open loop only: sends that left later than their intended time (by more than [`LATE_SEND`]).
    pub late_sends: u64,
    /// Complete responses per entry of `Plan::requests` (to check an observed workload mix).
    pub per_request: Vec<u64>,
    /// Every complete request's times, in completion order per thread (empty unless
    /// `Plan::keep_samples`).
    pub samples: Vec<Sample>,
    /// The first failure's description (e.g. "connect to 127.0.0.1:8080: Connection refused"), so a
    /// command can say why a run failed.
    pub first_error: Option<String>,
    /// Failed requests by the OS error that failed them (errno: ECONNREFUSED, EADDRNOTAVAIL,
    /// EMFILE …), for the ones an OS error failed.
    pub socket_errors: std::collections::BTreeMap<i32, u64>,
    /// True when the run was cut short (Ctrl-C); the figures cover what completed.
    pub interrupted: bool,
    /// Set when the engine ended the run because the target could not be reached or was lost.
    pub ended: Option<Ended>,
    /// `https://` runs: what was negotiated and the handshakes.
    pub tls: Option<TlsSummary>,
    /// `--h2` runs: h2load's figures (streams, status classes, header and data bytes).
    pub h2: Option<H2Summary>,
    /// `--h3` runs: QUIC's own figures (handshakes, datagrams, loss, congestion window, errors).
    pub quic: Option<QuicSummary>,
}

/// What an HTTP/2 run adds to ab's figures: h2load's summary lines. Per-stream latency is in
/// [`RunResult::histograms`] (`total`: a stream's send, or intended send, to its last byte).
#[derive(Clone, Debug)]
pub struct H2Summary {
    /// Streams opened (h2load's "started").
    pub started: u64,
    /// Streams that ended, well or not ("done").
    pub done: u64,
    /// Streams that ended with a 2xx or 3xx response ("succeeded").
    pub succeeded: u64,
    /// Streams that ended without a whole response: reset, protocol error, connection lost
    /// ("errored").
    pub errored: u64,
    /// Streams that ended because nothing arrived for the timeout (-s) ("timeout").
    pub timeout: u64,
    /// Final responses by status class: `status[2]` counts the 2xx.
    pub status: [u64; 6],
    /// Header block bytes received (HPACK-compressed, frame headers and padding excluded).
    pub header_bytes: u64,
    /// The same headers decoded: names and values (h2load's base for "space savings").
    pub header_decoded_bytes: u64,
    /// RST_STREAM frames the server sent, and GOAWAY frames.
    pub resets: u64,
    pub goaways: u64,
    /// Streams per connection actually allowed: the smallest of -m and the servers' limits.
    pub max_streams: u32,
    /// Per connection: connect (and TLS handshake) time, and connect to the first response
    /// byte, in microseconds (h2load's "time for connect" and "time to 1st byte").
    pub connect: Histogram<u64>,
    pub first_byte: Histogram<u64>,
    /// Per connection slot (h2load's client): streams that ended whole (any status) over the
    /// time from its first connect to its last stream's end or its close (h2load's "req/s" row).
    pub client_rps: Vec<f64>,
}

impl H2Summary {
    pub fn new(max_streams: u32) -> H2Summary {
        let h = || Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid histogram bounds");
        H2Summary {
            started: 0,
            done: 0,
            succeeded: 0,
            errored: 0,
            timeout: 0,
            status: [0; 6],
            header_bytes: 0,
            header_decoded_bytes: 0,
            resets: 0,
            goaways: 0,
            max_streams,
            connect: h(),
            first_byte: h(),
            client_rps: Vec::new(),
        }
    }

    fn add(&mut self, o: &H2Summary) {
        self.started += o.started;
        self.done += o.done;
        self.succeeded += o.succeeded;
        self.errored += o.errored;
        self.timeout += o.timeout;
        for (a, b) in self.status.iter_mut().zip(o.status) {
            *a += b;
        }
        self.header_bytes += o.header_bytes;
        self.header_decoded_bytes += o.header_decoded_bytes;
        self.resets += o.resets;
        self.goaways += o.goaways;
        self.max_streams = match (self.max_streams, o.max_streams) {
            (0, m) | (m, 0) => m,
            (a, b) => a.min(b),
        };
        self.connect.add(&o.connect).expect("same bounds");
        self.first_byte.add(&o.first_byte).expect("same bounds");
        self.client_rps.extend_from_slice(&o.client_rps);
    }
}

/// An https run's handshakes, and what the first one negotiated (ab's TLS report lines). It
/// serialises so that a distributed run's ranks can send theirs to rank 0.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TlsSummary {
    /// "TLSv1.3", as OpenSSL names it.
    pub protocol: String,
    /// The cipher suite's OpenSSL name ("TLS_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES128-GCM-SHA256").
    pub cipher: String,
    /// The cipher's key bits.
    pub cipher_bits: u32,
    /// The server certificate's public key bits (OpenSSL's `EVP_PKEY_bits`: 256 for P-256,
    /// 2048 for RSA-2048, 253 for Ed25519; 0 if unknown): the first number ab prints after the
    /// cipher's name.
    pub server_key_bits: u32,
    /// The key exchange group as ab prints it ("X25519 253 bits", "ECDH prime256v1 256 bits").
    pub temp_key: String,
    /// The SNI name sent, if one was.
    pub server_name: Option<String>,
    /// The ALPN protocol the server chose.
    pub alpn: Option<String>,
    pub full_handshakes: u64,
    pub resumed_handshakes: u64,
    /// Sums over the handshakes: TCP connect (connect() to connected), then the TLS handshake
    /// (connected to the first request written), full and resumed apart, in microseconds.
    pub tcp_connect_us: u64,
    pub full_handshake_us: u64,
    pub resumed_handshake_us: u64,
}

impl TlsSummary {
    fn add(&mut self, o: &TlsSummary) {
        if self.protocol.is_empty() {
            let counts = (self.full_handshakes, self.resumed_handshakes);
            let sums = (
                self.tcp_connect_us,
                self.full_handshake_us,
                self.resumed_handshake_us,
            );
            *self = o.clone();
            (self.full_handshakes, self.resumed_handshakes) = counts;
            (
                self.tcp_connect_us,
                self.full_handshake_us,
                self.resumed_handshake_us,
            ) = sums;
        }
        self.full_handshakes += o.full_handshakes;
        self.resumed_handshakes += o.resumed_handshakes;
        self.tcp_connect_us += o.tcp_connect_us;
        self.full_handshake_us += o.full_handshake_us;
        self.resumed_handshake_us += o.resumed_handshake_us;
    }
}

/// What QUIC adds to an `--h3` run's figures, from quinn-proto's per-connection statistics summed
/// over the run's connections when each closes. It serialises for a distributed run's ranks.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct QuicSummary {
    /// Handshakes completed; of them, resumed (a TLS session ticket) and with 0-RTT data
    /// accepted or rejected by the server (0 unless early data was sent).
    pub handshakes: u64,
    pub resumed: u64,
    pub zero_rtt_accepted: u64,
    pub zero_rtt_rejected: u64,
    /// UDP datagrams and their bytes (QUIC packets with their headers, no IP or UDP header).
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Packets sent, and of them declared lost (and so their frames sent again).
    pub packets_sent: u64,
    pub packets_lost: u64,
    pub congestion_events: u64,
    /// The smallest congestion window any connection had during the run, in bytes, looked at
    /// after each of its exchanges (0: no connection).
    pub min_cwnd: u64,
    /// Connections that ended on an error, by its QUIC or HTTP/3 code's name.
    pub errors: std::collections::BTreeMap<String, u64>,
    /// Whether the sockets sent with GSO and received with GRO (the kernel has them).
    pub gso: bool,
    pub gro: bool,
}

impl QuicSummary {
    pub fn add(&mut self, o: &QuicSummary) {
        self.handshakes += o.handshakes;
        self.resumed += o.resumed;
        self.zero_rtt_accepted += o.zero_rtt_accepted;
        self.zero_rtt_rejected += o.zero_rtt_rejected;
        self.datagrams_sent += o.datagrams_sent;
        self.datagrams_received += o.datagrams_received;
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
        self.packets_sent += o.packets_sent;
        self.packets_lost += o.packets_lost;
        self.congestion_events += o.congestion_events;
        self.min_cwnd = match (self.min_cwnd, o.min_cwnd) {
            (0, b) => b,
            (a, 0) => a,
            (a, b) => a.min(b),
        };
        for (code, n) in &o.errors {
            *self.errors.entry(code.clone()).or_default() += n;
        }
        self.gso |= o.gso;
        self.gro |= o.gro;
    }
}

impl RunResult {
    /// Adds `r`'s counts, bytes, histograms and CPU into this result: one thread's into the run's
    /// (engine), one rank's into the whole (dist). Time span, errors and endings are the caller's.
    pub fn add_counts(&mut self, r: &RunResult) {
        self.complete += r.complete;
        self.failed.add(&r.failed);
        self.write_errors += r.write_errors;
        self.non_2xx += r.non_2xx;
        for (status, n) in &r.non_2xx_statuses {
            *self.non_2xx_statuses.entry(*status).or_default() += n;
        }
        self.keep_alive_requests += r.keep_alive_requests;
        self.connections += r.connections;
        self.total_bytes += r.total_bytes;
        self.sent_bytes += r.sent_bytes;
        self.body_bytes += r.body_bytes;
        self.latency_sum_us += r.latency_sum_us;
        self.histograms.merge(&r.histograms);
        self.late_sends += r.late_sends;
        // Ranks split a rate among them: the run asked their sum.
        self.asked_rate = match (self.asked_rate, r.asked_rate) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        self.cpu.user += r.cpu.user;
        self.cpu.sys += r.cpu.sys;
        self.thread_cpu.extend_from_slice(&r.thread_cpu);
        self.thread_spin.extend_from_slice(&r.thread_spin);
        self.thread_waits.extend_from_slice(&r.thread_waits);
        if self.per_request.len() < r.per_request.len() {
            self.per_request.resize(r.per_request.len(), 0);
        }
        for (a, b) in self.per_request.iter_mut().zip(&r.per_request) {
            *a += b;
        }
        self.samples.extend_from_slice(&r.samples);
        for (code, n) in &r.socket_errors {
            *self.socket_errors.entry(*code).or_default() += n;
        }

        if let Some(t) = &r.tls {
            self.tls.get_or_insert_with(TlsSummary::default).add(t);
        }
        if let Some(h) = &r.h2 {
            match &mut self.h2 {
                Some(mine) => mine.add(h),
                None => self.h2 = Some(h.clone()),
            }
        }
        if let Some(q) = &r.quic {
            self.quic.get_or_insert_with(QuicSummary::default).add(q);
        }
    }
}
