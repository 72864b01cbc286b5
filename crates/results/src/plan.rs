//! What to run: the target, the requests, the load shape and when to stop. A plan serialises (serde),
//! so that webstand-dist can send it to the other ranks of a distributed run.

use crate::script::ScriptRef;
use crate::spin_rule::SpinRule;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::time::Duration;

/// Where the load goes. Only `http://` is supported; `addrs` are the resolved addresses, tried in order.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Target {
    /// Host as written in the URL (used for the Host header and the report's "Server Hostname").
    pub host: String,
    pub port: u16,
    pub addrs: Vec<SocketAddr>,
}

/// One request the workload can issue. The engine builds its bytes once and reuses them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RequestSpec {
    /// Path and query, starting with `/`.
    pub path: String,
    /// When set, each response body is checked against it (http_load's `-checksum`).
    pub expect: Option<BodyCheck>,
}

/// What a correct body looks like.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BodyCheck {
    /// Length and SHA-256 of the body, from a fixtures manifest.
    Digest { len: u64, sha256: [u8; 32] },
    /// The first complete response to this request sets the expected length and digest.
    FirstFetch,
}

/// How each next request is chosen among `Plan::requests`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Pick {
    /// Always the first (a single URL).
    Single,
    /// Uniformly at random (http_load's URL-file model), from a fixed seed so runs repeat.
    Uniform { seed: u64 },
    /// At random with these weights, one per request (WebStone's file lists).
    Weighted { weights: Vec<u32>, seed: u64 },
}

/// Closed loop: `clients` connections each send the next request when the last one finished.
/// Open loop: requests are sent at `rate` per second in total, paced across threads; latency counts
/// from each request's intended send time (coordinated omission corrected). `clients` is then the
/// number of connections the sends are spread over.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Shape {
    Closed {
        clients: usize,
    },
    Open {
        clients: usize,
        rate: f64,
        jitter: bool,
    },
}

impl Shape {
    pub fn clients(&self) -> usize {
        match self {
            Shape::Closed { clients } | Shape::Open { clients, .. } => *clients,
        }
    }
}

/// When to stop; with both set, the first reached wins. At least one must be set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stop {
    pub requests: Option<u64>,
    pub duration: Option<Duration>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum HttpVersion {
    Http10,
    #[default]
    Http11,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Plan {
    pub target: Target,
    pub requests: Vec<RequestSpec>,
    pub pick: Pick,
    pub shape: Shape,
    pub stop: Stop,
    /// Event-loop threads; 0 means one per core.
    pub threads: usize,
    pub keep_alive: bool,
    /// HTTP/1.1 pipelining depth per connection (1 = no pipelining).
    pub pipeline: usize,
    /// Per-request timeout: no progress for this long fails the request (ab's `-s`).
    pub timeout: Duration,
    pub http_version: HttpVersion,
    pub method: String,
    /// Extra headers, in order; a user's Host, Connection or User-Agent replaces the default one.
    pub headers: Vec<(String, String)>,
    /// Request body and its Content-Type (ab's `-p` / `-T`).
    pub body: Option<(Vec<u8>, String)>,
    /// Accept bodies whose length differs from the first response's (ab's `-l`).
    pub variable_length: bool,
    /// Keep every complete request's times in `RunResult::samples` (ab's `-g` and `-e`).
    #[serde(default)]
    pub keep_samples: bool,
    /// ab's `-v`: 2 prints each response head as it arrives (and a warning for a non-2xx status),
    /// 3 also each status code; below 2 nothing.
    #[serde(default)]
    pub verbosity: u8,
    /// ab's `-b`: SO_SNDBUF and SO_RCVBUF of every connection, in bytes (None: the system's).
    #[serde(default)]
    pub socket_buffer: Option<u32>,
    /// ab's `-B`: the local address (or addresses, taken in turn) every connection is bound to
    /// before it connects.
    #[serde(default)]
    pub bind: Option<SourceAddrs>,
    /// `https://`: every connection is TLS, set up as this says.
    pub tls: Option<TlsPlan>,
    /// `--h2`: every connection speaks HTTP/2 (ALPN `h2` over TLS, prior knowledge over TCP).
    #[serde(default)]
    pub h2: Option<H2Plan>,
    /// `--h3`: every connection speaks HTTP/3 over QUIC (ALPN `h3`; https:// only), its streams
    /// and receive windows as HTTP/2's settings say (QUIC's stream and connection windows).
    #[serde(default)]
    pub h3: Option<H2Plan>,
    /// `--max-requests-per-connection N` (with `--h3`): a connection opens no stream after its
    /// N-th and is closed once they are answered, and a new one takes its place (resumed, with
    /// 0-RTT where the server allows, under `--tls-resume`). None: connections last the run.
    #[serde(default)]
    pub max_conn_requests: Option<u64>,
    /// `--spin`: how a closed-loop thread (HTTP/1 or h2) waits once every request it has is at the server.
    #[serde(default)]
    pub spin: SpinRule,
    /// `-s FILE`: a wrk script's part in the run (`script.rs`); never serialised.
    #[serde(skip)]
    pub script: Option<ScriptRef>,
}

/// HTTP/2's settings for a run (h2load's `-m`, `-w`, `-W`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct H2Plan {
    /// Streams in flight per connection at most; a server's lower SETTINGS_MAX_CONCURRENT_STREAMS
    /// wins.
    pub max_streams: u32,
    /// Each stream's receive window is 2^bits - 1 (SETTINGS_INITIAL_WINDOW_SIZE).
    pub window_bits: u8,
    /// The connection's receive window is 2^bits - 1.
    pub connection_window_bits: u8,
}

