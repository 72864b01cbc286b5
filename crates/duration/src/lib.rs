//! The one duration grammar of webstand: every command-line flag and config key that takes a time
//! (bench's `-d`, sweep's and compare's `-d`/`--warmup`/`--timeout`, serve's timeouts and its TOML,
//! probe's `--max-time` and its case files) reads it with [`parse`], so `5h` means the same everywhere.
//!
//! The grammar is humantime's (`500ms`, `30s`, `1.5s`, `2m`, `5h`, `1h 30m`, `2days`), plus a bare
//! number meaning seconds (`30`, `0.5`), as ab's `-t` and wrk's `-d` take it.
//!
//! Why a crate of its own: the users sit on both sides of the crate graph. The CLI, the lab and the
//! probe reach the engine, but the server must not know the load generator, so no crate below all of
//! them exists; copies of a wrapper in each crate would be the three grammars this replaces. A leaf
//! crate with humantime as its only dependency keeps the graph one-way and the grammar in one place.

use std::fmt;
use std::time::Duration;

/// A duration that does not follow the grammar, or is zero where [`positive`] needs more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadDuration {
    text: String,
    reason: String,
}

impl fmt::Display for BadDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad duration '{}': {}", self.text, self.reason)
    }
}

impl std::error::Error for BadDuration {}

/// The longest duration accepted: ten years, beyond any run or timeout and far from overflowing a
/// clock (`Instant + Duration` panics past its range; humantime alone would accept 500 billion years).
pub const MAX: Duration = Duration::from_secs(10 * 31_557_600);

/// Examples shown after a grammar error, so the fix is on the same line.
const EXAMPLES: &str =
    "expected seconds (30, 0.5) or a number with a unit (500ms, 10s, 2m, 5h, 1h 30m)";

/// Reads `text` (surrounding spaces ignored) as a duration: humantime's grammar, or a bare number
/// of seconds. Zero is a duration here (`--warmup 0`); use [`positive`] where it is not.
pub fn parse(text: &str) -> Result<Duration, BadDuration> {
    let t = text.trim();
    let bad = |reason: String| BadDuration {
        text: t.to_string(),
        reason,
    };
    // A bare number is that many seconds: the same grammar with the unit written for the user.
    // (Digits and one dot only: no sign, exponent, "inf" or "nan" slip through.)
    let bare = !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.');
    let parsed = if bare {
        humantime::parse_duration(&format!("{t}s"))
    } else {
        humantime::parse_duration(t)
    };
    let d = parsed.map_err(|e| match e {
        humantime::DurationError::NumberOverflow => bad(TOO_LONG.to_string()),
        humantime::DurationError::Empty => bad(EXAMPLES.to_string()),
        other => bad(format!("{other}; {EXAMPLES}")),
    })?;
    if d > MAX {
        return Err(bad(TOO_LONG.to_string()));
    }
    Ok(d)
}

const TOO_LONG: &str = "too long (at most 10 years)";

/// [`parse`], refusing zero: for run lengths and timeouts, where zero would mean "never" or "at once".
pub fn positive(text: &str) -> Result<Duration, BadDuration> {
    let d = parse(text)?;
    if d.is_zero() {
        return Err(BadDuration {
            text: text.trim().to_string(),
            reason: "must be more than zero".to_string(),
        });
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Duration {
        parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn bare_numbers_are_seconds() {
        assert_eq!(ok("30"), Duration::from_secs(30));
        assert_eq!(ok(" 10 "), Duration::from_secs(10));
        assert_eq!(ok("0.5"), Duration::from_millis(500));
        assert_eq!(ok("1.5"), Duration::from_millis(1500));
        assert_eq!(ok("0"), Duration::ZERO);
    }

    #[test]
    fn units_follow_humantime() {
        assert_eq!(ok("250ms"), Duration::from_millis(250));
        assert_eq!(ok("1.5s"), Duration::from_millis(1500));
        assert_eq!(ok("10sec"), Duration::from_secs(10));
        assert_eq!(ok("2m"), Duration::from_secs(120));
        assert_eq!(ok("2min"), Duration::from_secs(120));
        assert_eq!(ok("5h"), Duration::from_secs(5 * 3600));
        assert_eq!(ok("1h 30m"), Duration::from_secs(5400));
        assert_eq!(ok("2days"), Duration::from_secs(2 * 86_400));
        assert_eq!(ok("100us"), Duration::from_micros(100));
        assert_eq!(ok("1y"), Duration::from_secs(31_557_600));
        assert_eq!(ok("10y"), MAX);
    }

    #[test]
    fn bad_text_names_itself_on_one_line() {
        for bad in [
            "",
            "ten",
            "5x",
            "-1",
            "1e30",
            "inf",
            "nan",
            "1..2",
            "5 h x",
            "s",
            "30 seconds later",
        ] {
            let e = parse(bad).expect_err(bad).to_string();
            assert!(
                e.starts_with(&format!("bad duration '{}': ", bad.trim())),
                "{bad}: {e}"
            );
            assert_eq!(e.lines().count(), 1, "{bad}: {e}");
        }
        let e = parse("5x").unwrap_err().to_string();
        assert!(e.contains("unknown time unit \"x\""), "{e}");
        assert!(e.contains("500ms"), "{e}");
    }

    #[test]
    fn too_long_is_refused_not_wrapped() {
        for bad in [
            "99999999999999999999s",
            "99999999999999999999",
            "9999999999999999999999h",
        ] {
            assert_eq!(
                parse(bad).unwrap_err().to_string(),
                format!("bad duration '{bad}': too long (at most 10 years)")
            );
        }
    }

    #[test]
    fn positive_refuses_zero_only() {
        assert_eq!(positive("1ms").unwrap(), Duration::from_millis(1));
        for zero in ["0", "0s", "0.0", "0ms"] {
            let e = positive(zero).unwrap_err().to_string();
            assert_eq!(e, format!("bad duration '{zero}': must be more than zero"));
        }
        assert!(positive("x")
            .unwrap_err()
            .to_string()
            .contains("expected seconds"));
    }
}
