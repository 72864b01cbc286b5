//! HTTP/1.x response framing, fed incrementally from socket reads.
//!
//! The header block is parsed with httparse (only once it is complete; a partial block is carried in a
//! small per-connection buffer); the body is then counted without copying: Content-Length, chunked
//! (extensions and trailers skipped), close-delimited, or no body at all (HEAD, 1xx, 204, 304).
//! Interim 1xx responses are skipped. Body bytes are optionally hashed for checksum checks.

use sha2::{Digest, Sha256};

/// Largest header block accepted; a bigger one is garbage, not a response.
const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 64;

/// A framing violation; counted under ab's "Exceptions".
pub type FrameError = &'static str;

#[derive(Debug, PartialEq, Eq)]
pub enum Feed {
    /// All bytes consumed, the response is not complete yet.
    More,
    /// The response is complete after this many bytes; the rest belongs to the next response.
    Done(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Reading hex digits of a chunk size (`digits` so far).
    Size {
        size: u64,
        digits: u8,
    },
    /// Skipping a chunk extension up to the end of the line.
    Ext {
        size: u64,
    },
    /// Saw CR after the size line, expecting LF.
    SizeLf {
        size: u64,
    },
    Data {
        left: u64,
    },
    DataCr,
    DataLf,
    /// At the start of a trailer line (or the final empty line).
    TrailerStart,
    /// Inside a trailer field line.
    TrailerLine,
    /// Saw CR of the final empty line.
    EndLf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Fixed { left: u64 },
    Chunked(Chunk),
    UntilClose,
}

/// Parses one response at a time; `begin` resets it for the next one on the same connection.
pub struct ResponseParser {
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
    /// When set, body bytes are hashed into it.
    pub hasher: Option<Sha256>,
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
        }
    }
}

/// What the header block says about framing.
struct Head {
    len: usize,
    status: u16,
    keep_alive: bool,
    content_length: Option<u64>,
    chunked: bool,
    transfer_encoding: bool,
    server: Option<String>,
}

fn has_token(value: &[u8], token: &str) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

fn parse_head(buf: &[u8], capture_server: bool) -> Result<Option<Head>, FrameError> {
    // Uninitialised header slots: initialising 64 of them per response would cost more than parsing.
    let mut headers = [const { std::mem::MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
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
    let status = resp.code.unwrap_or(0);
    let http11 = resp.version == Some(1);
    let mut head = Head {
        len,
        status,
        keep_alive: http11,
        content_length: None,
        chunked: false,
        transfer_encoding: false,
        server: None,
    };
    for h in resp.headers.iter() {
        let name = h.name.as_bytes();
        // Dispatch on length first: most headers are none of these four.
        match name.len() {
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                let s = std::str::from_utf8(h.value).map_err(|_| "bad Content-Length")?;
                let n: u64 = s.trim().parse().map_err(|_| "bad Content-Length")?;
                if head.content_length.is_some_and(|old| old != n) {
                    return Err("conflicting Content-Length headers");
                }
                head.content_length = Some(n);
            }
            17 if name.eq_ignore_ascii_case(b"transfer-encoding") => {
                head.transfer_encoding = true;
                // Chunked only counts as the final coding.
                let last = h.value.rsplit(|&b| b == b',').next().unwrap_or(b"");
                head.chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
            }
            10 if name.eq_ignore_ascii_case(b"connection") => {
                if has_token(h.value, "close") {
                    head.keep_alive = false;
                } else if has_token(h.value, "keep-alive") {
                    head.keep_alive = true;
                }
            }
            6 if capture_server && name.eq_ignore_ascii_case(b"server") => {
                // ab's "Server Software" is the value up to its first space or control byte
                // ("Apache/2.4.71 (Debian)" → "Apache/2.4.71"); scripts compare the two.
                let end = h
                    .value
                    .iter()
                    .position(|&b| b <= b' ')
                    .unwrap_or(h.value.len());
                head.server = Some(String::from_utf8_lossy(&h.value[..end]).into_owned());
            }
            _ => {}
        }
    }
    Ok(Some(head))
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
    }

    /// Whether any byte of the current response has arrived.
    pub fn started(&self) -> bool {
        self.started
    }

    fn body(&mut self, bytes: &[u8]) {
        self.body_len += bytes.len() as u64;
        if let Some(h) = self.hasher.as_mut() {
            h.update(bytes);
        }
    }

    /// Feeds bytes read from the socket.
    pub fn feed(&mut self, data: &[u8]) -> Result<Feed, FrameError> {
        if !data.is_empty() {
            self.started = true;
        }
        let mut pos = 0;
        loop {
            match self.state {
                State::Head => {
                    if pos == data.len() {
                        return Ok(Feed::More);
                    }
                    let carried = self.head.len();
                    let parsed = if carried == 0 {
                        parse_head(&data[pos..], self.capture_server)?
                    } else {
                        self.head.extend_from_slice(&data[pos..]);
                        parse_head(&self.head, self.capture_server)?
                    };
                    let Some(head) = parsed else {
                        if carried == 0 {
                            self.head.extend_from_slice(&data[pos..]);
                        }
                        if self.head.len() > MAX_HEAD {
                            return Err("response head too large");
                        }
                        return Ok(Feed::More);
                    };
                    // The same limit whether the head came in one read or several.
                    if head.len > MAX_HEAD {
                        return Err("response head too large");
                    }
                    pos += head.len - carried;
                    self.head.clear();
                    if head.status < 100 || head.status > 999 {
                        return Err("bad status code");
                    }
                    if head.status == 101 {
                        return Err("unexpected 101 Switching Protocols");
                    }
                    if head.status < 200 {
                        continue; // interim response: the final one follows
                    }
                    if head.server.is_some() {
                        self.server = head.server;
                        self.capture_server = false;
                    }
                    self.status = head.status;
                    self.keep_alive = head.keep_alive;
                    if self.head_request || head.status == 204 || head.status == 304 {
                        return Ok(Feed::Done(pos));
                    }
                    self.state = if head.transfer_encoding {
                        if head.chunked {
                            State::Chunked(Chunk::Size { size: 0, digits: 0 })
                        } else {
                            State::UntilClose
                        }
                    } else if let Some(n) = head.content_length {
                        if n == 0 {
                            return Ok(Feed::Done(pos));
                        }
                        State::Fixed { left: n }
                    } else {
                        State::UntilClose
                    };
                    if self.state == State::UntilClose {
                        self.keep_alive = false;
                    }
                }
                State::Fixed { left } => {
                    let take = (left.min((data.len() - pos) as u64)) as usize;
                    self.body(&data[pos..pos + take]);
                    pos += take;
                    let left = left - take as u64;
                    self.state = State::Fixed { left };
                    if left == 0 {
                        return Ok(Feed::Done(pos));
                    }
                    return Ok(Feed::More);
                }
                State::UntilClose => {
                    self.body(&data[pos..]);
                    return Ok(Feed::More);
                }
                State::Chunked(chunk) => {
                    if let Chunk::Data { left } = chunk {
                        let take = (left.min((data.len() - pos) as u64)) as usize;
                        self.body(&data[pos..pos + take]);
                        pos += take;
                        let left = left - take as u64;
                        self.state = State::Chunked(if left == 0 {
                            Chunk::DataCr
                        } else {
                            Chunk::Data { left }
                        });
                        if pos == data.len() {
                            return Ok(Feed::More);
                        }
                        continue;
                    }
                    if pos == data.len() {
                        return Ok(Feed::More);
                    }
                    let b = data[pos];
                    pos += 1;
                    match step_chunk(chunk, b)? {
                        Some(next) => self.state = State::Chunked(next),
                        None => return Ok(Feed::Done(pos)),
                    }
                }
            }
        }
    }

    /// The server closed the connection: completes a close-delimited body, anything else is cut short.
    pub fn eof(&mut self) -> bool {
        self.state == State::UntilClose
    }
}

