//! `sweep --find-max-rate --slo EXPRS`: the highest open-loop rate whose levels meet the SLO, with
//! the generator's own verdict in it (a rate is never called met when the generator fell behind:
//! it sent less than asked, or the Diagnosis found its load threads saturated; a shortfall the
//! Diagnosis puts on the connection pool, all at the server, is the server's reason instead),
//! `--rounds` times for the spread; printed, as JSON, in the history like a sweep's levels, and
//! judged for the exit status.

use super::diagnose::{Diagnosing, Known};
use super::session::{SavedLine, Session};
use anyhow::Result;
use webstand_diagnosis::pool::{sent_per_sec, SENT_SHARE};
use webstand_diagnosis::rules::SATURATED;
use webstand_diagnosis::Limit;
use webstand_lab::interrupt::stop_signal;
use webstand_lab::maxrate::{self, MaxRate, MaxRateSpec, Tried};
use webstand_results::{Judged, Level, Outcome, Plan, Stop, Verdict};
use webstand_thresholds::{check_all, Check, Threshold};

/// The search's options (on `sweep`).
#[derive(clap::Args, Clone)]
pub struct MaxRateArgs {
    /// Find the highest open-loop rate that meets --slo: double from --start-rate, bisect to 2 %,
    /// confirm; never met when the generator fell behind, nor when the pool ran out at the server
    /// (the server's bound). Bounded by --max-steps and --search-time; -c is the connection pool,
    /// one value [default pool: 64]
    #[arg(long, conflicts_with_all = ["rate", "find_max_users"], requires = "slo")]
    pub find_max_rate: bool,

    /// The service level a rate must meet, as --threshold expressions: 'p99<20ms,errors<0.1%'
    #[arg(long, value_name = "EXPRS", requires = "find_max_rate")]
    pub slo: Option<String>,

    /// Max rate: the first rate tried, requests per second
    #[arg(long, value_name = "R", default_value_t = DEFAULT_START_RATE)]
    pub start_rate: f64,

    /// Max rate: never a rate above this
    #[arg(long, value_name = "R", default_value_t = DEFAULT_MAX_RATE)]
    pub max_rate: f64,

    /// Max rate: at most this many runs per search (each a level: warm-up and measured run)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STEPS)]
    pub max_steps: usize,

    /// Max rate: a search stops after this much wall time with what it found (e.g. 10m)
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_SEARCH_TIME)]
    pub search_time: String,

    /// Max rate: repeat the search N times and report the answers' spread
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub rounds: usize,
}

/// Connections in the pool when -c does not say.
pub const DEFAULT_POOL: usize = 64;
/// The options' defaults, which a saved search read back takes when its command line did.
pub const DEFAULT_START_RATE: f64 = 100.0;
pub const DEFAULT_MAX_RATE: f64 = 1_000_000.0;
pub const DEFAULT_MAX_STEPS: usize = 30;
pub const DEFAULT_SEARCH_TIME: &str = "10m";
/// Bisection ends when the bracket is this close (a share of the met rate).
pub const PRECISION: f64 = 0.02;

/// The search's settings, checked before anything runs.
pub struct Search {
    pub spec: MaxRateSpec,
    pub slo: Vec<Threshold>,
    pub rounds: usize,
}

impl MaxRateArgs {
    pub fn search(
        &self,
        clients: Option<&[usize]>,
        stop: Stop,
        warmup: Option<Stop>,
        jitter: bool,
    ) -> Result<Search> {
        let slo = webstand_thresholds::parse_list(self.slo.as_deref().unwrap_or_default())
            .map_err(|e| {
                anyhow::anyhow!("--slo {:?}: {e}", self.slo.as_deref().unwrap_or_default())
            })?;
        let clients = match clients {
            None => DEFAULT_POOL,
            Some([one]) => *one,
            Some(_) => anyhow::bail!(
                "--find-max-rate takes one -c value: the connection pool every rate uses"
            ),
        };
        let budget = webstand_duration::positive(&self.search_time)
            .map_err(|e| anyhow::anyhow!("--search-time: {e}"))?;
        if self.rounds == 0 {
            anyhow::bail!("--rounds must be at least 1");
        }
        let spec = MaxRateSpec {
            clients,
            start: self.start_rate,
            limit: self.max_rate,
            jitter,
            stop,
            warmup,
            precision: PRECISION,
            max_steps: self.max_steps,
            budget,
        };
        Ok(Search {
            spec,
            slo,
            rounds: self.rounds,
        })
    }
}

