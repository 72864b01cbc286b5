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

/// The paths a URL path may name a script by: each prefix ending before a '/' (after the first
/// byte; the rest of the path is PATH_INFO), then the whole path. CGI and FastCGI rules are matched
/// against these.
pub fn script_paths(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    let ends = path
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, &b)| b == b'/')
        .map(|(i, _)| i);
    ends.chain([path.len()]).map(move |end| &path[..end])
}

/// Whether the script path `path` matches a `--fastcgi` pattern. An alternative with no '/' in it
/// (`*.php`) is matched against the script's file name at any depth, as nginx's `location ~ \.php$`
/// and every PHP how-to mean it: with thttpd's rule above, `*.php` would pass top-level scripts only
/// and serve `/wp-admin/index.php` as a file. An alternative with a '/' keeps thttpd's meaning.
pub fn matches_script(pattern: &str, path: &[u8]) -> bool {
    let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    pattern.split('|').any(|alt| {
        if alt.contains('/') {
            matches(alt, path)
        } else {
            matches_one(alt.as_bytes(), name)
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

    #[test]
    fn a_script_pattern_without_a_slash_matches_the_file_name_at_any_depth() {
        use super::matches_script;
        assert!(matches_script("*.php", b"/index.php"));
        assert!(matches_script("*.php", b"/wp-admin/includes/x.php"));
        assert!(!matches_script("*.php", b"/wp-admin/x.php.txt"));
        assert!(!matches_script("*.php", b"/a.php/b"));
        assert!(matches_script("/app/*.php", b"/app/x.php"));
        assert!(!matches_script("/app/*.php", b"/app/sub/x.php"));
        assert!(matches_script("/app/**|*.phtml", b"/deep/x.phtml"));
    }
}
