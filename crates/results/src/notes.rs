//! What a comparison's row must say about how a server ran a workload where that differs from the
//! table's heading or from the other rows, as data: each server kind names the notes that apply to
//! it, the lab gathers a row's, the history keeps them (as JSON), and the report words each one.

use serde::{Deserialize, Serialize};

/// One thing a row must say.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Note {
    /// A new connection per request where the table is keep-alive.
    NoKeepAlive,
    /// CGI programs run by fcgiwrap (FastCGI) with this many processes, counted with the server.
    CgiThroughFcgiwrap {
        processes: usize,
    },
    /// Files up to this size served from memory with ready-made headers.
    FilesFromMemory {
        up_to_kib: u64,
    },
    /// The builtin server without its file cache.
    NoFileCache,
    /// PHP through the shared PHP-FPM pool of this many workers.
    PhpThroughFpm {
        workers: usize,
    },
    /// PHP inside the server's own processes (`inside` says which), PHP-FPM idle.
    PhpInProcess {
        inside: String,
    },
    /// MariaDB's CPU counted with the server's and PHP's.
    MariaDbCounted,
    Tls(TlsNote),
    H2(H2Note),
    /// The server's CPU from its /proc process tree, for this reason (no cgroup).
    CpuFromProcTree(String),
    /// The generator bound the peak level: its figures are not the server's limit.
    PeakGeneratorBound,
    /// The server and the generator were both saturated at the peak level.
    PeakBothSaturated,
}

/// Where a server's TLS differs from the settings every server gets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TlsNote {
    /// `server` cannot set TLS 1.3's suites: OpenSSL's own order.
    OpenSslTls13Order { server: String },
    /// Go's TLS fixes its own TLS 1.3 order.
    GoTls13Order,
    /// rustls keeps its own suite order.
    RustlsOrder,
    /// Resumption by session tickets only; `cacheless`: the server that keeps no session cache.
    TicketsOnly { cacheless: Option<String> },
}

/// Where a server's HTTP/2 differs from the settings every server gets.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum H2Note {
    /// `server` allows `streams` concurrent streams per connection, a fixed number below the
    /// workloads' streams in flight.
    FixedStreams { server: String, streams: u32 },
    /// `server` announces `streams` whatever its setting, and handles the `handles` the lab sets.
    Announces {
        server: String,
        streams: u32,
        handles: u32,
    },
    /// `library` fixes the streams per connection and `server` has no setting for it.
    LibraryStreams {
        library: String,
        server: String,
        streams: u32,
    },
    /// `server`'s h2c port speaks HTTP/2 only.
    H2cOnly { server: String },
}