/// How a reason that is the generator's own shortfall begins: the answer line tells those apart.
const GENERATORS_OWN: &str = "the generator ";
/// How a reason that is the connection pool's exhaustion begins: the server's limit at this pool.
const POOL_EXHAUSTED: &str = "the connection pool ";

/// Why a measured level does not meet the SLO, or None: the generator's own shortfall first.
fn unmet(
    d: &Diagnosing<'_, Session>,
    slo: &[Threshold],
    level: &Level,
    rate: f64,
) -> Option<String> {
    let verdict = d.levels.last().and_then(|l| l.diagnosis.verdict);
    unmet_by(slo, level, verdict, rate)
}

/// [`unmet`] from a level and its Diagnosis's verdict, as the history keeps them. A level that
/// sent less than the rate asked is not the server's answer to it, unless the Diagnosis found the
/// connection pool exhausted (every connection waiting on the server, the load thread not busy):
/// then the server could not keep up, and the rate is not met for the server's reason. A level
/// whose load thread was saturated is never met; one whose generator was held back by another
/// program is judged by the SLO, a crossing then put on the generator.
pub fn unmet_by(
    slo: &[Threshold],
    level: &Level,
    verdict: Option<Limit>,
    rate: f64,
) -> Option<String> {
    let r = &level.result;
    let sent = sent_per_sec(r);
    let generator = verdict.filter(|l| l.not_the_servers());
    if sent < SENT_SHARE * rate {
        let shortfall = format!("it sent {sent:.0}/s of the {rate}/s asked");
        return Some(match (verdict, generator) {
            (Some(Limit::Pool), _) => format!(
                "{POOL_EXHAUSTED}(-c {}) was exhausted: the server could not keep up ({shortfall})",
                level.clients
            ),
            (_, Some(l)) => format!(
                "{GENERATORS_OWN}fell behind: {shortfall} (Diagnosis: {})",
                l.verdict()
            ),
            _ => format!("{GENERATORS_OWN}fell behind: {shortfall}"),
        });
    }
    // A load thread at work most of the run may have sent and read late beyond what its figures
    // show: never met. One only held back by another program on its CPU (the Diagnosis's starved
    // generator) sent the rate asked, and its waits are in the latency the SLO judges (counted
    // from each request's intended send time): the rate is met if the SLO held despite them.
    let saturated = r.thread_busy().into_iter().any(|b| b >= SATURATED);
    if let Some(limit) = generator.filter(|_| saturated) {
        return Some(format!(
            "{GENERATORS_OWN}was saturated (Diagnosis: {})",
            limit.verdict()
        ));
    }
    if r.successful() == 0 {
        return Some("no successful request".into());
    }
    let crossed: Vec<String> = check_all(slo, r)
        .iter()
        .filter(|c| !c.passed)
        .map(|c| format!("{} was {}", c.threshold, c.shown()))
        .collect();
    let crossed = (!crossed.is_empty()).then(|| crossed.join(", "))?;
    Some(match generator {
        Some(limit) => format!(
            "{GENERATORS_OWN}was held back by another program on its CPU, and {crossed} (Diagnosis: {})",
            limit.verdict()
        ),
        None => crossed,
    })
}

/// What the search's outcome goes through before it is printed: the thresholds on its answer and
/// the CI files (`max_rate_ci::conclude`), giving the outcome with them and the judged thresholds.
pub type Concluding<'a> = Box<
    dyn FnOnce(
            &mut Session,
            (&Search, &str, &[MaxRate]),
            Verdict,
        ) -> Result<(Verdict, webstand_thresholds::Judged)>
        + 'a,
>;

