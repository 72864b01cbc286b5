//! `compare --probe`'s robustness table: a row per server, a column per probe category (safe /
//! lenient / unsafe case counts), service availability under slowhttptest's slowloris and slow-read
//! attacks, the most keep-alive connections held with no error, and the resident memory per idle
//! keep-alive connection; and the same as JSON. Pure:
//! the lab's measurements in, text out.

use std::fmt::Write;
use webstand_results::Comparison;
use webstand_results::Robustness;

/// Probe categories in the order the servers' rows first name them (run or not).
fn categories<'a>(c: &'a Comparison) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let rows = c.servers.iter().filter_map(|s| s.robustness.as_ref());
    let names = |r: &'a Robustness| r.categories.iter().map(|k| &k.category).chain(&r.not_run);
    for k in rows.flat_map(names) {
        if !out.contains(k) {
            out.push(k.clone());
        }
    }
    out
}

/// The "safe/lenient/unsafe" cell of `category`, or "-" when the row has none of its cases (or
/// did not run them: its probe note says why).
fn counts_cell(r: &Robustness, category: &str) -> String {
    r.categories
        .iter()
        .find(|k| k.category == category)
        .map_or("-".into(), |k| {
            format!("{}/{}/{}", k.safe, k.lenient, k.unsafe_)
        })
}

/// The table, or an empty string when no server has a robustness row.
pub fn robustness_table(c: &Comparison) -> String {
    let measured: Vec<_> = c
        .servers
        .iter()
        .filter_map(|s| Some((s, s.robustness.as_ref()?)))
        .collect();
    let Some((_, first)) = measured.first() else {
        return String::new();
    };
    let cats = categories(c);
    let mut out = format!(
        "Robustness (compare --probe): probe cases safe/lenient/unsafe per category; slowloris, slow read:\n\
         service available every second under slowhttptest's attack ({} connections, {} s); held: most\n\
         keep-alive connections open at once with 0 errors (N+: the search's limit, not the server's);\n\
         KiB/conn: the server's resident memory per idle keep-alive connection ({} open)\n",
        first.slowloris.connections, first.slowloris.seconds, first.held.limit
    );
    let mut header = format!("{:<16}", "server");
    for k in &cats {
        let _ = write!(header, " {k:>11}");
    }
    let _ = writeln!(
        header,
        " {:>12} {:>12} {:>9} {:>9}",
        "slowloris", "slow read", "held", "KiB/conn"
    );
    out.push_str(&header);
    let mut notes = Vec::new();
    for (s, r) in &measured {
        let mut line = format!("{:<16}", s.name);
        for k in &cats {
            let _ = write!(line, " {:>11}", counts_cell(r, k));
        }
        let (sl, sr) = (r.slowloris.cell(), r.slow_read.cell());
        let (held, mem) = (r.held.cell(), r.memory.cell());
        let _ = writeln!(line, " {sl:>12} {sr:>12} {held:>9} {mem:>9}");
        out.push_str(&line);
        let name = s.name.as_str();
        notes.extend(r.probe_note.iter().map(|n| format!("{name}: probe: {n}")));
        notes.extend(r.h3_notes.iter().map(|n| format!("{name}: {n}")));
        notes.extend(
            r.slowloris
                .note
                .iter()
                .map(|n| format!("{name}: slowloris: {n}")),
        );
        notes.extend(
            r.slow_read
                .note
                .iter()
                .map(|n| format!("{name}: slow read: {n}")),
        );
        notes.extend(
            r.memory
                .note
                .iter()
                .map(|n| format!("{name}: KiB/conn: {n}")),
        );
        if let Some((at, errors)) = r.held.broke_at {
            notes.push(format!("{name}: held: {errors} errors at {at} connections"));
        }
    }
    for n in notes {
        let _ = writeln!(out, "  {n}");
    }
    out
}

/// Each measured server's row as JSON: `{server, categories, probe_note, slowloris, slow_read,
/// held}`.
pub fn robustness_json(c: &Comparison) -> serde_json::Value {
    c.servers
        .iter()
        .filter_map(|s| {
            let mut v = serde_json::to_value(s.robustness.as_ref()?).ok()?;
            v["server"] = s.name.clone().into();
            Some(v)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use webstand_results::{Counts, ServerOutcome};

    #[test]
    fn categories_not_run_are_dashes_with_the_reason_under_the_table() {
        let counted = Robustness {
            categories: vec![Counts {
                category: "ranges".into(),
                safe: 5,
                ..Default::default()
            }],
            ..Default::default()
        };
        let not_run = Robustness {
            not_run: vec!["ranges".into(), "traversal".into()],
            probe_note: Some("not run on HTTPS".into()),
            ..Default::default()
        };
        let mut c = Comparison::default();
        for (name, r) in [("plain", counted), ("tls", not_run)] {
            c.servers.push(ServerOutcome {
                robustness: Some(r),
                ..ServerOutcome::new(name, "event-driven")
            });
        }
        let text = robustness_table(&c);
        let cells = |name: &str| -> Vec<String> {
            let line = text.lines().find(|l| l.starts_with(name)).expect(&text);
            line.split_whitespace().take(3).map(String::from).collect()
        };
        assert_eq!(cells("server"), ["server", "ranges", "traversal"], "{text}");
        assert_eq!(cells("plain "), ["plain", "5/0/0", "-"], "{text}");
        assert_eq!(cells("tls "), ["tls", "-", "-"], "{text}");
        assert!(text.contains("  tls: probe: not run on HTTPS"), "{text}");
    }
}
