//! What a CI job reads: the thresholds as JUnit XML test cases (`--junit`), and a Markdown summary
//! (`--summary-md`) with each run's main figures and its thresholds, for a job's summary page.

use crate::table::Judged;
use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};
use webstand_results::RunResult;

/// A JUnit XML document: one test suite per judged run, one test case per threshold, a crossed
/// threshold as a `<failure>`.
pub fn junit(command: &str, runs: &[Judged]) -> String {
    let tests: usize = runs.iter().map(|j| j.checks.len()).sum();
    let failures: usize = runs.iter().map(|j| j.crossed().count()).sum();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"webstand {}\" tests=\"{tests}\" failures=\"{failures}\">\n",
        attr(command)
    );
    for j in runs {
        let name = if j.label.is_empty() {
            command
        } else {
            &j.label
        };
        out += &format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">\n",
            attr(name),
            j.checks.len(),
            j.crossed().count()
        );
        for c in &j.checks {
            out += &format!(
                "    <testcase classname=\"webstand.{}\" name=\"{}\">\n",
                attr(command),
                attr(&c.threshold)
            );
            let line = format!("measured {}", c.shown());
            if c.passed {
                out += &format!("      <system-out>{}</system-out>\n", text(&line));
            } else {
                out += &format!(
                    "      <failure message=\"{}\">{} crossed: {}</failure>\n",
                    attr(&line),
                    text(&c.threshold),
                    text(&line)
                );
            }
            out += "    </testcase>\n";
        }
        out += "  </testsuite>\n";
    }
    out + "</testsuites>\n"
}

/// A run to summarise: its label and figures, and its thresholds.
pub struct Summarised<'a> {
    pub judged: &'a Judged,
    pub result: &'a RunResult,
}

/// The Markdown summary: a figures table (a row per run), then the thresholds table.
pub fn summary_md(title: &str, runs: &[Summarised], outcome: &str) -> String {
    let mut out = format!("## webstand {}\n\nOutcome: **{outcome}**\n\n", cell(title));
    out += "| Run | Requests | Requests/s | p50 ms | p99 ms | Errors % |\n|---|---:|---:|---:|---:|---:|\n";
    for s in runs {
        let r = s.result;
        out += &format!(
            "| {} | {} | {:.1} | {:.2} | {:.2} | {:.2} |\n",
            label(s.judged),
            r.attempted(),
            r.hits_per_sec(),
            r.latency_ms(0.5),
            r.latency_ms(0.99),
            r.error_pct()
        );
    }
    let checks: usize = runs.iter().map(|s| s.judged.checks.len()).sum();
    if checks > 0 {
        out += "\n| Run | Threshold | Measured | Result |\n|---|---|---:|---|\n";
        for s in runs {
            for c in &s.judged.checks {
                let verdict = if c.passed { "✅ pass" } else { "❌ fail" };
                out += &format!(
                    "| {} | `{}` | {} | {verdict} |\n",
                    label(s.judged),
                    c.threshold,
                    c.shown()
                );
            }
        }
    }
    out
}

fn label(j: &Judged) -> String {
    if j.label.is_empty() {
        "run".to_string()
    } else {
        cell(&j.label)
    }
}

/// A table cell's text: a `|` would end the cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}
