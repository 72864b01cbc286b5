//! MIME types from file names: mime_guess's table (maintained upstream, the workspace's one table),
//! with a UTF-8 charset on text types, whose bytes the server sends as they are on disk. Looked up
//! once per file when it enters the cache, never per request.

use std::borrow::Cow;

/// The Content-Type for a file name (application/octet-stream when the extension says nothing).
pub fn for_name(name: &str) -> Cow<'static, str> {
    let base = mime_guess::from_path(name)
        .first_raw()
        .unwrap_or("application/octet-stream");
    if base.starts_with("text/") || base == "application/javascript" {
        // Scripts are text too; RFC 9239 names them text/javascript.
        let base = if base == "application/javascript" {
            "text/javascript"
        } else {
            base
        };
        Cow::Owned(format!("{base}; charset=utf-8"))
    } else {
        Cow::Borrowed(base)
    }
}

#[cfg(test)]
mod tests {
    use super::for_name;

    #[test]
    fn known_unknown_and_uppercase_extensions() {
        assert_eq!(for_name("2k.html"), "text/html; charset=utf-8");
        assert_eq!(for_name("site.css"), "text/css; charset=utf-8");
        assert_eq!(for_name("app.js"), "text/javascript; charset=utf-8");
        assert_eq!(for_name("A.PNG"), "image/png");
        assert_eq!(for_name("archive.tar.gz"), "application/gzip");
        assert_eq!(for_name("README"), "application/octet-stream");
        assert_eq!(for_name("x.verylongextension"), "application/octet-stream");
    }
}
