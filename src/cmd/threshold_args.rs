//! `--threshold`, `--junit` and `--summary-md`, shared by bench, sweep and compare: parsing the
//! thresholds before anything runs, and after the runs the pass/fail tables, the history's rows,
//! the CI files and the outcome they give (exit status 6 when one was crossed).

use anyhow::{Context, Result};
use std::path::PathBuf;
use webstand_lab::session::Session;
use webstand_results::{RunResult, Verdict};
use webstand_thresholds::ci::{self, Summarised};
use webstand_thresholds::{Judged, Threshold};

#[derive(clap::Args, Clone, Default)]
pub struct ThresholdArgs {
    /// A pass/fail bound, e.g. 'p99<20ms', 'errors<0.1%', 'rps>=10000', 'status_5xx==0'
    /// (repeatable or comma-separated; the guide lists the metrics); one crossed makes the run
    /// exit with status 6. With --find-max-rate: rps only, judged on the search's answer
    #[arg(long = "threshold", value_name = "EXPR")]
    pub thresholds: Vec<String>,

    /// Write the thresholds as JUnit XML test cases to FILE (one test suite per run or level; for
    /// --find-max-rate: the search's verdict, then the SLO at each round's confirmation run)
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Write a Markdown summary to FILE: each run's figures and its thresholds (a CI job's summary;
    /// for --find-max-rate: each rate tried with its verdict, the answer, its margin, the spread)
    #[arg(long, value_name = "FILE")]
    pub summary_md: Option<PathBuf>,
}

impl ThresholdArgs {
    /// The thresholds given, or one line naming what is wrong and where.
    pub fn parse(&self) -> Result<Vec<Threshold>> {
        webstand_thresholds::parse_all("--threshold", &self.thresholds).map_err(anyhow::Error::msg)
    }
}

/// The thresholds judged over a command's runs, in order: each run's label and result.
pub struct Judging<'a> {
    pub thresholds: &'a [Threshold],
    pub judged: Vec<Judged>,
    results: Vec<&'a RunResult>,
}

impl<'a> Judging<'a> {
    pub fn new(thresholds: &'a [Threshold]) -> Self {
        Judging {
            thresholds,
            judged: Vec::new(),
            results: Vec::new(),
        }
    }

    /// Judges one run (`label`: "" for bench's one run, "8 clients" for a level) and keeps its row
    /// in the history under `group` at `clients`. Returns its checks.
    pub fn judge(
        &mut self,
        session: &mut Session,
        (group, clients, label): (&str, usize, String),
        result: &'a RunResult,
    ) -> &Judged {
        let checks = webstand_thresholds::check_all(self.thresholds, result);
        let judged = Judged { label, checks };
        if !self.thresholds.is_empty() {
            session.save_thresholds(group, clients, &judged.json());
        }
        self.judged.push(judged);
        self.results.push(result);
        self.judged.last().expect("just pushed")
    }

    /// Every judged run's table, in order.
    pub fn tables(&self) -> String {
        self.judged.iter().map(webstand_thresholds::table).collect()
    }

    /// `--json`'s `thresholds`: the judged runs with their checks.
    pub fn json(&self) -> serde_json::Value {
        self.judged
            .iter()
            .map(|j| serde_json::json!({ "run": j.label, "checks": j.json() }))
            .collect()
    }

    /// The outcome with the thresholds in it, and the CI files written.
    pub fn conclude(
        &self,
        args: &ThresholdArgs,
        command: &str,
        verdict: Verdict,
    ) -> Result<Verdict> {
        let verdict = webstand_thresholds::verdict(verdict, &self.judged);
        if let Some(path) = &args.junit {
            std::fs::write(path, ci::junit(command, &self.judged))
                .with_context(|| format!("writing --junit {}", path.display()))?;
        }
        if let Some(path) = &args.summary_md {
            let runs: Vec<Summarised> = self
                .judged
                .iter()
                .zip(&self.results)
                .map(|(judged, result)| Summarised { judged, result })
                .collect();
            let md = ci::summary_md(command, &runs, verdict.outcome.status());
            std::fs::write(path, md)
                .with_context(|| format!("writing --summary-md {}", path.display()))?;
        }
        Ok(verdict)
    }
}
