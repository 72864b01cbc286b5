//! HTTP dates (IMF-fixdate, RFC 9110 §5.6.7): formatting, parsing, and the per-loop cached `Date:`
//! header line that is rebuilt only when the second changes.

use std::time::{SystemTime, UNIX_EPOCH};

/// Length of "Sun, 06 Nov 1994 08:49:37 GMT".
pub const HTTP_DATE_LEN: usize = 29;

const DAYS: [&[u8; 3]; 7] = [b"Sun", b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat"];
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// Seconds since the epoch → (year, month 1..=12, day 1..=31); Howard Hinnant's civil_from_days.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// (year, month, day) → days since the epoch; the inverse of `civil_from_days`.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 } as i64;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Formats Unix seconds as an IMF-fixdate.
pub fn format(secs: i64) -> [u8; HTTP_DATE_LEN] {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, mo, d) = civil_from_days(days);
    let mut out = *b"Thu, 01 Jan 1970 00:00:00 GMT";
    out[..3].copy_from_slice(DAYS[(days + 4).rem_euclid(7) as usize]);
    let two = |o: &mut [u8], v: u32| {
        o[0] = b'0' + (v / 10) as u8;
        o[1] = b'0' + (v % 10) as u8;
    };
    two(&mut out[5..7], d);
    out[8..11].copy_from_slice(MONTHS[mo as usize - 1]);
    let y = y.clamp(0, 9999) as u32;
    two(&mut out[12..14], y / 100);
    two(&mut out[14..16], y % 100);
    two(&mut out[17..19], (rem / 3600) as u32);
    two(&mut out[20..22], (rem / 60 % 60) as u32);
    two(&mut out[23..25], (rem % 60) as u32);
    out
}

/// Parses an IMF-fixdate into Unix seconds. Obsolete forms (RFC 850, asctime) give `None`, which
/// makes a conditional request unconditional: always safe.
pub fn parse(s: &[u8]) -> Option<i64> {
    if s.len() != HTTP_DATE_LEN || &s[3..5] != b", " || &s[25..] != b" GMT" {
        return None;
    }
    let num = |b: &[u8]| -> Option<u32> {
        b.iter().try_fold(0u32, |acc, &c| {
            c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
        })
    };
    let d = num(&s[5..7])?;
    let mo = MONTHS.iter().position(|m| m[..] == s[8..11])? as u32 + 1;
    let y = num(&s[12..16])?;
    let (h, mi, se) = (num(&s[17..19])?, num(&s[20..22])?, num(&s[23..25])?);
    if s[7] != b' ' || s[11] != b' ' || s[16] != b' ' || s[19] != b':' || s[22] != b':' {
        return None;
    }
    if !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    Some(days_from_civil(i64::from(y), mo, d) * 86_400 + i64::from(h * 3600 + mi * 60 + se))
}

/// The `Date: …\r\n` line of one event loop, rebuilt at most once a second.
pub struct DateLine {
    secs: i64,
    line: [u8; 6 + HTTP_DATE_LEN + 2],
}

impl DateLine {
    pub fn new() -> DateLine {
        let mut d = DateLine {
            secs: i64::MIN,
            line: *b"Date: Thu, 01 Jan 1970 00:00:00 GMT\r\n",
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
        }
    }

    /// The whole header line, CRLF included.
    pub fn line(&self) -> &[u8] {
        &self.line
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
