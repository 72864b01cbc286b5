//! Bandwidth throttles in thttpd's form: `pattern max-bytes-per-second` (or thttpd's `pattern min-max`,
//! whose minimum is accepted and not used), one per line, `#` comments. All connections whose URL matches a rule draw from one token bucket, so
//! together they stay under the limit whatever the number of connections or loops. A rule is "far
//! over" when the bytes it has already promised would take more than `BACKLOG_SECS` at its limit;
//! new requests for it are then answered 503 until the backlog drains.

use anyhow::{bail, Context, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How many seconds of sending at the limit a rule may have queued before it refuses with 503.
pub const BACKLOG_SECS: u64 = 20;

pub struct Rule {
    pub pattern: String,
    /// Bytes per second.
    pub limit: u64,
    bucket: Mutex<Bucket>,
    /// Bytes admitted but not yet sent, over all connections.
    backlog: AtomicU64,
}

struct Bucket {
    tokens: f64,
    last: Instant,
}

impl Rule {
    pub fn new(pattern: &str, limit: u64) -> Rule {
        Rule {
            pattern: pattern.to_string(),
            limit,
            bucket: Mutex::new(Bucket {
                tokens: burst(limit),
                last: Instant::now(),
            }),
            backlog: AtomicU64::new(0),
        }
    }

    /// Admits a response of `bytes` unless the rule is far over its limit.
    pub fn admit(&self, bytes: u64) -> bool {
        if self.backlog.load(Ordering::Relaxed) > self.limit.saturating_mul(BACKLOG_SECS) {
            return false;
        }
        self.backlog.fetch_add(bytes, Ordering::Relaxed);
        true
    }

    /// Bytes that may be sent now, or when to try again.
    pub fn budget(&self, now: Instant) -> Result<usize, Instant> {
        let mut b = self.bucket.lock().unwrap_or_else(|e| e.into_inner());
        let elapsed = now.saturating_duration_since(b.last).as_secs_f64();
        b.last = now.max(b.last);
        b.tokens = (b.tokens + elapsed * self.limit as f64).min(burst(self.limit));
        if b.tokens >= 1.0 {
            Ok(b.tokens as usize)
        } else {
            let wait = (1.0 - b.tokens) / self.limit as f64;
            Err(now + Duration::from_secs_f64(wait.max(0.005)))
        }
    }

    /// Records bytes sent.
    pub fn spend(&self, bytes: u64) {
        let mut b = self.bucket.lock().unwrap_or_else(|e| e.into_inner());
        b.tokens -= bytes as f64;
        drop(b);
        self.release(bytes);
    }

    /// Forgets admitted bytes that will not be sent (the connection closed early).
    pub fn release(&self, bytes: u64) {
        let _ = self
            .backlog
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_sub(bytes))
            });
    }
}

/// Burst size: a quarter second at the limit, at least one typical segment.
fn burst(limit: u64) -> f64 {
    (limit as f64 / 4.0).max(1460.0_f64.min(limit as f64))
}

/// Parses a throttle file's text (or inline rules, one per string).
pub fn parse<'a>(lines: impl Iterator<Item = &'a str>, origin: &str) -> Result<Vec<Rule>> {
    let mut rules = Vec::new();
    for (n, line) in lines.enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(pattern), Some(rate), None) = (words.next(), words.next(), words.next()) else {
            bail!(
                "{origin} line {}: expected `pattern max-bytes-per-second`",
                n + 1
            );
        };
        let max = rate.rsplit('-').next().unwrap_or(rate);
        let limit: u64 = max
            .parse()
            .with_context(|| format!("{origin} line {}: bad rate {rate:?}", n + 1))?;
        if limit == 0 {
            bail!("{origin} line {}: the rate must be above zero", n + 1);
        }
        rules.push(Rule::new(pattern, limit));
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_lines_parse_and_bad_lines_fail() {
        let r = parse(
            "# comment\n**.mp3  20000\n/big/*|/huge/* 100-5000 # trailing\n\n".lines(),
            "t",
        )
        .unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].pattern.as_str(), r[0].limit), ("**.mp3", 20000));
        assert_eq!(r[1].limit, 5000);
        assert!(parse("/x".lines(), "t").is_err());
        assert!(parse("/x fast".lines(), "t").is_err());
        assert!(parse("/x 0".lines(), "t").is_err());
    }

    #[test]
    fn the_bucket_paces_and_the_backlog_refuses() {
        let r = Rule::new("/x", 1000);
        let t0 = Instant::now();
        let first = r.budget(t0).unwrap();
        assert!((250..=1000).contains(&first));
        r.spend(first as u64);
        let wait = r.budget(t0).unwrap_err();
        assert!(wait > t0);
        let later = r.budget(t0 + Duration::from_millis(100)).unwrap();
        assert!((90..=110).contains(&later), "{later}");
        assert!(r.admit(30_000));
        assert!(!r.admit(1), "30 s of backlog at 1000 B/s is far over");
        r.release(30_000);
        assert!(r.admit(1));
    }
}
