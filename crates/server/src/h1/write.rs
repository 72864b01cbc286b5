//! The way out of an HTTP/1 connection: a protocol-neutral response (response.rs) written as
//! HTTP/1 bytes. `Framing` is what one answer's framing depends on (the request's minor version and
//! whether the connection stays open after it): status line, Server, Date, the handler's fields,
//! Content-Length or chunked, Connection. `Writer` is the `Sink` a request's answer goes to; a
//! file range leaves by sendfile (queued after the bytes before it); `prepare` makes the head a
//! file cache keeps ready.

use crate::output::Out;
use crate::response::{push_num, reason, Head as Answer, Length, Prepared, Sink};
use std::fs::File;
use std::sync::Arc;

/// HTTP/1's slot among a `Prepared` head's forms.
const FORM: usize = 0;

/// How HTTP/1 frames one answer: the request's minor version and whether the connection stays
/// open after it.
#[derive(Clone, Copy, Debug)]
pub struct Framing {
    pub minor: u8,
    pub keep: bool,
}

impl Framing {
    /// Writes `head` as HTTP/1.1 bytes: status line, Server, Date, the handler's fields, the body's
    /// framing, Connection, blank line. A streamed body is chunked for HTTP/1.1 and delimited by
    /// the close for HTTP/1.0 (then the connection does not stay open).
    pub fn write_head(&mut self, out: &mut Vec<u8>, date_line: &[u8], head: &Answer) {
        status_line(out, head.status);
        out.extend_from_slice(date_line);
        out.extend_from_slice(head.fields);
        match head.length {
            Length::None => {}
            Length::Known(n) => content_length(out, n),
            Length::Streamed if self.minor > 0 => {
                out.extend_from_slice(b"Transfer-Encoding: chunked\r\n")
            }
            Length::Streamed => self.keep = false,
        }
        self.end_head(out);
    }

    /// Writes a head prepared once (`Prepared`), adding the Date and Connection lines.
    pub fn write_prepared(&self, out: &mut Vec<u8>, date_line: &[u8], prepared: &Prepared) {
        out.extend_from_slice(prepared.form(FORM, prepare));
        out.extend_from_slice(date_line);
        self.end_head(out);
    }

    fn end_head(&self, out: &mut Vec<u8>) {
        match (self.keep, self.minor) {
            (true, 0) => out.extend_from_slice(b"Connection: keep-alive\r\n\r\n"),
            (true, _) => out.extend_from_slice(b"\r\n"),
            (false, _) => out.extend_from_slice(b"Connection: close\r\n\r\n"),
        }
    }

    /// A piece of a streamed body: one chunk for HTTP/1.1, the bytes as they are for HTTP/1.0.
    pub fn stream(&self, out: &mut Vec<u8>, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        if self.minor > 0 {
            out.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
            out.extend_from_slice(data);
            out.extend_from_slice(b"\r\n");
        } else {
            out.extend_from_slice(data);
        }
    }

    /// The end of a streamed body (the last chunk; for HTTP/1.0 the close that follows).
    pub fn end_stream(&self, out: &mut Vec<u8>) {
        if self.minor > 0 {
            out.extend_from_slice(b"0\r\n\r\n");
        }
    }
}

/// The bytes of a fixed head up to its Date line (status line, Server, fields, framing), made
/// once for a cached file: its answers then cost one copy (`Framing::write_prepared`).
pub fn prepare(head: &Answer) -> Box<[u8]> {
    let mut out = Vec::with_capacity(64 + head.fields.len());
    status_line(&mut out, head.status);
    out.extend_from_slice(head.fields);
    if let Length::Known(n) = head.length {
        content_length(&mut out, n);
    }
    out.into_boxed_slice()
}

/// Appends "HTTP/1.1 NNN Reason\r\nServer: webstand\r\n" (the version the server speaks, whatever
/// the request's: RFC 9110 §6.2).
fn status_line(out: &mut Vec<u8>, status: u16) {
    out.extend_from_slice(b"HTTP/1.1 ");
    push_num(out, u64::from(status));
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\nServer: webstand\r\n");
}

fn content_length(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(b"Content-Length: ");
    push_num(out, n);
    out.extend_from_slice(b"\r\n");
}

/// The sink of one HTTP/1 answer.
pub struct Writer<'a, 'b> {
    pub framing: &'a mut Framing,
    pub date_line: &'a [u8],
    pub out: &'a mut Out<'b>,
}

impl Sink for Writer<'_, '_> {
    fn head(&mut self, head: &Answer) {
        self.framing
            .write_head(self.out.bytes, self.date_line, head);
    }

    fn prepared(&mut self, head: &Prepared) {
        self.framing
            .write_prepared(self.out.bytes, self.date_line, head);
    }

    fn body(&mut self, data: &[u8]) {
        self.out.bytes.extend_from_slice(data);
    }

    fn file(&mut self, file: &Arc<File>, start: u64, end: u64) {
        self.out.outbox.push_file(self.out.bytes, file, start, end);
    }

    fn stream(&mut self, data: &[u8]) {
        self.framing.stream(self.out.bytes, data);
    }

    fn end_stream(&mut self) {
        self.framing.end_stream(self.out.bytes);
    }

    /// HTTP/1 cannot say an answer is cut short but by closing the connection.
    fn abort(&mut self) -> bool {
        self.out.outbox.closing = true;
        false
    }

    fn gathered(&self) -> usize {
        self.out.bytes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head_of(minor: u8, keep: bool, length: Length) -> (String, bool) {
        let mut f = Framing { minor, keep };
        let mut out = Vec::new();
        let head = Answer {
            status: 200,
            fields: b"Content-Type: a\r\n",
            length,
        };
        f.write_head(&mut out, b"Date: x\r\n", &head);
        (String::from_utf8(out).unwrap(), f.keep)
    }

    #[test]
    fn heads_carry_framing_and_connection_by_version() {
        let (h, keep) = head_of(1, true, Length::Known(5));
        assert_eq!(h, "HTTP/1.1 200 OK\r\nServer: webstand\r\nDate: x\r\nContent-Type: a\r\nContent-Length: 5\r\n\r\n");
        assert!(keep);
        let (h, keep) = head_of(0, true, Length::Known(5));
        assert!(h.ends_with("Content-Length: 5\r\nConnection: keep-alive\r\n\r\n") && keep);
        let (h, keep) = head_of(1, true, Length::Streamed);
        assert!(h.ends_with("Transfer-Encoding: chunked\r\n\r\n") && keep);
        let (h, keep) = head_of(0, true, Length::Streamed);
        assert!(h.ends_with("Content-Type: a\r\nConnection: close\r\n\r\n") && !keep);
        let (h, _) = head_of(1, false, Length::None);
        assert!(h.ends_with("Content-Type: a\r\nConnection: close\r\n\r\n"));
    }

    #[test]
    fn streamed_bodies_are_chunked_for_http_1_1_only() {
        let mut out = Vec::new();
        let f = Framing {
            minor: 1,
            keep: true,
        };
        f.stream(&mut out, b"hello");
        f.stream(&mut out, b"");
        f.end_stream(&mut out);
        assert_eq!(out, b"5\r\nhello\r\n0\r\n\r\n");
        out.clear();
        let f = Framing {
            minor: 0,
            keep: false,
        };
        f.stream(&mut out, b"hello");
        f.end_stream(&mut out);
        assert_eq!(out, b"hello");
    }
}
