//! Request heads, as a server reads them: httparse into a fixed uninitialised header array, then the
//! checks that keep the message framing unambiguous (the request-smuggling shapes) and pick out the
//! few fields a static server acts on. Nothing here allocates.

use crate::framing::{self, RequestBody};
use std::mem::MaybeUninit;

/// The most header fields any limit may allow (the size of the parser's stack array).
pub const HEADERS_HARD_MAX: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Other,
}

/// The parsed request head; slices borrow the connection's input buffer.
#[derive(Debug)]
pub struct Head<'a> {
    pub method: Method,
    pub method_name: &'a str,
    pub target: &'a [u8],
    /// HTTP/1.x minor version: 0 or 1.
    pub minor: u8,
    pub keep_alive: bool,
    pub body: RequestBody,
    pub expect_continue: bool,
    pub if_modified_since: Option<&'a [u8]>,
    pub if_none_match: Option<&'a [u8]>,
    pub range: Option<&'a [u8]>,
    pub if_range: Option<&'a [u8]>,
    pub authorization: Option<&'a [u8]>,
    /// Bytes of request line + headers + blank line.
    pub len: usize,
    /// Those bytes themselves (CGI reads every header from them; the log reads the request line).
    pub raw: &'a [u8],
}

impl Head<'_> {
    /// The request line as sent, for the access log.
    pub fn request_line(&self) -> &[u8] {
        request_line_of(self.raw)
    }
}

/// The first non-empty line of some request bytes, at most 1 KiB of it (for logging bad requests).
pub fn request_line_of(raw: &[u8]) -> &[u8] {
    let start = raw
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(raw.len());
    let rest = &raw[start..];
    let end = rest
        .iter()
        .position(|&b| b == b'\r' || b == b'\n')
        .unwrap_or(rest.len())
        .min(1024);
    &rest[..end]
}

/// The limits a head is checked against.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_request_line: usize,
    pub max_header_bytes: usize,
    /// At most [`HEADERS_HARD_MAX`].
    pub max_headers: usize,
}

/// Parses one request head from the start of `buf`. `Ok(None)`: need more bytes. `Err(status)`:
/// answer with that status (400, 414 or 431) and close.
pub fn parse_head<'a>(buf: &'a [u8], limits: &Limits) -> Result<Option<Head<'a>>, u16> {
    let mut storage: [MaybeUninit<httparse::Header<'a>>; HEADERS_HARD_MAX] =
        [const { MaybeUninit::uninit() }; HEADERS_HARD_MAX];
    let mut req = httparse::Request::new(&mut []);
    let max_headers = limits.max_headers.min(HEADERS_HARD_MAX);
    let len = match req.parse_with_uninit_headers(buf, &mut storage[..max_headers]) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return too_long(buf, limits).map(|()| None),
        Err(httparse::Error::TooManyHeaders) => return Err(431),
        Err(_) => return Err(400),
    };
    too_long(&buf[..len], limits)?;
    if len > limits.max_header_bytes {
        return Err(431);
    }
    check_line_ends(&buf[..len])?;

    let method_name = req.method.ok_or(400u16)?;
    let method = match method_name {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        _ => Method::Other,
    };
    let minor = req.version.ok_or(400u16)?;
    let mut head = Head {
        method,
        method_name,
        target: req.path.ok_or(400u16)?.as_bytes(),
        minor,
        keep_alive: minor == 1,
        body: RequestBody::None,
        expect_continue: false,
        if_modified_since: None,
        if_none_match: None,
        range: None,
        if_range: None,
        authorization: None,
        len,
        raw: &buf[..len],
    };
    let framing = read_fields(&mut head, req.headers)?;
    if minor == 1 && !framing.host {
        return Err(400);
    }
    head.body = framing::request_body(framing.length, framing.chunked).ok_or(400u16)?;
    Ok(Some(head))
}

/// The fields that decide whether a request can be framed at all.
#[derive(Default)]
struct Framing {
    host: bool,
    length: Option<u64>,
    chunked: bool,
}

