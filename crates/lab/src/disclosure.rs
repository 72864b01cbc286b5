//! What a comparison's rows must say about how each server ran a workload, where that differs from the
//! table's heading or from the other rows: a connection per request where the table is keep-alive, CGI
//! through a FastCGI bridge, static files served from memory; and how server CPU time was counted.

use crate::cgroup::CpuSource;
use crate::compare::{ServerOutcome, WorkloadKind};
use crate::servers::Kind;
use crate::servers::{builtin, config};

/// The notes of `kind`'s row on `wk` (none for most rows).
pub fn notes(kind: Kind, wk: WorkloadKind, keep_alive: bool, cgi_workers: usize) -> Vec<String> {
    let mut out = Vec::new();
    if keep_alive && !kind.keeps_alive() {
        out.push("no keep-alive: a new connection per request".to_string());
    }
    if wk == WorkloadKind::Cgi {
        if kind.cgi_by_fcgiwrap() {
            out.push(format!(
                "CGI through fcgiwrap (FastCGI, {cgi_workers} processes), its CPU and memory counted"
            ));
        }
    } else if kind == Kind::Builtin {
        out.push(format!(
            "files ≤ {} KiB served from memory with ready-made headers (see builtin-nocache)",
            builtin::CACHE_FILE_MAX / 1024
        ));
    } else if kind == Kind::BuiltinNoCache {
        out.push(
            "builtin without its file cache: every file by sendfile from an open descriptor".into(),
        );
    }
    out
}

/// Why `kind` cannot run the CGI workload here, if it cannot.
pub fn cgi_unavailable(kind: Kind) -> Option<String> {
    (kind.cgi_by_fcgiwrap() && config::fcgiwrap().is_none()).then(|| {
        "no CGI: it needs fcgiwrap, which is not installed (apt-get install fcgiwrap)".to_string()
    })
}

/// Why `kind` cannot run the php and wordpress workloads, if it cannot.
pub fn php_unavailable(kind: Kind) -> Option<String> {
    (kind == Kind::MiniHttpd)
        .then(|| "no PHP: mini_httpd has no FastCGI (the lab does not run PHP as CGI)".into())
}

/// How `kind` ran a PHP workload: in its own children, or through the shared PHP-FPM pool; and
/// compression where a server has none.
pub fn php_notes(kind: Kind, wk: WorkloadKind, fpm_children: usize) -> Vec<String> {
    let mut out = vec![if kind == Kind::ApacheModPhp {
        "PHP inside apache's prefork children (mod_php): PHP-FPM idle".to_string()
    } else {
        format!("PHP through PHP-FPM ({fpm_children} workers, static pool), counted in srv+php")
    }];
    if wk == WorkloadKind::Wordpress {
        out.push("MariaDB's CPU counted in srv+php".into());
    }
    out
}

/// The line under the comparison's heading saying where server CPU time came from.
pub fn cpu_accounting(servers: &[ServerOutcome]) -> String {
    let mut sources: Vec<CpuSource> = servers.iter().filter_map(|s| s.cpu_source).collect();
    sources.dedup();
    match sources.as_slice() {
        [] => "server CPU: not measured".into(),
        [one] => format!("server CPU from {}", one.describe()),
        _ => "server CPU from different sources (see each row's note)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_say_how_they_differ_from_the_heading() {
        let n = |k, w, ka| notes(k, w, ka, 130).join("; ");
        assert!(n(Kind::MiniHttpd, WorkloadKind::SmallFiles, true).contains("no keep-alive"));
        assert!(!n(Kind::MiniHttpd, WorkloadKind::SmallFiles, false).contains("keep-alive"));
        assert!(
            n(Kind::Nginx, WorkloadKind::Cgi, true).contains("fcgiwrap (FastCGI, 130 processes)")
        );
        assert!(n(Kind::Builtin, WorkloadKind::Large, true).contains("from memory"));
        assert!(n(Kind::BuiltinNoCache, WorkloadKind::TwoK, true).contains("sendfile"));
        assert_eq!(n(Kind::Lighttpd, WorkloadKind::Cgi, true), "");
        assert_eq!(n(Kind::Builtin, WorkloadKind::Cgi, true), "");
    }
}
