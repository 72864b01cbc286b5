//! What a lab comparison measured (`webstand_results::Comparison`), made into the compare
//! tables' rows: each round's row from its sweep's peak level and the server CPU of that level, the
//! median over rounds, thttpd's feature row; then the text tables and one JSON document. The lab
//! measures; this file decides what a row shows.

use webstand_results::Support;
use webstand_results::{Comparison, ServerOutcome, WorkloadKind, WorkloadOutcome};

use crate::compare::{thttpd_table, verify_table, workload_table, FeatureRow, WorkloadRow};
use crate::levels::{sweep_levels, Level};

/// The row of one round's sweep: figures at its peak level (`peak_row`), with the server's name,
/// version and notes, and what the lab measured beside the levels (what bound the peak, the
/// server's memory, its CPU with its PHP backends', the TLS agreed, the max-users search).
fn round_row(server: &ServerOutcome, w: &WorkloadOutcome) -> WorkloadRow {
    let disclosures = w.disclosures.iter().map(crate::notes::words);
    let notes: Vec<String> = w.note.iter().cloned().chain(disclosures).collect();
    let note = Some(notes.join("; ")).filter(|n| !n.is_empty());
    let mut row = WorkloadRow::default();
    if let Some(s) = &w.sweep {
        let server_cpu_us: Vec<Option<f64>> = (s.levels.iter().enumerate())
            .map(|(i, l)| {
                w.server_cpu
                    .get(i)
                    .and_then(|c| l.result.cpu_us_per_request_of(*c))
            })
            .collect();
        let (at_peak, peak) = peak_row(&sweep_levels(s), &server_cpu_us, s.max_error_pct);
        row = at_peak;
        if let Some(i) = peak {
            let r = &s.levels[i].result;
            row.bound_at_peak = w.peak_bound.clone();
            row.with_backends_cpu_us = w
                .with_backends_cpu(i)
                .and_then(|c| r.cpu_us_per_request_of(c));
            row.peak_rss_kib = w.peak_rss_kib;
            if let Some(t) = &r.tls {
                row.tls_full_handshakes = Some(t.full_handshakes);
                row.tls_resumed_handshakes = Some(t.resumed_handshakes);
                row.tls_agreed = Some(format!("{} {}", t.protocol, t.cipher));
            }
        }
    }
    // The server's own notes, else why its sweep has no peak.
    row.note = note.or(row.note);
    (row.server, row.version) = (server.name.clone(), server.version.clone());
    if w.sweep.as_ref().is_some_and(|s| s.interrupted) && w.note.is_none() {
        let why = "interrupted: figures cover the levels that completed";
        row.note = Some(
            [why]
                .into_iter()
                .chain(row.note.as_deref())
                .collect::<Vec<_>>()
                .join("; "),
        );
    }
    row.max_users = w
        .max_users
        .as_ref()
        .and_then(|m| m.best.as_ref().map(|b| b.clients));
    row.max_users_capped = w
        .max_users
        .as_ref()
        .is_some_and(|m| m.best.is_some() && m.first_broken.is_none());
    row
}

/// The row of `wk`'s table: with several rounds, the round with the median peak gives the clients
/// and p99, and every other figure is its own median (errors: the sum; memory: the largest).
pub fn workload_row(server: &ServerOutcome, wk: WorkloadKind) -> WorkloadRow {
    let rows: Vec<WorkloadRow> = server
        .workloads
        .iter()
        .filter(|w| w.workload == Some(wk))
        .map(|w| round_row(server, w))
        .collect();
    if rows.is_empty() {
        let note = server.skipped.clone().or_else(|| Some("not run".into()));
        return WorkloadRow {
            server: server.name.clone(),
            version: server.version.clone(),
            note,
            ..Default::default()
        };
    }
    median_row(rows)
}

/// The TLS column: checked with `--tls`; "no" for a server without TLS; "-" when not asked.
fn tls_cell(server: &ServerOutcome) -> String {
    match (&server.tls, &server.skipped) {
        (Some(s), _) => s.cell().into(),
        (None, Some(why)) if why.starts_with(webstand_results::comparison::NO_TLS) => "no".into(),
        _ => "-".into(),
    }
}

/// The h2 column: checked with `--h2`; "no" for a server without HTTP/2 here; "-" when not asked.
fn h2_cell(server: &ServerOutcome) -> String {
    server
        .h2
        .as_ref()
        .map_or_else(|| "-".into(), |s| s.cell().into())
}

