//! What a command's runs add up to: one [`Outcome`] (complete, errors, failed, target lost,
//! interrupted), which is both the history's status and the process's exit status, so a script and
//! `webstand history` can never disagree. docs/EXIT-STATUS.md lists the statuses.
//!
//! The rules, in order of precedence:
//! 1. Ctrl-C, SIGTERM or SIGHUP → `interrupted` (exit 128 + the signal's number: 130, 143, 129);
//!    what completed is still reported and saved.
//! 2. A result whose target was lost, or became unreachable after an earlier success →
//!    `target lost` (exit 5).
//! 3. No successful request (complete with a 2xx status) in any result → `failed` (exit 4).
//! 4. A counted result with errors (failed + non-2xx, [`crate::figures`]) above the threshold →
//!    `errors` (exit 3).
//! 5. Otherwise `complete` (exit 0).

use crate::result::{Ended, RunResult, LOST_AFTER_REFUSALS};

/// The signal that stopped a command's runs: its exit status is 128 + its number, as a shell reports
/// a command a signal ended, and the verdict names it. Whoever catches the signal says which; a
/// stop nobody named (a run read back from the history) is a Ctrl-C.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StopSignal {
    #[default]
    CtrlC,
    Term,
    Hup,
}

impl StopSignal {
    /// The signal of this number; any other number is taken for a Ctrl-C.
    pub fn from_number(signal: i32) -> StopSignal {
        match signal {
            SIGTERM => StopSignal::Term,
            SIGHUP => StopSignal::Hup,
            _ => StopSignal::CtrlC,
        }
    }
    /// Its number (SIGINT, SIGTERM, SIGHUP: POSIX fixes these three).
    pub fn number(self) -> i32 {
        match self {
            StopSignal::CtrlC => SIGINT,
            StopSignal::Term => SIGTERM,
            StopSignal::Hup => SIGHUP,
        }
    }
    /// How the reports name it ("Ctrl-C", "SIGTERM", "SIGHUP").
    pub fn name(self) -> &'static str {
        match self {
            StopSignal::CtrlC => "Ctrl-C",
            StopSignal::Term => "SIGTERM",
            StopSignal::Hup => "SIGHUP",
        }
    }
}

const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;
const SIGTERM: i32 = 15;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Ran to its stop condition with errors within the threshold.
    Complete,
    /// Errors above the threshold in at least one counted result.
    Errors,
    /// Nothing succeeded: no connection, or every answer an error.
    Failed,
    /// The target stopped accepting connections during the run.
    TargetLost,
    /// Stopped by Ctrl-C, SIGTERM or SIGHUP.
    Interrupted(StopSignal),
    /// Ran cleanly, but a `--threshold` (or a max-rate search's `--slo`) was crossed: decided by
    /// the thresholds crate after [`judge`], never by it.
    Thresholds,
}

impl Outcome {
    /// The process exit status (1 and 2 are taken by "could not run" and usage errors).
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Complete => 0,
            Outcome::Errors => 3,
            Outcome::Failed => 4,
            Outcome::TargetLost => 5,
            Outcome::Thresholds => 6,
            Outcome::Interrupted(signal) => 128 + signal.number(),
        }
    }
    /// The history's status.
    pub fn status(self) -> &'static str {
        match self {
            Outcome::Complete => "complete",
            Outcome::Errors => "errors",
            Outcome::Failed => "failed",
            Outcome::TargetLost => "target lost",
            Outcome::Interrupted(_) => "interrupted",
            Outcome::Thresholds => "thresholds",
        }
    }
}

/// One result to judge.
pub struct Judged<'a> {
    /// What it was, for the reason line: "32 clients", "nginx/small-files at 8 clients"; "" for a
    /// command with one result.
    pub label: String,
    pub result: &'a RunResult,
    /// Whether its errors count against the run (false for max-users probes: finding the level
    /// where errors start is their purpose).
    pub counts_errors: bool,
}

/// The outcome and a one-line reason (empty when complete).
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub outcome: Outcome,
    pub reason: String,
}

fn at(label: &str) -> String {
    if label.is_empty() {
        String::new()
    } else {
        format!(" at {label}")
    }
}

/// Judges a command's results (in the order measured) against `max_error_pct`; `stopped` is the
/// signal that stopped the command, if one did.
pub fn judge(results: &[Judged], max_error_pct: f64, stopped: Option<StopSignal>) -> Verdict {
    let verdict = |outcome, reason: String| Verdict { outcome, reason };
    if stopped.is_some() || results.iter().any(|j| j.result.interrupted) {
        let signal = stopped.unwrap_or_default();
        let reason = format!(
            "stopped by {}: the figures cover what completed",
            signal.name()
        );
        return verdict(Outcome::Interrupted(signal), reason);
    }
    let mut succeeded_before = false;
    for j in results {
        let r = j.result;
        match r.ended {
            Some(Ended::TargetLost) => {
                let reason = format!(
                    "target lost{}: {LOST_AFTER_REFUSALS} connections in a row were refused after {} successful requests",
                    at(&j.label),
                    r.successful()
                );
                return verdict(Outcome::TargetLost, reason);
            }
            Some(Ended::Unreachable | Ended::NoHttp2 | Ended::NoHttp3) if succeeded_before => {
                let why = r.first_error.as_deref().unwrap_or("connection failed");
                let reason = format!(
                    "target lost{}: no connection any more ({why})",
                    at(&j.label)
                );
                return verdict(Outcome::TargetLost, reason);
            }
            _ => {}
        }
        succeeded_before |= r.successful() > 0;
    }
    if !succeeded_before {
        return verdict(Outcome::Failed, nothing_succeeded(results));
    }
    let over: Vec<String> = results
        .iter()
        .filter(|j| j.counts_errors && j.result.error_pct() > max_error_pct)
        .map(|j| {
            let name = if j.label.is_empty() {
                "the run"
            } else {
                &j.label
            };
            format!("{name} {:.2} %", j.result.error_pct())
        })
        .collect();
    if !over.is_empty() {
        let reason = format!(
            "errors above --max-error-pct {max_error_pct} % (failed or non-2xx): {}",
            over.join(", ")
        );
        return verdict(Outcome::Errors, reason);
    }
    verdict(Outcome::Complete, String::new())
}

