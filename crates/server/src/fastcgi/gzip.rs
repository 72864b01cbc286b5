//! gzip for FastCGI answers (`--fastcgi-gzip`): a PHP page is text the backend made for this one
//! request, so compressing it is the server's job, as nginx's `gzip on` and lighttpd's
//! mod_deflate do it for the pages they pass on from PHP-FPM.
//!
//! What is compressed: an answer held whole (up to 128 KiB: a streamed one goes out as it comes,
//! uncompressed), 200 OK, at least `MIN_LENGTH` bytes, of a textual type, not already encoded by
//! the backend, to a client whose Accept-Encoding takes gzip. Level 1 (flate2's `fast`), nginx's
//! default `gzip_comp_level`: most of the size gain for little CPU.

use flate2::{write::GzEncoder, Compression};
use std::io::Write;

/// Smaller bodies are sent as they are (nginx's `gzip_min_length` in the lab's configs).
const MIN_LENGTH: usize = 256;

/// Whether the request's Accept-Encoding takes gzip (`gzip` or `x-gzip`, not with `q=0`), from
/// its field lines.
pub fn accepted(fields: &[u8]) -> bool {
    fields.split(|&b| b == b'\n').any(|line| {
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return false;
        };
        line[..colon].eq_ignore_ascii_case(b"accept-encoding")
            && line[colon + 1..].split(|&b| b == b',').any(takes_gzip)
    })
}

/// One coding of an Accept-Encoding list, e.g. ` gzip;q=0.5`.
fn takes_gzip(coding: &[u8]) -> bool {
    let mut parts = coding.split(|&b| b == b';').map(|p| p.trim_ascii());
    let name = parts.next().unwrap_or_default();
    if !name.eq_ignore_ascii_case(b"gzip") && !name.eq_ignore_ascii_case(b"x-gzip") {
        return false;
    }
    !parts.any(|p| {
        let p = p.to_ascii_lowercase();
        p.strip_prefix(b"q=")
            .is_some_and(|q| q.iter().all(|&b| b == b'0' || b == b'.'))
    })
}

/// Whether an answer with these CGI header fields (`Name: value\r\n` lines) is worth compressing.
pub fn worth(status: u16, fields: &[u8], len: usize) -> bool {
    if status != 200 || len < MIN_LENGTH || field(fields, b"content-encoding").is_some() {
        return false;
    }
    field(fields, b"content-type").is_some_and(|t| {
        let t = t.to_ascii_lowercase();
        t.starts_with(b"text/")
            || [&b"json"[..], b"javascript", b"xml"]
                .iter()
                .any(|k| t.windows(k.len()).any(|w| w == *k))
    })
}

/// The value of the first field named `name` (lower case), trimmed.
fn field<'a>(fields: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    fields.split(|&b| b == b'\n').find_map(|line| {
        let colon = line.iter().position(|&b| b == b':')?;
        line[..colon]
            .eq_ignore_ascii_case(name)
            .then(|| line[colon + 1..].trim_ascii())
    })
}

/// The body gzipped at level 1.
pub fn compress(body: &[u8]) -> Vec<u8> {
    let mut z = GzEncoder::new(Vec::with_capacity(body.len() / 3 + 64), Compression::fast());
    // Writing into a Vec cannot fail.
    let _ = z.write_all(body);
    z.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_encoding_is_read_with_its_q_values() {
        let head = |ae: &str| format!("Host: x\r\nAccept-Encoding: {ae}\r\n\r\n");
        assert!(accepted(head("gzip").as_bytes()));
        assert!(accepted(head("br, GZIP;q=0.5").as_bytes()));
        assert!(accepted(head("x-gzip").as_bytes()));
        assert!(!accepted(head("gzip;q=0").as_bytes()));
        assert!(!accepted(head("gzip; q=0.00, br").as_bytes()));
        assert!(!accepted(head("identity").as_bytes()));
        assert!(!accepted(b"X-Gzip: gzip\r\n\r\n"));
    }

    #[test]
    fn only_textual_ok_answers_of_some_size_are_compressed() {
        let html = b"Content-Type: text/html; charset=UTF-8\r\nX-A: b\r\n";
        assert!(worth(200, html, 300));
        assert!(!worth(200, html, 100));
        assert!(!worth(404, html, 300));
        assert!(worth(200, b"Content-type: application/json\r\n", 300));
        assert!(!worth(200, b"Content-Type: image/png\r\n", 300));
        let encoded = b"Content-Type: text/html\r\nContent-Encoding: br\r\n";
        assert!(!worth(200, encoded, 300));
    }
}
