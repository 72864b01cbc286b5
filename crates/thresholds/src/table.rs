//! The pass/fail table printed after a report, and what a crossed threshold does to the outcome.

use crate::check::Check;
use webstand_results::{Outcome, Verdict};

/// The checks of one run: what they were judged on ("", "8 clients", "nginx/2k.html at 8 clients").
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    pub label: String,
    pub checks: Vec<Check>,
}

impl Judged {
    pub fn crossed(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.passed)
    }
    pub fn json(&self) -> serde_json::Value {
        self.checks.iter().map(Check::json).collect()
    }
}

/// "Thresholds (8 clients): 2 passed, 1 crossed" and a row per threshold.
pub fn table(judged: &Judged) -> String {
    if judged.checks.is_empty() {
        return String::new();
    }
    let crossed = judged.crossed().count();
    let at = match judged.label.as_str() {
        "" => String::new(),
        l => format!(" ({l})"),
    };
    let mut out = format!(
        "\nThresholds{at}: {} passed, {crossed} crossed\n",
        judged.checks.len() - crossed
    );
    let width = judged
        .checks
        .iter()
        .map(|c| c.threshold.len())
        .max()
        .unwrap_or(0);
    for c in &judged.checks {
        let verdict = if c.passed { "pass" } else { "FAIL" };
        out += &format!("  {:<width$}  {:>14}  {verdict}\n", c.threshold, c.shown());
    }
    out
}

/// The outcome once thresholds are judged: a run that is otherwise complete becomes `thresholds`
/// (exit 6) when one was crossed; any other outcome says more and stays.
pub fn verdict(v: Verdict, judged: &[Judged]) -> Verdict {
    if v.outcome != Outcome::Complete {
        return v;
    }
    let crossed: Vec<String> = judged
        .iter()
        .flat_map(|j| {
            j.crossed().map(move |c| match j.label.as_str() {
                "" => format!("{} was {}", c.threshold, c.shown()),
                l => format!("{} was {} at {l}", c.threshold, c.shown()),
            })
        })
        .collect();
    if crossed.is_empty() {
        return v;
    }
    Verdict {
        outcome: Outcome::Thresholds,
        reason: format!("thresholds crossed: {}", crossed.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(t: &str, actual: f64, passed: bool) -> Check {
        Check {
            threshold: t.into(),
            actual: Some(actual),
            unit: "ms".into(),
            passed,
        }
    }

    #[test]
    fn a_crossed_threshold_turns_a_complete_run_into_exit_6_only() {
        let j = vec![Judged {
            label: "8 clients".into(),
            checks: vec![check("p99<20ms", 25.5, false), check("p50<5ms", 1.0, true)],
        }];
        let complete = Verdict {
            outcome: Outcome::Complete,
            reason: String::new(),
        };
        let v = verdict(complete.clone(), &j);
        assert_eq!(v.outcome.exit_code(), 6);
        assert_eq!(
            v.reason,
            "thresholds crossed: p99<20ms was 25.50 ms at 8 clients"
        );
        let errors = Verdict {
            outcome: Outcome::Errors,
            reason: "x".into(),
        };
        assert_eq!(verdict(errors.clone(), &j), errors);
        let t = table(&j[0]);
        assert!(
            t.contains("Thresholds (8 clients): 1 passed, 1 crossed"),
            "{t}"
        );
        assert!(
            t.contains("p99<20ms") && t.contains("25.50 ms  FAIL"),
            "{t}"
        );
        assert_eq!(verdict(complete.clone(), &[]), complete);
    }
}
