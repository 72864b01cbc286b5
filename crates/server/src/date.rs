//! HTTP dates (IMF-fixdate, RFC 9110 §5.6.7): formatting and parsing by httpdate, and the per-loop
//! cached `Date:` header line that is rebuilt only when the second changes (so formatting, which
//! allocates a String, happens once a second, off the per-request path). The line has a second
//! form with the lines that follow it on every answer of some connections (`with_extra`: HTTPS
//! answers advertise HTTP/3 by Alt-Svc), so no protocol needs to know of them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Length of "Sun, 06 Nov 1994 08:49:37 GMT".
pub const HTTP_DATE_LEN: usize = 29;

/// The last second httpdate can show (9999-12-31 23:59:59).
const LAST_SECOND: i64 = 253_402_300_799;

/// Formats Unix seconds as an IMF-fixdate (clamped to years 1970..=9999).
pub fn format(secs: i64) -> [u8; HTTP_DATE_LEN] {
    let t = UNIX_EPOCH + Duration::from_secs(secs.clamp(0, LAST_SECOND) as u64);
    let mut out = [0u8; HTTP_DATE_LEN];
    out.copy_from_slice(httpdate::fmt_http_date(t).as_bytes());
    out
}

/// Parses an IMF-fixdate into Unix seconds. Obsolete forms (RFC 850, asctime) give `None`, which
/// makes a conditional request unconditional: always safe.
pub fn parse(s: &[u8]) -> Option<i64> {
    if s.len() != HTTP_DATE_LEN || &s[3..5] != b", " || &s[25..] != b" GMT" {
        return None;
    }
    let t = httpdate::parse_http_date(std::str::from_utf8(s).ok()?).ok()?;
    Some(t.duration_since(UNIX_EPOCH).ok()?.as_secs() as i64)
}

/// The `Date: …\r\n` line of one event loop, rebuilt at most once a second.
pub struct DateLine {
    secs: i64,
    line: [u8; 6 + HTTP_DATE_LEN + 2],
    /// The line followed by the extra lines.
    extended: Vec<u8>,
}

impl DateLine {
    pub fn new() -> DateLine {
        DateLine::with_extra(b"")
    }

    /// A line whose `extended` form carries `extra` (whole header lines) after it.
    pub fn with_extra(extra: &[u8]) -> DateLine {
        let line = *b"Date: Thu, 01 Jan 1970 00:00:00 GMT\r\n";
        let mut d = DateLine {
            secs: i64::MIN,
            line,
            extended: [&line[..], extra].concat(),
        };
        d.refresh();
        d
    }

    /// Reads the wall clock (a vDSO call) and reformats only when the second changed.
    pub fn refresh(&mut self) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        if now != self.secs {
            self.secs = now;
            self.line[6..6 + HTTP_DATE_LEN].copy_from_slice(&format(now));
            self.extended[..self.line.len()].copy_from_slice(&self.line);
        }
    }

    /// The whole header line, CRLF included.
    pub fn line(&self) -> &[u8] {
        &self.line
    }

    /// The line and the extra lines after it.
    pub fn extended(&self) -> &[u8] {
        &self.extended
    }

    /// The Unix second the line shows (the access log uses it).
    pub fn secs(&self) -> i64 {
        self.secs
    }
}

impl Default for DateLine {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_dates() {
        assert_eq!(&format(0), b"Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(&format(784_111_777), b"Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(&format(951_782_400), b"Tue, 29 Feb 2000 00:00:00 GMT");
    }

    #[test]
    fn the_extended_line_follows_the_date() {
        let d = DateLine::with_extra(b"Alt-Svc: h3=\":443\"\r\n");
        assert!(d.extended().starts_with(d.line()));
        assert!(d.extended().ends_with(b"Alt-Svc: h3=\":443\"\r\n"));
        assert_ne!(&d.line()[6..16], b"Thu, 01 Ja");
    }

    #[test]
    fn parse_inverts_format_and_rejects_other_shapes() {
        for t in [0, 784_111_777, 951_782_400, 1_700_000_000, 4_102_444_799] {
            assert_eq!(parse(&format(t)), Some(t));
        }
        assert_eq!(parse(b"Sunday, 06-Nov-94 08:49:37 GMT"), None);
        assert_eq!(parse(b"Sun Nov  6 08:49:37 1994"), None);
        assert_eq!(parse(b"Sun, 06 Nov 1994 08:49:37 UTC"), None);
        assert_eq!(parse(b"Sun, 06 Xyz 1994 08:49:37 GMT"), None);
    }
}
