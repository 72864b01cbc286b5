//! Turning a backend's STDOUT stream (CGI header fields, blank line, body) into the HTTP answer.
//!
//! The header block is collected whole (at most `HEAD_MAX` bytes: more is a broken or hostile
//! backend, 502). The body is then held back until the request ends or it outgrows `STREAM_AFTER`:
//! a typical page (PHP's output, a few tens of KiB) is answered in one piece with its length, and
//! anything larger is streamed as it arrives (`Length::Streamed`: the client's protocol frames it,
//! HTTP/1.1 chunked so the connection stays keep-alive, HTTP/1.0 delimited by the close). A `Location: /local/path` with no status and
//! no other fields is a local redirect (RFC 3875 §6.2.2): the caller serves that path instead.

use crate::gateway::{find, read_cgi_head, CgiHead};
use crate::response::{self, Head, Length, Sink};

/// Largest header block accepted from a backend.
pub const HEAD_MAX: usize = 64 << 10;
/// Body bytes held back before the head is sent and the rest streamed.
const STREAM_AFTER: usize = 128 << 10;

enum Phase {
    /// Collecting the header block.
    Head(Vec<u8>),
    /// Head read; the body collected so far.
    Held {
        status: u16,
        fields: Vec<u8>,
        body: Vec<u8>,
    },
    /// Head sent: body bytes go out as they come.
    Streaming,
    /// A local redirect to this path.
    Redirect(Vec<u8>),
}

/// How the answer ended.
pub enum Done {
    /// Answered: status and body bytes.
    Answered(u16, u64),
    /// Serve this local path instead.
    Redirect(Vec<u8>),
}

pub struct Reply {
    phase: Phase,
    /// Body bytes the backend sent so far.
    body_total: u64,
    pub status: u16,
    pub head_only: bool,
    /// A body held whole may be gzipped (`--fastcgi-gzip` and the client accepts it).
    pub gzip: bool,
}

impl Reply {
    pub fn new(head_only: bool, gzip: bool) -> Reply {
        Reply {
            phase: Phase::Head(Vec::new()),
            body_total: 0,
            status: 0,
            head_only,
            gzip,
        }
    }

    /// The backend sent anything at all (a kept connection that fails before is retried).
    pub fn started(&self) -> bool {
        !matches!(&self.phase, Phase::Head(h) if h.is_empty())
    }

    /// The head has gone to the client: a failure now can only cut the answer short.
    pub fn committed(&self) -> bool {
        matches!(self.phase, Phase::Streaming)
    }

    /// Takes a piece of the STDOUT stream; Err names what is wrong with it.
    pub fn stdout(
        &mut self,
        data: &[u8],
        sink: &mut dyn Sink,
        max_body: u64,
    ) -> Result<(), &'static str> {
        let Phase::Head(held) = &mut self.phase else {
            return self.body(data, sink, max_body);
        };
        // The usual first record holds the whole block: read it in place, copying nothing.
        let (whole, head_end, body_start) = match held.is_empty().then(|| block_end(data, 0)) {
            Some(Some((end, start))) => (std::mem::take(held), end, start),
            _ => {
                let from = held.len().saturating_sub(3);
                held.extend_from_slice(data);
                match block_end(held, from) {
                    Some((end, start)) => (std::mem::take(held), end, start),
                    None if held.len() > HEAD_MAX => return Err("header block over 64 KiB"),
                    None => return Ok(()),
                }
            }
        };
        if head_end > HEAD_MAX {
            return Err("header block over 64 KiB");
        }
        let head: &[u8] = if whole.is_empty() { data } else { &whole };
        let Some(cgi) = read_cgi_head(&head[..head_end]) else {
            return Err("malformed header block");
        };
        let CgiHead {
            status,
            fields,
            has_type,
            has_location,
        } = cgi;
        if status.is_none() && has_location && !has_type {
            if let Some(path) = local_location(&fields) {
                self.phase = Phase::Redirect(path);
                return Ok(());
            }
        }
        let status = status.unwrap_or(if has_location { 302 } else { 200 });
        if !has_type && !has_location && status == 200 {
            return Err("no Content-Type, Location or Status");
        }
        self.status = status;
        self.phase = Phase::Held {
            status,
            fields,
            body: Vec::new(),
        };
        self.body(&head[body_start..], sink, max_body)
    }

    fn body(
        &mut self,
        data: &[u8],
        sink: &mut dyn Sink,
        max_body: u64,
    ) -> Result<(), &'static str> {
        self.body_total += data.len() as u64;
        if self.body_total > max_body {
            return Err("body beyond the limit");
        }
        let no_body = self.head_only || matches!(self.status, 204 | 304);
        match &mut self.phase {
            Phase::Held { body, .. } if body.len() + data.len() <= STREAM_AFTER => {
                body.extend_from_slice(data);
                return Ok(());
            }
            Phase::Streaming => {
                if !no_body {
                    sink.stream(data);
                }
                return Ok(());
            }
            Phase::Held { .. } => {}
            _ => return Ok(()),
        }
        // Held back long enough: send the head and stream the rest.
        if let Phase::Held {
            status,
            fields,
            body,
        } = std::mem::replace(&mut self.phase, Phase::Streaming)
        {
            let head = Head {
                status,
                fields: &fields,
                length: Length::Streamed,
            };
            sink.head(&head);
            if !no_body {
                sink.stream(&body);
                sink.stream(data);
            }
        }
        Ok(())
    }

    /// The backend ended the request: write what is still owed.
    pub fn finish(&mut self, sink: &mut dyn Sink) -> Result<Done, &'static str> {
        let no_body = self.head_only || matches!(self.status, 204 | 304);
        let sent = if no_body { 0 } else { self.body_total };
        match std::mem::replace(&mut self.phase, Phase::Head(Vec::new())) {
            Phase::Head(_) => Err("no header block"),
            Phase::Redirect(path) => Ok(Done::Redirect(path)),
            Phase::Held {
                status,
                mut fields,
                mut body,
            } => {
                if self.gzip && !no_body && super::gzip::worth(status, &fields, body.len()) {
                    body = super::gzip::compress(&body);
                    fields
                        .extend_from_slice(b"Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n");
                }
                let sent = response::whole(sink, (status, &fields), &body, self.head_only);
                Ok(Done::Answered(status, sent))
            }
            Phase::Streaming => {
                if !no_body {
                    sink.end_stream();
                }
                Ok(Done::Answered(self.status, sent))
            }
        }
    }
}

