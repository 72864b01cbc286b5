//! A request as HTTP/2 and HTTP/3 carry it: a decoded field list, checked as RFC 9113 §8.2-8.3
//! and RFC 9114 §4.2-4.3 both require (lower-case token names, no connection-specific fields, `te`
//! only as "trailers", values without NUL, CR, LF or surrounding whitespace, each of :method,
//! :scheme and :path exactly once and before every regular field, :path not empty; CONNECT with
//! :authority alone), any failure being a malformed request that leaves the connection alive.
//! A valid list is spelled in HTTP/1 text form ("GET /a HTTP/2.0", a host line from :authority,
//! the field lines) from which `head_of` makes the handlers' `request::Head`. Each protocol's
//! decoder (HPACK in h2/request.rs, QPACK in h3/request.rs) hands the fields to a `Collect`.

use crate::request::{Head, Method, RequestBody, Version};

/// What the field list said beyond its text.
pub struct Meta {
    pub head_only: bool,
    /// content-length, which the DATA received must match (§8.1.1).
    pub content_length: Option<u64>,
}

/// A pseudo-header's value, kept in a buffer reused from block to block.
#[derive(Default)]
struct Pseudo {
    value: Vec<u8>,
    seen: bool,
}

impl Pseudo {
    fn get(&self) -> Option<&[u8]> {
        self.seen.then_some(&self.value[..])
    }
}

/// What a block's fields said, gathered while they are decoded. The connection keeps one and
/// clears it for each block, so a request allocates nothing once its buffers have grown.
#[derive(Default)]
pub struct Collect {
    method: Pseudo,
    scheme: Pseudo,
    path: Pseudo,
    authority: Pseudo,
    fields: Vec<u8>,
    regular_seen: bool,
    host_seen: bool,
    content_length: Option<u64>,
    /// Why the request is malformed, once a field made it so.
    pub malformed: Option<&'static str>,
}

impl Collect {
    /// Forgets the last block's fields (its buffers are kept).
    pub fn clear(&mut self) {
        for p in [
            &mut self.method,
            &mut self.scheme,
            &mut self.path,
            &mut self.authority,
        ] {
            p.seen = false;
        }
        self.fields.clear();
        (self.regular_seen, self.host_seen) = (false, false);
        (self.content_length, self.malformed) = (None, None);
    }
}

impl Collect {
    /// Takes one decoded field; Err when it makes the request malformed.
    pub fn field(&mut self, name: &[u8], value: &[u8]) -> Result<(), &'static str> {
        if value.iter().any(|&b| matches!(b, 0 | b'\r' | b'\n')) {
            return Err("NUL, CR or LF in a field value");
        }
        let blank = |b: Option<&u8>| b.is_some_and(|&b| b == b' ' || b == b'\t');
        if blank(value.first()) || blank(value.last()) {
            return Err("whitespace around a field value");
        }
        if let Some(pseudo) = name.strip_prefix(b":") {
            return self.pseudo(pseudo, value);
        }
        self.regular_seen = true;
        if name.is_empty() || !name.iter().all(|&b| is_name_byte(b)) {
            return Err("a field name that is not a lower-case token");
        }
        match name {
            b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding"
            | b"upgrade" => return Err("a connection-specific field"),
            b"te" if value != b"trailers" => return Err("te other than trailers"),
            b"host" => self.host_seen = true,
            b"content-length" => {
                let n = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
                match (n, self.content_length) {
                    (None, _) => return Err("content-length not a number"),
                    (Some(n), Some(m)) if n != m => return Err("conflicting content-length"),
                    (n, _) => self.content_length = n,
                }
            }
            _ => {}
        }
        self.fields.extend_from_slice(name);
        self.fields.extend_from_slice(b": ");
        self.fields.extend_from_slice(value);
        self.fields.extend_from_slice(b"\r\n");
        Ok(())
    }

    fn pseudo(&mut self, name: &[u8], value: &[u8]) -> Result<(), &'static str> {
        if self.regular_seen {
            return Err("a pseudo-header after a regular field");
        }
        let slot = match name {
            b"method" => &mut self.method,
            b"scheme" => &mut self.scheme,
            b"path" => &mut self.path,
            b"authority" => &mut self.authority,
            _ => return Err("an unknown or response pseudo-header"),
        };
        if slot.seen {
            return Err("a duplicated pseudo-header");
        }
        slot.seen = true;
        slot.value.clear();
        slot.value.extend_from_slice(value);
        Ok(())
    }

    /// Spells the request in `text` once every field is in (`version` names it on its line).
    pub fn finish(&self, text: &mut Vec<u8>, version: Version) -> Result<Meta, &'static str> {
        let method = self.method.get().ok_or("no :method")?;
        if method.is_empty() || !method.iter().all(|&b| is_token_byte(b)) {
            return Err(":method not a token");
        }
        let target = if method == b"CONNECT" {
            if self.scheme.seen || self.path.seen {
                return Err("CONNECT with :scheme or :path");
            }
            self.authority.get().ok_or("CONNECT without :authority")?
        } else {
            self.scheme.get().ok_or("no :scheme")?;
            let path = self.path.get().ok_or("no :path")?;
            if path.is_empty() {
                return Err(":path empty");
            }
            path
        };
        if target.iter().any(|&b| b <= b' ' || b == 0x7f) {
            return Err("a control character or space in :path");
        }
        text.clear();
        text.extend_from_slice(method);
        text.push(b' ');
        text.extend_from_slice(target);
        text.push(b' ');
        text.extend_from_slice(version.name());
        text.extend_from_slice(b"\r\n");
        if let (Some(a), false) = (self.authority.get(), self.host_seen) {
            text.extend_from_slice(b"host: ");
            text.extend_from_slice(a);
            text.extend_from_slice(b"\r\n");
        }
        text.extend_from_slice(&self.fields);
        text.extend_from_slice(b"\r\n");
        Ok(Meta {
            head_only: method == b"HEAD",
            content_length: self.content_length,
        })
    }
}

