//! thttpd's URL patterns, used by CGI and throttle rules: `*` matches within one path segment,
//! `**` matches across segments, `?` matches one character, and `|` separates alternatives
//! (`/cgi-bin/*|/scripts/**`). A pattern without a leading '/' matches anywhere after one.

/// Whether `path` (the raw URL path) matches `pattern`.
pub fn matches(pattern: &str, path: &[u8]) -> bool {
    pattern.split('|').any(|alt| {
        if alt.starts_with('/') {
            matches_one(alt.as_bytes(), path)
        } else {
            // thttpd compares such patterns against the path without its leading slash.
            matches_one(alt.as_bytes(), path.strip_prefix(b"/").unwrap_or(path))
        }
    })
}

fn matches_one(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'?', rest)) => !s.is_empty() && matches_one(rest, &s[1..]),
        Some((b'*', rest)) => {
            let (rest, any) = match rest.split_first() {
                Some((b'*', r)) => (r, true),
                _ => (rest, false),
            };
            // Try every length the star could take, stopping at '/' for a single star.
            for i in 0..=s.len() {
                if matches_one(rest, &s[i..]) {
                    return true;
                }
                if i < s.len() && !any && s[i] == b'/' {
                    return false;
                }
            }
            false
        }
        Some((&c, rest)) => s.first() == Some(&c) && matches_one(rest, &s[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn stars_questions_and_alternatives() {
        assert!(matches("/cgi-bin/*", b"/cgi-bin/hello"));
        assert!(!matches("/cgi-bin/*", b"/cgi-bin/sub/hello"));
        assert!(matches("/cgi-bin/**", b"/cgi-bin/sub/hello"));
        assert!(matches("**.mp3|/big/*", b"/music/a.mp3"));
        assert!(matches("**.mp3|/big/*", b"/big/file"));
        assert!(!matches("**.mp3|/big/*", b"/small/file"));
        assert!(matches("/f?.html", b"/f1.html"));
        assert!(!matches("/f?.html", b"/f12.html"));
        assert!(matches("*.cgi", b"/x.cgi"));
    }
}
