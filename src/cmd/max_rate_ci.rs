//! What a CI job gets from `sweep --find-max-rate`: `--threshold 'rps>=N'` judged on the search's
//! answer (the median over its rounds), the JUnit file (`--junit`: whether a rate met the SLO, the
//! throughput bound, and each SLO term at each round's confirmation run) and the Markdown summary
//! (`--summary-md`: every rate tried with its verdict, each round's answer with its margin, the
//! rounds' spread). The files and the exit status always agree: a non-zero exit is a failed case.

use super::max_rate::{answer_line, margin, spread, Search};
use super::threshold_args::ThresholdArgs;
use anyhow::{bail, Context, Result};
use webstand_diagnosis::pool::sent_per_sec;
use webstand_lab::maxrate::MaxRate;
use webstand_lab::session::Session;
use webstand_results::{Outcome, Verdict};
use webstand_thresholds::ci::{cell, junit_suites, Case, Ended, Suite};
use webstand_thresholds::expr::Metric;
use webstand_thresholds::{check_all, Check, Judged, Threshold};

/// The `--threshold` terms a search takes: throughput bounds on its answer. Latency and errors are
/// the SLO's, which every rate is judged by already.
pub fn answer_thresholds(thresholds: &[Threshold]) -> Result<()> {
    if let Some(t) = thresholds.iter().find(|t| t.metric != Metric::Rps) {
        bail!(
            "--threshold {t} with --find-max-rate: a search's thresholds bound its answer, so they take rps only (e.g. 'rps>=5000'); latency and errors go in --slo"
        );
    }
    Ok(())
}

/// The search's answer over its rounds (the median of the answers confirmed), None when no round
/// confirmed one.
fn answer(rounds: &[MaxRate]) -> Option<f64> {
    let answers: Vec<f64> = rounds.iter().filter_map(|r| r.answer).collect();
    spread(&answers).map(|(_, median, _)| median)
}

/// The thresholds judged on the answer: one that has none (nothing confirmed) is not held.
fn judge_answer(thresholds: &[Threshold], rounds: &[MaxRate]) -> Judged {
    let answer = answer(rounds);
    let checks = thresholds
        .iter()
        .map(|t| Check {
            threshold: t.text.clone(),
            actual: answer,
            unit: String::new(),
            passed: answer.is_some_and(|a| t.op.holds(a, t.bound)),
        })
        .collect();
    Judged {
        label: String::new(),
        checks,
    }
}

/// Judges `thresholds` on the answer and keeps them in the history, writes the CI files, and gives
/// the outcome with them in it, and the judged thresholds (the caller prints their table).
pub fn conclude(
    session: &mut Session,
    (search, workload, rounds): (&Search, &str, &[MaxRate]),
    (thresholds, args): (&[Threshold], &ThresholdArgs),
    verdict: Verdict,
) -> Result<(Verdict, Judged)> {
    let judged = judge_answer(thresholds, rounds);
    if !judged.checks.is_empty() {
        session.save_thresholds(workload, search.spec.clients, &judged.json());
    }
    let searched = verdict.clone();
    let verdict = webstand_thresholds::verdict(verdict, std::slice::from_ref(&judged));
    if let Some(path) = &args.junit {
        std::fs::write(path, junit(search, rounds, &judged, &searched))
            .with_context(|| format!("writing --junit {}", path.display()))?;
    }
    if let Some(path) = &args.summary_md {
        let md = summary_md(search, workload, rounds, &judged, &verdict);
        std::fs::write(path, md)
            .with_context(|| format!("writing --summary-md {}", path.display()))?;
    }
    Ok((verdict, judged))
}

const COMMAND: &str = "sweep --find-max-rate";

