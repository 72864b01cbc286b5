//! HTTP/2 levels as a table beside the seeds' ones (sweep, show, the HTML report): per level the
//! streams per connection the server allowed and h2load's counts — streams started, done,
//! succeeded, failed, errored, timed out, the status classes, and HPACK's header space savings.

use crate::export::Level;
use crate::h2load::space_savings;
use std::fmt::Write;

/// The header line and one row per HTTP/2 level ("" when no level spoke HTTP/2).
pub fn table(levels: &[Level]) -> String {
    let h2: Vec<_> = levels
        .iter()
        .filter_map(|l| Some((l.clients, l.result.h2.as_ref()?)))
        .collect();
    if h2.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "HTTP/2 (h2load's counts per level):\n{:>7} {:>7} {:>9} {:>9} {:>9} {:>7} {:>7} {:>7} {:>8} {:>6} {:>6} {:>6} {:>8}\n",
        "Clients", "Streams", "Started", "Done", "Succeeded", "Failed", "Errored", "Timeout",
        "2xx", "3xx", "4xx", "5xx", "Hdr sav%"
    );
    for (clients, h) in h2 {
        let _ = writeln!(
            out,
            "{clients:>7} {:>7} {:>9} {:>9} {:>9} {:>7} {:>7} {:>7} {:>8} {:>6} {:>6} {:>6} {:>8.2}",
            h.max_streams,
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
            space_savings(h)
        );
    }
    out.push_str("Streams: per connection, the smallest of -m and the server's limit; a client is a connection\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use webstand_engine::{H2Summary, RunResult};

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