/// RFC 9110 §5.6.2 tchar.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A field name byte HTTP/2 allows: a token byte, not upper case (§8.2.1).
fn is_name_byte(b: u8) -> bool {
    is_token_byte(b) && !b.is_ascii_uppercase()
}

/// The handlers' head for a request spelled by `Collect::finish` (`text`), with `body` received.
pub fn head_of(text: &[u8], body: Option<u64>, version: Version) -> Head<'_> {
    let line_end = memchr::memchr(b'\r', text).unwrap_or(text.len());
    let mut parts = text[..line_end].splitn(3, |&b| b == b' ');
    let method_name = std::str::from_utf8(parts.next().unwrap_or_default()).unwrap_or("GET");
    let target = parts.next().unwrap_or(b"/");
    let method = match method_name {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        _ => Method::Other,
    };
    let mut head = Head {
        method,
        method_name,
        target,
        version,
        body: body.map_or(RequestBody::None, RequestBody::Length),
        if_modified_since: None,
        if_none_match: None,
        range: None,
        if_range: None,
        authorization: None,
        text,
    };
    for line in head.fields().split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(colon) = memchr::memchr(b':', line) {
            head.pick(&line[..colon], line[colon + 1..].trim_ascii());
        }
    }
    head
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(fields: &[(&str, &str)]) -> Result<Vec<u8>, &'static str> {
        let mut c = Collect::default();
        for (n, v) in fields {
            c.field(n.as_bytes(), v.as_bytes())?;
        }
        let mut text = Vec::new();
        c.finish(&mut text, Version::Http2).map(|_| text)
    }

    #[test]
    fn a_valid_list_is_spelled_as_http1_text() {
        let ok = [
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/a?b"),
            (":authority", "x"),
            ("range", "bytes=0-1"),
        ];
        let text = check(&ok).unwrap();
        assert_eq!(
            text,
            b"GET /a?b HTTP/2.0\r\nhost: x\r\nrange: bytes=0-1\r\n\r\n"
        );
        let head = head_of(&text, None, Version::Http2);
        assert_eq!(head.range, Some(&b"bytes=0-1"[..]));
        assert_eq!(head.request_line(), b"GET /a?b HTTP/2.0");
    }

    #[test]
    fn malformed_lists_are_refused() {
        let base = [(":method", "GET"), (":scheme", "http"), (":path", "/")];
        let with = |extra: (&'static str, &'static str)| {
            let mut v = base.to_vec();
            v.push(extra);
            check(&v)
        };
        assert!(with(("Upper", "x")).is_err());
        assert!(with(("connection", "close")).is_err());
        assert!(with(("te", "gzip")).is_err());
        assert!(with(("te", "trailers")).is_ok());
        assert!(with((":path", "/again")).is_err());
        assert!(with(("x", " padded")).is_err());
        assert!(check(&[(":method", "GET"), (":scheme", "http")]).is_err());
        assert!(check(&[(":method", "GET"), (":scheme", "http"), (":path", "")]).is_err());
        assert!(check(&[
            (":method", "GET"),
            ("a", "b"),
            (":scheme", "http"),
            (":path", "/")
        ])
        .is_err());
    }
}
