//! A response as the handlers produce it, before any protocol spells it: a status, the header
//! fields the handler chose (`Head`), and a body whose length is known, absent or streamed
//! (`Length`). The connection's protocol writes it through its `Channel` (protocol.rs): HTTP/1 adds
//! the status line, Server, Date, its framing (Content-Length or chunked) and the Connection line
//! (h1.rs); HTTP/2 adds an encoder there, and no handler changes.
//!
//! Fields are field lines, `Name: value` CRLF each (RFC 9110 §5), the form every source of them
//! already has (a cached file's validators, a CGI or FastCGI answer's header block, a 401's
//! challenge); an encoder that needs name/value pairs (HPACK) splits them at CRLF and the first
//! colon. Also here: the reason phrases, which statuses end a connection, and the generated
//! answers (errors, redirects) that share one shape.

use crate::protocol::Channel;

/// A response head, protocol-neutral.
#[derive(Clone, Copy)]
pub struct Head<'a> {
    pub status: u16,
    /// Field lines ("Name: value\r\n" each), without Server, Date, framing or connection fields.
    pub fields: &'a [u8],
    pub length: Length,
}

/// What the head says about the body.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Length {
    /// No body and no length field (1xx, 204, 304).
    None,
    /// A body of this many bytes (sent or not: a HEAD's answer gives the length only).
    Known(u64),
    /// A body whose length is not known when the head goes out: it is streamed as it comes.
    Streamed,
}

/// The reason phrase of each status the server sends.
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        409 => "Conflict",
        410 => "Gone",
        408 => "Request Timeout",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        414 => "URI Too Long",
        416 => "Range Not Satisfiable",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}

/// Whether a connection may carry more requests after answering with `status`: not after the
/// answers that mean the byte stream itself can no longer be trusted.
pub fn keeps_connection(status: u16) -> bool {
    !matches!(status, 400 | 408 | 413 | 414 | 431 | 500 | 503)
}

/// Appends a decimal number without allocating.
pub fn push_num(out: &mut Vec<u8>, n: u64) {
    let mut buf = [0u8; 20];
    out.extend_from_slice(digits(n, &mut buf));
}

/// The decimal digits of `n`, written at the end of `buf`.
pub fn digits(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

/// A generated answer through `ch`: status, `extra` field lines, and a small HTML body naming the
/// status (left out for HEAD; none at all for 304). Returns the body length.
pub fn simple(
    out: &mut Vec<u8>,
    date_line: &[u8],
    mut ch: Channel,
    status: u16,
    extra: &[u8],
    head_only: bool,
) -> u64 {
    if status == 304 {
        let head = Head {
            status,
            fields: extra,
            length: Length::None,
        };
        ch.write_head(out, date_line, &head);
        return 0;
    }
    // Error paths only: small allocations here are fine.
    let body = format!(
        "<!DOCTYPE html>\n<html><head><title>{status} {r}</title></head><body><h1>{status} {r}</h1></body></html>\n",
        r = reason(status)
    );
    let mut fields = extra.to_vec();
    fields.extend_from_slice(b"Content-Type: text/html; charset=utf-8\r\n");
    let head = Head {
        status,
        fields: &fields,
        length: Length::Known(body.len() as u64),
    };
    ch.write_head(out, date_line, &head);
    if !head_only {
        ch.body(out, body.as_bytes());
    }
    body.len() as u64
}

/// An answer whose body is all in hand (a CGI program's or a FastCGI backend's): its length in the
/// head (none for 204 and 304, which have no body), the body unless the request was a HEAD.
/// Returns the body bytes sent.
pub fn whole(
    out: &mut Vec<u8>,
    date_line: &[u8],
    ch: &mut Channel,
    answer: (u16, &[u8]),
    body: &[u8],
    head_only: bool,
) -> u64 {
    let (status, fields) = answer;
    let length = match status {
        204 | 304 => Length::None,
        _ => Length::Known(body.len() as u64),
    };
    ch.write_head(
        out,
        date_line,
        &Head {
            status,
            fields,
            length,
        },
    );
    if head_only || length == Length::None {
        return 0;
    }
    ch.body(out, body);
    body.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_answers_have_a_correct_length() {
        let mut out = Vec::new();
        let n = simple(
            &mut out,
            b"Date: x\r\n",
            Channel::http1(1, true),
            404,
            b"",
            false,
        );
        let text = String::from_utf8(out).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 404 Not Found\r\nServer: webstand\r\nDate: x\r\n"));
        assert!(head.contains(&format!("Content-Length: {n}")));
        assert_eq!(body.len() as u64, n);
        assert!(body.contains("<h1>404 Not Found</h1>"));
    }

    #[test]
    fn numbers_are_written_without_allocating() {
        let mut out = Vec::new();
        push_num(&mut out, 1234567);
        assert_eq!(out, b"1234567");
    }
}
