//! The lab's comparison as text: one table per workload with a row per server, thttpd's comparison
//! table (seed 003's layout: name, version, model, features, RPS, max users), and the `--verify` table
//! putting webstand's counts beside wrk's and ab's. Pure: figures in, text out.

use serde::Serialize;
use std::fmt::Write;
use webstand_results::VerifyRow;

/// One server's figures on one workload (a sweep over client levels).
#[derive(Clone, Debug, Default, Serialize)]
pub struct WorkloadRow {
    pub server: String,
    pub version: String,
    /// False when nothing was measured (not installed, did not start, no CGI): `note` says why.
    pub measured: bool,
    pub peak_hits_per_sec: f64,
    pub clients_at_peak: usize,
    /// What bound the peak level (the Diagnosis's Bound-by cell), when the levels were diagnosed.
    pub bound_at_peak: Option<String>,
    pub p99_ms_at_peak: f64,
    /// Failed requests over every level of the sweep.
    pub errors: u64,
    /// Largest level that stayed within the bounds, when searched.
    pub max_users: Option<usize>,
    /// The search reached its limit without breaking: shown as "1024+".
    pub max_users_capped: bool,
    /// Server tree CPU-µs per complete request at the peak level.
    pub server_cpu_us: Option<f64>,
    /// Server tree plus its PHP backends (PHP-FPM, MariaDB) CPU-µs per complete request at the peak
    /// level, on dynamic workloads.
    pub with_backends_cpu_us: Option<f64>,
    /// Generator CPU-µs per complete request at the peak level: its work and its spin.
    pub generator_cpu_us: Option<f64>,
    /// Of it, the load threads' work (CPU less spin), and their spin (CPU spent waiting).
    pub generator_work_us: Option<f64>,
    pub generator_spin_us: Option<f64>,
    /// Peak resident memory of the server tree during the workload, KiB.
    pub peak_rss_kib: Option<u64>,
    /// Complete requests of the peak level.
    pub requests_at_peak: u64,
    /// Over HTTPS: the peak level's full and resumed handshakes, and what was agreed
    /// ("TLSv1.3 TLS_AES_128_GCM_SHA256").
    pub tls_full_handshakes: Option<u64>,
    pub tls_resumed_handshakes: Option<u64>,
    pub tls_agreed: Option<String>,
    /// Why the row is empty or incomplete ("died at 64 clients …", "stopped by Ctrl-C").
    pub note: Option<String>,
}

/// A server's row in thttpd's comparison table.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FeatureRow {
    pub name: String,
    pub version: String,
    pub model: String,
    /// "yes" (configured and verified), "yes?" (configured, not verified), "no", "FAILED", "-".
    pub basic_auth: String,
    pub chroot: String,
    pub throttling: String,
    /// HTTPS: "yes" (real handshakes, TLS 1.3 and 1.2, full and resumed), "no" (no TLS in the
    /// server's package), "FAILED", "-" (not run with `--tls`).
    pub tls: String,
    /// HTTP/2: "yes" (a real exchange by curl: HTTP/2 agreed, the file whole), "no" (the server
    /// does not speak it here: the note says why), "FAILED", "-" (not run with `--h2`).
    pub h2: String,
    /// HTTP/3: "yes" (a real exchange over QUIC: the file whole), "no" (the server does not speak
    /// it here: the note says why), "FAILED", "-" (not run with `--h3`).
    pub h3: String,
    /// Size of the server's executable (thttpd's "exe" column), bytes.
    pub exe_bytes: Option<u64>,
    pub small_files_rps: Option<f64>,
    pub cgi_rps: Option<f64>,
    pub large_files_max_users: Option<usize>,
    /// The search reached its limit without breaking: shown as "1024+" (thttpd's "1000+").
    pub large_files_max_users_capped: bool,
    pub note: Option<String>,
}