/// The h3 column: checked with `--h3`; "no" for a server without HTTP/3 here; "-" when not asked.
fn h3_cell(server: &ServerOutcome) -> String {
    server
        .h3
        .as_ref()
        .map_or_else(|| "-".into(), |s| s.cell().into())
}

/// The row of thttpd's table.
pub fn feature_row(server: &ServerOutcome) -> FeatureRow {
    let cell = |s: Option<&Support>| {
        s.map(|s| s.cell().to_string())
            .unwrap_or_else(|| "-".into())
    };
    let f = server.features.as_ref();
    let peak = |wk| {
        Some(workload_row(server, wk))
            .filter(|r| r.measured)
            .map(|r| r.peak_hits_per_sec)
    };
    let large = workload_row(server, WorkloadKind::Large);
    let mut notes: Vec<String> = Vec::new();
    if let Some(f) = f {
        for (name, s) in [
            ("basic auth", &f.basic_auth),
            ("chroot", &f.chroot),
            ("throttling", &f.throttling),
        ] {
            if let Some(n) = s.note() {
                notes.push(format!("{name}: {n}"));
            }
        }
    }
    if let Some(n) = server.tls.as_ref().and_then(Support::note) {
        notes.push(format!("TLS: {n}"));
    }
    if let Some(n) = server.h2.as_ref().and_then(Support::note) {
        notes.push(format!("h2: {n}"));
    }
    if let Some(n) = server.h3.as_ref().and_then(Support::note) {
        notes.push(format!("h3: {n}"));
    }
    for n in [&server.no_h2, &server.no_h3].into_iter().flatten() {
        if server.skipped.as_ref() != Some(n) {
            notes.push(n.clone());
        }
    }
    if let Some(s) = &server.skipped {
        notes.push(s.clone());
    }
    FeatureRow {
        name: server.name.clone(),
        version: server.version.clone(),
        model: match server.shape {
            Some((p, t)) => format!("{} ({p} proc, {t} thr)", server.model),
            None => server.model.clone(),
        },
        exe_bytes: server.exe_bytes,
        basic_auth: cell(f.map(|f| &f.basic_auth)),
        chroot: cell(f.map(|f| &f.chroot)),
        throttling: cell(f.map(|f| &f.throttling)),
        tls: tls_cell(server),
        h2: h2_cell(server),
        h3: h3_cell(server),
        small_files_rps: peak(WorkloadKind::SmallFiles),
        cgi_rps: peak(WorkloadKind::Cgi),
        large_files_max_users: large.max_users,
        large_files_max_users_capped: large.max_users_capped,
        note: if notes.is_empty() {
            None
        } else {
            Some(notes.join("; "))
        },
    }
}

pub(crate) fn median<T: Copy + PartialOrd>(mut v: Vec<T>) -> Option<T> {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len().wrapping_sub(1) / 2).copied()
}

/// Which of several rounds' rows gives their median row its peak, clients and p99: the measured
/// round whose peak is the median (the lower of the two middle ones); None when none was measured.
pub fn median_round(rows: &[WorkloadRow]) -> Option<usize> {
    let mut measured: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].measured).collect();
    measured.sort_by(|&a, &b| {
        rows[a]
            .peak_hits_per_sec
            .total_cmp(&rows[b].peak_hits_per_sec)
    });
    measured.get(measured.len().wrapping_sub(1) / 2).copied()
}

/// The row of one round's levels, the one builder of every row (a live comparison's rounds, a
/// stored one's, the HTML report's series): figures at its peak, the fastest level within
/// `max_error_pct` errors, with that level's server CPU-µs per request from `server_cpu_us` (in
/// `levels`' order), and errors over every level; "no clean level" when none was within it. Also
/// the peak's index in `levels`. The caller names the server and adds what it knows beside the
/// levels.
pub fn peak_row(
    levels: &[Level],
    server_cpu_us: &[Option<f64>],
    max_error_pct: f64,
) -> (WorkloadRow, Option<usize>) {
    let mut row = WorkloadRow::default();
    let peak = webstand_results::figures::peak(levels.iter().map(|l| l.result), max_error_pct);
    let Some(i) = peak else {
        row.note = Some(format!("no clean level (errors ≤ {max_error_pct} %)"));
        return (row, None);
    };
    let (level, r) = (levels[i], levels[i].result);
    row.measured = true;
    row.version = level.server_version.unwrap_or("").to_string();
    row.peak_hits_per_sec = r.hits_per_sec();
    row.clients_at_peak = level.clients;
    row.p99_ms_at_peak = r.latency_ms(0.99);
    row.errors = levels.iter().map(|l| l.result.errors()).sum();
    row.server_cpu_us = server_cpu_us.get(i).copied().flatten();
    row.generator_cpu_us = r.cpu_us_per_request_of(r.cpu);
    row.generator_work_us = r.work_us_per_request();
    row.generator_spin_us = r.spin_us_per_request();
    row.requests_at_peak = r.complete;
    (row, Some(i))
}

