//! What a comparison's rows must say about how each server ran a workload, where that differs from
//! the table's heading or from the other rows, gathered from what each server kind says of itself
//! (`ServerKind`): a connection per request where the table is keep-alive, CGI through a FastCGI
//! bridge, static files served from memory, PHP in its own processes, its TLS and HTTP/2; and why a
//! kind cannot run a workload here. Each note is data (`webstand_results::Note`), worded by the
//! report.

use crate::h2::Mode;
use crate::programs::fcgiwrap;
use crate::servers::kind::{Cgi, Php};
use crate::servers::Kind;
use webstand_results::{Note, WorkloadKind};

/// The notes of `kind`'s row on `wk` (none for most rows): keep-alive, CGI and static files.
pub fn notes(kind: Kind, wk: WorkloadKind, keep_alive: bool, cgi_workers: usize) -> Vec<Note> {
    let mut out = Vec::new();
    if keep_alive && !kind.keeps_alive() {
        out.push(Note::NoKeepAlive);
    }
    if wk == WorkloadKind::Cgi {
        if kind.cgi() == Cgi::Fcgiwrap {
            out.push(Note::CgiThroughFcgiwrap {
                processes: cgi_workers,
            });
        }
    } else {
        out.extend(kind.file_notes());
    }
    out
}

/// The notes of `kind`'s row over HTTPS (`tls`) and HTTP/2 (`h2`, in its mode).
pub fn protocol_notes(kind: Kind, tls: bool, h2: Option<Mode>) -> Vec<Note> {
    let tls_notes = kind.tls_notes().into_iter().filter(|_| tls).map(Note::Tls);
    let h2_notes = h2.map(|m| kind.h2_notes(m)).unwrap_or_default();
    tls_notes
        .chain(h2_notes.into_iter().map(Note::H2))
        .collect()
}

/// How `kind` ran a PHP workload: in its own processes, or through the shared PHP-FPM pool; and
/// MariaDB's part on WordPress.
pub fn php_notes(kind: Kind, wk: WorkloadKind, fpm_children: usize) -> Vec<Note> {
    let mut out = vec![match kind.php() {
        Php::InProcess { inside } => Note::PhpInProcess {
            inside: inside.into(),
        },
        _ => Note::PhpThroughFpm {
            workers: fpm_children,
        },
    }];
    if wk == WorkloadKind::Wordpress {
        out.push(Note::MariaDbCounted);
    }
    out
}

/// Why `kind` cannot run the CGI workload here, if it cannot.
pub fn cgi_unavailable(kind: Kind) -> Option<String> {
    match kind.cgi() {
        Cgi::Own => None,
        Cgi::Fcgiwrap if fcgiwrap().is_some() => None,
        Cgi::Fcgiwrap => Some(
            "no CGI: it needs fcgiwrap, which is not installed (apt-get install fcgiwrap)".into(),
        ),
        Cgi::No(why) => Some(format!("no CGI: {why}")),
    }
}

/// Why `kind` cannot run the php and wordpress workloads, if it cannot.
pub fn php_unavailable(kind: Kind) -> Option<String> {
    match kind.php() {
        Php::No(why) => Some(format!("no PHP: {why}")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_say_how_they_differ_from_the_heading() {
        use webstand_results::TlsNote;
        let k = |name| Kind::parse(name).unwrap();
        let n = |kind, w, ka| notes(kind, w, ka, 130);
        assert!(n(k("mini_httpd"), WorkloadKind::SmallFiles, true).contains(&Note::NoKeepAlive));
        assert!(!n(k("mini_httpd"), WorkloadKind::SmallFiles, false).contains(&Note::NoKeepAlive));
        assert!(n(k("nginx"), WorkloadKind::Cgi, true)
            .contains(&Note::CgiThroughFcgiwrap { processes: 130 }));
        assert!(matches!(
            n(k("builtin"), WorkloadKind::Large, true)[..],
            [Note::FilesFromMemory { .. }]
        ));
        assert_eq!(
            n(k("builtin-nocache"), WorkloadKind::TwoK, true),
            [Note::NoFileCache]
        );
        assert_eq!(n(k("lighttpd"), WorkloadKind::Cgi, true), []);
        assert_eq!(n(k("builtin"), WorkloadKind::Cgi, true), []);
        assert_eq!(
            protocol_notes(k("caddy"), true, None),
            [
                Note::Tls(TlsNote::GoTls13Order),
                Note::Tls(TlsNote::TicketsOnly { cacheless: None })
            ]
        );
        assert!(protocol_notes(k("caddy"), false, None).is_empty());
        assert_eq!(
            php_unavailable(k("mini_httpd")).as_deref(),
            Some("no PHP: mini_httpd has no FastCGI (the lab does not run PHP as CGI)")
        );
    }
}
