//! HTTP/1's response reader, one response at a time, fed incrementally from socket reads: the
//! final status, whether the connection stays open, the body's length, the Server value and the
//! body's hash, for the connection (`h1/conn.rs`) and for the probe.
//!
//! The codec is `webstand-http1`'s (the server uses the same one): the header block is scanned by
//! `response::parse_head` only once it is complete (a partial block is carried in a small
//! per-connection buffer), the body framing is `framing::response_body`'s decision, and the body is
//! then counted without copying: Content-Length, chunked (the lenient decoder), close-delimited, or
//! no body at all (HEAD, 1xx, 204, 304). Interim 1xx responses are skipped. Body bytes are
//! optionally hashed for checksum checks.

use sha2::{Digest, Sha256};
use webstand_http1::chunked::{self, Decoder, Progress};
use webstand_http1::framing::{self, ResponseBody};
use webstand_http1::response::parse_head;

/// A framing violation; counted under ab's "Exceptions".
pub type FrameError = &'static str;

#[derive(Debug, PartialEq, Eq)]
pub enum Feed {
    /// All bytes consumed, the response is not complete yet.
    More,
    /// The response is complete after this many bytes; the rest belongs to the next response.
    Done(usize),
}

/// Largest header block accepted; a bigger one is garbage, not a response.
pub(crate) const MAX_HEAD: usize = 64 * 1024;

/// Where in the response the reader is.
#[derive(Debug, Clone)]
enum State {
    Head,
    Fixed { left: u64 },
    Chunked(Decoder),
    UntilClose,
}

/// Parses one response at a time; `begin` resets it for the next one on the same connection.
pub struct ResponseParser {
    /// A partial header block carried between reads.
    head: Vec<u8>,
    state: State,
    head_request: bool,
    started: bool,
    /// Final status code of the current response.
    pub status: u16,
    /// Whether the server lets the connection stay open after this response.
    pub keep_alive: bool,
    /// Payload bytes of the current response (decoded: chunk framing and trailers excluded).
    pub body_len: u64,
    /// When set, the next header block's Server value is stored in `server`.
    pub capture_server: bool,
    pub server: Option<String>,
    /// When set, body bytes are hashed into it (boxed: most runs hash nothing, and a connection
    /// should not carry its size).
    pub hasher: Option<Box<Sha256>>,
    /// ab's `-v` level: 2 and up print each final head as it arrives (`h1/verbose.rs`).
    pub verbosity: u8,
    /// When set, the final head and the decoded body are kept for a script's `response()`.
    pub kept: Option<Box<Kept>>,
}

/// A response's final header block and decoded body, kept (buffers reused from one response to
/// the next) only when a script reads them.
#[derive(Default)]
pub struct Kept {
    pub head: Vec<u8>,
    pub body: Vec<u8>,
}

impl Default for ResponseParser {
    fn default() -> Self {
        ResponseParser {
            head: Vec::new(),
            state: State::Head,
            head_request: false,
            started: false,
            status: 0,
            keep_alive: false,
            body_len: 0,
            capture_server: false,
            server: None,
            hasher: None,
            verbosity: 0,
            kept: None,
        }
    }
}

/// Counts (and hashes, and keeps, when asked) body bytes.
fn count(
    body_len: &mut u64,
    hasher: &mut Option<Box<Sha256>>,
    kept: &mut Option<Box<Kept>>,
    bytes: &[u8],
) {
    *body_len += bytes.len() as u64;
    if let Some(h) = hasher.as_mut() {
        h.update(bytes);
    }
    if let Some(k) = kept.as_mut() {
        k.body.extend_from_slice(bytes);
    }
}

/// ab's "Server Software": the value up to its first space or control byte ("Apache/2.4.71
/// (Debian)" → "Apache/2.4.71"); scripts compare the two.
fn server_software(value: &[u8]) -> String {
    let end = value.iter().position(|&b| b <= b' ').unwrap_or(value.len());
    String::from_utf8_lossy(&value[..end]).into_owned()
}

impl ResponseParser {
    /// Prepares for the next response; `head_request` when it answers a HEAD (never has a body).
    pub fn begin(&mut self, head_request: bool) {
        self.head.clear();
        self.state = State::Head;
        self.head_request = head_request;
        self.started = false;
        self.status = 0;
        self.keep_alive = false;
        self.body_len = 0;
        if let Some(k) = self.kept.as_mut() {
            k.head.clear();
            k.body.clear();
        }
    }

    /// Whether any byte of the current response has arrived.
    pub fn started(&self) -> bool {
        self.started
    }

