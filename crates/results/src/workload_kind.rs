//! The workloads a comparison can run, by name, and what each needs of a server. The requests each
//! one makes over the fixtures are the lab's (`webstand_lab::compare::workloads`).

use anyhow::{bail, Context, Result};

/// The streams an HTTP/2 workload keeps in flight per connection (h2load's `-m 16`).
pub const H2_STREAMS_PER_CONNECTION: u32 = 16;
/// The streams an HTTP/3 workload keeps in flight per connection: HTTP/2's, so the two compare.
pub const H3_STREAMS_PER_CONNECTION: u32 = H2_STREAMS_PER_CONNECTION;

/// The workloads a comparison can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkloadKind {
    /// thttpd's small-file load: 1000 × 1 KiB files at random.
    SmallFiles,
    /// thttpd's CGI load: a trivial "hello world" program.
    Cgi,
    /// One large file (1 MiB by default), thttpd's "large files".
    Large,
    /// WebStone 2.0.1's weighted file list.
    Webstone2,
    /// Tenon's single 2 KiB file.
    TwoK,
    /// HTTPS, keep-alive, the 2 KiB file: the record layer's cost.
    TlsKa,
    /// HTTPS, a new connection and a full handshake per request: the handshake rate per CPU.
    TlsNew,
    /// HTTPS, a new connection per request resuming the session of the client's previous one.
    TlsResume,
    /// A generated PHP page of about 20 KiB through PHP-FPM (mod_php for apache-modphp), every body
    /// checked against the bytes the lab computes.
    Php,
    /// Seed 004: WordPress's index page (about 20 KiB) on a private MariaDB, gzip accepted.
    Wordpress,
    /// HTTP/2, thttpd's small files, 16 streams in flight per connection (h2load's `-m 16`).
    H2,
    /// HTTP/2, Tenon's 2 KiB file, 16 streams per connection.
    H2TwoK,
    /// HTTP/3 over QUIC, thttpd's small files, 16 streams in flight per connection.
    H3,
    /// HTTP/3 over QUIC, Tenon's 2 KiB file, 16 streams per connection.
    H3TwoK,
}

