//! The `--threshold` language: `METRIC OP NUMBER[UNIT]`, several joined by commas. A malformed
//! expression is refused with one line naming the column (1-based, in the whole argument) where
//! it went wrong.

use std::fmt;

/// What a threshold looks at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Metric {
    /// Latency at a percentile (0 < p ≤ 100), counted as the report counts it (from the intended
    /// send time under `--rate`).
    Percentile(f64),
    Min,
    Max,
    Mean,
    /// Failed requests + non-2xx answers.
    Errors,
    /// Answers of one status class: 1 for 1xx … 5 for 5xx.
    Status(u8),
    /// Complete requests per second.
    Rps,
    /// Bytes received per second (ab's transfer rate).
    Transfer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
}

impl Op {
    pub fn holds(self, actual: f64, bound: f64) -> bool {
        match self {
            Op::Lt => actual < bound,
            Op::Le => actual <= bound,
            Op::Gt => actual > bound,
            Op::Ge => actual >= bound,
            Op::Eq => actual == bound,
        }
    }
    pub fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "==",
        }
    }
}

/// The unit a bound was written in; the figure is shown in the same one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Micros,
    Millis,
    Secs,
    Percent,
    /// A plain number: a count, or requests per second.
    Number,
    KbPerSec,
    MbPerSec,
}

impl Unit {
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Micros => "us",
            Unit::Millis => "ms",
            Unit::Secs => "s",
            Unit::Percent => "%",
            Unit::Number => "",
            Unit::KbPerSec => "KB/s",
            Unit::MbPerSec => "MB/s",
        }
    }
}

/// One parsed threshold: the figure named by `metric`, in `unit`, must be `op bound`.
#[derive(Clone, Debug, PartialEq)]
pub struct Threshold {
    pub metric: Metric,
    pub op: Op,
    pub bound: f64,
    pub unit: Unit,
    /// As the user wrote it, without spaces: the name in tables, JUnit and the history.
    pub text: String,
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Parses every `--threshold` value given (each may hold several, comma-separated).
pub fn parse_all(flag: &str, values: &[String]) -> Result<Vec<Threshold>, String> {
    let mut out = Vec::new();
    for v in values {
        out.extend(parse_list(v).map_err(|e| format!("{flag} {v:?}: {e}"))?);
    }
    Ok(out)
}

/// Parses `p99<20ms,errors<0.1%`. The error says at which column of `text` it went wrong.
pub fn parse_list(text: &str) -> Result<Vec<Threshold>, String> {
    let mut out = Vec::new();
    let mut start = 0;
    for part in text.split(',') {
        let parsed = Parser {
            text,
            at: start,
            end: start + part.len(),
        }
        .threshold();
        out.push(parsed.map_err(|(col, what)| format!("at column {col}: {what}"))?);
        start += part.len() + 1;
    }
    Ok(out)
}

/// A cursor over one comma-separated part of the argument; columns count from the argument's start.
struct Parser<'a> {
    text: &'a str,
    at: usize,
    end: usize,
}

type Failure = (usize, String);

