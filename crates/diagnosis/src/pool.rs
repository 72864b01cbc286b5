//! The open loop's connection pool (`--rate` with `-c N`): a send that is due waits for a free
//! connection, so when every connection is waiting on the server the rate sent falls below the rate
//! asked though the load thread has time to spare. That shortfall is the server's (it could not keep
//! up at this pool), not the generator's; this rule tells it from a load thread out of CPU, which
//! [`crate::rules`]'s generator rule names.

use crate::findings::{Finding, Inputs, Limit};
use webstand_results::RunResult;

/// An open-loop run that sent less than this share of the rate asked fell short of it.
pub const SENT_SHARE: f64 = 0.95;
/// The pool was exhausted when the requests at the server averaged at least this share of its
/// connections (Little's law); the rest of a busy connection's time is its turn-around in the
/// generator, between one response and the next send.
const POOL_FULL: f64 = 0.8;

/// Requests sent per second: complete and failed, whatever their answer.
pub fn sent_per_sec(r: &RunResult) -> f64 {
    r.per_sec(r.attempted())
}

/// An HTTP/1 open-loop run that fell short of its rate while its connections were all at the
/// server, and its busiest load thread was not saturated (`generator_saturated`: that is the
/// generator rule's finding, which outranks this one).
pub(crate) fn exhausted(i: &Inputs, generator_saturated: bool) -> Option<Finding> {
    let r = i.result;
    let asked = r.asked_rate?;
    let sent = sent_per_sec(r);
    // HTTP/2 and HTTP/3 keep many requests on one connection: the pool is not -c requests deep.
    let one_per_connection = r.h2.is_none() && r.quic.is_none();
    if generator_saturated || !one_per_connection || i.clients == 0 || sent >= SENT_SHARE * asked {
        return None;
    }
    // Little's law: requests at the server = answered per second × each one's time there (its
    // connect, then request written to first response byte).
    let each_us = r.histograms.connect.mean() + r.histograms.waiting.mean();
    let at_server = r.hits_per_sec() * each_us / 1e6;
    let clients = i.clients;
    if at_server < POOL_FULL * clients as f64 {
        return None;
    }
    let busy = r
        .thread_busy()
        .into_iter()
        .reduce(f64::max)
        .map(|b| {
            format!(
                "; the busiest load thread worked {:.0} % of the run",
                b * 100.0
            )
        })
        .unwrap_or_default();
    Some(Finding {
        limit: Limit::Pool,
        evidence: format!(
            "the connection pool (-c {clients}) was exhausted: it sent {sent:.0}/s of the {asked}/s asked, {} of {} sends left late, while its {clients} connections had {at_server:.1} requests at the server on average ({:.2} ms each){busy}",
            r.late_sends,
            r.attempted(),
            each_us / 1000.0
        ),
        advice: "the server could not keep up with this rate on this pool: that is its limit here, not the generator's; a larger pool (-c) lets requests queue at the server instead, where its latency grows".into(),
    })
}

#[cfg(test)]
mod tests {
    use crate::findings::{Inputs, Limit};
    use crate::rules::diagnose;
    use crate::watch::Watched;
    use std::time::Duration;
    use webstand_results::{CpuTime, RunResult};

    /// An open-loop second at `asked`/s that answered `sent` requests, each `each_us` at the
    /// server, with one load thread that worked `work` of the second.
    fn open(asked: f64, sent: u64, each_us: u64, work: f64) -> RunResult {
        let mut r = RunResult {
            complete: sent,
            elapsed: Duration::from_secs(1),
            asked_rate: Some(asked),
            late_sends: sent / 2,
            thread_cpu: vec![CpuTime {
                user: Duration::from_secs_f64(work),
                sys: Duration::ZERO,
            }],
            ..Default::default()
        };
        for _ in 0..sent {
            r.histograms.waiting.record(each_us).unwrap();
            r.histograms.total.record(each_us).unwrap();
            r.histograms.connect.record(0).unwrap();
        }
        r
    }

    fn verdict(r: &RunResult, clients: usize) -> Option<Limit> {
        diagnose(&Inputs {
            result: r,
            clients,
            previous: None,
            max_error_pct: 1.0,
            watched: &Watched::default(),
            server: None,
        })
        .verdict
    }

    #[test]
    fn a_pool_busy_at_the_server_is_its_limit_and_a_busy_load_thread_the_generators() {
        // 4 connections, 10 ms each at the server: 400/s at most; 800/s asked.
        let full = open(800.0, 400, 10_000, 0.1);
        assert_eq!(verdict(&full, 4), Some(Limit::Pool));
        let d = diagnose(&Inputs {
            result: &full,
            clients: 4,
            previous: None,
            max_error_pct: 1.0,
            watched: &Watched::default(),
            server: None,
        });
        let evidence = &d.findings[0].evidence;
        assert!(evidence.contains("(-c 4) was exhausted: it sent 400/s of the 800/s asked"));
        assert!(evidence.contains("4.0 requests at the server on average (10.00 ms each)"));
        // The same shortfall with the load thread at work all the time: the generator's.
        assert_eq!(
            verdict(&open(800.0, 400, 10_000, 0.97), 4),
            Some(Limit::Generator)
        );
        // A pool of 64 with 4 requests at the server was not exhausted; the rate met is no finding.
        assert_eq!(verdict(&full, 64), None);
        assert_eq!(verdict(&open(400.0, 400, 10_000, 0.1), 4), None);
        // A closed loop has no rate to fall short of.
        let mut closed = full.clone();
        closed.asked_rate = None;
        assert_eq!(verdict(&closed, 4), None);
    }
}