/// Where the header block in `buf` ends, searched from `from` (what came before was searched
/// already): the block's length and where the body starts, at the first blank line, CRLF or LF.
fn block_end(buf: &[u8], from: usize) -> Option<(usize, usize)> {
    let rest = &buf[from..];
    match (find(rest, b"\r\n\r\n"), find(rest, b"\n\n")) {
        (Some(a), Some(b)) if b < a => Some((from + b, from + b + 2)),
        (Some(a), _) => Some((from + a, from + a + 4)),
        (None, Some(b)) => Some((from + b, from + b + 2)),
        (None, None) => None,
    }
}

/// The path of a local redirect: the fields are exactly one `Location: /path` (not `//host`).
fn local_location(fields: &[u8]) -> Option<Vec<u8>> {
    let line = fields.strip_suffix(b"\r\n")?;
    if line.windows(2).any(|w| w == b"\r\n") {
        return None;
    }
    let value = line
        .get(..10)
        .filter(|n| n.eq_ignore_ascii_case(b"location: "))
        .map(|_| &line[10..])?;
    (value.starts_with(b"/") && !value.starts_with(b"//")).then(|| value.to_vec())
}

/// A 502 or 504 before anything was sent (the caller logs why).
pub fn failed(sink: &mut dyn Sink, status: u16, reply: &Reply) -> u64 {
    response::simple(sink, status, b"", reply.head_only)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::response::Recorder;

    fn run(pieces: &[&[u8]]) -> (Result<Done, &'static str>, Recorder) {
        let mut r = Reply::new(false, false);
        let mut sink = Recorder::default();
        for p in pieces {
            if let Err(e) = r.stdout(p, &mut sink, 1 << 30) {
                return (Err(e), sink);
            }
        }
        let done = r.finish(&mut sink);
        (done, sink)
    }

    #[test]
    fn small_answers_get_a_length_large_ones_are_streamed() {
        let (d, out) = run(&[b"Content-Type: text/plain\r\n", b"\r\nhello"]);
        assert!(matches!(d, Ok(Done::Answered(200, 5))));
        assert_eq!(out.length, Some(Length::Known(5)));
        assert_eq!(out.body, b"hello");
        let big = vec![b'a'; STREAM_AFTER + 10];
        let (d, out) = run(&[b"Status: 404 Nope\nContent-Type: a\n\n", &big]);
        assert!(matches!(d, Ok(Done::Answered(404, n)) if n == big.len() as u64));
        assert_eq!(out.status, Some(404));
        assert_eq!(out.length, Some(Length::Streamed));
        assert!(out.streamed && out.ended && out.body == big);
    }

    #[test]
    fn locations_redirect_locally_or_to_the_client() {
        let (d, _) = run(&[b"Location: /other.txt\r\n\r\n"]);
        assert!(matches!(d, Ok(Done::Redirect(p)) if p == b"/other.txt"));
        let (d, out) = run(&[b"Location: http://x/\r\n\r\n"]);
        assert!(matches!(d, Ok(Done::Answered(302, 0))));
        assert!(out.fields().contains("Location: http://x/\r\n"));
    }

    #[test]
    fn broken_heads_are_refused() {
        assert!(run(&[b"no colon here\r\n\r\n"]).0.is_err());
        assert!(run(&[b"X-A: b\r\n\r\nbody"]).0.is_err());
        assert!(run(&[b"Content-Type: a"]).0.is_err());
        assert!(run(&[&vec![b'x'; HEAD_MAX + 1]]).0.is_err());
    }
}
