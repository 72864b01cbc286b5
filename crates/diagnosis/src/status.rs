//! Non-2xx answers by status: their counts as evidence ("1000 × 404 Not Found") and what the most
//! common one asks of the user. A run of 404s is a wrong URL, not a server shedding load.

use std::collections::BTreeMap;

/// "404 Not Found", or the bare number for a status without a known phrase.
pub fn name(status: u16) -> String {
    match webstand_http1::status::reason_phrase(status) {
        None => status.to_string(),
        Some(r) => format!("{status} {r}"),
    }
}

/// The counts, most common first: "1000 × 404 Not Found, 3 × 500 Internal Server Error".
pub fn counts(statuses: &BTreeMap<u16, u64>) -> String {
    let mut by: Vec<(u16, u64)> = statuses.iter().map(|(s, n)| (*s, *n)).collect();
    by.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    by.iter()
        .map(|(s, n)| format!("{n} × {}", name(*s)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The most common status, if any was counted.
fn most_common(statuses: &BTreeMap<u16, u64>) -> Option<u16> {
    statuses
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(s, _)| *s)
}

/// What to do about a run whose errors are mostly non-2xx answers, by their most common status.
pub fn advice(statuses: &BTreeMap<u16, u64>) -> String {
    let Some(status) = most_common(statuses) else {
        return "the server answered with errors: the figures are its error path, not its service; check its logs".into();
    };
    let name = name(status);
    let what = match status {
        404 | 410 => "check the URL (its path, and the host the server serves it under)",
        401 | 407 => "send credentials (-A USER:PASSWORD, -P for a proxy)",
        403 => "check the file's permissions and the server's access rules for this path",
        400 | 405 | 413 | 414 | 431 => {
            "check the request: its method, headers and body (-m, -H, -p, -v 2 to see it)"
        }
        300..=399 => "request the URL the redirect points to (its Location), or what it serves",
        429 | 503 => "the server sheds load or limits the rate: check its limits and logs, or lower -c",
        502 | 504 => "the server's backend failed or was too slow: check the backend (PHP-FPM, the application) and its logs",
        500..=599 => "the server failed to answer: check its logs",
        _ => "check the URL and the server's logs",
    };
    format!("the server answered {name}: the figures are its error path, not its service; {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_404s_names_the_status_and_the_url() {
        let statuses: BTreeMap<u16, u64> = [(404, 1000), (500, 3)].into_iter().collect();
        assert_eq!(
            counts(&statuses),
            "1000 × 404 Not Found, 3 × 500 Internal Server Error"
        );
        let a = advice(&statuses);
        assert!(
            a.contains("404 Not Found") && a.contains("check the URL"),
            "{a}"
        );
        assert!(!a.contains("503"), "{a}");
        let shed = advice(&[(503, 7)].into_iter().collect());
        assert!(shed.contains("503 Service Unavailable") && shed.contains("sheds load"));
        assert_eq!(name(599), "599");
        assert!(advice(&BTreeMap::new()).contains("error path"));
    }
}