    /// The server closed the connection: completes a close-delimited body, anything else is cut short.
    pub fn eof(&mut self) -> bool {
        matches!(self.state, State::UntilClose)
    }

    /// Feeds bytes read from the socket.
    pub fn feed(&mut self, data: &[u8]) -> Result<Feed, FrameError> {
        if !data.is_empty() {
            self.started = true;
        }
        let mut pos = 0;
        loop {
            match &mut self.state {
                State::Head => {
                    if pos == data.len() {
                        return Ok(Feed::More);
                    }
                    match self.feed_head(&data[pos..])? {
                        Some(used) => pos += used,
                        None => return Ok(Feed::More),
                    }
                    if matches!(self.state, State::Head) {
                        // Interim response skipped, or a final one without a body.
                        if self.status != 0 {
                            return Ok(Feed::Done(pos));
                        }
                    }
                }
                State::Fixed { left } => {
                    let take = (*left).min((data.len() - pos) as u64) as usize;
                    *left -= take as u64;
                    let done = *left == 0;
                    count(
                        &mut self.body_len,
                        &mut self.hasher,
                        &mut self.kept,
                        &data[pos..pos + take],
                    );
                    pos += take;
                    return Ok(if done { Feed::Done(pos) } else { Feed::More });
                }
                State::UntilClose => {
                    count(
                        &mut self.body_len,
                        &mut self.hasher,
                        &mut self.kept,
                        &data[pos..],
                    );
                    return Ok(Feed::More);
                }
                State::Chunked(decoder) => {
                    let (body_len, hasher, kept) =
                        (&mut self.body_len, &mut self.hasher, &mut self.kept);
                    let progress = decoder
                        .feed(&data[pos..], |bytes| count(body_len, hasher, kept, bytes))
                        .map_err(chunked::ChunkError::message)?;
                    return Ok(match progress {
                        Progress::More => Feed::More,
                        Progress::Done(n) => Feed::Done(pos + n),
                    });
                }
            }
        }
    }

