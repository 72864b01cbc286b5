//! A response as handlers and jobs make it, before any protocol spells it: a status, the header
//! fields the handler chose (`Head`), and a body whose length is known, absent or streamed
//! (`Length`). A response is written into a `Sink`, which the protocol of the connection it
//! answers provides: HTTP/1's adds the status line, Server, Date, its framing (Content-Length or
//! chunked) and the Connection line; HTTP/2's encodes HEADERS and DATA frames. Nothing that makes a
//! response knows which one it writes to.
//!
//! Fields are field lines, `Name: value` CRLF each (RFC 9110 §5), the form every source of them
//! already has (a cached file's validators, a CGI or FastCGI answer's header block, a 401's
//! challenge); an encoder that needs name/value pairs (HPACK) splits them at CRLF and the first
//! colon. Also here: the reason phrases, which statuses end a connection, a head kept ready in
//! each protocol's bytes (`Prepared`), and the generated answers (errors, redirects) that share
//! one shape.

use std::fs::File;
use std::sync::{Arc, OnceLock};

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

/// The reason phrase of each status the server sends ("Unknown" for one without a phrase).
pub fn reason(status: u16) -> &'static str {
    webstand_http1::status::reason_phrase(status).unwrap_or("Unknown")
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

/// Protocols that may keep a form of a `Prepared` head (each names its slot: h1/write.rs, h2/send.rs).
pub const PREPARED_FORMS: usize = 4;

/// A fixed head made once (a cached file's 200), which each protocol spells in its own bytes the
/// first time it sends it and then copies: the per-request cost of a cached file's head is one
/// copy, whatever the protocol.
pub struct Prepared {
    status: u16,
    fields: Box<[u8]>,
    length: Length,
    forms: [OnceLock<Box<[u8]>>; PREPARED_FORMS],
}

impl Prepared {
    pub fn new(head: &Head) -> Prepared {
        Prepared {
            status: head.status,
            fields: head.fields.into(),
            length: head.length,
            forms: Default::default(),
        }
    }

    /// The head, protocol-neutral.
    pub fn head(&self) -> Head<'_> {
        Head {
            status: self.status,
            fields: &self.fields,
            length: self.length,
        }
    }

    /// The head in the form of the protocol whose slot is `slot`, made by `make` the first time.
    pub fn form(&self, slot: usize, make: fn(&Head) -> Box<[u8]>) -> &[u8] {
        self.forms[slot].get_or_init(|| make(&self.head()))
    }
}

/// Where one response goes: the protocol of the connection (and, HTTP/2, the stream) it answers.
/// The sink adds what its protocol needs (the Date line among it) and frames the body.
pub trait Sink {
    /// The response's head.
    fn head(&mut self, head: &Head);
    /// A head kept ready (`Prepared`).
    fn prepared(&mut self, head: &Prepared);
    /// Body bytes of a head with a known length.
    fn body(&mut self, data: &[u8]);
    /// The byte range [start, end) of a file as body bytes of a known length.
    fn file(&mut self, file: &Arc<File>, start: u64, end: u64);
    /// Body bytes of a streamed head (`Length::Streamed`).
    fn stream(&mut self, data: &[u8]);
    /// The end of a streamed body.
    fn end_stream(&mut self);
    /// The answer cannot be finished after its head went out: true when the protocol can say so
    /// for this answer alone (HTTP/2 resets the stream); false when only closing the connection
    /// can (HTTP/1: the connection is then closed).
    fn abort(&mut self) -> bool;
    /// Bytes gathered for this round's write so far (a job stops reading its source past a
    /// high-water mark, so a slow client holds its backend back).
    fn gathered(&self) -> usize;
}

/// A generated answer: status, `extra` field lines, and a small HTML body naming the status (left
/// out for HEAD; none at all for 304). Returns the body length.
pub fn simple(sink: &mut dyn Sink, status: u16, extra: &[u8], head_only: bool) -> u64 {
    if status == 304 {
        sink.head(&Head {
            status,
            fields: extra,
            length: Length::None,
        });
        return 0;
    }
    // Error paths only: small allocations here are fine.
    let body = format!(
        "<!DOCTYPE html>\n<html><head><title>{status} {r}</title></head><body><h1>{status} {r}</h1></body></html>\n",
        r = reason(status)
    );
    let mut fields = extra.to_vec();
    fields.extend_from_slice(b"Content-Type: text/html; charset=utf-8\r\n");
    sink.head(&Head {
        status,
        fields: &fields,
        length: Length::Known(body.len() as u64),
    });
    if !head_only {
        sink.body(body.as_bytes());
    }
    body.len() as u64
}