/// One row out of several rounds' rows of the same server and workload (also `webstand show`'s,
/// from the history, so a saved comparison reads as compare printed it).
pub fn median_row(rows: Vec<WorkloadRow>) -> WorkloadRow {
    // Each note once: rounds share most of their notes (how the server ran) but not all (one
    // round's peak may be generator-bound), so compare the notes, not the rounds' joined lines.
    let mut notes: Vec<&str> = Vec::new();
    for n in rows.iter().filter_map(|r| r.note.as_deref()) {
        for one in n.split("; ") {
            if !notes.contains(&one) {
                notes.push(one);
            }
        }
    }
    let note = Some(notes.join("; ")).filter(|n| !n.is_empty());
    let mut out = rows[median_round(&rows).unwrap_or(0)].clone();
    out.bound_at_peak = bound_over_rounds(&rows, out.bound_at_peak.as_deref());
    let measured: Vec<&WorkloadRow> = rows.iter().filter(|r| r.measured).collect();
    if measured.len() > 1 {
        out.server_cpu_us = median(measured.iter().filter_map(|r| r.server_cpu_us).collect());
        out.with_backends_cpu_us = median(
            measured
                .iter()
                .filter_map(|r| r.with_backends_cpu_us)
                .collect(),
        );
        out.generator_cpu_us = median(measured.iter().filter_map(|r| r.generator_cpu_us).collect());
        out.generator_work_us = median(
            measured
                .iter()
                .filter_map(|r| r.generator_work_us)
                .collect(),
        );
        out.generator_spin_us = median(
            measured
                .iter()
                .filter_map(|r| r.generator_spin_us)
                .collect(),
        );
        out.errors = measured.iter().map(|r| r.errors).sum();
        out.peak_rss_kib = measured.iter().filter_map(|r| r.peak_rss_kib).max();
    }
    out.max_users = median(rows.iter().filter_map(|r| r.max_users).collect());
    out.max_users_capped = out.max_users.is_some()
        && rows
            .iter()
            .any(|r| r.max_users == out.max_users && r.max_users_capped);
    out.note = note;
    out
}

/// The Bound-by cell of several rounds' median row: the verdict of the round whose peak it quotes
/// (the same round as its peak, clients and p99), and when the rounds' verdicts differ, how many of
/// the diagnosed rounds agree with it: "generator (2 of 3)".
fn bound_over_rounds(rows: &[WorkloadRow], quoted: Option<&str>) -> Option<String> {
    let quoted = quoted?;
    let verdicts: Vec<&str> = rows
        .iter()
        .filter(|r| r.measured)
        .filter_map(|r| r.bound_at_peak.as_deref())
        .collect();
    let agree = verdicts.iter().filter(|v| **v == quoted).count();
    Some(match agree == verdicts.len() {
        true => quoted.to_string(),
        false => format!("{quoted} ({agree} of {})", verdicts.len()),
    })
}

/// Each workload's rows, in order.
pub fn comparison_rows(c: &Comparison) -> Vec<(String, Vec<WorkloadRow>)> {
    c.workloads
        .iter()
        .map(|&wk| {
            (
                wk.name().to_string(),
                c.servers.iter().map(|s| workload_row(s, wk)).collect(),
            )
        })
        .collect()
}

/// Everything the tables show, as one JSON document.
pub fn comparison_json(c: &Comparison) -> serde_json::Value {
    let features: Vec<FeatureRow> = c.servers.iter().map(feature_row).collect();
    serde_json::json!({
        "pinning": c.pinning,
        "settings": c.settings,
        "cpu_accounting": c.cpu_accounting,
        "rounds": c.rounds,
        "interrupted": c.interrupted.is_some(),
        "workloads": comparison_rows(c).into_iter().map(|(name, rows)| serde_json::json!({ "workload": name, "rows": rows })).collect::<Vec<_>>(),
        "servers": features,
        "verify": c.verify,
        "robustness": crate::robustness::robustness_json(c),
    })
}