impl Default for H2Plan {
    /// h2load's defaults: one stream per connection, 1 GiB windows.
    fn default() -> H2Plan {
        H2Plan {
            max_streams: 1,
            window_bits: 30,
            connection_window_bits: 30,
        }
    }
}

/// ab's `-B`, extended to a range: `count` consecutive addresses from `first` (`127.0.0.2-127.0.0.254`
/// is 253), each new connection bound to the next one, so that the connections to one server are not
/// limited to one source address's ephemeral ports (net.ipv4.ip_local_port_range, ~28,000).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceAddrs {
    pub first: std::net::IpAddr,
    pub count: u32,
}

impl SourceAddrs {
    /// One address.
    pub fn one(ip: std::net::IpAddr) -> SourceAddrs {
        SourceAddrs {
            first: ip,
            count: 1,
        }
    }

    /// The `i`-th address, counting round the range.
    pub fn nth(&self, i: u64) -> std::net::IpAddr {
        use std::net::IpAddr;
        let step = i % u64::from(self.count.max(1));
        match self.first {
            IpAddr::V4(a) => IpAddr::V4(u32::from(a).wrapping_add(step as u32).into()),
            IpAddr::V6(a) => IpAddr::V6(u128::from(a).wrapping_add(u128::from(step)).into()),
        }
    }
}

/// ab's `-f`: which TLS versions the client offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TlsVersions {
    #[default]
    All,
    Tls12,
    Tls13,
}

/// How the client sets up TLS. Files are read when the run starts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsPlan {
    pub versions: TlsVersions,
    /// ab's `-Z`: cipher suites to offer, `:`-separated OpenSSL or IANA names (None: all).
    pub ciphers: Option<String>,
    /// ab's `-E`: a PEM file with the client certificate chain and its private key.
    pub client_cert: Option<std::path::PathBuf>,
    /// `--cacert`: verify the server's certificate against these PEM CA certificates (None: no
    /// verification, like ab, wrk and h2load).
    pub ca_cert: Option<std::path::PathBuf>,
    /// Send the host name as SNI (ab's `-I` turns it off; an IP address is never sent).
    pub sni: bool,
    /// `--tls-resume`: resume sessions on new connections (browser-like) instead of a full
    /// handshake each time (ab).
    pub resume: bool,
}

impl Plan {
    /// Whether the user gave a header of this name (in any case): it replaces the default one.
    pub fn has_header(&self, name: &str) -> bool {
        self.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    /// A plan for one URL path with ab's defaults: one client, one request, a new connection each time.
    pub fn new(target: Target, path: &str) -> Plan {
        Plan {
            target,
            requests: vec![RequestSpec {
                path: path.to_string(),
                expect: None,
            }],
            pick: Pick::Single,
            shape: Shape::Closed { clients: 1 },
            stop: Stop {
                requests: Some(1),
                duration: None,
            },
            threads: 0,
            keep_alive: false,
            pipeline: 1,
            timeout: Duration::from_secs(30),
            http_version: HttpVersion::Http11,
            method: "GET".to_string(),
            headers: Vec::new(),
            body: None,
            variable_length: false,
            keep_samples: false,
            verbosity: 0,
            socket_buffer: None,
            bind: None,
            tls: None,
            h2: None,
            h3: None,
            max_conn_requests: None,
            spin: SpinRule::Auto,
            script: None,
        }
    }
}
