//! Response heads, as a client reads them: httparse into an uninitialised header array (initialising
//! 64 slots per response would cost more than parsing), then the few fields that frame the body or
//! that a report shows. Read as leniently as curl and ab read them: repeated equal Content-Length
//! fields pass, a Transfer-Encoding counts only through its final coding.

use crate::framing::BodyFields;
use std::mem::MaybeUninit;

/// Most header fields a response may have.
pub const MAX_HEADERS: usize = 64;

/// Why a response head cannot be read.
pub type HeadError = &'static str;

/// What a response head says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head<'a> {
    /// Bytes of status line + headers + blank line.
    pub len: usize,
    pub status: u16,
    /// Whether the server lets the connection stay open (HTTP/1.1 default, or the Connection field).
    pub keep_alive: bool,
    pub body: BodyFields,
    /// The Server field's value as sent, when asked for.
    pub server: Option<&'a [u8]>,
}

/// Parses one response head at the start of `buf`; `Ok(None)`: it is not complete yet. The Server
/// field is only looked at when `want_server`.
pub fn parse_head(buf: &[u8], want_server: bool) -> Result<Option<Head<'_>>, HeadError> {
    let mut headers = [const { MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut []);
    let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut resp,
        buf,
        &mut headers,
    ) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err("too many response headers"),
        Err(_) => return Err("malformed response head"),
    };
    let mut head = Head {
        len,
        status: resp.code.unwrap_or(0),
        keep_alive: resp.version == Some(1),
        body: BodyFields::default(),
        server: None,
    };
    for h in resp.headers.iter() {
        let name = h.name.as_bytes();
        // Dispatch on length first: most headers are none of these four.
        match name.len() {
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                let s = std::str::from_utf8(h.value).map_err(|_| "bad Content-Length")?;
                let n: u64 = s.trim().parse().map_err(|_| "bad Content-Length")?;
                if head.body.content_length.is_some_and(|old| old != n) {
                    return Err("conflicting Content-Length headers");
                }
                head.body.content_length = Some(n);
            }
            17 if name.eq_ignore_ascii_case(b"transfer-encoding") => {
                head.body.transfer_encoding = true;
                // Chunked only counts as the final coding.
                let last = h.value.rsplit(|&b| b == b',').next().unwrap_or(b"");
                head.body.chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
            }
            10 if name.eq_ignore_ascii_case(b"connection") => {
                if crate::has_token(h.value, b"close") {
                    head.keep_alive = false;
                } else if crate::has_token(h.value, b"keep-alive") {
                    head.keep_alive = true;
                }
            }
            6 if want_server && name.eq_ignore_ascii_case(b"server") => head.server = Some(h.value),
            _ => {}
        }
    }
    Ok(Some(head))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_that_frame_and_identify() {
        let h = parse_head(
            b"HTTP/1.1 200 OK\r\nServer: x/1 (y)\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
            true,
        )
        .unwrap()
        .unwrap();
        assert_eq!((h.len, h.status, h.keep_alive), (74, 200, true));
        assert_eq!(h.body.content_length, Some(5));
        assert_eq!(h.server, Some(&b"x/1 (y)"[..]));
        let h = parse_head(
            b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            false,
        )
        .unwrap()
        .unwrap();
        assert!(h.keep_alive && h.body.transfer_encoding && h.body.chunked);
        assert_eq!(parse_head(b"HTTP/1.1 200 OK\r\n", false), Ok(None));
        assert!(parse_head(
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            false
        )
        .is_err());
        assert!(parse_head(b"garbage garbage\r\n\r\n", false).is_err());
    }
}