/// The JUnit document: a suite for the search (a rate met the SLO; each throughput bound on the
/// answer), then a suite per round with each SLO term at its confirmation run (skipped when the
/// round confirmed no answer). `searched` is the search's outcome before the thresholds on its
/// answer: `thresholds` there means no rate met the SLO.
fn junit(search: &Search, rounds: &[MaxRate], judged: &Judged, searched: &Verdict) -> String {
    let slo = slo_text(search);
    let found = match searched.outcome {
        Outcome::Thresholds => Ended::Failed("no rate met the SLO".into(), searched.reason.clone()),
        Outcome::Complete => Ended::Passed(answer_summary(rounds)),
        outcome => Ended::Error(format!("{}: {}", outcome.status(), searched.reason)),
    };
    let mut search_cases = vec![Case {
        name: format!("a rate meets the SLO ({slo})"),
        ended: found,
    }];
    search_cases.extend(judged.checks.iter().map(|c| {
        let mut case = Case::judged(c);
        let line = match c.actual {
            Some(a) => format!("max rate {a}/s (median of the rounds' answers)"),
            None => "no max rate was confirmed".to_string(),
        };
        case.ended = match case.ended {
            Ended::Passed(_) => Ended::Passed(line),
            _ => Ended::Failed(line.clone(), format!("{} crossed: {line}", c.threshold)),
        };
        case
    }));
    let mut suites = vec![Suite {
        name: "max-rate search".into(),
        cases: search_cases,
    }];
    for (i, round) in rounds.iter().enumerate() {
        let (name, cases) = match round.answer_level() {
            Some(t) => {
                let checks = check_all(&search.slo, &t.level.result);
                let cases = checks
                    .iter()
                    .zip(&search.slo)
                    .map(|(c, th)| {
                        let mut case = Case::judged(c);
                        if let Ended::Passed(line) = &mut case.ended {
                            *line = format!("{line} at {}/s{}", t.rate, margin(c, th));
                        }
                        case
                    })
                    .collect();
                (
                    format!("round {}: confirmation at {}/s", i + 1, t.rate),
                    cases,
                )
            }
            None => {
                let why = answer_line(search, round);
                let why = why.lines().next().unwrap_or_default().to_string();
                let cases = search
                    .slo
                    .iter()
                    .map(|th| Case {
                        name: th.text.clone(),
                        ended: Ended::Skipped(why.clone()),
                    })
                    .collect();
                (format!("round {}: no confirmed answer", i + 1), cases)
            }
        };
        suites.push(Suite { name, cases });
    }
    junit_suites(COMMAND, &suites)
}

/// "max rate 480/s" with the rounds' spread when there were several, or what was found instead.
fn answer_summary(rounds: &[MaxRate]) -> String {
    let answers: Vec<f64> = rounds.iter().filter_map(|r| r.answer).collect();
    match spread(&answers) {
        Some((lo, median, hi)) if rounds.len() > 1 => format!(
            "max rate {median}/s (median of {} rounds' answers: {lo} to {hi}/s, spread {:.1} %)",
            answers.len(),
            (hi - lo) / median * 100.0
        ),
        Some((_, median, _)) => format!("max rate {median}/s"),
        None => "a rate met the SLO, but no answer was confirmed (the search ended first)".into(),
    }
}

fn slo_text(search: &Search) -> String {
    let slo: Vec<&str> = search.slo.iter().map(|t| t.text.as_str()).collect();
    slo.join(", ")
}

/// The Markdown summary: the outcome and answer, every rate tried with its verdict (a row per
/// rate, rounds one after the other), each round's answer line with its margin, and the
/// thresholds on the answer.
fn summary_md(
    search: &Search,
    workload: &str,
    rounds: &[MaxRate],
    judged: &Judged,
    verdict: &Verdict,
) -> String {
    let mut out = format!(
        "## webstand {COMMAND}\n\nOutcome: **{}**\n\nSLO: `{}` on {} ({} connections, open loop)\n\n",
        verdict.outcome.status(),
        cell(&slo_text(search)),
        cell(workload),
        search.spec.clients
    );
    if answer(rounds).is_some() {
        out += &format!("Answer: **{}**\n\n", cell(&answer_summary(rounds)));
    }
    out += "| Round | Rate/s | Sent/s | p99 ms | Errors % | Verdict |\n|---:|---:|---:|---:|---:|---|\n";
    for (i, round) in rounds.iter().enumerate() {
        for t in &round.tried {
            let verdict = match &t.unmet {
                None => "✅ met".to_string(),
                Some(why) => format!("❌ not met: {why}"),
            };
            let confirm = if t.confirmation {
                " (confirmation)"
            } else {
                ""
            };
            let r = &t.level.result;
            out += &format!(
                "| {} | {} | {:.0} | {:.2} | {:.2} | {}{confirm} |\n",
                i + 1,
                t.rate,
                sent_per_sec(r),
                r.latency_ms(0.99),
                r.error_pct(),
                cell(&verdict)
            );
        }
    }
    out += "\n";
    for (i, round) in rounds.iter().enumerate() {
        // The answer line and the notes under it, as the search printed them.
        let said = answer_line(search, round).trim_end().replace('\n', "\n  ");
        out += &format!("- Round {}: {}\n", i + 1, cell(&said));
    }
    if !judged.checks.is_empty() {
        out += "\n| Threshold | Max rate | Result |\n|---|---:|---|\n";
        for c in &judged.checks {
            let result = if c.passed { "✅ pass" } else { "❌ fail" };
            out += &format!("| `{}` | {} | {result} |\n", c.threshold, c.shown());
        }
    }
    out
}
