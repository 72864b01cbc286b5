//! A request as the handlers take it, whatever protocol brought it: method, target, version, the
//! few fields a static server acts on, the body's framing, and the head in HTTP/1 text form (a
//! request line, then field lines) for the access log and for what reads every field (CGI's and
//! FastCGI's `HTTP_*` variables, gzip's Accept-Encoding). HTTP/1 builds it from `http1`'s parsed
//! head by copying borrowed slices (`from_http1`: no allocation, no scan beyond the request line's
//! length); HTTP/2 and HTTP/3 build it from their decoded field lists (field_list.rs), spelling the
//! text form into a buffer of the connection's ("GET /a HTTP/2.0", then `name: value` lines).

pub use webstand_http1::framing::RequestBody;
pub use webstand_http1::request::Method;

/// The protocol version a request came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// HTTP/1.0 or HTTP/1.1 (the minor version).
    Http1(u8),
    Http2,
    Http3,
}

impl Version {
    /// SERVER_PROTOCOL's spelling (RFC 3875 §4.1.16).
    pub fn name(self) -> &'static [u8] {
        match self {
            Version::Http1(0) => b"HTTP/1.0",
            Version::Http1(_) => b"HTTP/1.1",
            Version::Http2 => b"HTTP/2.0",
            Version::Http3 => b"HTTP/3.0",
        }
    }
}

/// A request head, protocol-neutral; slices borrow the connection's input (or its HTTP/2 buffer).
#[derive(Debug)]
pub struct Head<'a> {
    pub method: Method,
    pub method_name: &'a str,
    pub target: &'a [u8],
    pub version: Version,
    /// How the body is framed (HTTP/2: `Length` of the DATA received, or `None`).
    pub body: RequestBody,
    pub if_modified_since: Option<&'a [u8]>,
    pub if_none_match: Option<&'a [u8]>,
    pub range: Option<&'a [u8]>,
    pub if_range: Option<&'a [u8]>,
    pub authorization: Option<&'a [u8]>,
    /// The head in HTTP/1 text form: request line, field lines, blank line.
    pub text: &'a [u8],
}

impl<'a> Head<'a> {
    /// The request as HTTP/1 parsed it (`http1::request::parse_head`).
    pub fn from_http1(h: &webstand_http1::request::Head<'a>) -> Head<'a> {
        Head {
            method: h.method,
            method_name: h.method_name,
            target: h.target,
            version: Version::Http1(h.minor),
            body: h.body,
            if_modified_since: h.if_modified_since,
            if_none_match: h.if_none_match,
            range: h.range,
            if_range: h.if_range,
            authorization: h.authorization,
            text: h.raw,
        }
    }

    /// The request line, for the access log.
    pub fn request_line(&self) -> &'a [u8] {
        webstand_http1::request::request_line_of(self.text)
    }

    /// The field lines after the request line ("name: value\r\n" each, then the blank line).
    pub fn fields(&self) -> &'a [u8] {
        match memchr::memchr(b'\n', self.text) {
            Some(i) => &self.text[i + 1..],
            None => &[],
        }
    }

    /// The value of the one field the handlers pick by name, when it is one of them (`name` in
    /// lower case): how HTTP/2's decoder fills what HTTP/1's parser picks out.
    pub fn pick(&mut self, name: &[u8], value: &'a [u8]) {
        let slot = match name {
            b"if-modified-since" => &mut self.if_modified_since,
            b"if-none-match" => &mut self.if_none_match,
            b"range" => &mut self.range,
            b"if-range" => &mut self.if_range,
            b"authorization" => &mut self.authorization,
            _ => return,
        };
        slot.get_or_insert(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http1_head_keeps_its_line_and_fields() {
        let limits = webstand_http1::request::Limits {
            max_request_line: 1024,
            max_header_bytes: 4096,
            max_headers: 16,
        };
        let raw = b"GET /a?b HTTP/1.0\r\nRange: bytes=0-1\r\nX: y\r\n\r\n";
        let parsed = webstand_http1::request::parse_head(raw, &limits)
            .unwrap()
            .unwrap();
        let head = Head::from_http1(&parsed);
        assert_eq!(head.request_line(), b"GET /a?b HTTP/1.0");
        assert_eq!(head.fields(), b"Range: bytes=0-1\r\nX: y\r\n\r\n");
        assert_eq!(head.range, Some(&b"bytes=0-1"[..]));
        assert_eq!(head.version.name(), b"HTTP/1.0");
    }
}
