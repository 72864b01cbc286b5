//! ab's two data files, from a run's per-request samples (`RunResult::samples`): `-g`, gnuplot's
//! tab-separated table of every request, and `-e`, the CSV of the time within which each percentage
//! of the requests was served. Columns, order and number formats are ab's, so plotting scripts
//! written for ab's files read ours.
//!
//! Both list requests sorted by total time, as ab's files do (ab sorts its records for the
//! percentile table before writing them). Where ab would read past its array for the CSV's upper
//! percentages with few requests (rank ⌊0.5 + n·p/100⌋ can reach n), the last request is used.

use std::fmt::Write;
use webstand_results::{RunResult, Sample};

/// The samples sorted by total time.
fn by_total(r: &RunResult) -> Vec<Sample> {
    let mut s = r.samples.clone();
    s.sort_by_key(|s| s.total_us);
    s
}

/// Microseconds to whole milliseconds, rounded as ab does.
fn ms(us: u64) -> u64 {
    (us + 500) / 1000
}

/// ab's `-e` file: `Percentage served,Time in ms`, then 0 to 100 with the total time in ms (three
/// decimals). None when no request completed (ab writes no file then).
pub fn percentages_csv(r: &RunResult) -> Option<String> {
    let s = by_total(r);
    let n = s.len();
    if n == 0 {
        return None;
    }
    let mut o = String::from("Percentage served,Time in ms\n");
    for p in 0..=100u32 {
        let i = match p {
            0 => 0,
            100 => n - 1,
            _ => ((0.5 + n as f64 * f64::from(p) / 100.0) as usize).min(n - 1),
        };
        let _ = writeln!(o, "{p},{:.3}", s[i].total_us as f64 / 1000.0);
    }
    Some(o)
}

/// ab's `-g` file: `starttime seconds ctime dtime ttime wait` separated by tabs, one row per
/// request: its start as ctime(3) text in local time and as Unix seconds, then connect, processing
/// (total − connect), total and waiting times in whole ms. None when no request completed.
pub fn gnuplot_tsv(r: &RunResult) -> Option<String> {
    let s = by_total(r);
    if s.is_empty() {
        return None;
    }
    let mut o = String::from("starttime\tseconds\tctime\tdtime\tttime\twait\n");
    let mut last: Option<(i64, String)> = None;
    for x in &s {
        let secs = (r.started_unix + x.start_us as f64 / 1e6).floor() as i64;
        if last.as_ref().map(|l| l.0) != Some(secs) {
            last = Some((secs, ctime(secs)));
        }
        let text = last.as_ref().map_or("", |l| l.1.as_str());
        let _ = writeln!(
            o,
            "{text}\t{secs}\t{}\t{}\t{}\t{}",
            ms(x.connect_us),
            ms(x.total_us.saturating_sub(x.connect_us)),
            ms(x.total_us),
            ms(x.waiting_us)
        );
    }
    Some(o)
}

/// `secs` as ctime(3) prints it, in local time (`Tue Nov 24 02:18:58 2026`), as ab's apr_ctime.
fn ctime(secs: i64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let t: libc::time_t = secs as libc::time_t;
    // SAFETY: an all-zero `tm` is a valid value for localtime_r to overwrite; both pointers are to
    // live locals for the duration of the call.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return secs.to_string();
        }
        tm
    };
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} {}",
        DAYS[tm.tm_wday.rem_euclid(7) as usize],
        MONTHS[tm.tm_mon.rem_euclid(12) as usize],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tm.tm_year + 1900
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(totals_ms: &[u64]) -> RunResult {
        RunResult {
            started_unix: 1_795_486_738.2,
            samples: totals_ms
                .iter()
                .enumerate()
                .map(|(i, &t)| Sample {
                    start_us: i as u64 * 1000,
                    connect_us: 400,
                    waiting_us: t * 1000 - 600,
                    total_us: t * 1000,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn csv_has_abs_101_rows_sorted_by_total_time() {
        let csv = percentages_csv(&run(&[5, 1, 3, 2, 4])).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 102);
        assert_eq!(lines[0], "Percentage served,Time in ms");
        assert_eq!(lines[1], "0,1.000");
        // rank ⌊0.5 + 5·50/100⌋ = 3 of 1,2,3,4,5
        assert_eq!(lines[51], "50,4.000");
        assert_eq!(lines[100], "99,5.000"); // ab's rank 5 is past the end: the last
        assert_eq!(lines[101], "100,5.000");
        assert!(percentages_csv(&RunResult::default()).is_none());
    }

    #[test]
    fn gnuplot_rows_are_requests_by_total_time() {
        let tsv = gnuplot_tsv(&run(&[5, 1, 3])).unwrap();
        let lines: Vec<&str> = tsv.lines().collect();
        assert_eq!(lines[0], "starttime\tseconds\tctime\tdtime\tttime\twait");
        assert_eq!(lines.len(), 4);
        let cols: Vec<&str> = lines[1].split('\t').collect();
        assert_eq!(&cols[1..], ["1795486738", "0", "1", "1", "0"]);
        assert_eq!(
            cols[0].len(),
            "Tue Nov 24 02:18:58 2026".len(),
            "{}",
            cols[0]
        );
        assert!(lines[3].ends_with("\t0\t5\t5\t4"), "{}", lines[3]);
    }
}
