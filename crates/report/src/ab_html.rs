//! ab's `-w` report: the run as one HTML table, row for row as ApacheBench 2.3 prints it, with the
//! attributes of its `-x` (table), `-y` (tr) and `-z` (td and th, default `bgcolor=white`) options.
//!
//! ab's table is shorter than its text report: no Receive count among the failures, no percentiles,
//! and Connection Times as min, avg and max of Connect, Processing (total minus connect) and Total,
//! each in whole milliseconds. Values are HTML-escaped (ab prints them raw; for the values a server
//! and a URL normally give the two are the same).

use crate::ab::{round_ms, AbInfo};
use std::fmt::Write;
use webstand_results::RunResult;

/// ab's `-x`, `-y` and `-z` attribute strings.
#[derive(Clone, Debug)]
pub struct Attributes {
    pub table: String,
    pub tr: String,
    pub td: String,
}

impl Default for Attributes {
    fn default() -> Self {
        Attributes {
            table: String::new(),
            tr: String::new(),
            td: "bgcolor=white".into(),
        }
    }
}

fn escape(s: &str) -> String {
    html_escape::encode_text(s).into_owned()
}

/// The whole table, starting with the blank lines ab prints before it.
pub fn report(r: &RunResult, info: &AbInfo, a: &Attributes) -> String {
    let (tr, td) = (&a.tr, &a.td);
    let mut o = format!("\n\n<table {}>\n", a.table);
    let mut row = |name: &str, value: String| {
        let _ = writeln!(
            o,
            "<tr {tr}><th colspan=2 {td}>{name}:</th><td colspan=2 {td}>{value}</td></tr>"
        );
    };
    let secs = r.elapsed.as_secs_f64();
    row(
        "Server Software",
        escape(r.server_software.as_deref().unwrap_or("")),
    );
    row("Server Hostname", escape(&info.host));
    row("Server Port", info.port.to_string());
    row("Document Path", escape(&info.path));
    row(
        "Document Length",
        match info.variable_length {
            true => "Variable".into(),
            false => format!("{} bytes", r.document_length.unwrap_or(0)),
        },
    );
    row("Concurrency Level", info.concurrency.to_string());
    row("Time taken for tests", format!("{secs:.3} seconds"));
    row("Complete requests", r.complete.to_string());
    row("Failed requests", r.failed.total().to_string());
    let f = &r.failed;
    if f.total() > 0 {
        let _ = writeln!(
            o,
            "<tr {tr}><td colspan=4 {td} >   (Connect: {}, Length: {}, Exceptions: {})</td></tr>",
            f.connect, f.length, f.exceptions
        );
    }
    rest(&mut o, r, info, a);
    o
}

/// From the Non-2xx row to the end of the table.
fn rest(o: &mut String, r: &RunResult, info: &AbInfo, a: &Attributes) {
    let (tr, td) = (&a.tr, &a.td);
    let mut row = |name: &str, value: String| {
        let _ = writeln!(
            o,
            "<tr {tr}><th colspan=2 {td}>{name}:</th><td colspan=2 {td}>{value}</td></tr>"
        );
    };
    if r.non_2xx > 0 {
        row("Non-2xx responses", r.non_2xx.to_string());
    }
    if info.keep_alive {
        row("Keep-Alive requests", r.keep_alive_requests.to_string());
    }
    row("Total transferred", format!("{} bytes", r.total_bytes));
    if info.body_sent {
        row("Total body sent", r.sent_bytes.to_string());
    }
    row("HTML transferred", format!("{} bytes", r.body_bytes));
    if !r.elapsed.is_zero() {
        let per_sec = |bytes: u64| r.per_sec(bytes) / 1024.0;
        row("Requests per second", format!("{:.2}", r.hits_per_sec()));
        row(
            "Transfer rate",
            format!("{:.2} kb/s received", per_sec(r.total_bytes)),
        );
        if info.body_sent {
            for (v, what) in [
                (per_sec(r.sent_bytes), "sent"),
                (per_sec(r.total_bytes + r.sent_bytes), "total"),
            ] {
                let _ = writeln!(
                    o,
                    "<tr {tr}><td colspan=2 {td}>&nbsp;</td><td colspan=2 {td}>{v:.2} kb/s {what}</td></tr>"
                );
            }
        }
    }
    if r.complete > 0 {
        times(o, r, a);
    }
    o.push_str("</table>\n");
}

/// ab's Connection Times rows: Processing is Total's figure minus Connect's, and the means are ab's
/// whole-millisecond sums divided by the count.
fn times(o: &mut String, r: &RunResult, a: &Attributes) {
    let (tr, td) = (&a.tr, &a.td);
    let h = &r.histograms;
    let n = r.complete;
    let connect_sum = (h.connect.mean() * h.connect.len() as f64).round() as u64;
    let con = [
        round_ms(h.connect.min()),
        round_ms(connect_sum) / n,
        round_ms(h.connect.max()),
    ];
    let total_sum = u64::try_from(r.latency_sum_us).unwrap_or(u64::MAX);
    let tot = [
        round_ms(h.total.min()),
        round_ms(total_sum) / n,
        round_ms(h.total.max()),
    ];
    let processing = [0, 1, 2].map(|i| tot[i].saturating_sub(con[i]));
    let _ = writeln!(
        o,
        "<tr {tr}><th {td} colspan=4>Connection Times (ms)</th></tr>"
    );
    let _ = writeln!(
        o,
        "<tr {tr}><th {td}>&nbsp;</th> <th {td}>min</th>   <th {td}>avg</th>   <th {td}>max</th></tr>"
    );
    for (name, v) in [
        ("Connect:", con),
        ("Processing:", processing),
        ("Total:", tot),
    ] {
        let _ = writeln!(
            o,
            "<tr {tr}><th {td}>{name}</th><td {td}>{:5}</td><td {td}>{:5}</td><td {td}>{:5}</td></tr>",
            v[0], v[1], v[2]
        );
    }
}