/// One byte of chunk framing (everything but chunk data); `None` when the message ended.
fn step_chunk(chunk: Chunk, b: u8) -> Result<Option<Chunk>, FrameError> {
    Ok(Some(match chunk {
        Chunk::Size { size, digits } => match b {
            b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                if digits >= 15 {
                    return Err("chunk size too large");
                }
                let v = (b as char).to_digit(16).unwrap_or(0) as u64;
                Chunk::Size {
                    size: size * 16 + v,
                    digits: digits + 1,
                }
            }
            _ if digits == 0 => return Err("bad chunk size"),
            b';' | b' ' | b'\t' => Chunk::Ext { size },
            b'\r' => Chunk::SizeLf { size },
            b'\n' => after_size(size),
            _ => return Err("bad chunk size"),
        },
        Chunk::Ext { size } => match b {
            b'\r' => Chunk::SizeLf { size },
            b'\n' => after_size(size),
            _ => Chunk::Ext { size },
        },
        Chunk::SizeLf { size } => match b {
            b'\n' => after_size(size),
            _ => return Err("bad chunk size line"),
        },
        Chunk::Data { .. } => unreachable!("chunk data is consumed in bulk"),
        Chunk::DataCr => match b {
            b'\r' => Chunk::DataLf,
            b'\n' => Chunk::Size { size: 0, digits: 0 },
            _ => return Err("chunk data longer than its size"),
        },
        Chunk::DataLf => match b {
            b'\n' => Chunk::Size { size: 0, digits: 0 },
            _ => return Err("chunk data longer than its size"),
        },
        Chunk::TrailerStart => match b {
            b'\r' => Chunk::EndLf,
            b'\n' => return Ok(None),
            _ => Chunk::TrailerLine,
        },
        Chunk::TrailerLine => match b {
            b'\n' => Chunk::TrailerStart,
            _ => Chunk::TrailerLine,
        },
        Chunk::EndLf => match b {
            b'\n' => return Ok(None),
            _ => return Err("bad end of chunked body"),
        },
    }))
}

fn after_size(size: u64) -> Chunk {
    if size == 0 {
        Chunk::TrailerStart
    } else {
        Chunk::Data { left: size }
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
        p.hasher = Some(Sha256::new());
        assert_eq!(
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"),
            Ok(Feed::Done(41))
        );
        let d: [u8; 32] = p.hasher.take().unwrap().finalize().into();
        assert_eq!(d, <[u8; 32]>::from(Sha256::digest(b"abc")));
    }
}
