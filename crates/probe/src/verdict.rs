//! From what a case saw to its verdict. Harm makes it unsafe: more responses on one connection than
//! the framing allows (a desync), a leak target's content in an answer, a fresh request unanswered
//! during the case (a hang) or after it (a crash). A failed `should` makes it lenient: a 2xx/3xx for
//! something to refuse, another status, a connection kept open, answers too slow or too large.
//! Each reason becomes a note in the table.

use crate::cases::{status_matches, Case};
use crate::exec::Ran;
use crate::result::{millis, End, Fresh, Seen, Verdict};

/// The verdict and its reasons, worst first.
pub fn judge(case: &Case, ran: &Ran, after: &Fresh, baseline_bytes: u64) -> (Verdict, Vec<String>) {
    let mut unsafe_notes = harm(case, ran, after);
    let lenient_notes = leniency(case, ran, baseline_bytes);
    let verdict = if !unsafe_notes.is_empty() {
        Verdict::Unsafe
    } else if !lenient_notes.is_empty() {
        Verdict::Lenient
    } else {
        Verdict::Safe
    };
    unsafe_notes.extend(lenient_notes);
    (verdict, unsafe_notes)
}

fn harm(case: &Case, ran: &Ran, after: &Fresh) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(max) = case.expect.max_responses {
        if let Some(s) = ran.seen.iter().find(|s| s.responses > max) {
            notes.push(format!(
                "desync: {} responses ({}) on one connection, the framing allows {max}",
                s.responses,
                statuses(s)
            ));
        }
    }
    if let Some(t) = ran.seen.iter().find_map(|s| s.leaked.as_ref()) {
        notes.push(format!(
            "leak: an answer holds the content of {t}, outside the document root"
        ));
    }
    if let Some(f) = &ran.during {
        if f.answered_ms.is_none() {
            notes.push(format!(
                "unavailable: a fresh request {}s into the case: {}",
                f.at_ms as f64 / 1000.0,
                f.error.as_deref().unwrap_or("no answer")
            ));
        }
    }
    if after.answered_ms.is_none() {
        notes.push(format!(
            "the server stopped answering after this case (crash or hang): {}",
            after.error.as_deref().unwrap_or("no answer")
        ));
    }
    notes
}

fn leniency(case: &Case, ran: &Ran, baseline_bytes: u64) -> Vec<String> {
    let e = &case.expect;
    let mut notes = Vec::new();
    let Some(first) = ran.seen.first() else {
        return notes;
    };
    if first.end == End::Refused {
        // Nothing was sent: no expectation can be judged (a server that is gone fails the check
        // after the case).
        notes.push("the connection was refused: nothing sent".into());
        return notes;
    }
    let answer = first.statuses.first().copied();
    if e.refuse {
        if let Some(s @ 200..=399) = answer {
            notes.push(format!(
                "accepted: answered {s}, a refusal (4xx/5xx or a close) expected"
            ));
        }
    }
    if let Some(pattern) = &e.status {
        match answer {
            Some(s) if status_matches(pattern, s) => {}
            Some(s) => notes.push(format!("answered {s}, expected {pattern}")),
            None => notes.push(format!(
                "no answer ({}), expected {pattern}",
                first.end.name()
            )),
        }
    }
    if e.close && !matches!(first.end, End::Closed | End::Reset) {
        notes.push("kept the connection open; it must be closed".into());
    }
    if let Some(t) = e.closed_within {
        let open = ran
            .seen
            .iter()
            .filter(|s| s.end != End::Refused)
            .filter(|s| {
                !matches!(s.end, End::Closed | End::Reset) || s.end_ms > t.as_millis() as u64
            })
            .count();
        if open > 0 {
            notes.push(format!(
                "{open} connection(s) still open {} into the case",
                millis(t.as_millis() as u64)
            ));
        }
    }
    if let Some(t) = e.answer_within {
        if !matches!(first.first_answer_ms, Some(a) if a <= t.as_millis() as u64) {
            notes.push(format!("no answer within {}", millis(t.as_millis() as u64)));
        }
    }
    if let Some(ratio) = e.max_bytes_ratio {
        let limit = (baseline_bytes.max(1) as f64 * ratio) as u64;
        if let Some(s) = ran.seen.iter().find(|s| s.bytes > limit) {
            notes.push(format!(
                "amplified: {} bytes back, {:.0}× the normal answer ({} bytes)",
                s.bytes,
                s.bytes as f64 / baseline_bytes.max(1) as f64,
                baseline_bytes
            ));
        }
    }
    if let Some(g) = ran.seen.iter().find_map(|s| s.garbage.as_ref()) {
        notes.push(format!("malformed answer: {g}"));
    }
    notes
}

