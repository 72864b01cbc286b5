//! MIME types from file extensions (the common web set; anything else is application/octet-stream).

/// The Content-Type for a file name, with a charset for text types.
pub fn for_name(name: &str) -> &'static str {
    let ext = match name.rsplit_once('.') {
        Some((_, e)) if e.len() <= 8 => e,
        _ => return DEFAULT,
    };
    let mut lower = [0u8; 8];
    for (d, s) in lower.iter_mut().zip(ext.bytes()) {
        *d = s.to_ascii_lowercase();
    }
    let ext = &lower[..ext.len()];
    TYPES
        .iter()
        .find(|(e, _)| e.as_bytes() == ext)
        .map_or(DEFAULT, |(_, t)| t)
}

const DEFAULT: &str = "application/octet-stream";

const TYPES: &[(&str, &str)] = &[
    ("html", "text/html; charset=utf-8"),
    ("htm", "text/html; charset=utf-8"),
    ("css", "text/css; charset=utf-8"),
    ("js", "text/javascript; charset=utf-8"),
    ("mjs", "text/javascript; charset=utf-8"),
    ("json", "application/json"),
    ("txt", "text/plain; charset=utf-8"),
    ("csv", "text/csv; charset=utf-8"),
    ("xml", "application/xml"),
    ("svg", "image/svg+xml"),
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("avif", "image/avif"),
    ("ico", "image/x-icon"),
    ("bmp", "image/bmp"),
    ("woff", "font/woff"),
    ("woff2", "font/woff2"),
    ("ttf", "font/ttf"),
    ("otf", "font/otf"),
    ("pdf", "application/pdf"),
    ("zip", "application/zip"),
    ("gz", "application/gzip"),
    ("tar", "application/x-tar"),
    ("wasm", "application/wasm"),
    ("mp3", "audio/mpeg"),
    ("ogg", "audio/ogg"),
    ("wav", "audio/wav"),
    ("mp4", "video/mp4"),
    ("webm", "video/webm"),
    ("bin", "application/octet-stream"),
];

#[cfg(test)]
mod tests {
    use super::for_name;

    #[test]
    fn known_unknown_and_uppercase_extensions() {
        assert_eq!(for_name("2k.html"), "text/html; charset=utf-8");
        assert_eq!(for_name("A.PNG"), "image/png");
        assert_eq!(for_name("archive.tar.gz"), "application/gzip");
        assert_eq!(for_name("README"), "application/octet-stream");
        assert_eq!(for_name("x.verylongextension"), "application/octet-stream");
    }
}