/// The first `left` columns left-aligned (names), the rest right-aligned (numbers), two spaces apart.
pub(crate) fn grid(header: &[&str], rows: &[Vec<String>], left: usize) -> String {
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<&str>, out: &mut String| {
        for (i, c) in cells.iter().enumerate() {
            let pad = width[i] - c.chars().count();
            if i > 0 {
                out.push_str("  ");
            }
            if i < left {
                out.push_str(c);
                if i + 1 < cells.len() {
                    out.push_str(&" ".repeat(pad));
                }
            } else {
                out.push_str(&" ".repeat(pad));
                out.push_str(c);
            }
        }
        out.push('\n');
    };
    line(header.to_vec(), &mut out);
    let rule: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
    line(rule.iter().map(String::as_str).collect(), &mut out);
    for r in rows {
        line(r.iter().map(String::as_str).collect(), &mut out);
    }
    out
}

fn opt_f(v: Option<f64>, places: usize) -> String {
    v.map(|x| format!("{x:.places$}"))
        .unwrap_or_else(|| "-".into())
}

fn users(v: Option<usize>, capped: bool) -> String {
    match v {
        Some(n) if capped => format!("{n}+"),
        Some(n) => n.to_string(),
        None => "-".into(),
    }
}

fn mib(kib: Option<u64>) -> String {
    kib.map(|k| format!("{:.1}", k as f64 / 1024.0))
        .unwrap_or_else(|| "-".into())
}

/// Notes under a table, numbered, for the rows that have one.
fn notes<'a>(items: impl Iterator<Item = (&'a str, Option<&'a String>)>) -> String {
    let mut out = String::new();
    for (name, note) in items {
        if let Some(n) = note {
            let _ = writeln!(out, "  {name}: {n}");
        }
    }
    out
}

/// The per-workload tables, a row per server in each: its peak (what bound it, its p99, errors and
/// max users), then what that peak cost (CPU per request on each side, the server's memory). Two
/// tables rather than one, which would be near 150 columns wide.
pub fn workload_table(workload: &str, rows: &[WorkloadRow]) -> String {
    // Beside the peak: what bound it (a figure the generator bound is not the server's).
    let bound = rows.iter().any(|r| r.bound_at_peak.is_some());
    let mut peak_header = vec![
        "server",
        "version",
        "peak hits/s",
        "clients",
        "p99 ms",
        "errors",
        "max users",
    ];
    if bound {
        peak_header.insert(3, "bound by");
    }
    // Dynamic workloads add the server's CPU together with PHP-FPM's (and MariaDB's).
    let backends = rows.iter().any(|r| r.with_backends_cpu_us.is_some());
    let mut cost_header = vec![
        "server",
        "srv CPU-µs/req",
        "gen work-µs/req",
        "gen spin-µs/req",
        "srv peak RSS MiB",
    ];
    if backends {
        cost_header.insert(2, "srv+php CPU-µs/req");
    }
    let unmeasured = |r: &WorkloadRow, header: &[&str], named: usize| {
        let mut v: Vec<String> = [&r.server, &r.version][..named]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.extend(vec!["-".to_string(); header.len() - named]);
        v
    };
    let peaks: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            if !r.measured {
                return unmeasured(r, &peak_header, 2);
            }
            let mut v = vec![
                r.server.clone(),
                r.version.clone(),
                format!("{:.0}", r.peak_hits_per_sec),
                r.clients_at_peak.to_string(),
                format!("{:.2}", r.p99_ms_at_peak),
                r.errors.to_string(),
                users(r.max_users, r.max_users_capped),
            ];
            if bound {
                v.insert(3, r.bound_at_peak.clone().unwrap_or_else(|| "-".into()));
            }
            v
        })
        .collect();
    let costs: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            if !r.measured {
                return unmeasured(r, &cost_header, 1);
            }
            let mut v = vec![
                r.server.clone(),
                opt_f(r.server_cpu_us, 1),
                opt_f(r.generator_work_us, 1),
                opt_f(r.generator_spin_us, 1),
                mib(r.peak_rss_kib),
            ];
            if backends {
                v.insert(2, opt_f(r.with_backends_cpu_us, 1));
            }
            v
        })
        .collect();
    let mut out = format!("Workload: {workload}\n");
    out.push_str(&grid(&peak_header, &peaks, 2));
    out.push_str("  peak: the fastest level within the error threshold; errors: failed requests + non-2xx answers, every level\n");
    if bound {
        out.push_str("  bound by: what the Diagnosis found limiting the peak level (generator or both saturated: not the server's limit)\n");
        if rows
            .iter()
            .any(|r| r.bound_at_peak.as_deref().is_some_and(|b| b.ends_with(')')))
        {
            out.push_str("  over rounds: the median round's (whose peak the row quotes), \"(2 of 3)\": how many rounds found the same\n");
        }
    }
    out.push_str(&format!("\nWhat each peak cost on {workload}\n"));
    out.push_str(&grid(&cost_header, &costs, 1));
    out.push_str("  CPU-µs per complete request at the peak level; gen work: the load threads' CPU less their spin (polling \
                  for a response: waiting, not work); srv peak RSS: the server's highest resident memory over the workload\n");
    out.push_str(&notes(
        rows.iter().map(|r| (r.server.as_str(), r.note.as_ref())),
    ));
    out
}

