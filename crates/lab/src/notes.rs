//! What a comparison's rows must say about how a server ran a workload where that differs from the
//! table's heading or from the other rows, as data: each server kind names the notes that apply to
//! it (`servers::kind`), the lab gathers a row's (`disclosure`), and `Display` words each one.

use std::fmt;

use crate::h2::MAX_CONCURRENT_STREAMS;
use webstand_results::H2_STREAMS_PER_CONNECTION;

/// One thing a row must say.
#[derive(Clone, Debug, PartialEq, Eq)]
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
        inside: &'static str,
    },
    /// MariaDB's CPU counted with the server's and PHP's.
    MariaDbCounted,
    Tls(TlsNote),
    H2(H2Note),
    /// The server's CPU from its /proc process tree, for this reason (no cgroup).
    CpuFromProcTree(String),
}

/// Where a server's TLS differs from the settings every server gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsNote {
    /// `server` cannot set TLS 1.3's suites: OpenSSL's own order.
    OpenSslTls13Order { server: &'static str },
    /// Go's TLS fixes its own TLS 1.3 order.
    GoTls13Order,
    /// rustls keeps its own suite order.
    RustlsOrder,
    /// Resumption by session tickets only; `cacheless`: the server that keeps no session cache.
    TicketsOnly { cacheless: Option<&'static str> },
}

/// Where a server's HTTP/2 differs from the settings every server gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum H2Note {
    /// `server` allows `streams` concurrent streams per connection, a fixed number below the
    /// workloads' streams in flight.
    FixedStreams { server: &'static str, streams: u32 },
    /// `server` announces `streams` whatever its setting (and handles the lab's).
    Announces { server: &'static str, streams: u32 },
    /// `library` fixes the streams per connection and `server` has no setting for it.
    LibraryStreams {
        library: &'static str,
        server: &'static str,
        streams: u32,
    },
    /// `server`'s h2c port speaks HTTP/2 only.
    H2cOnly { server: &'static str },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::NoKeepAlive => write!(f, "no keep-alive: a new connection per request"),
            Note::CgiThroughFcgiwrap { processes } => write!(
                f,
                "CGI through fcgiwrap (FastCGI, {processes} processes), its CPU and memory counted"
            ),
            Note::FilesFromMemory { up_to_kib } => write!(
                f,
                "files ≤ {up_to_kib} KiB served from memory with ready-made headers (see builtin-nocache)"
            ),
            Note::NoFileCache => write!(
                f,
                "builtin without its file cache: every file by sendfile from an open descriptor"
            ),
            Note::PhpThroughFpm { workers } => write!(
                f,
                "PHP through PHP-FPM ({workers} workers, static pool), counted in srv+php"
            ),
            Note::PhpInProcess { inside } => write!(f, "PHP inside {inside}: PHP-FPM idle"),
            Note::MariaDbCounted => write!(f, "MariaDB's CPU counted in srv+php"),
            Note::Tls(t) => t.fmt(f),
            Note::H2(h) => h.fmt(f),
            Note::CpuFromProcTree(why) => write!(f, "server CPU from the /proc process tree: {why}"),
        }
    }
}

impl fmt::Display for TlsNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlsNote::OpenSslTls13Order { server } => {
                write!(
                    f,
                    "TLS 1.3 suites in OpenSSL's order ({server} cannot set them)"
                )
            }
            TlsNote::GoTls13Order => write!(f, "Go's TLS: its own TLS 1.3 order"),
            TlsNote::RustlsOrder => write!(f, "rustls: its own suite order"),
            TlsNote::TicketsOnly { cacheless: None } => write!(f, "resumption by tickets only"),
            TlsNote::TicketsOnly {
                cacheless: Some(server),
            } => write!(
                f,
                "resumption by tickets only ({server} keeps no session cache)"
            ),
        }
    }
}

impl fmt::Display for H2Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            H2Note::FixedStreams { server, streams } => write!(
                f,
                "{server} allows {streams} concurrent streams per connection (fixed): {streams} in \
                 flight, not {H2_STREAMS_PER_CONNECTION}"
            ),
            H2Note::Announces { server, streams } => write!(
                f,
                "{server} announces {streams} concurrent streams whatever its setting (it handles \
                 {MAX_CONCURRENT_STREAMS})"
            ),
            H2Note::LibraryStreams {
                library,
                server,
                streams,
            } => write!(
                f,
                "{library}: {streams} concurrent streams ({server} has no setting)"
            ),
            H2Note::H2cOnly { server } => write!(f, "{server}'s h2c port speaks HTTP/2 only"),
        }
    }
}
