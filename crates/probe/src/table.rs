//! The probe's text table: a block per category, a row per case (what the server did, the verdict,
//! what the RFCs expect) with the reasons under every row that is not safe; then the counts.

use crate::result::{bytes, millis, CaseResult, Ended, Report, Verdict};
use webstand_results::Counts;

impl Report {
    /// The verdict counts per category (the lab's robustness columns).
    pub fn by_category(&self) -> Vec<Counts> {
        let mut out: Vec<Counts> = Vec::new();
        for c in &self.cases {
            let i = match out.iter().position(|k| k.category == c.category) {
                Some(i) => i,
                None => {
                    out.push(Counts {
                        category: c.category.clone(),
                        ..Counts::default()
                    });
                    out.len() - 1
                }
            };
            match c.verdict {
                Verdict::Safe => out[i].safe += 1,
                Verdict::Lenient => out[i].lenient += 1,
                Verdict::Unsafe => out[i].unsafe_ += 1,
            }
        }
        out
    }
}

/// The whole table for `report`.
pub fn render(report: &Report) -> String {
    let mut out = format!(
        "webstand probe {} ({}): normal answer {}, {}\n",
        report.url,
        report.address,
        report.baseline_status,
        bytes(report.baseline_bytes)
    );
    out += &rows(&report.cases);
    out += &summary(report);
    out
}

/// What the "Server did" column says, once above the blocks.
pub const SERVER_DID: &str = "Server did: the statuses of its answers and when the first came \
(from the start of the case), how the connection ended (close, reset, open, timeout) and the bytes \
received; \"no answer in 3.0s\" is how long the probe waited for one.\n";

/// A block per category, a row per case run, under a line saying what "Server did" says.
pub fn rows(cases: &[CaseResult]) -> String {
    let name_w = cases.iter().map(|c| c.name.len()).max().unwrap_or(4).max(4);
    let did_w = cases
        .iter()
        .map(|c| c.did().chars().count())
        .max()
        .unwrap_or(10)
        .max(10);
    let mut out = String::from(if cases.is_empty() { "" } else { SERVER_DID });
    let mut category = "";
    for c in cases {
        if c.category != category {
            category = &c.category;
            out += &format!(
                "\n{category}\n  {:<name_w$}  {:<did_w$}  {:<7}  Expected (RFC 9110/9112)\n",
                "Case", "Server did", "Verdict"
            );
        }
        out += &row(c, name_w, did_w);
    }
    out
}

fn row(c: &CaseResult, name_w: usize, did_w: usize) -> String {
    let did = c.did();
    let pad = did_w.saturating_sub(did.chars().count());
    let mut text = format!(
        "  {:<name_w$}  {did}{}  {:<7}  {}\n",
        c.name,
        " ".repeat(pad),
        c.verdict.name(),
        c.rfc
    );
    for note in &c.notes {
        text += &format!("  {:<name_w$}    ↳ {note}\n", "");
    }
    text
}

/// The closing lines: counts, what was not run, and how the probe ended.
pub fn summary(report: &Report) -> String {
    let count = |v: Verdict| report.cases.iter().filter(|c| c.verdict == v).count();
    let mut out = format!(
        "\n{} case runs in {}: {} safe, {} lenient, {} unsafe\n",
        report.cases.len(),
        millis(report.elapsed_ms),
        count(Verdict::Safe),
        count(Verdict::Lenient),
        count(Verdict::Unsafe)
    );
    for k in report.by_category() {
        out += &format!(
            "  {:<12} {:>3} safe  {:>3} lenient  {:>3} unsafe\n",
            k.category, k.safe, k.lenient, k.unsafe_
        );
    }
    if !report.not_run.is_empty() {
        out += &format!("not run ({}):\n", report.not_run.len());
        for n in &report.not_run {
            out += &format!("  {n}\n");
        }
    }
    match report.ended {
        Ended::Complete => {}
        Ended::MaxTime => out += "(--max-time reached: some cases were not run)\n",
        Ended::Interrupted => out += "(interrupted: the table covers the cases that completed)\n",
        Ended::TargetLost => out += "(the target stopped answering: the probe stopped)\n",
    }
    out
}