/// thttpd's comparison table (seed 003): software, features, RPS and max users, as two tables that
/// share the name column (one would be near 170 columns wide with the lab's model descriptions):
/// what each server is, then what it does and how fast.
pub fn thttpd_table(rows: &[FeatureRow]) -> String {
    let software = ["name", "version", "model", "exe KiB"];
    let features = [
        "name",
        "basic auth",
        "chroot",
        "throttling",
        "TLS",
        "h2",
        "h3",
        "small files RPS",
        "CGI RPS",
        "large files max users",
    ];
    let what: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.name.clone(),
                r.version.clone(),
                r.model.clone(),
                r.exe_bytes
                    .map(|b| format!("{}", b.div_ceil(1024)))
                    .unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let does: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.name.clone(),
                r.basic_auth.clone(),
                r.chroot.clone(),
                r.throttling.clone(),
                r.tls.clone(),
                r.h2.clone(),
                r.h3.clone(),
                opt_f(r.small_files_rps, 0),
                opt_f(r.cgi_rps, 0),
                users(r.large_files_max_users, r.large_files_max_users_capped),
            ]
        })
        .collect();
    let mut out = String::from("Web server comparison (thttpd's layout)\n");
    out.push_str(&grid(&software, &what, 3));
    out.push('\n');
    out.push_str(&grid(&features, &does, 7));
    out.push_str("  yes = configured and verified by the lab; yes? = configured, not verified; no = not supported or not configured\n");
    out.push_str(&notes(
        rows.iter().map(|r| (r.name.as_str(), r.note.as_ref())),
    ));
    out
}