impl<'a> Parser<'a> {
    fn rest(&self) -> &str {
        &self.text[self.at..self.end]
    }
    fn skip_spaces(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }
    fn column(&self) -> usize {
        self.text[..self.at].chars().count() + 1
    }
    fn fail<T>(&self, what: impl Into<String>) -> Result<T, Failure> {
        Err((self.column(), what.into()))
    }
    /// What comes next, for "found …" (the end of the expression when nothing does).
    fn found(&self) -> String {
        match self.rest().chars().next() {
            Some(c) => format!("found {c:?}"),
            None => "found the end of the expression".to_string(),
        }
    }
    /// Takes the longest prefix of the characters `keep` accepts.
    fn take(&mut self, keep: impl Fn(char) -> bool) -> &'a str {
        let n = self.rest().find(|c| !keep(c)).unwrap_or(self.rest().len());
        let (text, start) = (self.text, self.at);
        self.at += n;
        &text[start..self.at]
    }

    fn threshold(mut self) -> Result<Threshold, Failure> {
        self.skip_spaces();
        let metric = self.metric()?;
        self.skip_spaces();
        let op = self.op()?;
        self.skip_spaces();
        let bound = self.number()?;
        self.skip_spaces();
        let unit = self.unit(metric)?;
        self.skip_spaces();
        if !self.rest().is_empty() {
            return self.fail(format!("unexpected {:?} after the bound", self.rest()));
        }
        let text = format!(
            "{}{}{}{}",
            metric_name(metric),
            op.symbol(),
            trim_number(bound),
            unit.suffix()
        );
        Ok(Threshold {
            metric,
            op,
            bound,
            unit,
            text,
        })
    }

    fn metric(&mut self) -> Result<Metric, Failure> {
        let at = self.at;
        let name = self.take(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
        let metric = match name {
            "" => None,
            "min" => Some(Metric::Min),
            "max" => Some(Metric::Max),
            "mean" | "avg" => Some(Metric::Mean),
            "errors" => Some(Metric::Errors),
            "rps" => Some(Metric::Rps),
            "transfer" => Some(Metric::Transfer),
            _ => percentile(name).or_else(|| status_class(name)),
        };
        match metric {
            Some(m) => Ok(m),
            None => {
                self.at = at;
                let what = if name.is_empty() {
                    self.found()
                } else {
                    format!("unknown metric {name:?}")
                };
                self.fail(format!(
                    "expected a metric (p50 … p99.99, min, max, mean, errors, status_2xx … status_5xx, rps, transfer), {what}"
                ))
            }
        }
    }

    fn op(&mut self) -> Result<Op, Failure> {
        let rest = self.rest();
        let (op, len) = if rest.starts_with("<=") {
            (Op::Le, 2)
        } else if rest.starts_with(">=") {
            (Op::Ge, 2)
        } else if rest.starts_with("==") {
            (Op::Eq, 2)
        } else if rest.starts_with('<') {
            (Op::Lt, 1)
        } else if rest.starts_with('>') {
            (Op::Gt, 1)
        } else {
            return self.fail(format!("expected <, <=, >, >= or ==, {}", self.found()));
        };
        self.at += len;
        Ok(op)
    }

    fn number(&mut self) -> Result<f64, Failure> {
        let at = self.at;
        let digits = self.take(|c| c.is_ascii_digit() || c == '.');
        match digits.parse::<f64>() {
            Ok(n) if n.is_finite() => Ok(n),
            _ => {
                self.at = at;
                self.fail(format!("expected a number, {}", self.found()))
            }
        }
    }

    fn unit(&mut self, metric: Metric) -> Result<Unit, Failure> {
        let at = self.at;
        let word = self.take(|c| !c.is_whitespace());
        let unit = match (metric, word) {
            (Metric::Percentile(_) | Metric::Min | Metric::Max | Metric::Mean, w) => match w {
                "us" | "µs" => Some(Unit::Micros),
                "ms" => Some(Unit::Millis),
                "s" => Some(Unit::Secs),
                _ => None,
            },
            (Metric::Errors | Metric::Status(_), "%") => Some(Unit::Percent),
            (Metric::Errors | Metric::Status(_) | Metric::Rps, "") => Some(Unit::Number),
            (Metric::Rps, "/s") => Some(Unit::Number),
            (Metric::Transfer, "KB/s") => Some(Unit::KbPerSec),
            (Metric::Transfer, "MB/s") => Some(Unit::MbPerSec),
            _ => None,
        };
        match unit {
            Some(u) => Ok(u),
            None => {
                self.at = at;
                let expected = match metric {
                    Metric::Percentile(_) | Metric::Min | Metric::Max | Metric::Mean => {
                        "a latency unit: us, ms or s"
                    }
                    Metric::Errors | Metric::Status(_) => "% or nothing (a count)",
                    Metric::Rps => "nothing (requests per second)",
                    Metric::Transfer => "KB/s or MB/s",
                };
                self.fail(format!("expected {expected}, {}", self.found()))
            }
        }
    }
}