/// Runs the search `rounds` times, prints each, and concludes (through `ci`: the thresholds on its
/// answer, the CI files).
pub fn run(
    session: &mut Session,
    search: &Search,
    (plan, workload): (&Plan, &str),
    known: Known,
    json: bool,
    ci: Concluding,
) -> Result<i32> {
    session.group = workload.to_string();
    let mut rounds: Vec<MaxRate> = Vec::new();
    let mut diagnosing = Diagnosing::new(session, known, 100.0);
    for round in 1..=search.rounds {
        // Each round's levels are saved as such, so that `show` reads the rounds back.
        diagnosing.inner.round = round;
        let found = maxrate::find(&search.spec, plan, &mut diagnosing, |d, l, rate| {
            unmet(d, &search.slo, l, rate)
        });
        let found = diagnosing.inner.failed_on_error(found)?;
        let stop = found.interrupted
            || found
                .cut_short
                .as_deref()
                .is_some_and(|c| c.starts_with("the target"));
        rounds.push(found);
        if stop {
            break;
        }
    }
    let searched = (search, workload, &rounds[..]);
    let (verdict, judged) = ci(session, searched, verdict(&rounds))?;
    if json {
        let mut doc = doc(search, workload, &rounds, &verdict);
        if !judged.checks.is_empty() {
            doc["thresholds"] = serde_json::json!([{ "run": "", "checks": judged.json() }]);
        }
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        let text = text(search, workload, &rounds) + &webstand_thresholds::table(&judged);
        print!("{}", webstand_results::text::wrap(&text));
    }
    let saved = if json {
        SavedLine::Stderr
    } else {
        SavedLine::Stdout
    };
    Ok(session.conclude(&verdict, saved))
}

/// The search's outcome: the usual rules over every run tried (their errors are what the SLO
/// judges, so they do not count), then `thresholds` when no rate met the SLO.
fn verdict(rounds: &[MaxRate]) -> Verdict {
    let judged: Vec<Judged> = rounds
        .iter()
        .flat_map(|r| &r.tried)
        .map(|t| Judged {
            label: format!("{}/s", t.rate),
            result: &t.level.result,
            counts_errors: false,
        })
        .collect();
    let interrupted = rounds.iter().any(|r| r.interrupted);
    let v = webstand_results::judge(&judged, 100.0, interrupted.then(stop_signal));
    // No rate met even once (a search cut short before its confirmation may have met some).
    let none_met = rounds
        .iter()
        .all(|r| r.tried.iter().all(|t| t.unmet.is_some()));
    match (
        v.outcome,
        rounds.iter().flat_map(|r| r.tried.first()).next(),
    ) {
        (Outcome::Complete, Some(first)) if none_met => Verdict {
            outcome: Outcome::Thresholds,
            reason: format!(
                "no rate met the SLO: {}/s, the first tried, did not ({})",
                first.rate,
                first.unmet.as_deref().unwrap_or("its confirmation failed")
            ),
        },
        _ => v,
    }
}

