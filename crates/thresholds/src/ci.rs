//! What a CI job reads: the thresholds as JUnit XML test cases (`--junit`), and a Markdown summary
//! (`--summary-md`) with each run's main figures and its thresholds, for a job's summary page.

use crate::check::Check;
use crate::table::Judged;
use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};
use webstand_results::RunResult;

/// A JUnit XML document: one test suite per judged run, one test case per threshold, a crossed
/// threshold as a `<failure>`.
pub fn junit(command: &str, runs: &[Judged]) -> String {
    let suites: Vec<Suite> = runs
        .iter()
        .map(|j| Suite {
            name: if j.label.is_empty() {
                command.to_string()
            } else {
                j.label.clone()
            },
            cases: j.checks.iter().map(Case::judged).collect(),
        })
        .collect();
    junit_suites(command, &suites)
}

/// A JUnit test suite: a name and its cases.
pub struct Suite {
    pub name: String,
    pub cases: Vec<Case>,
}

/// A JUnit test case: its name and how it ended.
pub struct Case {
    pub name: String,
    pub ended: Ended,
}

/// How a test case ended: what was measured (its `<system-out>`), or why it failed or was not judged.
pub enum Ended {
    Passed(String),
    /// A bound crossed: the `<failure>`'s message and text.
    Failed(String, String),
    /// The command itself did not end cleanly (interrupted, target lost): an `<error>`.
    Error(String),
    /// Nothing to judge it on: `<skipped>` with why.
    Skipped(String),
}

impl Case {
    /// A threshold judged on a run: passed with its figure, or failed as crossed.
    pub fn judged(c: &Check) -> Case {
        let line = format!("measured {}", c.shown());
        let ended = if c.passed {
            Ended::Passed(line)
        } else {
            Ended::Failed(line.clone(), format!("{} crossed: {line}", c.threshold))
        };
        Case {
            name: c.threshold.clone(),
            ended,
        }
    }
}

/// A JUnit XML document of `suites`, named after `command`.
pub fn junit_suites(command: &str, suites: &[Suite]) -> String {
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"webstand {}\" {}>\n",
        attr(command),
        tally(suites.iter().flat_map(|s| &s.cases))
    );
    for s in suites {
        out += &format!(
            "  <testsuite name=\"{}\" {}>\n",
            attr(&s.name),
            tally(&s.cases)
        );
        for c in &s.cases {
            out += &format!(
                "    <testcase classname=\"webstand.{}\" name=\"{}\">\n",
                attr(command),
                attr(&c.name)
            );
            out += &match &c.ended {
                Ended::Passed(line) => format!("      <system-out>{}</system-out>\n", text(line)),
                Ended::Failed(message, body) => format!(
                    "      <failure message=\"{}\">{}</failure>\n",
                    attr(message),
                    text(body)
                ),
                Ended::Error(message) => format!("      <error message=\"{}\"/>\n", attr(message)),
                Ended::Skipped(message) => {
                    format!("      <skipped message=\"{}\"/>\n", attr(message))
                }
            };
            out += "    </testcase>\n";
        }
        out += "  </testsuite>\n";
    }
    out + "</testsuites>\n"
}

/// The counts a `<testsuites>` or `<testsuite>` carries: tests, failures, errors, skipped.
fn tally<'a>(cases: impl IntoIterator<Item = &'a Case>) -> String {
    let (mut tests, mut failures, mut errors, mut skipped) = (0, 0, 0, 0);
    for c in cases {
        tests += 1;
        match c.ended {
            Ended::Passed(_) => {}
            Ended::Failed(..) => failures += 1,
            Ended::Error(_) => errors += 1,
            Ended::Skipped(_) => skipped += 1,
        }
    }
    format!("tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\"")
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
pub fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}