/// `p99`, `p99.9`, `p50`: the percentile, if `name` is one (p100 is the maximum).
fn percentile(name: &str) -> Option<Metric> {
    let p: f64 = name.strip_prefix('p')?.parse().ok()?;
    (p > 0.0 && p <= 100.0).then_some(Metric::Percentile(p))
}

/// `status_2xx` … `status_5xx` (and `status_1xx`).
fn status_class(name: &str) -> Option<Metric> {
    let class = name.strip_prefix("status_")?.strip_suffix("xx")?;
    match class.parse::<u8>() {
        Ok(c @ 1..=5) => Some(Metric::Status(c)),
        _ => None,
    }
}

pub fn metric_name(m: Metric) -> String {
    match m {
        Metric::Percentile(p) => format!("p{}", trim_number(p)),
        Metric::Min => "min".into(),
        Metric::Max => "max".into(),
        Metric::Mean => "mean".into(),
        Metric::Errors => "errors".into(),
        Metric::Status(c) => format!("status_{c}xx"),
        Metric::Rps => "rps".into(),
        Metric::Transfer => "transfer".into(),
    }
}

/// 20 → "20", 0.1 → "0.1".
fn trim_number(n: f64) -> String {
    format!("{n}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> Threshold {
        let mut v = parse_list(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(v.len(), 1);
        v.remove(0)
    }

    #[test]
    fn every_kind_parses_with_its_units() {
        let t = one("p99<20ms");
        assert_eq!(
            (t.metric, t.op, t.bound, t.unit),
            (Metric::Percentile(99.0), Op::Lt, 20.0, Unit::Millis)
        );
        assert_eq!(one(" p99.99 <= 1.5 s ").text, "p99.99<=1.5s");
        assert_eq!(one("max<800us").unit, Unit::Micros);
        assert_eq!(one("mean>=1ms").op, Op::Ge);
        assert_eq!(one("errors<0.1%").unit, Unit::Percent);
        assert_eq!(one("errors==0").unit, Unit::Number);
        assert_eq!(one("status_5xx==0").metric, Metric::Status(5));
        assert_eq!(one("status_2xx>99%").metric, Metric::Status(2));
        assert_eq!(one("rps>=10000").metric, Metric::Rps);
        assert_eq!(one("transfer>500KB/s").unit, Unit::KbPerSec);
        let list = parse_list("p99<20ms,errors<0.1%").unwrap();
        assert_eq!(list.len(), 2);
    }

    #[test]
    fn a_malformed_expression_names_its_column() {
        let err = |s: &str| parse_list(s).unwrap_err();
        assert_eq!(
            err("p99<<20ms"),
            "at column 5: expected a number, found '<'"
        );
        assert!(
            err("p99<20").starts_with("at column 7: expected a latency unit"),
            "{}",
            err("p99<20")
        );
        assert!(err("p99=20ms").starts_with("at column 4: expected <, <=, >, >= or =="));
        assert!(err("p101<1ms").starts_with("at column 1: expected a metric"));
        assert!(err("latency<1ms").contains("unknown metric \"latency\""));
        assert!(err("p99<20ms,errors<1x").starts_with("at column 18: expected % or nothing"));
        assert!(err("p99<20ms,").starts_with("at column 10: expected a metric"));
        assert!(
            err("rps>1e5").starts_with("at column 6:"),
            "{}",
            err("rps>1e5")
        );
        assert!(err("").starts_with("at column 1:"));
        assert!(err("status_6xx==0").contains("unknown metric"));
        assert!(err("p99<1.2.3ms").starts_with("at column 5: expected a number"));
    }
}