/// `--verify`: each tool's hits/s and byte counts, side by side per target.
pub fn verify_table(rows: &[VerifyRow]) -> String {
    let header = [
        "server",
        "target",
        "tool",
        "clients",
        "requests",
        "hits/s",
        "bytes",
        "bytes/req",
        "errors",
    ];
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.server.clone(),
                r.target.clone(),
                r.tool.clone(),
                r.clients.to_string(),
                r.requests.to_string(),
                format!("{:.0}", r.hits_per_sec),
                r.bytes.to_string(),
                if r.requests > 0 {
                    format!("{:.1}", r.bytes as f64 / r.requests as f64)
                } else {
                    "-".into()
                },
                r.errors.to_string(),
            ]
        })
        .collect();
    let mut out = String::from("Verification: the same targets through webstand, wrk and ab\n");
    out.push_str(&grid(&header, &body, 3));
    out.push_str(&notes(
        rows.iter().map(|r| (r.tool.as_str(), r.note.as_ref())),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(server: &str, hits: f64) -> WorkloadRow {
        WorkloadRow {
            server: server.into(),
            version: "1.2.3".into(),
            measured: true,
            peak_hits_per_sec: hits,
            clients_at_peak: 16,
            p99_ms_at_peak: 1.234,
            errors: 0,
            max_users: Some(128),
            max_users_capped: false,
            server_cpu_us: Some(8.04),
            with_backends_cpu_us: None,
            generator_cpu_us: Some(11.0),
            peak_rss_kib: Some(10 * 1024),
            note: None,
            ..Default::default()
        }
    }

    #[test]
    fn workload_table_has_a_row_per_server_and_their_notes() {
        let mut gone = WorkloadRow {
            server: "caddy".into(),
            version: "?".into(),
            ..Default::default()
        };
        gone.note = Some("not installed (apt-get install caddy)".into());
        let t = workload_table(
            "small-files",
            &[row("nginx", 40123.4), row("builtin", 51000.0), gone],
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "Workload: small-files");
        assert!(lines[1].starts_with("server") && lines[1].contains("peak hits/s"));
        assert!(
            lines[3].starts_with("nginx") && lines[3].contains("40123"),
            "{}",
            lines[3]
        );
        assert!(lines[5].starts_with("caddy") && lines[5].trim_end().ends_with('-'));
        // The second table: what each peak cost, a row per server in the same order.
        let cost = lines
            .iter()
            .position(|l| l.starts_with("What each peak cost on small-files"))
            .unwrap();
        assert!(
            lines[cost + 1].starts_with("server") && lines[cost + 1].contains("srv CPU-µs/req")
        );
        let nginx: Vec<&str> = lines[cost + 3].split_whitespace().collect();
        assert_eq!(nginx, ["nginx", "8.0", "-", "-", "10.0"], "{t}");
        assert!(lines[cost + 5].starts_with("caddy") && lines[cost + 5].trim_end().ends_with('-'));
        assert!(t.contains("caddy: not installed (apt-get install caddy)"));
        // Columns line up: every data line has the header's width; as printed (the terminal
        // printer wraps the notes), no line is wider than 120.
        assert_eq!(lines[2].chars().count(), lines[3].chars().count());
        let printed = webstand_results::text::wrap(&t);
        assert!(
            printed.lines().all(|l| l.chars().count() <= 120),
            "{printed}"
        );
    }

    #[test]
    fn thttpd_table_keeps_the_seed_columns() {
        let r = FeatureRow {
            name: "lighttpd".into(),
            version: "1.4.69".into(),
            model: "epoll, 1 process".into(),
            basic_auth: "yes".into(),
            chroot: "yes?".into(),
            throttling: "no".into(),
            tls: "yes".into(),
            h2: "no".into(),
            h3: "-".into(),
            exe_bytes: Some(1_234_567),
            small_files_rps: Some(9000.4),
            cgi_rps: None,
            large_files_max_users: Some(256),
            large_files_max_users_capped: true,
            note: Some("chroot: needs root".into()),
        };
        let t = thttpd_table(&[r]);
        assert!(
            t.contains("basic auth")
                && t.contains("chroot")
                && t.contains("throttling")
                && t.contains("TLS")
                && t.contains("  h2  ")
                && t.contains("  h3  ")
                && t.contains("large files max users")
        );
        let rows: Vec<&str> = t.lines().filter(|l| l.starts_with("lighttpd ")).collect();
        assert_eq!(rows.len(), 2, "a row in each of the two tables: {t}");
        for cell in ["1.4.69", "epoll, 1 process", "1206"] {
            assert!(rows[0].contains(cell), "{cell} missing from {}", rows[0]);
        }
        for cell in ["yes?", "yes  no", "9000", "256+"] {
            assert!(rows[1].contains(cell), "{cell} missing from {}", rows[1]);
        }
        assert!(t.lines().all(|l| l.chars().count() <= 120), "{t}");
        assert!(t.contains("lighttpd: chroot: needs root"));
    }

    #[test]
    fn verify_table_divides_bytes_by_requests() {
        let r = VerifyRow {
            server: "nginx".into(),
            target: "/2k.html".into(),
            tool: "wrk".into(),
            clients: 8,
            requests: 1000,
            hits_per_sec: 5000.0,
            bytes: 2_300_000,
            errors: 0,
            note: None,
        };
        let t = verify_table(&[r]);
        assert!(t.contains("2300.0") && t.contains("5000"), "{t}");
    }
}