/// The SLO's margin at the answer: each threshold's figure and how far it stays from its bound.
pub fn margins(slo: &[Threshold], t: &Tried) -> String {
    check_all(slo, &t.level.result)
        .iter()
        .zip(slo)
        .map(|(c, th)| format!("{} was {}{}", c.threshold, c.shown(), margin(c, th)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// " (margin 38 %)": how far a figure stays from its threshold's bound, as a share of the bound;
/// "" without a figure or a bound to measure from.
pub fn margin(c: &Check, th: &Threshold) -> String {
    match c.actual.filter(|_| th.bound > 0.0) {
        Some(a) => format!(" (margin {:.0} %)", (th.bound - a).abs() / th.bound * 100.0),
        None => String::new(),
    }
}

/// The search's table header: the rate asked, the rate sent, the SLO's usual figures, the verdict.
fn table_header() -> String {
    format!(
        "{:>10}  {:>10}  {:>9}  {:>8}  verdict\n",
        "rate/s", "sent/s", "p99 ms", "errors %"
    )
}

/// One tried rate's row of the search's table.
fn table_row(rate: f64, r: &webstand_results::RunResult, verdict: &str) -> String {
    format!(
        "{:>10}  {:>10.0}  {:>9.2}  {:>8.2}  {verdict}\n",
        rate,
        sent_per_sec(r),
        r.latency_ms(0.99),
        r.error_pct()
    )
}

/// The search as it prints it: each round's rates tried with their verdicts, then its answer.
pub fn text(search: &Search, workload: &str, rounds: &[MaxRate]) -> String {
    let slo: Vec<&str> = search.slo.iter().map(|t| t.text.as_str()).collect();
    let mut out = format!(
        "Max-rate search on {workload} (SLO: {}; {} connections, open loop), rates in the order tried:\n",
        slo.join(", "),
        search.spec.clients
    );
    // Levels are numbered as the history saves them (`webstand export --level`).
    let mut level = 0;
    for (i, round) in rounds.iter().enumerate() {
        if rounds.len() > 1 {
            out += &format!("\nRound {}:\n", i + 1);
        }
        out += &format!("\n{:>5}  {}", "Level", table_header());
        for t in &round.tried {
            level += 1;
            let verdict = match &t.unmet {
                None => "met".to_string(),
                Some(why) => format!("not met: {why}"),
            };
            let confirm = if t.confirmation {
                " (confirmation)"
            } else {
                ""
            };
            let row = table_row(t.rate, &t.level.result, &format!("{verdict}{confirm}"));
            out += &format!("{level:>5}  {row}");
        }
        out += &answer_line(search, round);
    }
    let answers: Vec<f64> = rounds.iter().filter_map(|r| r.answer).collect();
    if rounds.len() > 1 {
        out += &match spread(&answers) {
            Some((lo, median, hi)) => format!(
                "\nOver {} rounds: max rate {median}/s (median), from {lo} to {hi}/s ({} of {} rounds found one; spread {:.1} %)\n",
                rounds.len(),
                answers.len(),
                rounds.len(),
                (hi - lo) / median * 100.0
            ),
            None => format!("\nOver {} rounds: no rate met the SLO\n", rounds.len()),
        };
    }
    out
}

pub fn answer_line(search: &Search, round: &MaxRate) -> String {
    let mut out = match (round.answer_level(), round.first_unmet) {
        (Some(t), Some(unmet)) => format!(
            "Max rate: {}/s (confirmed; {unmet}/s was not met: within {:.1} %); at it {}\n",
            t.rate,
            (unmet - t.rate) / t.rate * 100.0,
            margins(&search.slo, t)
        ),
        (Some(t), None) => format!(
            "Max rate: {}/s or more (every rate up to --max-rate was met); at it {}\n",
            t.rate,
            margins(&search.slo, t)
        ),
        (None, _) if round.interrupted => "Max rate: unknown (interrupted)\n".to_string(),
        (None, _) if round.cut_short.is_some() && highest_met(round).is_some() => format!(
            "Max rate: not confirmed ({}/s was met once; the search ended before its confirmation)\n",
            highest_met(round).unwrap_or_default()
        ),
        (None, _) => "Max rate: none (no rate tried was met and confirmed)\n".to_string(),
    };
    if let Some(why) = unmet_because(round, POOL_EXHAUSTED) {
        out += &format!(
            "The server set this bound at this pool: {why}. To see its latency grow past this rate instead of the rate sent falling short, give it a larger pool (-c).\n"
        );
    }
    if let Some(why) = unmet_because(round, GENERATORS_OWN) {
        out += &format!(
            "The generator set this bound, not the server: {why}. The server may take more: give the load a larger pool (-c), more threads (--threads) or more machines (mpirun).\n"
        );
    }
    if let Some(why) = &round.cut_short {
        out += &format!("The search was cut short: {why}.\n");
    }
    out
}

/// The highest rate met in a round, confirmed or not.
fn highest_met(round: &MaxRate) -> Option<f64> {
    round
        .tried
        .iter()
        .filter(|t| t.unmet.is_none())
        .map(|t| t.rate)
        .max_by(f64::total_cmp)
}

/// Why the lowest rate not met was not, when that reason begins with `kind` (the generator's own
/// shortfall, the connection pool's exhaustion).
fn unmet_because<'a>(round: &'a MaxRate, kind: &str) -> Option<&'a str> {
    let unmet = round.first_unmet?;
    round
        .tried
        .iter()
        .filter(|t| t.rate == unmet)
        .find_map(|t| t.unmet.as_deref().filter(|w| w.starts_with(kind)))
}

/// Lowest, median and highest answer.
pub fn spread(answers: &[f64]) -> Option<(f64, f64, f64)> {
    let mut a = answers.to_vec();
    a.sort_by(f64::total_cmp);
    let median = *a.get(a.len() / 2)?;
    Some((a[0], median, a[a.len() - 1]))
}

fn doc(
    search: &Search,
    workload: &str,
    rounds: &[MaxRate],
    verdict: &Verdict,
) -> serde_json::Value {
    let mut doc = search_json(search, workload, rounds);
    doc["outcome"] = webstand_report::json::verdict_json(verdict);
    doc
}

/// The search as `--json` prints it, but its outcome: each round's rates tried, answer and why it
/// ended, and the answers' spread.
pub fn search_json(search: &Search, workload: &str, rounds: &[MaxRate]) -> serde_json::Value {
    let round_json = |r: &MaxRate| {
        let tried: Vec<serde_json::Value> = r
            .tried
            .iter()
            .map(|t| {
                serde_json::json!({
                    "rate": t.rate,
                    "sent_per_sec": sent_per_sec(&t.level.result),
                    "confirmation": t.confirmation,
                    "met": t.unmet.is_none(),
                    "unmet": t.unmet,
                    "checks": check_all(&search.slo, &t.level.result).iter().map(|c| c.json()).collect::<Vec<_>>(),
                    "level": webstand_report::json::result_json(&t.level.result),
                })
            })
            .collect();
        serde_json::json!({
            "max_rate": r.answer,
            "first_unmet": r.first_unmet,
            "generator_bound": unmet_because(r, GENERATORS_OWN),
            "pool_exhausted": unmet_because(r, POOL_EXHAUSTED),
            "interrupted": r.interrupted,
            "cut_short": r.cut_short,
            "tried": tried,
        })
    };
    let answers: Vec<f64> = rounds.iter().filter_map(|r| r.answer).collect();
    serde_json::json!({
        "workload": workload,
        "slo": search.slo.iter().map(|t| t.text.clone()).collect::<Vec<_>>(),
        "connections": search.spec.clients,
        "rounds": rounds.iter().map(round_json).collect::<Vec<_>>(),
        "spread": spread(&answers).map(|(lo, median, hi)| serde_json::json!({"min": lo, "median": median, "max": hi})),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use webstand_results::{CpuTime, RunResult};

    /// A second at 100/s, sent in full, whose one load thread worked `work` of it.
    fn level(work: f64) -> Level {
        let result = RunResult {
            complete: 100,
            elapsed: Duration::from_secs(1),
            asked_rate: Some(100.0),
            thread_cpu: vec![CpuTime {
                user: Duration::from_secs_f64(work),
                sys: Duration::ZERO,
            }],
            ..Default::default()
        };
        Level { clients: 4, result }
    }

    fn slo(text: &str) -> Vec<Threshold> {
        webstand_thresholds::parse_list(text).unwrap()
    }

    #[test]
    fn a_saturated_generator_is_never_met_a_starved_one_is_judged_by_the_slo() {
        let generator = Some(Limit::Generator);
        let saturated = unmet_by(&slo("rps>=50"), &level(0.95), generator, 100.0);
        assert_eq!(
            saturated.as_deref(),
            Some("the generator was saturated (Diagnosis: generator-bound)")
        );
        // Held back by another program (its thread worked 5 %): the SLO decides.
        assert_eq!(
            unmet_by(&slo("rps>=50"), &level(0.05), generator, 100.0),
            None
        );
        let crossed = unmet_by(&slo("rps>=1000"), &level(0.05), generator, 100.0).unwrap();
        assert_eq!(
            crossed,
            "the generator was held back by another program on its CPU, and rps>=1000 was 100 (Diagnosis: generator-bound)"
        );
        assert!(crossed.starts_with(GENERATORS_OWN));
        // Without a generator verdict, the SLO alone.
        assert_eq!(
            unmet_by(&slo("rps>=1000"), &level(0.05), None, 100.0).as_deref(),
            Some("rps>=1000 was 100")
        );
    }
}
