//! What CGI and FastCGI share of RFC 3875: the request's header fields as meta-variables
//! (`HTTP_*`, never `Proxy`: the httpoxy hole), and the header block a program writes before its
//! body (Status, Location, the fields passed on), read into what the answer needs.

/// The request's header fields as CGI variables: `HTTP_*` (repeated fields joined with ", "), and
/// CONTENT_TYPE; never Proxy (httpoxy), Authorization or Content-Length. The head is parsed again
/// here, a cold path, to see every field.
pub fn header_vars(fields: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut storage = [httparse::EMPTY_HEADER; crate::config::HEADERS_HARD_MAX];
    let mut vars: Vec<(String, Vec<u8>)> = Vec::new();
    let Ok(httparse::Status::Complete((_, parsed))) = httparse::parse_headers(fields, &mut storage)
    else {
        return vars;
    };
    for h in parsed.iter() {
        let name: String = h
            .name
            .chars()
            .map(|c| {
                if c == '-' {
                    '_'
                } else {
                    c.to_ascii_uppercase()
                }
            })
            .collect();
        if matches!(name.as_str(), "PROXY" | "AUTHORIZATION" | "CONTENT_LENGTH") {
            continue;
        }
        let key = if name == "CONTENT_TYPE" {
            name
        } else {
            format!("HTTP_{name}")
        };
        match vars.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) if key != "CONTENT_TYPE" => {
                v.extend_from_slice(b", ");
                v.extend_from_slice(h.value);
            }
            Some((_, v)) => *v = h.value.to_vec(),
            None => vars.push((key, h.value.to_vec())),
        }
    }
    vars
}

/// The CGI header fields a program wrote, read into what the answer needs.
pub struct CgiHead {
    pub status: Option<u16>,
    /// The fields passed on, CRLF-terminated (framing and identity are the server's to set).
    pub fields: Vec<u8>,
    pub has_type: bool,
    pub has_location: bool,
}

/// Reads the program's header lines (LF or CRLF); None when one is malformed.
pub fn read_cgi_head(head: &[u8]) -> Option<CgiHead> {
    let mut status = None;
    let mut fields = Vec::new();
    let (mut has_type, mut has_location) = (false, false);
    for line in head.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let colon = line.iter().position(|&b| b == b':')?;
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        let token = !name.is_empty()
            && name
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(b));
        // A field value is visible characters, spaces, tabs and obs-text (RFC 9110 5.5): no other
        // control character, DEL included (a client's parser refuses the head that carries one).
        if !token || value.iter().any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return None;
        }
        if name.eq_ignore_ascii_case(b"status") {
            let code = value
                .get(..3)
                .and_then(|c| std::str::from_utf8(c).ok())
                .and_then(|c| c.parse::<u16>().ok());
            match code {
                Some(c) if (200..600).contains(&c) => status = Some(c),
                _ => return None,
            }
            continue;
        }
        has_type |= name.eq_ignore_ascii_case(b"content-type");
        has_location |= name.eq_ignore_ascii_case(b"location");
        // Framing and identity are the server's to set.
        if [
            &b"connection"[..],
            b"content-length",
            b"transfer-encoding",
            b"date",
            b"server",
            b"keep-alive",
        ]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
        {
            continue;
        }
        fields.extend_from_slice(name);
        fields.extend_from_slice(b": ");
        fields.extend_from_slice(value);
        fields.extend_from_slice(b"\r\n");
    }
    Some(CgiHead {
        status,
        fields,
        has_type,
        has_location,
    })
}

pub fn find(h: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(h, needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_header_value_with_a_del_is_refused() {
        // AFL++ (the fastcgi target): a DEL passed on in a field value made an answer no client
        // reads (httparse refuses it), where a refused head gives the client a 502 it can read.
        assert!(read_cgi_head(b"Content-Type: t\x7fxt/html").is_none());
        assert!(read_cgi_head(b"X-Note: a\x01b").is_none());
        // Tabs and obs-text stay, as RFC 9110 allows them.
        let kept = read_cgi_head(b"Content-Type: text/html\nX-Note: a\tb \xe9t\xe9").unwrap();
        assert_eq!(
            kept.fields,
            b"Content-Type: text/html\r\nX-Note: a\tb \xe9t\xe9\r\n"
        );
        assert!(kept.has_type);
    }
}
