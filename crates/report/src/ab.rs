//! ab's report layout, field by field, so scripts that parse ApacheBench 2.3 output keep working.
//!
//! Field names, widths and rounding follow ab: times in the "Connection Times" table are whole
//! milliseconds rounded from microseconds, the spread is the sample standard deviation, and the
//! percentile table reads the request at rank ⌊n·p/100⌋. Latencies come from the run's HDR histograms
//! (3 significant figures), so a value can differ from ab's exact sort by that precision.

use hdrhistogram::Histogram;
use std::fmt::Write;
use webstand_results::RunResult;

/// What the report says about the run besides the result itself.
#[derive(Clone, Debug, Default)]
pub struct AbInfo {
    pub host: String,
    pub port: u16,
    pub path: String,
    /// `-c`
    pub concurrency: usize,
    /// `-l`: the document length is reported as "Variable".
    pub variable_length: bool,
    /// `-k`: print the Keep-Alive requests line.
    pub keep_alive: bool,
    /// `-p`: print the body-sent lines.
    pub body_sent: bool,
    /// HTTP/1.1 pipelining depth (0 or 1: none).
    pub pipeline: usize,
    /// Open loop: the target rate in requests per second.
    pub rate: Option<f64>,
    /// ab's `-d`: no "Percentage of the requests served" table.
    pub hide_percentiles: bool,
    /// ab's `-S`: the Connection Times table as min, avg and max only, without ab's notes on the
    /// median and mean.
    pub hide_confidence: bool,
}

/// ab's percentiles.
const PERCENTS: [u64; 9] = [50, 66, 75, 80, 90, 95, 98, 99, 100];

/// Microseconds to whole milliseconds, rounded as ab does.
pub(crate) fn round_ms(us: u64) -> u64 {
    (us + 500) / 1000
}

/// min, mean, sample sd, median, max in µs (sd as f64) of a histogram.
struct Spread {
    min: u64,
    mean: u64,
    sd: f64,
    median: u64,
    max: u64,
}

