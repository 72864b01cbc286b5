//! h2load's summary of an HTTP/2 run (`webstand bench --h2`), printed after ab's report, and the
//! same figures as JSON: requests started, done, succeeded (2xx and 3xx), failed, errored and timed
//! out; status classes; traffic with the header bytes and HPACK's space savings; and time for a
//! request (per stream), for connect and to the first byte (per connection), each with h2load's
//! min, max, mean, sd and the share within one sd of the mean; and h2load's "req/s" row, the same
//! five figures over each connection slot's own rate (its whole streams over its active time).

use hdrhistogram::Histogram;
use serde_json::{json, Value};
use webstand_results::{H2Summary, RunResult};

/// h2load's byte counts: "1.19MB" (powers of 1024, two decimals).
fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if n < 1024 {
        return format!("{n}B");
    }
    let (mut v, mut unit) = (n as f64 / 1024.0, 0);
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.2}{}", UNITS[unit])
}

/// h2load's durations: whole µs below a millisecond, then ms and s with two decimals.
fn duration(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.0}us")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1000.0)
    } else {
        format!("{:.2}s", us / 1_000_000.0)
    }
}

/// Share of the recorded values within one standard deviation of the mean, in percent.
fn within_sd(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    let (mean, sd) = (h.mean(), h.stdev());
    let inside: u64 = h
        .iter_recorded()
        .filter(|v| (v.value_iterated_to() as f64 - mean).abs() <= sd)
        .map(|v| v.count_at_value())
        .sum();
    inside as f64 * 100.0 / h.len() as f64
}

/// h2load's figures over plain values (its `compute_time_stat`): min, max, mean, the population
/// standard deviation, and the share of values within one sd of the mean, in percent.
#[derive(Debug, PartialEq)]
struct Spread {
    min: f64,
    max: f64,
    mean: f64,
    sd: f64,
    within_sd: f64,
}