/// Reads the header fields into `head`; `Err(400)` on a shape that makes framing ambiguous.
fn read_fields<'a>(head: &mut Head<'a>, fields: &[httparse::Header<'a>]) -> Result<Framing, u16> {
    let mut f = Framing::default();
    for h in fields {
        let (name, value) = (h.name.as_bytes(), h.value);
        // Dispatch on length first: most fields are none of these.
        match name.len() {
            4 if name.eq_ignore_ascii_case(b"host") => {
                if f.host {
                    return Err(400);
                }
                f.host = true;
            }
            5 if name.eq_ignore_ascii_case(b"range") => head.range = Some(value),
            6 if name.eq_ignore_ascii_case(b"expect") => {
                head.expect_continue = value.eq_ignore_ascii_case(b"100-continue")
            }
            8 if name.eq_ignore_ascii_case(b"if-range") => head.if_range = Some(value),
            10 if name.eq_ignore_ascii_case(b"connection") => {
                for token in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                    if token.eq_ignore_ascii_case(b"close") {
                        head.keep_alive = false;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") && head.minor == 0 {
                        head.keep_alive = true;
                    }
                }
            }
            13 if name.eq_ignore_ascii_case(b"if-none-match") => head.if_none_match = Some(value),
            13 if name.eq_ignore_ascii_case(b"authorization") => head.authorization = Some(value),
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                // One Content-Length of digits only; a second one (even equal) is a smuggling shape.
                if f.length.is_some()
                    || value.is_empty()
                    || value.len() > 18
                    || !value.iter().all(u8::is_ascii_digit)
                {
                    return Err(400);
                }
                f.length = Some(value.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')));
            }
            17 if name.eq_ignore_ascii_case(b"if-modified-since") => {
                head.if_modified_since = Some(value)
            }
            17 if name.eq_ignore_ascii_case(b"transfer-encoding") => {
                // Only a single, exact "chunked" is understood; anything else cannot be framed safely.
                if f.chunked
                    || head.minor == 0
                    || !value.trim_ascii().eq_ignore_ascii_case(b"chunked")
                {
                    return Err(400);
                }
                f.chunked = true;
            }
            _ => {}
        }
    }
    Ok(f)
}

/// 414 when the request line alone exceeds its limit, 431 when the head does.
fn too_long(buf: &[u8], limits: &Limits) -> Result<(), u16> {
    match memchr::memchr(b'\n', buf) {
        None if buf.len() > limits.max_request_line => Err(414),
        Some(i) if i > limits.max_request_line => Err(414),
        _ if buf.len() > limits.max_header_bytes => Err(431),
        _ => Ok(()),
    }
}

/// Every line must end in CRLF: a bare LF or a bare CR is read differently by different parsers.
/// (httparse itself refuses a CR not followed by LF; a lone LF it accepts, so that is checked here.)
fn check_line_ends(head: &[u8]) -> Result<(), u16> {
    if memchr::memchr_iter(b'\n', head).any(|i| i == 0 || head[i - 1] != b'\r') {
        return Err(400);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Limits = Limits {
        max_request_line: 64,
        max_header_bytes: 256,
        max_headers: 8,
    };

    fn status(req: &str) -> Result<bool, u16> {
        parse_head(req.as_bytes(), &L).map(|h| h.is_some())
    }

    #[test]
    fn plain_requests_parse() {
        let h = parse_head(
            b"GET /a?b HTTP/1.1\r\nHost: x\r\nRange: bytes=0-1\r\n\r\nrest",
            &L,
        )
        .unwrap()
        .unwrap();
        assert_eq!(h.method, Method::Get);
        assert_eq!(h.target, b"/a?b");
        assert!(h.keep_alive);
        assert_eq!(h.range, Some(&b"bytes=0-1"[..]));
        assert_eq!(h.body, RequestBody::None);
        assert_eq!(h.len, 48);
        let h = parse_head(b"HEAD / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &L)
            .unwrap()
            .unwrap();
        assert!(h.keep_alive && h.minor == 0);
        let h = parse_head(
            b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            &L,
        )
        .unwrap()
        .unwrap();
        assert!(!h.keep_alive);
        assert_eq!(status("GET / HTTP/1.1\r\nHost: x\r\n"), Ok(false));
    }

    #[test]
    fn bodies_are_framed_by_length_or_chunked() {
        let framed = |req: &str| parse_head(req.as_bytes(), &L).unwrap().unwrap().body;
        let post = "POST / HTTP/1.1\r\nHost: x\r\n";
        assert_eq!(
            framed(&format!("{post}Content-Length: 5\r\n\r\n")),
            RequestBody::Length(5)
        );
        assert_eq!(
            framed(&format!("{post}Content-Length: 0\r\n\r\n")),
            RequestBody::None
        );
        let chunked = format!("{post}Transfer-Encoding: chunked\r\n\r\n");
        assert_eq!(framed(&chunked), RequestBody::Chunked);
    }

    #[test]
    fn limits_give_414_and_431() {
        let long_line = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(100));
        assert_eq!(status(&long_line), Err(414));
        assert_eq!(status(&format!("GET /{}", "a".repeat(100))), Err(414));
        let big = format!(
            "GET / HTTP/1.1\r\nHost: x\r\nX: {}\r\n\r\n",
            "a".repeat(300)
        );
        assert_eq!(status(&big), Err(431));
        let many: String = (0..9).map(|i| format!("X{i}: y\r\n")).collect();
        assert_eq!(
            status(&format!("GET / HTTP/1.1\r\nHost: x\r\n{many}\r\n")),
            Err(431)
        );
    }

    #[test]
    fn smuggling_shapes_are_400() {
        for bad in [
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 4\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n",
            "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET / HTTP/1.1\nHost: x\n\n",
            "GET / HTTP/1.1\r\nHost: x\nX: y\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\rX: y\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            "GET / HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(status(bad), Err(400), "{bad:?}");
        }
    }
}
