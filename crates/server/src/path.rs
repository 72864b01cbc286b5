//! Request targets → safe relative paths under the document root.
//!
//! Decoding happens exactly once; anything that could climb out of the root or means two things to
//! two parsers is refused rather than repaired: `..` segments, a `%` left after decoding (double
//! encoding), backslashes, NUL and other control bytes, and invalid or overlong UTF-8. Symlinks are
//! the file opener's job (openat2 with RESOLVE_BENEATH, see docroot.rs). The escapes themselves are
//! percent-encoding's.

use percent_encoding::{percent_decode, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use std::borrow::Cow;

/// Why a target was refused (all answered 400).
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    NotAbsolute,
    BadEscape,
    BadByte,
    BadUtf8,
    DotDot,
}

/// Splits a request target into (path, query); absolute-form `http://host/p?q` keeps only `/p`.
pub fn split_target(target: &[u8]) -> (&[u8], Option<&[u8]>) {
    let mut t = target;
    if let Some(rest) = t
        .strip_prefix(b"http://")
        .or_else(|| t.strip_prefix(b"https://"))
    {
        t = match rest.iter().position(|&b| b == b'/') {
            Some(i) => &rest[i..],
            None => b"/",
        };
    }
    match t.iter().position(|&b| b == b'?') {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    }
}

/// Decodes `raw` (the path part of a target, starting with '/') into `out` as a relative path
/// without leading slash, `.` or empty segments: "/a//./b/" → "a/b". Returns whether the target
/// ended with '/' (a directory request).
pub fn decode(raw: &[u8], out: &mut String) -> Result<bool, Refused> {
    out.clear();
    if raw.first() != Some(&b'/') {
        return Err(Refused::NotAbsolute);
    }
    // percent-encoding leaves a malformed escape as it is; here it is a refusal of its own.
    let bad_escape = raw.iter().enumerate().any(|(i, &b)| {
        b == b'%'
            && !(raw.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && raw.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
    });
    if bad_escape {
        return Err(Refused::BadEscape);
    }
    let bytes: Cow<[u8]> = percent_decode(raw).into();
    if bytes
        .iter()
        .any(|&b| b < 0x20 || b == 0x7f || b == b'\\' || b == b'%')
    {
        return Err(Refused::BadByte);
    }
    // from_utf8 rejects overlong forms (e.g. %c0%ae for '.') and surrogates.
    let text = std::str::from_utf8(&bytes).map_err(|_| Refused::BadUtf8)?;
    for seg in text.split('/') {
        match seg {
            "" | "." => {}
            ".." => return Err(Refused::DotDot),
            s => {
                if !out.is_empty() {
                    out.push('/');
                }
                out.push_str(s);
            }
        }
    }
    Ok(raw.ends_with(b"/"))
}

/// Whether a relative path has a segment that is never served: dot-files such as .htpasswd or .git
/// (`.well-known` excepted).
pub fn is_hidden(rel: &str) -> bool {
    rel.split('/')
        .any(|s| s.starts_with('.') && s != ".well-known")
}

/// What a path keeps unencoded in a URL: RFC 3986 pchar and '/', every other byte is escaped.
const PATH_ESCAPED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b':')
    .remove(b'@');

/// Percent-encodes a path for use in a URL (directory listings, redirects).
pub fn encode(path: &str, out: &mut String) {
    out.extend(utf8_percent_encode(path, PATH_ESCAPED));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(raw: &str) -> Result<String, Refused> {
        let mut s = String::new();
        decode(raw.as_bytes(), &mut s).map(|_| s)
    }

    #[test]
    fn normal_paths_decode() {
        assert_eq!(dec("/").unwrap(), "");
        assert_eq!(dec("/a//./b/").unwrap(), "a/b");
        assert_eq!(dec("/small/f1.html").unwrap(), "small/f1.html");
        assert_eq!(dec("/sp%20ace").unwrap(), "sp ace");
        assert_eq!(dec("/caf%C3%A9").unwrap(), "café");
    }

    #[test]
    fn traversal_shapes_are_refused() {
        assert_eq!(dec("/../etc/passwd"), Err(Refused::DotDot));
        assert_eq!(dec("/a/%2e%2e/%2E%2E/x"), Err(Refused::DotDot));
        assert_eq!(dec("/%252e%252e/x"), Err(Refused::BadByte));
        assert_eq!(dec("/..%5cx"), Err(Refused::BadByte));
        assert_eq!(dec("/a\\..\\b"), Err(Refused::BadByte));
        assert_eq!(dec("/a%00.html"), Err(Refused::BadByte));
        assert_eq!(dec("/%c0%ae%c0%ae/x"), Err(Refused::BadUtf8));
        assert_eq!(dec("/%zz"), Err(Refused::BadEscape));
        assert_eq!(dec("/%2"), Err(Refused::BadEscape));
        assert_eq!(dec("x"), Err(Refused::NotAbsolute));
    }

    #[test]
    fn targets_split_and_hidden_files_are_spotted() {
        assert_eq!(split_target(b"/a?b=1"), (&b"/a"[..], Some(&b"b=1"[..])));
        assert_eq!(
            split_target(b"http://h:1/x?y"),
            (&b"/x"[..], Some(&b"y"[..]))
        );
        assert_eq!(split_target(b"http://h"), (&b"/"[..], None));
        assert!(is_hidden("dir/.htpasswd"));
        assert!(!is_hidden(".well-known/x"));
        let mut s = String::new();
        encode("a b/<c>", &mut s);
        assert_eq!(s, "a%20b/%3Cc%3E");
    }
}