/// Under a one-round comparison's tables: its ratios are not yet worth quoting.
const MEASURED_ONCE: &str = "Measured once: one round's figures can move by several per cent from \
run to run; quote medians of several rounds (webstand compare --rounds 3).\n\n";

/// Every table as text: one per workload, seed 004's for WordPress, thttpd's, and the verification
/// when run; each sentence on one line (the terminal wraps them: `webstand_results::text::wrap`).
pub fn render_comparison(c: &Comparison) -> String {
    let rounds = if c.rounds > 1 {
        format!("; medians of {} rounds", c.rounds)
    } else {
        String::new()
    };
    let mut out = format!(
        "Lab comparison: {}{rounds}\n{}\n{}\n\n",
        c.pinning, c.settings, c.cpu_accounting
    );
    for (name, rows) in comparison_rows(c) {
        out.push_str(&workload_table(&name, &rows));
        out.push('\n');
    }
    if c.rounds == 1 && c.servers.len() > 1 {
        out.push_str(MEASURED_ONCE);
    }
    if c.workloads.contains(&WorkloadKind::Wordpress) {
        out.push_str(&crate::seed004::seed_table(c, WorkloadKind::Wordpress));
        out.push('\n');
    }
    let rows: Vec<FeatureRow> = c.servers.iter().map(feature_row).collect();
    out.push_str(&thttpd_table(&rows));
    let robustness = crate::robustness::robustness_table(c);
    if !robustness.is_empty() {
        out.push('\n');
        out.push_str(&robustness);
    }
    if !c.verify.is_empty() {
        out.push('\n');
        out.push_str(&verify_table(&c.verify));
    }
    if let Some(signal) = c.interrupted {
        out.push_str(&format!(
            "\nInterrupted: the tables hold what was measured before {}.\n",
            signal.name()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use webstand_results::{CpuTime, RunResult};
    use webstand_results::{Level, SweepResult};

    #[test]
    fn rows_come_from_the_peak_level_and_its_server_cpu() {
        let lvl = |clients, complete| Level {
            clients,
            result: RunResult {
                complete,
                elapsed: Duration::from_secs(1),
                ..Default::default()
            },
        };
        let sweep = SweepResult {
            workload: "2k".into(),
            levels: vec![lvl(1, 1000), lvl(8, 4000), lvl(32, 3000)],
            ..Default::default()
        };
        let ms = Duration::from_millis;
        let w = WorkloadOutcome {
            workload: Some(WorkloadKind::TwoK),
            sweep: Some(sweep),
            server_cpu: vec![
                CpuTime {
                    user: ms(10),
                    sys: ms(0),
                },
                CpuTime {
                    user: ms(30),
                    sys: ms(10),
                },
                CpuTime {
                    user: ms(30),
                    sys: ms(0),
                },
            ],
            peak_rss_kib: Some(4096),
            ..Default::default()
        };
        let s = ServerOutcome {
            version: "1.22.1".into(),
            workloads: vec![w],
            ..ServerOutcome::new("nginx", "event-driven")
        };
        let row = workload_row(&s, WorkloadKind::TwoK);
        assert!(row.measured);
        assert_eq!(row.clients_at_peak, 8);
        assert_eq!(row.peak_hits_per_sec, 4000.0);
        assert_eq!(row.server_cpu_us, Some(10.0)); // 40 ms over 4000 requests
        assert!(!workload_row(&s, WorkloadKind::Cgi).measured);
        let f = feature_row(&s);
        assert_eq!((f.basic_auth.as_str(), f.small_files_rps), ("-", None));
    }

    #[test]
    fn a_one_round_comparison_says_its_figures_are_not_yet_worth_quoting() {
        let servers = ["nginx", "h2o"]
            .map(|k| ServerOutcome::new(k, "event-driven"))
            .to_vec();
        let once = Comparison {
            servers: servers.clone(),
            rounds: 1,
            ..Default::default()
        };
        assert!(render_comparison(&once).contains("--rounds 3"));
        let thrice = Comparison {
            servers,
            rounds: 3,
            ..Default::default()
        };
        assert!(!render_comparison(&thrice).contains("Measured once"));
    }

    #[test]
    fn rounds_give_the_median_round_and_median_figures() {
        let r = |hits: f64, clients, cpu: f64, errors, rss| WorkloadRow {
            server: "h2o".into(),
            measured: true,
            peak_hits_per_sec: hits,
            clients_at_peak: clients,
            server_cpu_us: Some(cpu),
            generator_cpu_us: Some(1.0),
            errors,
            peak_rss_kib: Some(rss),
            max_users: Some(clients * 10),
            ..Default::default()
        };
        let m = median_row(vec![
            r(300.0, 8, 9.0, 1, 10),
            r(100.0, 1, 7.0, 0, 30),
            r(200.0, 32, 8.0, 2, 20),
        ]);
        assert_eq!((m.peak_hits_per_sec, m.clients_at_peak), (200.0, 32));
        assert_eq!(
            (m.server_cpu_us, m.errors, m.peak_rss_kib, m.max_users),
            (Some(8.0), 3, Some(30), Some(80))
        );
        let unmeasured = WorkloadRow {
            note: Some("died".into()),
            ..Default::default()
        };
        let m = median_row(vec![unmeasured, r(100.0, 1, 7.0, 0, 30)]);
        assert_eq!(
            (m.peak_hits_per_sec, m.note.as_deref()),
            (100.0, Some("died"))
        );
    }

    #[test]
    fn rounds_that_disagree_on_what_bound_them_say_which_verdict_is_quoted_and_how_many_agree() {
        let r = |hits: f64, bound: &str| WorkloadRow {
            measured: true,
            peak_hits_per_sec: hits,
            bound_at_peak: Some(bound.into()),
            ..Default::default()
        };
        // The median peak (200) is round 3's: its verdict is the one quoted, with the count.
        let m = median_row(vec![r(300.0, "-"), r(100.0, "server"), r(200.0, "server")]);
        assert_eq!(m.bound_at_peak.as_deref(), Some("server (2 of 3)"));
        let m = median_row(vec![
            r(300.0, "server"),
            r(100.0, "-"),
            r(200.0, "generator"),
        ]);
        assert_eq!(m.bound_at_peak.as_deref(), Some("generator (1 of 3)"));
        // Rounds that agree: the verdict alone, as one round prints it.
        let m = median_row(vec![r(300.0, "server"), r(100.0, "server")]);
        assert_eq!(m.bound_at_peak.as_deref(), Some("server"));
        let m = median_row(vec![r(300.0, "server")]);
        assert_eq!(m.bound_at_peak.as_deref(), Some("server"));
        // The table says what the cell is.
        let table = workload_table(
            "2k",
            &[median_row(vec![
                r(1.0, "-"),
                r(2.0, "server"),
                r(3.0, "server"),
            ])],
        );
        assert!(table.contains("server (2 of 3)"), "{table}");
        assert!(table.contains("the median round's"), "{table}");
    }

    #[test]
    fn rounds_with_different_notes_print_each_note_once() {
        // builtin's tls-resume over three rounds: the same disclosures each round, and the
        // generator bound the peak in two of them (compare adds that note per round).
        use webstand_results::{Note, TlsNote};
        let bound = "peak generator-bound: NOT the server's limit (see Diagnosis)";
        let cached =
            "files ≤ 64 KiB served from memory with ready-made headers (see builtin-nocache)";
        let rustls = "rustls: its own suite order";
        let round = |round, generator_bound| {
            let mut disclosures = vec![
                Note::FilesFromMemory { up_to_kib: 64 },
                Note::Tls(TlsNote::RustlsOrder),
            ];
            if generator_bound {
                disclosures.push(Note::PeakGeneratorBound);
            }
            let lvl = Level {
                clients: 8,
                result: RunResult {
                    complete: 1000 + round as u64,
                    elapsed: Duration::from_secs(1),
                    ..Default::default()
                },
            };
            WorkloadOutcome {
                workload: Some(WorkloadKind::TlsResume),
                round,
                disclosures,
                sweep: Some(SweepResult {
                    workload: "tls-resume".into(),
                    levels: vec![lvl],
                    ..Default::default()
                }),
                ..Default::default()
            }
        };
        let s = ServerOutcome {
            workloads: vec![round(0, false), round(1, true), round(2, true)],
            ..ServerOutcome::new("builtin", "event-driven")
        };
        let note = workload_row(&s, WorkloadKind::TlsResume).note.unwrap();
        for one in [cached, rustls, bound] {
            assert_eq!(note.matches(one).count(), 1, "{one:?} not once in {note:?}");
        }
        assert_eq!(note, format!("{cached}; {rustls}; {bound}"));
    }
}