fn statuses(s: &Seen) -> String {
    let v: Vec<String> = s.statuses.iter().map(u16::to_string).collect();
    v.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::Crowd;
    use std::time::Duration;

    fn case(expect: &str) -> Case {
        let text = format!(
            "[[case]]\nname = \"c\"\ncategory = \"k\"\nrfc = \"r\"\nsend = \"x\"\nlimit = \"20s\"\nexpect = {{ {expect} }}\n"
        );
        crate::cases::load("t.toml", &text).unwrap().remove(0)
    }

    fn ran(seen: Vec<Seen>, during: Option<Fresh>) -> Ran {
        Ran {
            seen,
            crowd: Crowd::default(),
            during,
            elapsed: Duration::from_secs(1),
        }
    }

    fn answered() -> Fresh {
        Fresh {
            at_ms: 0,
            status: Some(200),
            answered_ms: Some(1),
            error: None,
        }
    }

    fn seen(statuses: &[u16], end: End, end_ms: u64, bytes: u64) -> Seen {
        Seen {
            statuses: statuses.to_vec(),
            responses: statuses.len() as u64,
            end,
            end_ms,
            first_answer_ms: Some(end_ms.min(5)),
            bytes,
            ..Seen::default()
        }
    }

    fn judged(expect: &str, seen: Vec<Seen>, during: Option<Fresh>) -> (Verdict, String) {
        let (v, notes) = judge(&case(expect), &ran(seen, during), &answered(), 1000);
        (v, notes.join(" | "))
    }

    #[test]
    fn each_expectation_gives_its_verdict() {
        let closed_400 = || vec![seen(&[400], End::Closed, 1, 300)];
        for expect in [
            "refuse = true",
            "status = \"4xx\"",
            "close = true",
            "max_responses = 1",
            "closed_within = \"2s\"",
            "answer_within = \"1s\"",
            "max_bytes_ratio = 2",
        ] {
            assert_eq!(
                judged(expect, closed_400(), None).0,
                Verdict::Safe,
                "{expect}"
            );
        }
        let (v, why) = judged("refuse = true", vec![seen(&[301], End::Open, 9, 300)], None);
        assert_eq!((v, why.contains("answered 301")), (Verdict::Lenient, true));
        let (v, why) = judged("close = true", vec![seen(&[400], End::Open, 9, 300)], None);
        assert_eq!(
            (v, why.contains("kept the connection open")),
            (Verdict::Lenient, true)
        );
        let late = vec![
            seen(&[], End::Closed, 3000, 0),
            seen(&[], End::Timeout, 20000, 0),
        ];
        let (v, why) = judged("closed_within = \"2s\"", late, None);
        assert_eq!(
            (v, why.contains("2 connection(s) still open")),
            (Verdict::Lenient, true)
        );
        let (v, why) = judged(
            "max_bytes_ratio = 2",
            vec![seen(&[206], End::Open, 9, 40_000)],
            None,
        );
        assert_eq!((v, why.contains("40×")), (Verdict::Lenient, true));
        let (v, why) = judged(
            "max_responses = 1",
            vec![seen(&[200, 404], End::Open, 9, 300)],
            None,
        );
        assert_eq!(
            (v, why.contains("desync: 2 responses (200,404)")),
            (Verdict::Unsafe, true)
        );
        let mut leaked = closed_400();
        leaked[0].leaked = Some("passwd".into());
        let (v, why) = judged("status = \"4xx\"", leaked, None);
        assert_eq!((v, why.contains("leak")), (Verdict::Unsafe, true));
        let hung = Fresh {
            answered_ms: None,
            error: Some("no answer within 3.0s".into()),
            ..answered()
        };
        let (v, why) = judged("available_at = \"5s\"", closed_400(), Some(hung));
        assert_eq!((v, why.contains("unavailable")), (Verdict::Unsafe, true));
    }
}
