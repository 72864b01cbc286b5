//! `bench --rate R -c N` at a server's knee, over real sockets: against a server of known capacity
//! (the max-rate search's, tests/common/paced.rs), a pool too small for R runs out with every
//! connection waiting on the server, and the Diagnosis says so (the connection pool: the server
//! could not keep up), not that the generator was the bound; the same rate with a pool large
//! enough never runs out (its requests queue at the server, and their latency shows it), and
//! neither the pool nor the generator's own work is named.

use crate::common;

use common::paced::Paced;
use common::{run_with_timeout, stderr, stdout};
use std::time::Duration;

/// The server's capacity, and the rate asked of it: 60 % over.
const CAPACITY: f64 = 500.0;
const RATE: &str = "800";

/// `bench -k --rate 800 -c POOL -d 2s` against `paced`: its exit status and report, its words
/// joined by single spaces (the Diagnosis wraps).
fn bench(paced: &Paced, pool: &str) -> (Option<i32>, String) {
    let args = ["bench", "-k", "--rate", RATE, "-c", pool, "-d", "2s"];
    let out = run_with_timeout(
        &[&args[..], &[&paced.url()]].concat(),
        Duration::from_secs(60),
    );
    let words = stdout(&out)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (out.status.code(), format!("{words} {}", stderr(&out)))
}

/// "it sent 512/s of the 800/s asked" (the pool's evidence): the rate sent.
fn sent(words: &str) -> Option<f64> {
    let at = words.find("it sent ")? + "it sent ".len();
    words[at..].split("/s").next()?.parse().ok()
}

#[test]
fn a_pool_too_small_for_the_rate_is_the_servers_bound_not_the_generators() {
    let paced = Paced::start(CAPACITY);
    let (code, text) = bench(&paced, "4");
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("Diagnosis: limited by the connection pool: the server could not keep up"),
        "{text}"
    );
    assert!(
        text.contains("the connection pool (-c 4) was exhausted: it sent"),
        "{text}"
    );
    // It sent about what the server answers (at most 550/s), well under the 800/s asked.
    let sent = sent(&text).unwrap_or_else(|| panic!("no rate sent: {text}"));
    assert!(sent <= CAPACITY * 1.1, "{sent}: {text}");
    assert!(!text.contains("generator-bound"), "{text}");
}

#[test]
fn a_pool_large_enough_sends_the_rate_and_the_queue_is_at_the_server() {
    // 300 more requests a second than the server answers: in 2 s at most 600 wait there, within a
    // pool of 1000.
    let paced = Paced::start(CAPACITY);
    let (code, text) = bench(&paced, "1000");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("Diagnosis: "), "{text}");
    assert!(!text.contains("connection pool"), "{text}");
    // Nor was the generator's own work the bound (on a busy machine the Diagnosis may still say
    // another program held its thread back: that is not the pool's verdict either).
    assert!(!text.contains("load threads worked"), "{text}");
    // The requests waited at the server instead, on a pool that never ran out: the slowest waited
    // hundreds of milliseconds, the queue's time, where the small pool's waited in the generator.
    let p99 = text
        .split(" 99% ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|ms| ms.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no 99% line: {text}"));
    assert!(p99 > 200.0, "p99 {p99} ms: {text}");
}
