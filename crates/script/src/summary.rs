//! `done(summary, latency, requests)`'s arguments from a run's merged result, with wrk's fields:
//! `summary.duration` (µs), `.requests`, `.bytes`, `.errors.{connect,read,write,status,timeout}`;
//! `latency` (µs) and `requests` (each load thread's requests/s, sampled every 100 ms) as wrk's
//! statistics objects (`min`, `max`, `mean`, `stdev`,
//! `percentile(p)`, `[i]`: how many values were i − 1 (exact below 2,048, by the histogram's
//! buckets above), `#`: the largest value + 1).

use hdrhistogram::Histogram;
use mlua::{Lua, MetaMethod, Table, UserData, UserDataFields, UserDataMethods, Value};
use webstand_results::RunResult;

/// A statistics object over a histogram of whole numbers (µs for latency, requests/s).
pub(crate) struct Stats(pub Histogram<u64>);

impl UserData for Stats {
    fn add_fields<F: UserDataFields<Self>>(f: &mut F) {
        f.add_field_method_get("min", |_, s| Ok(if s.0.is_empty() { 0 } else { s.0.min() }));
        f.add_field_method_get("max", |_, s| Ok(s.0.max()));
        f.add_field_method_get("mean", |_, s| Ok(s.0.mean()));
        f.add_field_method_get("stdev", |_, s| Ok(s.0.stdev()));
    }

    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("percentile", |_, s, p: f64| {
            Ok(s.0.value_at_quantile(p / 100.0))
        });
        m.add_meta_method(MetaMethod::Index, |_, s, i: Value| match i {
            Value::Integer(i) if i >= 1 => Ok(s.count(i as u64 - 1)),
            Value::Number(i) if i >= 1.0 => Ok(s.count(i as u64 - 1)),
            _ => Ok(0),
        });
        m.add_meta_method(MetaMethod::Len, |_, s, ()| Ok(s.0.max() + 1));
    }
}

impl Stats {
    /// How many values were `v`. The histogram keeps 3 significant digits: below 2,048 each value
    /// is its own bucket and the count is exact; above, a bucket's values are counted at its lowest
    /// value and 0 at the others, so the counts still add up to the run's (a loop over
    /// `latency[i]` sees every request once).
    fn count(&self, v: u64) -> u64 {
        match self.0.lowest_equivalent(v) == v {
            true => self.0.count_at(v),
            false => 0,
        }
    }
}

/// The three arguments of `done()`.
pub(crate) fn arguments(lua: &Lua, r: &RunResult) -> mlua::Result<(Table, Stats, Stats)> {
    let summary = lua.create_table()?;
    summary.set("duration", r.elapsed.as_micros() as u64)?;
    summary.set("requests", r.complete)?;
    summary.set("bytes", r.total_bytes)?;
    let errors = lua.create_table()?;
    errors.set("connect", r.failed.connect)?;
    errors.set("read", r.failed.receive)?;
    errors.set("write", r.write_errors)?;
    errors.set("status", r.non_2xx)?;
    errors.set(
        "timeout",
        r.failed.exceptions.saturating_sub(r.write_errors),
    )?;
    summary.set("errors", errors)?;
    let latency = Stats(r.histograms.total.clone());
    let requests = Stats(r.histograms.requests.clone());
    Ok((summary, latency, requests))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_exact_below_2048_and_add_up_above() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        for v in [5, 5, 7, 3000, 3001, 100_000] {
            h.record(v).unwrap();
        }
        let s = Stats(h);
        assert_eq!((s.count(5), s.count(6), s.count(7)), (2, 0, 1));
        // 3000 and 3001 share a bucket (2 µs wide there): both are counted at its lowest value.
        assert_eq!((s.count(3000), s.count(3001)), (2, 0));
        let total: u64 = (0..=s.0.max()).map(|v| s.count(v)).sum();
        assert_eq!(total, 6, "every value counted once");
    }
}