fn spread(h: &Histogram<u64>) -> Spread {
    let n = h.len();
    if n == 0 {
        return Spread {
            min: 0,
            mean: 0,
            sd: 0.0,
            median: 0,
            max: 0,
        };
    }
    let mean = h.mean();
    let mut sq = 0.0;
    for v in h.iter_recorded() {
        let d = h.median_equivalent(v.value_iterated_to()) as f64 - mean;
        sq += d * d * v.count_at_value() as f64;
    }
    let sd = if n > 1 {
        (sq / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    Spread {
        min: h.min(),
        mean: mean as u64,
        sd,
        median: h.value_at_quantile(0.5),
        max: h.max(),
    }
}

/// The value at ab's rank ⌊n·p/100⌋ (0-based) of the sorted latencies.
pub fn ab_percentile_us(h: &Histogram<u64>, percent: u64) -> u64 {
    let n = h.len();
    if n == 0 {
        return 0;
    }
    if percent >= 100 {
        return h.max();
    }
    let rank = (n * percent / 100).min(n - 1); // 0-based
    h.value_at_quantile((rank + 1) as f64 / n as f64)
}

/// ab's TLS lines (an https run only), where ab prints them: after the server's port.
fn tls_lines(o: &mut String, r: &RunResult) {
    if let Some(t) = &r.tls {
        let _ = writeln!(
            o,
            "SSL/TLS Protocol:       {},{},{},{}",
            t.protocol, t.cipher, t.server_key_bits, t.cipher_bits
        );
        let _ = writeln!(o, "Server Temp Key:        {}", t.temp_key);
        if let Some(name) = &t.server_name {
            let _ = writeln!(o, "TLS Server Name:        {name}");
        }
    }
}

/// The whole report, starting with the blank lines ab prints after its banner.
pub fn report(r: &RunResult, info: &AbInfo) -> String {
    let mut o = String::new();
    let secs = r.elapsed.as_secs_f64();
    let done = r.complete;
    let _ = writeln!(o, "\n");
    let _ = writeln!(
        o,
        "Server Software:        {}",
        r.server_software.as_deref().unwrap_or("")
    );
    let _ = writeln!(o, "Server Hostname:        {}", info.host);
    let _ = writeln!(o, "Server Port:            {}", info.port);
    tls_lines(&mut o, r);
    let _ = writeln!(o);
    let _ = writeln!(o, "Document Path:          {}", info.path);
    if info.variable_length {
        let _ = writeln!(o, "Document Length:        Variable");
    } else {
        let _ = writeln!(
            o,
            "Document Length:        {} bytes",
            r.document_length.unwrap_or(0)
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "Concurrency Level:      {}", info.concurrency);
    let _ = writeln!(o, "Time taken for tests:   {secs:.3} seconds");
    let _ = writeln!(o, "Complete requests:      {done}");
    let f = &r.failed;
    let _ = writeln!(o, "Failed requests:        {}", f.total());
    if f.total() > 0 {
        let _ = writeln!(
            o,
            "   (Connect: {}, Receive: {}, Length: {}, Exceptions: {})",
            f.connect, f.receive, f.length, f.exceptions
        );
    }
    if r.write_errors > 0 {
        let _ = writeln!(o, "Write errors:           {}", r.write_errors);
    }
    if r.non_2xx > 0 {
        let _ = writeln!(o, "Non-2xx responses:      {}", r.non_2xx);
    }
    if r.mostly_errors() {
        let _ = writeln!(
            o,
            "WARNING: {:.1} % of the requests failed or were answered non-2xx: the figures below do\n         not describe a working server.",
            r.error_pct()
        );
    }
    if info.keep_alive {
        let _ = writeln!(o, "Keep-Alive requests:    {}", r.keep_alive_requests);
    }
    let _ = writeln!(o, "Total transferred:      {} bytes", r.total_bytes);
    if info.body_sent {
        let _ = writeln!(o, "Total body sent:        {}", r.sent_bytes);
    }
    let _ = writeln!(o, "HTML transferred:       {} bytes", r.body_bytes);
    if secs > 0.0 && done > 0 {
        rates(&mut o, r, info);
    }
    if done > 0 {
        connection_times(&mut o, r, info.hide_confidence);
        if done > 1 && !info.hide_percentiles {
            percentiles(&mut o, r);
        }
    }
    o
}

fn percentiles(o: &mut String, r: &RunResult) {
    let _ = writeln!(
        o,
        "\nPercentage of the requests served within a certain time (ms)"
    );
    for p in PERCENTS {
        let ms = round_ms(ab_percentile_us(&r.histograms.total, p));
        if p >= 100 {
            let _ = writeln!(o, " 100%  {ms:5} (longest request)");
        } else {
            let _ = writeln!(o, "  {p}%  {ms:5}");
        }
    }
}

/// The rate lines. ab's first "Time per request" is concurrency × time ÷ requests, which is the mean
/// latency only when each connection has one request in flight all the time (Little's law): with
/// pipelining or HTTP/2 streams several are in flight, and an open loop's connections are partly
/// idle, so those runs print the measured mean instead and say so (for HTTP/2 that is h2load's mean
/// "time for request", a stream's from its HEADERS sent to its end). Open-loop runs add the target
/// rate and late sends.
fn rates(o: &mut String, r: &RunResult, info: &AbInfo) {
    let _ = writeln!(
        o,
        "Requests per second:    {:.2} [#/sec] (mean)",
        r.hits_per_sec()
    );
    // Only a run with a complete request has these lines.
    let per_request = r.time_per_request_ms(info.concurrency).unwrap_or_default();
    // Streams per connection the HTTP/2 run had (the smaller of -m and the server's limit).
    let streams = r.h2.as_ref().map_or(1, |h| h.max_streams);
    let _ = match (info.rate, info.pipeline > 1) {
        (None, false) if streams > 1 => writeln!(
            o,
            "Time per request:       {:.3} [ms] (mean, measured: up to {streams} streams per connection)",
            r.mean_latency_ms()
        ),
        (Some(_), _) => writeln!(
            o,
            "Time per request:       {:.3} [ms] (mean, measured from each intended send time)",
            r.mean_latency_ms()
        ),
        (None, true) => writeln!(
            o,
            "Time per request:       {:.3} [ms] (mean, measured: {} pipelined per connection)",
            r.mean_latency_ms(),
            info.pipeline
        ),
        (None, false) => writeln!(o, "Time per request:       {per_request:.3} [ms] (mean)"),
    };
    let _ = writeln!(
        o,
        "Time per request:       {:.3} [ms] (mean, across all concurrent requests)",
        r.time_per_request_across_ms().unwrap_or_default()
    );
    let _ = writeln!(
        o,
        "Transfer rate:          {:.2} [Kbytes/sec] received",
        r.kbytes_per_sec()
    );
    if info.body_sent {
        let sent = r.per_sec(r.sent_bytes) / 1024.0;
        let _ = writeln!(o, "                        {sent:.2} kb/s sent");
        let total = r.per_sec(r.total_bytes + r.sent_bytes) / 1024.0;
        let _ = writeln!(o, "                        {total:.2} kb/s total");
    }
    if let Some(rate) = info.rate {
        let _ = writeln!(o, "Target rate:            {rate:.2} [#/sec] (open loop)");
        let _ = writeln!(
            o,
            "Achieved rate:          {:.2} [#/sec] (complete responses)",
            r.hits_per_sec()
        );
        let _ = writeln!(
            o,
            "Late sends:             {} of {} (left more than {} ms after their intended time)",
            r.late_sends,
            r.attempted(),
            webstand_results::LATE_SEND.as_millis()
        );
    }
}

/// The Connection Times rows: label, what ab's notes call the row, its spread.
fn time_rows(r: &RunResult) -> [(&'static str, &'static str, Spread); 4] {
    let h = &r.histograms;
    let rows = [
        (
            "Connect:    ",
            "the initial connection time",
            spread(&h.connect),
        ),
        ("Processing: ", "the processing time", spread(&h.processing)),
        ("Waiting:    ", "the waiting time", spread(&h.waiting)),
        ("Total:      ", "the total time", spread(&h.total)),
    ];
    let mut rows = rows;
    if r.complete > 0 {
        // The exact sum is known for the total: use it, as ab's integer mean of the raw times.
        rows[3].2.mean = (r.latency_sum_us / r.complete as u128) as u64;
    }
    rows
}

fn connection_times(o: &mut String, r: &RunResult, hide_confidence: bool) {
    let rows = time_rows(r);
    let _ = writeln!(o, "\nConnection Times (ms)");
    if hide_confidence {
        // ab -S: its own spacing, the avg column one space narrower than the others.
        let _ = writeln!(o, "              min   avg   max");
        for (label, _, s) in &rows {
            let (min, mean, max) = (round_ms(s.min), round_ms(s.mean), round_ms(s.max));
            let _ = writeln!(o, "{label}{min:5} {mean:5}{max:5}");
        }
        return;
    }
    let _ = writeln!(o, "              min  mean[+/-sd] median   max");
    for (label, _, s) in &rows {
        let _ = writeln!(
            o,
            "{label}{:5} {:4} {:5.1} {:6} {:7}",
            round_ms(s.min),
            round_ms(s.mean),
            s.sd / 1000.0,
            round_ms(s.median),
            round_ms(s.max)
        );
    }
    // ab's sanity notes, compared in the same rounded milliseconds it prints.
    for (_, what, s) in &rows {
        let d = (round_ms(s.mean) as f64 - round_ms(s.median) as f64).abs();
        let sd = s.sd / 1000.0;
        if d > 2.0 * sd {
            let _ = writeln!(
                o,
                "ERROR: The median and mean for {what} are more than twice the standard"
            );
            let _ = writeln!(o, "       deviation apart. These results are NOT reliable.");
        } else if d > sd {
            let _ = writeln!(
                o,
                "WARNING: The median and mean for {what} are not within a normal deviation"
            );
            let _ = writeln!(o, "        These results are probably not that reliable.");
        }
    }
}

/// wrk's `--latency` spectrum: latency at a ladder of percentiles, in milliseconds.
pub fn latency_spectrum(r: &RunResult) -> String {
    let mut o = String::from("\nLatency percentile spectrum (ms)\n");
    let h = &r.histograms.total;
    for q in [50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99, 99.999, 100.0] {
        let us = if q >= 100.0 {
            h.max()
        } else {
            h.value_at_quantile(q / 100.0)
        };
        let _ = writeln!(o, "  {:>7}%  {:10.3}", q, us as f64 / 1000.0);
    }
    let _ = writeln!(o, "  {} requests in the histogram", h.len());
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn result() -> RunResult {
        let mut r = RunResult {
            elapsed: Duration::from_millis(2000),
            complete: 1000,
            total_bytes: 2_282_000,
            body_bytes: 2_048_000,
            document_length: Some(2048),
            server_software: Some("nginx/1.22.1".into()),
            ..Default::default()
        };
        for i in 0..1000u64 {
            let total = 1000 + i * 10; // 1.0 .. 10.99 ms
            r.histograms.total.record(total).unwrap();
            r.histograms.connect.record(100).unwrap();
            r.histograms.processing.record(total - 100).unwrap();
            r.histograms.waiting.record(total - 200).unwrap();
            r.latency_sum_us += total as u128;
        }
        r
    }

    fn info() -> AbInfo {
        AbInfo {
            host: "127.0.0.1".into(),
            port: 8080,
            path: "/2k.html".into(),
            concurrency: 10,
            ..Default::default()
        }
    }

    #[test]
    fn fields_are_laid_out_like_ab() {
        let out = report(&result(), &info());
        for line in [
            "Server Software:        nginx/1.22.1\n",
            "Server Port:            8080\n",
            "Document Length:        2048 bytes\n",
            "Concurrency Level:      10\n",
            "Time taken for tests:   2.000 seconds\n",
            "Complete requests:      1000\n",
            "Failed requests:        0\n",
            "Total transferred:      2282000 bytes\n",
            "HTML transferred:       2048000 bytes\n",
            "Requests per second:    500.00 [#/sec] (mean)\n",
            "Time per request:       20.000 [ms] (mean)\n",
            "Time per request:       2.000 [ms] (mean, across all concurrent requests)\n",
            "Transfer rate:          1114.26 [Kbytes/sec] received\n",
            "              min  mean[+/-sd] median   max\n",
            "Connect:        0    0   0.0      0       0\n",
            "Total:          1    6   2.9      6      11\n",
            " 100%     11 (longest request)\n",
            "  50%      6\n",
        ] {
            assert!(out.contains(line), "missing {line:?} in\n{out}");
        }
        assert!(
            !out.contains("Keep-Alive")
                && !out.contains("Write errors")
                && !out.contains("   (Connect")
        );
    }

    #[test]
    fn failures_and_options_add_their_lines() {
        let mut r = result();
        r.failed.receive = 2;
        r.failed.exceptions = 1;
        r.write_errors = 1;
        r.non_2xx = 5;
        r.keep_alive_requests = 990;
        let out = report(
            &r,
            &AbInfo {
                keep_alive: true,
                variable_length: true,
                ..info()
            },
        );
        assert!(out.contains(
            "Failed requests:        3\n   (Connect: 0, Receive: 2, Length: 0, Exceptions: 1)\n"
        ));
        assert!(out.contains("Write errors:           1\n"));
        assert!(out.contains("Non-2xx responses:      5\n"));
        assert!(out.contains("Keep-Alive requests:    990\n"));
        assert!(out.contains("Document Length:        Variable\n"));
    }

    #[test]
    fn time_per_request_is_the_measured_mean_where_abs_formula_does_not_hold() {
        // 1000 requests in 2 s over 10 connections, mean latency 6.0 ms (see `result`).
        let closed = report(&result(), &info());
        assert!(
            closed.contains("Time per request:       20.000 [ms] (mean)\n"),
            "{closed}"
        );
        let piped = report(
            &result(),
            &AbInfo {
                pipeline: 16,
                ..info()
            },
        );
        assert!(
            piped.contains("Time per request:       5.995 [ms] (mean, measured: 16 pipelined per connection)\n"),
            "{piped}"
        );
        let mut r = result();
        r.late_sends = 7;
        let open = report(
            &r,
            &AbInfo {
                rate: Some(500.0),
                ..info()
            },
        );
        for line in [
            "Time per request:       5.995 [ms] (mean, measured from each intended send time)\n",
            "Time per request:       2.000 [ms] (mean, across all concurrent requests)\n",
            "Target rate:            500.00 [#/sec] (open loop)\n",
            "Achieved rate:          500.00 [#/sec] (complete responses)\n",
            "Late sends:             7 of 1000 (left more than 2 ms after their intended time)\n",
        ] {
            assert!(open.contains(line), "missing {line:?} in\n{open}");
        }
        assert!(!open.contains("20.000"));
    }

    #[test]
    fn a_run_of_mostly_errors_says_so() {
        let mut r = result();
        r.non_2xx = 900;
        assert!(report(&r, &info())
            .contains("WARNING: 90.0 % of the requests failed or were answered non-2xx"));
        assert!(!report(&result(), &info()).contains("WARNING: 9"));
    }

    #[test]
    fn percentiles_use_abs_rank() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for v in 1..=10u64 {
            h.record(v * 1000).unwrap();
        }
        // rank ⌊10·50/100⌋ = 5 (0-based) → the 6th value.
        assert_eq!(round_ms(ab_percentile_us(&h, 50)), 6);
        assert_eq!(round_ms(ab_percentile_us(&h, 99)), 10);
        assert_eq!(round_ms(ab_percentile_us(&h, 100)), 10);
    }
}
