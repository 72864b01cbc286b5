//! A comparison row's notes in words (`webstand_results::Note`): how a server ran a workload where
//! that differs from the table's heading or from the other rows. The lab and the history hand the
//! facts; only this file says them.

use webstand_results::{H2Note, Note, TlsNote, H2_STREAMS_PER_CONNECTION};

/// One note as the row says it.
pub fn words(note: &Note) -> String {
    match note {
        Note::NoKeepAlive => "no keep-alive: a new connection per request".into(),
        Note::CgiThroughFcgiwrap { processes } => format!(
            "CGI through fcgiwrap (FastCGI, {processes} processes), its CPU and memory counted"
        ),
        Note::FilesFromMemory { up_to_kib } => format!(
            "files ≤ {up_to_kib} KiB served from memory with ready-made headers (see builtin-nocache)"
        ),
        Note::NoFileCache => {
            "builtin without its file cache: every file by sendfile from an open descriptor".into()
        }
        Note::PhpThroughFpm { workers } => {
            format!("PHP through PHP-FPM ({workers} workers, static pool), counted in srv+php")
        }
        Note::PhpInProcess { inside } => format!("PHP inside {inside}: PHP-FPM idle"),
        Note::MariaDbCounted => "MariaDB's CPU counted in srv+php".into(),
        Note::Tls(t) => tls_words(t),
        Note::H2(h) => h2_words(h),
        Note::CpuFromProcTree(why) => format!("server CPU from the /proc process tree: {why}"),
        Note::PeakGeneratorBound => {
            "peak generator-bound: NOT the server's limit (see Diagnosis)".into()
        }
        Note::PeakBothSaturated => "peak with both sides saturated: inconclusive for this pair, \
                                    not the server's limit alone (see Diagnosis)"
            .into(),
    }
}

fn tls_words(t: &TlsNote) -> String {
    match t {
        TlsNote::OpenSslTls13Order { server } => {
            format!("TLS 1.3 suites in OpenSSL's order ({server} cannot set them)")
        }
        TlsNote::GoTls13Order => "Go's TLS: its own TLS 1.3 order".into(),
        TlsNote::RustlsOrder => "rustls: its own suite order".into(),
        TlsNote::TicketsOnly { cacheless: None } => "resumption by tickets only".into(),
        TlsNote::TicketsOnly {
            cacheless: Some(server),
        } => format!("resumption by tickets only ({server} keeps no session cache)"),
    }
}

fn h2_words(h: &H2Note) -> String {
    match h {
        H2Note::FixedStreams { server, streams } => format!(
            "{server} allows {streams} concurrent streams per connection (fixed): {streams} in \
             flight, not {H2_STREAMS_PER_CONNECTION}"
        ),
        H2Note::Announces {
            server,
            streams,
            handles,
        } => format!(
            "{server} announces {streams} concurrent streams whatever its setting (it handles \
             {handles})"
        ),
        H2Note::LibraryStreams {
            library,
            server,
            streams,
        } => format!("{library}: {streams} concurrent streams ({server} has no setting)"),
        H2Note::H2cOnly { server } => format!("{server}'s h2c port speaks HTTP/2 only"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_read_as_the_rows_print_them() {
        let caddy = [
            Note::Tls(TlsNote::GoTls13Order),
            Note::Tls(TlsNote::TicketsOnly { cacheless: None }),
        ];
        let said: Vec<String> = caddy.iter().map(words).collect();
        assert_eq!(
            said.join("; "),
            "Go's TLS: its own TLS 1.3 order; resumption by tickets only"
        );
        assert_eq!(
            words(&Note::CgiThroughFcgiwrap { processes: 6 }),
            "CGI through fcgiwrap (FastCGI, 6 processes), its CPU and memory counted"
        );
        let h2o = Note::H2(H2Note::Announces {
            server: "h2o 2.2".into(),
            streams: 100,
            handles: 128,
        });
        assert_eq!(
            words(&h2o),
            "h2o 2.2 announces 100 concurrent streams whatever its setting (it handles 128)"
        );
    }
}