    /// Reads header bytes; `Some(n)` when a head ended after `n` of them (then `status` is set and
    /// the state is the body's, or still `Head` after an interim response, with `status` 0).
    fn feed_head(&mut self, data: &[u8]) -> Result<Option<usize>, FrameError> {
        let carried = self.head.len();
        if carried > 0 {
            self.head.extend_from_slice(data);
        }
        let buf = if carried == 0 { data } else { &self.head[..] };
        let Some(head) = parse_head(buf, self.capture_server)? else {
            if carried == 0 {
                self.head.extend_from_slice(data);
            }
            if self.head.len() > MAX_HEAD {
                return Err("response head too large");
            }
            return Ok(None);
        };
        // The same limit whether the head came in one read or several.
        if head.len > MAX_HEAD {
            return Err("response head too large");
        }
        let used = head.len - carried;
        if head.status < 100 || head.status > 999 {
            return Err("bad status code");
        }
        if head.status == 101 {
            return Err("unexpected 101 Switching Protocols");
        }
        if framing::is_interim(head.status) {
            self.head.clear();
            return Ok(Some(used)); // the final response follows
        }
        if let Some(server) = head.server {
            self.server = Some(server_software(server));
            self.capture_server = false;
        }
        if self.verbosity >= 2 {
            super::verbose::head(self.verbosity, &buf[..head.len], head.status);
        }
        if let Some(k) = self.kept.as_mut() {
            k.head.clear();
            k.head.extend_from_slice(&buf[..head.len]);
        }
        self.status = head.status;
        self.keep_alive = head.keep_alive;
        self.state = match framing::response_body(self.head_request, head.status, head.body) {
            ResponseBody::None => State::Head,
            ResponseBody::Length(n) => State::Fixed { left: n },
            ResponseBody::Chunked => State::Chunked(Decoder::new(chunked::Policy::LENIENT)),
            ResponseBody::UntilClose => {
                self.keep_alive = false;
                State::UntilClose
            }
        };
        self.head.clear();
        Ok(Some(used))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `data` in pieces of `step` bytes; returns (bytes consumed when complete, parser).
    fn feed_in_steps(
        data: &[u8],
        step: usize,
        head_request: bool,
    ) -> (Result<Option<usize>, FrameError>, ResponseParser) {
        let mut p = ResponseParser::default();
        p.begin(head_request);
        p.capture_server = true;
        let mut pos = 0;
        while pos < data.len() {
            let end = (pos + step).min(data.len());
            match p.feed(&data[pos..end]) {
                Ok(Feed::Done(n)) => return (Ok(Some(pos + n)), p),
                Ok(Feed::More) => pos = end,
                Err(e) => return (Err(e), p),
            }
        }
        (Ok(None), p)
    }

    fn complete_at_every_split(data: &[u8], head_request: bool) -> ResponseParser {
        let mut last = None;
        for step in [1, 2, 3, 7, 64, data.len()] {
            let (r, p) = feed_in_steps(data, step, head_request);
            assert_eq!(r, Ok(Some(data.len())), "step {step}");
            last = Some(p);
        }
        last.unwrap()
    }

    #[test]
    fn content_length_body() {
        let p = complete_at_every_split(
            b"HTTP/1.1 200 OK\r\nServer: x/1\r\nContent-Length: 5\r\n\r\nhello",
            false,
        );
        assert_eq!((p.status, p.body_len, p.keep_alive), (200, 5, true));
        assert_eq!(p.server.as_deref(), Some("x/1"));
        // As ab reports it: up to the first space.
        let p = complete_at_every_split(
            b"HTTP/1.1 200 OK\r\nServer: Apache/2.4 (Debian)\r\nContent-Length: 0\r\n\r\n",
            false,
        );
        assert_eq!(p.server.as_deref(), Some("Apache/2.4"));
    }

    #[test]
    fn chunked_with_extensions_and_trailers() {
        let msg = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=\"v;x\"\r\nhello\r\nA\r\n0123456789\r\n0;last\r\nX-Sum: 1\r\nX-Other: 2\r\n\r\n";
        let p = complete_at_every_split(msg, false);
        assert_eq!(p.body_len, 15);
    }

    #[test]
    fn chunked_without_trailers_and_next_response_left_over() {
        let msg = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nHTTP/1.1";
        let mut p = ResponseParser::default();
        p.begin(false);
        assert_eq!(p.feed(msg), Ok(Feed::Done(msg.len() - 8)));
        assert_eq!(p.body_len, 3);
    }

    #[test]
    fn close_delimited_body_ends_at_eof() {
        let (r, mut p) = feed_in_steps(b"HTTP/1.0 200 OK\r\n\r\nsome body", 4, false);
        assert_eq!(r, Ok(None));
        assert!(p.eof());
        assert_eq!(p.body_len, 9);
        assert!(!p.keep_alive);
    }

    #[test]
    fn no_body_for_head_204_304() {
        let p = complete_at_every_split(b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n", true);
        assert_eq!(p.body_len, 0);
        complete_at_every_split(b"HTTP/1.1 204 No Content\r\n\r\n", false);
        let p = complete_at_every_split(
            b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
            false,
        );
        assert_eq!(p.status, 304);
    }

    #[test]
    fn interim_1xx_responses_are_skipped() {
        let msg = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        let p = complete_at_every_split(msg, false);
        assert_eq!((p.status, p.body_len), (200, 2));
    }

    #[test]
    fn connection_header_decides_keep_alive() {
        let p = complete_at_every_split(
            b"HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n",
            false,
        );
        assert!(!p.keep_alive);
        let p = complete_at_every_split(
            b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
            false,
        );
        assert!(p.keep_alive);
    }

    #[test]
    fn framing_violations_are_errors() {
        for bad in [
            &b"garbage garbage\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
        ] {
            let (r, _) = feed_in_steps(bad, 3, false);
            assert!(r.is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn short_body_is_not_complete() {
        let (r, mut p) = feed_in_steps(
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
            5,
            false,
        );
        assert_eq!(r, Ok(None));
        assert!(!p.eof());
    }

    /// Found by tests/fuzz.rs: a head over the limit was refused when it came in pieces and
    /// accepted when it came in one read.
    #[test]
    fn the_head_limit_does_not_depend_on_how_the_head_arrives() {
        let big = format!(
            "HTTP/1.1 200 OK\r\nX: {}\r\nContent-Length: 0\r\n\r\n",
            "a".repeat(MAX_HEAD)
        );
        for step in [1000, big.len()] {
            let (r, _) = feed_in_steps(big.as_bytes(), step, false);
            assert_eq!(r, Err("response head too large"), "step {step}");
        }
        let fits = format!(
            "HTTP/1.1 200 OK\r\nX: {}\r\nContent-Length: 0\r\n\r\n",
            "a".repeat(MAX_HEAD - 100)
        );
        complete_at_every_split(fits.as_bytes(), false);
    }

    #[test]
    fn body_is_hashed_when_asked() {
        let mut p = ResponseParser::default();
        p.begin(false);
        p.hasher = Some(Box::default());
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"),
            Ok(Feed::Done(41))
        );
        let d: [u8; 32] = p.hasher.take().unwrap().finalize().into();
        assert_eq!(d, <[u8; 32]>::from(Sha256::digest(b"abc")));
    }
}