/// Why nothing succeeded: no connection, or every answer an error.
fn nothing_succeeded(results: &[Judged]) -> String {
    let (mut attempted, mut failed, mut non_2xx) = (0, 0, 0);
    let mut first_error = None;
    for j in results {
        attempted += j.result.attempted();
        failed += j.result.failed.total();
        non_2xx += j.result.non_2xx;
        first_error = first_error.or(j.result.first_error.as_deref());
    }
    let ended = results.first().and_then(|j| j.result.ended);
    match first_error {
        Some(e) if ended == Some(Ended::Unreachable) => format!("could not connect: {e}"),
        // The line names what the server answered instead of HTTP/2 or HTTP/3.
        Some(e) if ended.is_some_and(Ended::refused_protocol) => e.to_string(),
        _ if attempted == 0 => "no request was made".to_string(),
        Some(e) => format!(
            "no successful request: {attempted} attempted, {failed} failed, {non_2xx} answered non-2xx (first failure: {e})"
        ),
        None => format!(
            "no successful request: all {non_2xx} answers were non-2xx"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn result(complete: u64, non_2xx: u64, connect: u64) -> RunResult {
        let mut r = RunResult {
            elapsed: Duration::from_secs(1),
            complete,
            non_2xx,
            ..Default::default()
        };
        r.failed.connect = connect;
        if connect > 0 {
            r.first_error = Some("connect to 127.0.0.1:1: Connection refused".into());
        }
        r
    }

    fn judged<'a>(label: &str, r: &'a RunResult) -> Judged<'a> {
        Judged {
            label: label.into(),
            result: r,
            counts_errors: true,
        }
    }

    #[test]
    fn each_rule_gives_its_outcome_and_exit_status() {
        let clean = result(1000, 0, 0);
        let v = judge(&[judged("1 clients", &clean)], 1.0, None);
        assert_eq!((v.outcome, v.outcome.exit_code()), (Outcome::Complete, 0));

        let four_oh_fours = result(1000, 1000, 0);
        let v = judge(&[judged("1 clients", &four_oh_fours)], 1.0, None);
        assert_eq!((v.outcome, v.outcome.exit_code()), (Outcome::Failed, 4));
        assert!(
            v.reason.contains("all 1000 answers were non-2xx"),
            "{}",
            v.reason
        );

        let mut dead = result(0, 0, 1);
        dead.ended = Some(Ended::Unreachable);
        let v = judge(&[judged("", &dead)], 1.0, None);
        assert_eq!(
            v.reason,
            "could not connect: connect to 127.0.0.1:1: Connection refused"
        );

        let some = result(990, 20, 0);
        let v = judge(
            &[judged("1 clients", &clean), judged("8 clients", &some)],
            1.0,
            None,
        );
        assert_eq!((v.outcome, v.outcome.exit_code()), (Outcome::Errors, 3));
        assert!(v.reason.ends_with("8 clients 2.02 %"), "{}", v.reason);
        let probe = Judged {
            counts_errors: false,
            ..judged("8 clients", &some)
        };
        assert_eq!(
            judge(&[judged("1", &clean), probe], 1.0, None).outcome,
            Outcome::Complete
        );

        let mut lost = result(500, 0, 10);
        lost.ended = Some(Ended::TargetLost);
        let v = judge(&[judged("", &lost)], 1.0, None);
        assert_eq!((v.outcome, v.outcome.exit_code()), (Outcome::TargetLost, 5));
        // Unreachable after an earlier level answered: the target went away between levels.
        let v = judge(
            &[judged("1 clients", &clean), judged("2 clients", &dead)],
            1.0,
            None,
        );
        assert_eq!(v.outcome, Outcome::TargetLost);
        assert!(
            v.reason.starts_with("target lost at 2 clients"),
            "{}",
            v.reason
        );

        let v = judge(&[judged("", &lost)], 1.0, Some(StopSignal::CtrlC));
        assert_eq!(
            (v.outcome, v.outcome.exit_code()),
            (Outcome::Interrupted(StopSignal::CtrlC), 130)
        );
        let v = judge(&[judged("", &lost)], 1.0, Some(StopSignal::Term));
        assert_eq!(v.outcome.exit_code(), 143);
        assert!(v.reason.starts_with("stopped by SIGTERM:"), "{}", v.reason);
        // A result cut short with no signal named was stopped by Ctrl-C.
        let mut cut = result(10, 0, 0);
        cut.interrupted = true;
        let v = judge(&[judged("", &cut)], 1.0, None);
        assert_eq!(v.outcome, Outcome::Interrupted(StopSignal::CtrlC));
        assert_eq!(judge(&[], 1.0, None).outcome, Outcome::Failed);
    }
}
