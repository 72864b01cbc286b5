//! HTTP/2 levels as a table beside the seeds' ones (sweep, show, the HTML report): per level the
//! streams per connection the server allowed and h2load's counts — streams started, done,
//! succeeded, failed, errored, timed out, the status classes, and HPACK's header space savings.

use crate::h2load::space_savings;
use crate::levels::Level;
use std::fmt::Write;
use webstand_results::H2Summary;

/// The counts of [`level_counts`], named, with their column widths.
const COLUMNS: [(&str, usize); 11] = [
    ("Streams", 7),
    ("Started", 9),
    ("Done", 9),
    ("Succeeded", 9),
    ("Failed", 7),
    ("Errored", 7),
    ("Timeout", 7),
    ("2xx", 8),
    ("3xx", 6),
    ("4xx", 6),
    ("5xx", 6),
];

/// An HTTP/2 level's counts, in one order for this table and the CSV export: the streams per
/// connection allowed, streams started, done, succeeded, failed (done but not succeeded),
/// errored, timed out, then the 2xx–5xx status classes.
pub(crate) fn level_counts(h: &H2Summary) -> [u64; 11] {
    [
        u64::from(h.max_streams),
        h.started,
        h.done,
        h.succeeded,
        h.done - h.succeeded,
        h.errored,
        h.timeout,
        h.status[2],
        h.status[3],
        h.status[4],
        h.status[5],
    ]
}

/// The header line and one row per HTTP/2 or HTTP/3 level ("" when no level spoke either).
pub fn table(levels: &[Level]) -> String {
    let h2: Vec<_> = levels
        .iter()
        .filter_map(|l| Some((l.clients, l.result.h2.as_ref()?)))
        .collect();
    if h2.is_empty() {
        return String::new();
    }
    let protocol = match levels.iter().any(|l| l.result.quic.is_some()) {
        true => "HTTP/3",
        false => "HTTP/2",
    };
    let mut out = format!("{protocol} (h2load's counts per level):\n");
    let _ = write!(out, "{:>7}", "Clients");
    for (name, width) in COLUMNS {
        let _ = write!(out, " {name:>width$}");
    }
    let _ = writeln!(out, " {:>8}", "Hdr sav%");
    for (clients, h) in h2 {
        let _ = write!(out, "{clients:>7}");
        for ((_, width), n) in COLUMNS.iter().zip(level_counts(h)) {
            let _ = write!(out, " {n:>width$}");
        }
        let _ = writeln!(out, " {:>8.2}", space_savings(h));
    }
    out.push_str("Streams: per connection, the smallest of -m and the server's limit; a client is a connection\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use webstand_results::RunResult;

    #[test]
    fn only_http2_levels_get_rows() {
        let plain = RunResult::default();
        let mut h2 = RunResult::default();
        let mut s = H2Summary::new(16);
        (s.started, s.done, s.succeeded, s.errored) = (100, 100, 97, 3);
        s.status[2] = 97;
        (s.header_bytes, s.header_decoded_bytes) = (250, 1000);
        h2.h2 = Some(s);
        let level = |clients, result| Level {
            group: "2k",
            clients,
            round: 1,
            server_version: None,
            result,
        };
        assert_eq!(table(&[level(1, &plain)]), "");
        let text = table(&[level(1, &plain), level(4, &h2)]);
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 4, "{text}");
        let cells: Vec<&str> = rows[2].split_whitespace().collect();
        assert_eq!(
            cells,
            ["4", "16", "100", "100", "97", "3", "3", "0", "97", "0", "0", "0", "75.00"]
        );
    }
}
