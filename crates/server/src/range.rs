//! Byte ranges (RFC 9110 §14): parsing `Range: bytes=…`, then sorting and merging overlapping or
//! adjacent ranges so that hundreds of overlapping ranges cost no more than one (the "many ranges"
//! amplification attack). Too many distinct ranges, or a header we cannot read, means the whole file.

/// What to answer for a Range header.
#[derive(Debug, PartialEq, Eq)]
pub enum Plan {
    /// Ignore the header and send the whole file (200).
    Whole,
    /// None of the ranges overlaps the file: 416.
    Unsatisfiable,
    /// Send these inclusive ranges (206), sorted and disjoint, in `out`.
    Parts,
}

/// Specs read from one header at most; more is treated as unreadable (whole file).
const MAX_SPECS: usize = 1000;

/// Parses `header` for a file of `size` bytes into merged inclusive (first, last) ranges in `out`.
pub fn plan(header: &[u8], size: u64, max_ranges: usize, out: &mut Vec<(u64, u64)>) -> Plan {
    out.clear();
    let Some(specs) = strip_unit(header) else {
        return Plan::Whole;
    };
    let mut count = 0;
    for spec in specs.split(|&b| b == b',') {
        let spec = spec.trim_ascii();
        if spec.is_empty() {
            continue;
        }
        count += 1;
        if count > MAX_SPECS {
            out.clear();
            return Plan::Whole;
        }
        let Some(dash) = spec.iter().position(|&b| b == b'-') else {
            return whole(out);
        };
        let (a, b) = (&spec[..dash], &spec[dash + 1..]);
        let range = match (number(a), number(b)) {
            (Some(first), Some(last)) if first <= last => {
                (first < size).then(|| (first, last.min(size - 1)))
            }
            (Some(_), Some(_)) => return whole(out),
            (Some(first), None) if b.is_empty() => (first < size).then(|| (first, size - 1)),
            (None, Some(n)) if a.is_empty() => {
                (n > 0 && size > 0).then(|| (size - n.min(size), size - 1))
            }
            _ => return whole(out),
        };
        out.extend(range);
    }
    if count == 0 {
        return Plan::Whole;
    }
    if out.is_empty() {
        return Plan::Unsatisfiable;
    }
    out.sort_unstable();
    let mut merged = 0;
    for i in 1..out.len() {
        let (first, last) = out[i];
        if first <= out[merged].1.saturating_add(1) {
            out[merged].1 = out[merged].1.max(last);
        } else {
            merged += 1;
            out[merged] = (first, last);
        }
    }
    out.truncate(merged + 1);
    if out.len() > max_ranges {
        return whole(out);
    }
    Plan::Parts
}

fn whole(out: &mut Vec<(u64, u64)>) -> Plan {
    out.clear();
    Plan::Whole
}

fn strip_unit(h: &[u8]) -> Option<&[u8]> {
    let h = h.trim_ascii();
    (h.len() >= 6 && h[..6].eq_ignore_ascii_case(b"bytes=")).then(|| &h[6..])
}

fn number(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(h: &str, size: u64) -> (Plan, Vec<(u64, u64)>) {
        let mut v = Vec::new();
        let plan = plan(h.as_bytes(), size, 16, &mut v);
        (plan, v)
    }

    #[test]
    fn single_suffix_and_open_ranges() {
        assert_eq!(p("bytes=0-99", 1000), (Plan::Parts, vec![(0, 99)]));
        assert_eq!(p("bytes=900-", 1000), (Plan::Parts, vec![(900, 999)]));
        assert_eq!(p("bytes=-100", 1000), (Plan::Parts, vec![(900, 999)]));
        assert_eq!(p("bytes=-5000", 1000), (Plan::Parts, vec![(0, 999)]));
        assert_eq!(p("bytes=990-5000", 1000), (Plan::Parts, vec![(990, 999)]));
        assert_eq!(p("Bytes = 1-2", 1000).0, Plan::Whole);
    }

    #[test]
    fn unsatisfiable_and_unreadable() {
        assert_eq!(p("bytes=1000-", 1000).0, Plan::Unsatisfiable);
        assert_eq!(p("bytes=-0", 1000).0, Plan::Unsatisfiable);
        assert_eq!(p("bytes=5-1", 1000).0, Plan::Whole);
        assert_eq!(p("items=0-1", 1000).0, Plan::Whole);
        assert_eq!(p("bytes=a-b", 1000).0, Plan::Whole);
        assert_eq!(p("bytes=", 1000).0, Plan::Whole);
    }

    #[test]
    fn overlaps_merge_and_too_many_ranges_mean_the_whole_file() {
        assert_eq!(
            p("bytes=10-20,0-5,15-30,31-40", 1000),
            (Plan::Parts, vec![(0, 5), (10, 40)])
        );
        let hundreds: Vec<String> = (0..500).map(|i| format!("{}-{}", i, i + 100)).collect();
        assert_eq!(
            p(&format!("bytes={}", hundreds.join(",")), 10_000),
            (Plan::Parts, vec![(0, 599)])
        );
        let disjoint: Vec<String> = (0..20)
            .map(|i| format!("{}-{}", i * 10, i * 10 + 1))
            .collect();
        assert_eq!(
            p(&format!("bytes={}", disjoint.join(",")), 10_000).0,
            Plan::Whole
        );
        let flood = vec!["0-1"; 1001].join(",");
        assert_eq!(p(&format!("bytes={flood}"), 10).0, Plan::Whole);
    }
}