/// An answer whose body is all in hand (a CGI program's or a FastCGI backend's): its length in the
/// head (none for 204 and 304, which have no body), the body unless the request was a HEAD.
/// Returns the body bytes sent.
pub fn whole(sink: &mut dyn Sink, answer: (u16, &[u8]), body: &[u8], head_only: bool) -> u64 {
    let (status, fields) = answer;
    let length = match status {
        204 | 304 => Length::None,
        _ => Length::Known(body.len() as u64),
    };
    sink.head(&Head {
        status,
        fields,
        length,
    });
    if head_only || length == Length::None {
        return 0;
    }
    sink.body(body);
    body.len() as u64
}

/// A sink that records what it is given, for tests of what makes answers.
#[cfg(test)]
#[derive(Default, Debug)]
pub struct Recorder {
    pub status: Option<u16>,
    pub fields_seen: Vec<u8>,
    pub length: Option<Length>,
    /// Body bytes, streamed ones included.
    pub body: Vec<u8>,
    pub streamed: bool,
    pub ended: bool,
    pub aborted: bool,
}

#[cfg(test)]
impl Recorder {
    pub fn fields(&self) -> String {
        String::from_utf8_lossy(&self.fields_seen).into_owned()
    }
}

#[cfg(test)]
impl Sink for Recorder {
    fn head(&mut self, head: &Head) {
        self.status = Some(head.status);
        self.fields_seen = head.fields.to_vec();
        self.length = Some(head.length);
    }
    fn prepared(&mut self, head: &Prepared) {
        self.head(&head.head());
    }
    fn body(&mut self, data: &[u8]) {
        self.body.extend_from_slice(data);
    }
    fn file(&mut self, _: &Arc<File>, _: u64, _: u64) {}
    fn stream(&mut self, data: &[u8]) {
        self.streamed = true;
        self.body.extend_from_slice(data);
    }
    fn end_stream(&mut self) {
        self.ended = true;
    }
    fn abort(&mut self) -> bool {
        self.aborted = true;
        true
    }
    fn gathered(&self) -> usize {
        self.body.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that writes heads as "STATUS fields" and bodies as they are.
    #[derive(Default)]
    struct Plain(Vec<u8>);

    impl Sink for Plain {
        fn head(&mut self, head: &Head) {
            push_num(&mut self.0, u64::from(head.status));
            self.0.extend_from_slice(b"\r\n");
            self.0.extend_from_slice(head.fields);
            if let Length::Known(n) = head.length {
                self.0.extend_from_slice(b"Content-Length: ");
                push_num(&mut self.0, n);
                self.0.extend_from_slice(b"\r\n");
            }
            self.0.extend_from_slice(b"\r\n");
        }
        fn prepared(&mut self, head: &Prepared) {
            self.head(&head.head());
        }
        fn body(&mut self, data: &[u8]) {
            self.0.extend_from_slice(data);
        }
        fn file(&mut self, _: &Arc<File>, _: u64, _: u64) {}
        fn stream(&mut self, data: &[u8]) {
            self.0.extend_from_slice(data);
        }
        fn end_stream(&mut self) {}
        fn abort(&mut self) -> bool {
            false
        }
        fn gathered(&self) -> usize {
            self.0.len()
        }
    }

    #[test]
    fn simple_answers_have_a_correct_length() {
        let mut sink = Plain::default();
        let n = simple(&mut sink, 404, b"", false);
        let text = String::from_utf8(sink.0).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("404\r\n"));
        assert!(head.contains(&format!("Content-Length: {n}")));
        assert_eq!(body.len() as u64, n);
        assert!(body.contains("<h1>404 Not Found</h1>"));
        let mut sink = Plain::default();
        assert_eq!(simple(&mut sink, 304, b"ETag: \"x\"\r\n", false), 0);
        assert!(!String::from_utf8(sink.0)
            .unwrap()
            .contains("Content-Length"));
    }

    #[test]
    fn prepared_heads_keep_each_form_once() {
        let p = Prepared::new(&Head {
            status: 200,
            fields: b"A: b\r\n",
            length: Length::Known(3),
        });
        let first = p.form(0, |h| {
            format!("{} {:?}", h.status, h.length).into_bytes().into()
        });
        assert_eq!(first, b"200 Known(3)");
        let again = p.form(0, |_| Box::new(*b"not made again"));
        assert_eq!(again, b"200 Known(3)");
        assert_eq!(p.head().fields, b"A: b\r\n");
    }

    #[test]
    fn numbers_are_written_without_allocating() {
        let mut out = Vec::new();
        push_num(&mut out, 1234567);
        assert_eq!(out, b"1234567");
    }
}
