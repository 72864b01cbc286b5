//! The HTML report's thresholds section, in the part of a run judged against `--threshold` (or a
//! max-rate search's `--slo`): how many held and how many were crossed, then a table with a row per
//! threshold per judged level or row — the threshold as written, the figure measured, and the
//! verdict, a crossed one in red. Nothing for a run without thresholds.

use crate::chart::escape;
use std::fmt::Write;

/// One threshold as judged on one level: as written ("p99<20ms"), the figure shown ("25.31 ms"),
/// and whether it held.
#[derive(Clone, Debug, PartialEq)]
pub struct ThresholdCheck {
    pub threshold: String,
    pub measured: String,
    pub passed: bool,
}

/// The thresholds judged on one level or row: which ("" for a run's only level), and each check.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JudgedLevel {
    pub label: String,
    pub checks: Vec<ThresholdCheck>,
}

/// The section for a run's judged levels, or "" when none was judged.
pub(crate) fn section(judged: &[JudgedLevel]) -> String {
    let checks = judged.iter().flat_map(|j| &j.checks);
    let crossed = checks.clone().filter(|c| !c.passed).count();
    let total = checks.count();
    if total == 0 {
        return String::new();
    }
    let mut h = format!(
        "<h3>Thresholds: {} held, {crossed} crossed</h3>\n<div class=\"wide\"><table class=\"summary thresholds\">\n<tr><th>Level</th><th>Threshold</th><th>Measured</th><th>Verdict</th></tr>\n",
        total - crossed
    );
    for j in judged {
        let label = if j.label.is_empty() {
            "the run"
        } else {
            &j.label
        };
        for c in &j.checks {
            let (class, verdict) = match c.passed {
                true => ("", "pass"),
                false => (" class=\"bad\"", "CROSSED"),
            };
            let _ = writeln!(
                h,
                "<tr{class}><td>{}</td><td>{}</td><td>{}</td><td>{verdict}</td></tr>",
                escape(label),
                escape(&c.threshold),
                escape(&c.measured)
            );
        }
    }
    h.push_str("</table></div>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_check_is_a_row_and_a_crossed_one_stands_out() {
        assert_eq!(section(&[]), "");
        let check = |t: &str, m: &str, passed| ThresholdCheck {
            threshold: t.into(),
            measured: m.into(),
            passed,
        };
        let judged = [
            JudgedLevel {
                label: "/2k.html at 1 clients".into(),
                checks: vec![
                    check("p99<1ms", "3.81 ms", false),
                    check("rps>=1000", "3418", true),
                ],
            },
            JudgedLevel {
                label: "/2k.html at 4 clients".into(),
                checks: vec![check("p99<1ms", "0.56 ms", true)],
            },
        ];
        let h = section(&judged);
        assert!(h.contains("<h3>Thresholds: 2 held, 1 crossed</h3>"), "{h}");
        assert!(
            h.contains("<tr class=\"bad\"><td>/2k.html at 1 clients</td><td>p99&lt;1ms</td><td>3.81 ms</td><td>CROSSED</td></tr>"),
            "{h}"
        );
        assert!(
            h.contains("<tr><td>/2k.html at 4 clients</td><td>p99&lt;1ms</td><td>0.56 ms</td><td>pass</td></tr>"),
            "{h}"
        );
    }
}