impl WorkloadKind {
    pub const ALL: [WorkloadKind; 14] = [
        WorkloadKind::SmallFiles,
        WorkloadKind::Cgi,
        WorkloadKind::Large,
        WorkloadKind::Webstone2,
        WorkloadKind::TwoK,
        WorkloadKind::TlsKa,
        WorkloadKind::TlsNew,
        WorkloadKind::TlsResume,
        WorkloadKind::Php,
        WorkloadKind::Wordpress,
        WorkloadKind::H2,
        WorkloadKind::H2TwoK,
        WorkloadKind::H3,
        WorkloadKind::H3TwoK,
    ];
    /// What `--h2` runs when no workloads are named.
    pub const H2_DEFAULT: [WorkloadKind; 2] = [WorkloadKind::H2, WorkloadKind::H2TwoK];
    /// What `--h3` runs when no workloads are named.
    pub const H3_DEFAULT: [WorkloadKind; 2] = [WorkloadKind::H3, WorkloadKind::H3TwoK];
    /// What `--tls` runs when no workloads are named.
    pub const TLS_DEFAULT: [WorkloadKind; 3] = [
        WorkloadKind::TlsKa,
        WorkloadKind::TlsNew,
        WorkloadKind::TlsResume,
    ];
    pub const DEFAULT: [WorkloadKind; 4] = [
        WorkloadKind::SmallFiles,
        WorkloadKind::Cgi,
        WorkloadKind::Large,
        WorkloadKind::Webstone2,
    ];

    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::SmallFiles => "small-files",
            WorkloadKind::Cgi => "cgi",
            WorkloadKind::Large => "large",
            WorkloadKind::Webstone2 => "webstone2",
            WorkloadKind::TwoK => "2k",
            WorkloadKind::TlsKa => "tls-ka",
            WorkloadKind::TlsNew => "tls-new",
            WorkloadKind::TlsResume => "tls-resume",
            WorkloadKind::Php => "php",
            WorkloadKind::Wordpress => "wordpress",
            WorkloadKind::H2 => "h2",
            WorkloadKind::H2TwoK => "h2-2k",
            WorkloadKind::H3 => "h3",
            WorkloadKind::H3TwoK => "h3-2k",
        }
    }

    /// Whether it runs PHP (the lab starts PHP-FPM, and MariaDB for WordPress).
    pub fn dynamic(self) -> bool {
        matches!(self, WorkloadKind::Php | WorkloadKind::Wordpress)
    }

    /// Request headers it sends: WordPress's page is fetched as the seed's ab was, accepting gzip.
    pub fn headers(self) -> Vec<(String, String)> {
        match self {
            WorkloadKind::Wordpress => vec![("Accept-Encoding".into(), "gzip".into())],
            _ => Vec::new(),
        }
    }

    /// The TLS workloads, which need the servers on HTTPS (`--tls`).
    pub fn needs_tls(self) -> bool {
        matches!(
            self,
            WorkloadKind::TlsKa | WorkloadKind::TlsNew | WorkloadKind::TlsResume
        )
    }

    /// The HTTP/2 workloads, which need the servers on HTTP/2 (`--h2`): the streams each keeps in
    /// flight per connection; None for the HTTP/1.1 ones.
    pub fn h2_streams(self) -> Option<u32> {
        matches!(self, WorkloadKind::H2 | WorkloadKind::H2TwoK).then_some(H2_STREAMS_PER_CONNECTION)
    }

    /// The HTTP/3 workloads, which need the servers on HTTP/3 (`--h3`): the streams each keeps in
    /// flight per connection; None for the others.
    pub fn h3_streams(self) -> Option<u32> {
        matches!(self, WorkloadKind::H3 | WorkloadKind::H3TwoK).then_some(H3_STREAMS_PER_CONNECTION)
    }

    /// Whether every request opens a connection of its own, whatever `--no-keepalive` says: a
    /// handshake per request is what these workloads measure.
    pub fn new_connection_per_request(self) -> bool {
        matches!(self, WorkloadKind::TlsNew | WorkloadKind::TlsResume)
    }

    pub fn known_names() -> String {
        WorkloadKind::ALL
            .iter()
            .map(|w| w.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn parse_list(text: &str) -> Result<Vec<WorkloadKind>> {
        let mut out = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let w = WorkloadKind::ALL
                .into_iter()
                .find(|w| {
                    w.name() == part
                        || (part == "small" && *w == WorkloadKind::SmallFiles)
                        || (part == "2k.html" && *w == WorkloadKind::TwoK)
                })
                .with_context(|| {
                    format!(
                        "unknown workload '{part}' (known: {})",
                        WorkloadKind::known_names()
                    )
                })?;
            if !out.contains(&w) {
                out.push(w);
            }
        }
        if out.is_empty() {
            bail!(
                "no workloads given (known: {})",
                WorkloadKind::known_names()
            );
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_names_parse_and_unknown_ones_list_the_known() {
        assert_eq!(
            WorkloadKind::parse_list("small-files, cgi,2k,small").unwrap(),
            [
                WorkloadKind::SmallFiles,
                WorkloadKind::Cgi,
                WorkloadKind::TwoK
            ]
        );
        let h2 = WorkloadKind::parse_list("h2-2k,h2").unwrap();
        assert_eq!(h2, [WorkloadKind::H2TwoK, WorkloadKind::H2]);
        assert!(h2.iter().all(|w| w.h2_streams() == Some(16)));
        assert_eq!(WorkloadKind::SmallFiles.h2_streams(), None);
        let h3 = WorkloadKind::parse_list("h3,h3-2k").unwrap();
        assert_eq!(h3, WorkloadKind::H3_DEFAULT);
        assert!(h3
            .iter()
            .all(|w| w.h3_streams() == Some(16) && w.h2_streams().is_none()));
        let e = WorkloadKind::parse_list("large,huge")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown workload 'huge'") && e.contains("webstone2"),
            "{e}"
        );
    }
}