fn spread(values: &[f64]) -> Option<Spread> {
    if values.is_empty() {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    let inside = values.iter().filter(|v| (*v - mean).abs() <= sd).count();
    Some(Spread {
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        mean,
        sd,
        within_sd: inside as f64 * 100.0 / n,
    })
}

fn rps_row(values: &[f64]) -> String {
    let label = "req/s";
    match spread(values) {
        None => format!(
            "{label:<16}: {:>10} {:>10} {:>10} {:>10} {:>8.2}%\n",
            "-", "-", "-", "-", 0.0
        ),
        Some(s) => format!(
            "{label:<16}: {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>8.2}%\n",
            s.min, s.max, s.mean, s.sd, s.within_sd
        ),
    }
}

fn rps_json(values: &[f64]) -> Value {
    match spread(values) {
        None => json!({ "count": 0 }),
        Some(s) => json!({
            "count": values.len(),
            "min": s.min,
            "max": s.max,
            "mean": s.mean,
            "sd": s.sd,
            "within_sd_pct": s.within_sd,
        }),
    }
}

fn time_row(label: &str, h: &Histogram<u64>) -> String {
    if h.is_empty() {
        return format!(
            "{label:<16}: {:>10} {:>10} {:>10} {:>10} {:>8.2}%\n",
            "-", "-", "-", "-", 0.0
        );
    }
    format!(
        "{label:<16}: {:>10} {:>10} {:>10} {:>10} {:>8.2}%\n",
        duration(h.min() as f64),
        duration(h.max() as f64),
        duration(h.mean()),
        duration(h.stdev()),
        within_sd(h)
    )
}

/// HPACK's saving: 1 - compressed / decoded header bytes, in percent.
pub fn space_savings(h: &H2Summary) -> f64 {
    match h.header_decoded_bytes {
        0 => 0.0,
        d => (1.0 - h.header_bytes as f64 / d as f64) * 100.0,
    }
}

/// h2load's lines; `total` is the run's -n (the requests it was to make), if it had one.
pub fn summary(r: &RunResult, total: Option<u64>) -> String {
    let Some(h) = &r.h2 else {
        return String::new();
    };
    let failed = h.done - h.succeeded;
    let protocol = if r.quic.is_some() { "HTTP/3" } else { "HTTP/2" };
    let mut out = format!(
        "\n{protocol} (h2load's summary, {} stream{} per connection):\n",
        h.max_streams,
        if h.max_streams == 1 { "" } else { "s" }
    );
    out += &format!(
        "finished in {}, {:.2} req/s, {}/s\n",
        duration(r.elapsed.as_secs_f64() * 1e6),
        r.per_sec(h.done),
        bytes(r.per_sec(r.total_bytes) as u64)
    );
    out += &format!(
        "requests: {} total, {} started, {} done, {} succeeded, {failed} failed, {} errored, {} timeout\n",
        total.unwrap_or(h.started),
        h.started,
        h.done,
        h.succeeded,
        h.errored,
        h.timeout
    );
    out += &format!(
        "status codes: {} 2xx, {} 3xx, {} 4xx, {} 5xx\n",
        h.status[2], h.status[3], h.status[4], h.status[5]
    );
    out += &format!(
        "traffic: {} ({}) total, {} ({}) headers (space savings {:.2}%), {} ({}) data\n",
        bytes(r.total_bytes),
        r.total_bytes,
        bytes(h.header_bytes),
        h.header_bytes,
        space_savings(h),
        bytes(r.body_bytes),
        r.body_bytes
    );
    out += &format!(
        "{:<16}  {:>10} {:>10} {:>10} {:>10} {:>9}\n",
        "", "min", "max", "mean", "sd", "+/- sd"
    );
    out += &time_row("time for request", &r.histograms.total);
    out += &time_row("time for connect", &h.connect);
    out += &time_row("time to 1st byte", &h.first_byte);
    out += &rps_row(&h.client_rps);
    out
}

fn times_json(h: &Histogram<u64>) -> Value {
    if h.is_empty() {
        return json!({ "count": 0 });
    }
    json!({
        "count": h.len(),
        "min_us": h.min(),
        "max_us": h.max(),
        "mean_us": h.mean(),
        "sd_us": h.stdev(),
        "within_sd_pct": within_sd(h),
    })
}

/// The same figures as JSON (`bench --h2 --json`'s `h2` object).
pub fn json(r: &RunResult, total: Option<u64>) -> Value {
    let Some(h) = &r.h2 else {
        return Value::Null;
    };
    json!({
        "max_streams_per_connection": h.max_streams,
        "requests": {
            "total": total.unwrap_or(h.started),
            "started": h.started,
            "done": h.done,
            "succeeded": h.succeeded,
            "failed": h.done - h.succeeded,
            "errored": h.errored,
            "timeout": h.timeout,
        },
        "status_codes": { "2xx": h.status[2], "3xx": h.status[3], "4xx": h.status[4], "5xx": h.status[5] },
        "traffic": {
            "total_bytes": r.total_bytes,
            "header_bytes": h.header_bytes,
            "header_decoded_bytes": h.header_decoded_bytes,
            "space_savings_pct": space_savings(h),
            "data_bytes": r.body_bytes,
        },
        "resets_received": h.resets,
        "goaways_received": h.goaways,
        "time_for_request": times_json(&r.histograms.total),
        "time_for_connect": times_json(&h.connect),
        "time_to_1st_byte": times_json(&h.first_byte),
        "req_per_s_per_connection": rps_json(&h.client_rps),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_h2loads() {
        assert_eq!(bytes(1000), "1000B");
        assert_eq!(bytes(1_250_000), "1.19MB");
        assert_eq!(duration(456.0), "456us");
        assert_eq!(duration(1234.0), "1.23ms");
        assert_eq!(duration(2_500_000.0), "2.50s");
        let mut h = Histogram::<u64>::new_with_bounds(1, 1_000_000, 3).unwrap();
        for v in [10, 10, 10, 10, 1000] {
            h.record(v).unwrap();
        }
        assert_eq!(within_sd(&h), 80.0);
    }

    #[test]
    fn per_connection_rates_are_summed_up_as_h2load_does() {
        // Population sd (h2load divides by n when it kept every client), and the share within
        // [mean - sd, mean + sd] inclusive.
        let s = spread(&[100.0, 200.0, 300.0, 400.0]).unwrap();
        assert_eq!((s.min, s.max, s.mean), (100.0, 400.0, 250.0));
        assert!((s.sd - 125.0f64.sqrt() * 10.0).abs() < 1e-9, "{}", s.sd);
        assert_eq!(s.within_sd, 50.0);
        let one = spread(&[42.5]).unwrap();
        assert_eq!((one.sd, one.within_sd), (0.0, 100.0));
        assert_eq!(spread(&[]), None);
        assert_eq!(
            rps_row(&[100.0, 200.0, 300.0, 400.0]),
            "req/s           :     100.00     400.00     250.00     111.80    50.00%\n"
        );
        assert!(rps_row(&[]).starts_with("req/s           :          -"));
    }
}
