//! QPACK's static table (RFC 9204 Appendix A): 99 entries, index 0 first, which the decoder reads
//! by index and the encoder searches for a field (`find`) through the names grouped by length
//! (built once). There is no dynamic table here: webstand announces a QPACK table capacity of 0,
//! so a peer may not insert into one, and our encoder never does (qpack.rs says why).

use std::sync::OnceLock;

#[rustfmt::skip]
const STATIC: [(&str, &str); 99] = [
    (":authority", ""), (":path", "/"), ("age", "0"), ("content-disposition", ""),
    ("content-length", "0"), ("cookie", ""), ("date", ""), ("etag", ""),
    ("if-modified-since", ""), ("if-none-match", ""), ("last-modified", ""), ("link", ""),
    ("location", ""), ("referer", ""), ("set-cookie", ""), (":method", "CONNECT"),
    (":method", "DELETE"), (":method", "GET"), (":method", "HEAD"), (":method", "OPTIONS"),
    (":method", "POST"), (":method", "PUT"), (":scheme", "http"), (":scheme", "https"),
    (":status", "103"), (":status", "200"), (":status", "304"), (":status", "404"),
    (":status", "503"), ("accept", "*/*"), ("accept", "application/dns-message"),
    ("accept-encoding", "gzip, deflate, br"), ("accept-ranges", "bytes"),
    ("access-control-allow-headers", "cache-control"),
    ("access-control-allow-headers", "content-type"), ("access-control-allow-origin", "*"),
    ("cache-control", "max-age=0"), ("cache-control", "max-age=2592000"),
    ("cache-control", "max-age=604800"), ("cache-control", "no-cache"),
    ("cache-control", "no-store"), ("cache-control", "public, max-age=31536000"),
    ("content-encoding", "br"), ("content-encoding", "gzip"),
    ("content-type", "application/dns-message"), ("content-type", "application/javascript"),
    ("content-type", "application/json"), ("content-type", "application/x-www-form-urlencoded"),
    ("content-type", "image/gif"), ("content-type", "image/jpeg"), ("content-type", "image/png"),
    ("content-type", "text/css"), ("content-type", "text/html; charset=utf-8"),
    ("content-type", "text/plain"), ("content-type", "text/plain;charset=utf-8"),
    ("range", "bytes=0-"), ("strict-transport-security", "max-age=31536000"),
    ("strict-transport-security", "max-age=31536000; includesubdomains"),
    ("strict-transport-security", "max-age=31536000; includesubdomains; preload"),
    ("vary", "accept-encoding"), ("vary", "origin"), ("x-content-type-options", "nosniff"),
    ("x-xss-protection", "1; mode=block"), (":status", "100"), (":status", "204"),
    (":status", "206"), (":status", "302"), (":status", "400"), (":status", "403"),
    (":status", "421"), (":status", "425"), (":status", "500"), ("accept-language", ""),
    ("access-control-allow-credentials", "FALSE"), ("access-control-allow-credentials", "TRUE"),
    ("access-control-allow-headers", "*"), ("access-control-allow-methods", "get"),
    ("access-control-allow-methods", "get, post, options"),
    ("access-control-allow-methods", "options"),
    ("access-control-expose-headers", "content-length"),
    ("access-control-request-headers", "content-type"),
    ("access-control-request-method", "get"), ("access-control-request-method", "post"),
    ("alt-svc", "clear"), ("authorization", ""),
    ("content-security-policy", "script-src 'none'; object-src 'none'; base-uri 'none'"),
    ("early-data", "1"), ("expect-ct", ""), ("forwarded", ""), ("if-range", ""), ("origin", ""),
    ("purpose", "prefetch"), ("server", ""), ("timing-allow-origin", "*"),
    ("upgrade-insecure-requests", "1"), ("user-agent", ""), ("x-forwarded-for", ""),
    ("x-frame-options", "deny"), ("x-frame-options", "sameorigin"),
];

/// The static table's entry at `index`.
pub fn get(index: usize) -> Option<(&'static [u8], &'static [u8])> {
    STATIC
        .get(index)
        .map(|(name, value)| (name.as_bytes(), value.as_bytes()))
}

/// What the static table holds of a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// The whole field, at this index.
    Field(usize),
    /// Its name, at this index.
    Name(usize),
    Nothing,
}

/// The indexes of each name length's entries (names of a length in table order).
fn by_length() -> &'static [Vec<usize>] {
    static BY_LENGTH: OnceLock<Vec<Vec<usize>>> = OnceLock::new();
    BY_LENGTH.get_or_init(|| {
        let longest = STATIC.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        let mut by_length = vec![Vec::new(); longest + 1];
        for (i, (name, _)) in STATIC.iter().enumerate() {
            by_length[name.len()].push(i);
        }
        by_length
    })
}

/// The entry for `name` (lower case) and `value`, or the first with its name.
pub fn find(name: &[u8], value: &[u8]) -> Found {
    let Some(candidates) = by_length().get(name.len()) else {
        return Found::Nothing;
    };
    let mut found = Found::Nothing;
    for &i in candidates {
        let (n, v) = STATIC[i];
        if n.as_bytes() != name {
            continue;
        }
        if v.as_bytes() == value {
            return Found::Field(i);
        }
        if found == Found::Nothing {
            found = Found::Name(i);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_where_the_rfc_puts_them() {
        assert_eq!(get(0), Some((&b":authority"[..], &b""[..])));
        assert_eq!(get(17), Some((&b":method"[..], &b"GET"[..])));
        assert_eq!(get(25), Some((&b":status"[..], &b"200"[..])));
        assert_eq!(get(52).unwrap().1, b"text/html; charset=utf-8");
        assert_eq!(get(98), Some((&b"x-frame-options"[..], &b"sameorigin"[..])));
        assert_eq!(get(99), None);
    }

    #[test]
    fn fields_and_names_are_found() {
        assert_eq!(find(b":status", b"304"), Found::Field(26));
        assert_eq!(find(b":status", b"416"), Found::Name(24));
        assert_eq!(find(b"server", b"webstand"), Found::Name(92));
        assert_eq!(find(b"content-length", b"0"), Found::Field(4));
        assert_eq!(find(b"x-unknown", b""), Found::Nothing);
    }
}
