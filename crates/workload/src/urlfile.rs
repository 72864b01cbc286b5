//! URL files in http_load's model: one URL or path per line, each fetch picks one at random.
//!
//! A line is either a path (`/small/001.html`) or a full `http://HOST[:PORT]/PATH` URL; blank lines and
//! `#` comments are skipped. All full URLs of one file must name the same origin (the engine drives one
//! target at a time); the caller resolves that origin. A full URL is split as every URL is
//! (`webstand_results::url`).

use anyhow::{anyhow, bail, Context, Result};
use std::path::Path;
use webstand_results::url::{split_url, Scheme};

/// One line of a URL file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlLine {
    /// `http://host[:port]` when the line was a full URL.
    pub origin: Option<String>,
    /// Path and query, starting with `/`.
    pub path: String,
}

/// A parsed URL file: its lines and the one origin its full URLs share (if any were full URLs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlFile {
    pub origin: Option<String>,
    pub lines: Vec<UrlLine>,
}

impl UrlFile {
    pub fn paths(&self) -> Vec<String> {
        self.lines.iter().map(|l| l.path.clone()).collect()
    }
}

pub fn load(path: &Path) -> Result<UrlFile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read URL file {}", path.display()))?;
    parse(&text, &path.display().to_string())
}

/// Parses a URL file; `source` names it in errors (`source:line: expected …`).
pub fn parse(text: &str, source: &str) -> Result<UrlFile> {
    let mut lines = Vec::new();
    let mut origin: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parsed = parse_line(line).with_context(|| format!("{source}:{n}"))?;
        if let Some(o) = &parsed.origin {
            match &origin {
                None => origin = Some((n, o.clone())),
                Some((first, seen)) if seen != o => {
                    bail!("{source}:{n}: expected the same origin as line {first} ({seen}), found {o} (one target per run)")
                }
                Some(_) => {}
            }
        }
        lines.push(parsed);
    }
    if lines.is_empty() {
        bail!("{source}: the URL file is empty (expected one URL or path per line)");
    }
    Ok(UrlFile {
        origin: origin.map(|(_, o)| o),
        lines,
    })
}

fn parse_line(line: &str) -> Result<UrlLine> {
    let expected = "expected a path starting with '/' or a URL http://HOST[:PORT]/PATH";
    if line.split_whitespace().count() != 1 {
        bail!("{expected}, found {line:?}");
    }
    if line.starts_with('/') {
        return Ok(UrlLine {
            origin: None,
            path: line.to_string(),
        });
    }
    if !line.contains("://") {
        bail!("{expected}, found {line:?}");
    }
    let (host, port, path, scheme) =
        split_url(line).map_err(|e| anyhow!("{expected}, found {line:?}: {e:#}"))?;
    if scheme == Scheme::Https {
        bail!("only http:// is supported, found {line:?}");
    }
    // The origin as a request names it: the port only when it is not the default.
    let origin = match port == scheme.default_port() {
        true => format!("http://{host}"),
        false => format!("http://{host}:{port}"),
    };
    Ok(UrlLine {
        origin: Some(origin),
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_urls_comments_and_blank_lines() {
        let f = parse(
            "# list\n/a.html\n\nhttp://127.0.0.1:8080/b?x=1\nhttp://127.0.0.1:8080\n",
            "u",
        )
        .unwrap();
        assert_eq!(f.origin.as_deref(), Some("http://127.0.0.1:8080"));
        assert_eq!(f.paths(), ["/a.html", "/b?x=1", "/"]);
        let f = parse("http://h/a#top\nhttp://h:80/b\n", "u").unwrap();
        assert_eq!(f.origin.as_deref(), Some("http://h"));
        assert_eq!(f.paths(), ["/a", "/b"]);
    }

    #[test]
    fn errors_name_the_line() {
        let e = format!("{:#}", parse("/a\nfoo.html\n", "urls.txt").unwrap_err());
        assert!(
            e.starts_with("urls.txt:2: expected a path starting with '/'"),
            "{e}"
        );
        let e = format!(
            "{:#}",
            parse("http://a:1/x\nhttp://b:1/y\n", "u").unwrap_err()
        );
        assert!(
            e.starts_with("u:2: expected the same origin as line 1"),
            "{e}"
        );
        let e = format!("{:#}", parse("https://a/x\n", "u").unwrap_err());
        assert!(e.contains("only http://"), "{e}");
        let e = format!("{:#}", parse("http:///x\n", "u").unwrap_err());
        assert!(
            e.starts_with("u:1: expected a path") && e.contains("no host"),
            "{e}"
        );
        let e = format!("{:#}", parse("\n# none\n", "u").unwrap_err());
        assert!(e.contains("empty"), "{e}");
    }
}
