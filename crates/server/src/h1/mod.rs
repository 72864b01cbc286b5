//! An HTTP/1 connection: splitting its input into pipelined requests with their bodies
//! (Content-Length or chunked, framed by webstand-http1), "100 Continue", and the answers after
//! which the byte stream cannot be trusted (400, 408, 413, 414, 431: answer, then close). Each
//! complete request goes to the `Service` with a `Writer` (write.rs) for its answer; while a job
//! answers one, the next requests wait in the input buffer, so answers leave in order.

mod write;

pub use write::{Framing, Writer};

use crate::config::Config;
use crate::output::Out;
use crate::protocol::Protocol;
use crate::request;
use crate::response::{self, keeps_connection, Sink};
use crate::service::{Asked, Moment, Served, Service};
use std::time::Instant;
use webstand_http1::chunked;
use webstand_http1::framing::RequestBody as Body;
use webstand_http1::request::{parse_head, request_line_of, Head, Limits};

/// Answers gathered for one connection before they are written out (pipelining flood guard).
const OUT_HIGH_WATER: usize = 256 << 10;
/// HTTP/1 requests carry no stream id: the one request a job answers is request 0.
const REQUEST: u32 = 0;

/// What HTTP/1 keeps about a connection between reads.
pub struct Http1 {
    /// Unparsed input: a partial request, or pipelined requests left while output was pending.
    inbuf: Vec<u8>,
    /// Requests remain in `inbuf` that were not answered because output was pending.
    stalled: bool,
    /// When the first byte of the request now being received arrived.
    head_started: Option<Instant>,
    /// "100 Continue" was sent for the request being received.
    continue_sent: bool,
    /// Its head is in and it waits for the rest of its body.
    awaiting_body: bool,
    /// The framing of the request a job answers (its answer comes later).
    pending: Option<Framing>,
    /// A chunked body, decoded.
    decoded: Vec<u8>,
    /// The chunked body still arriving: its decoder and how many of its bytes it has read, so
    /// that each read decodes only what is new (decoding it all again would make a body sent a
    /// byte at a time cost the square of its length).
    chunking: Option<Chunking>,
    limits: Limits,
    max_body: u64,
}

impl Http1 {
    pub fn new(config: &Config) -> Http1 {
        Http1 {
            inbuf: Vec::new(),
            stalled: false,
            head_started: None,
            continue_sent: false,
            awaiting_body: false,
            pending: None,
            decoded: Vec::new(),
            chunking: None,
            limits: config.limits(),
            max_body: config.max_body,
        }
    }

    /// A request was answered: what belonged to it is forgotten (the input buffer stays).
    fn next_request(&mut self) {
        self.continue_sent = false;
        self.awaiting_body = false;
        self.chunking = None;
    }

    /// Answers the complete requests at the start of `data`; returns how many bytes they took.
    fn serve(&mut self, data: &[u8], at: &Moment, out: &mut Out, svc: &mut dyn Service) -> usize {
        let mut pos = 0;
        while pos < data.len() {
            if out.outbox.closing {
                return data.len();
            }
            if out.backed_up()
                || svc.jobs() > 0
                || out.outbox.throttle.is_some()
                || out.bytes.len() >= OUT_HIGH_WATER
            {
                self.stalled = true;
                break;
            }
            let head = match parse_head(&data[pos..], &self.limits) {
                Ok(Some(h)) => h,
                Ok(None) => break,
                Err(status) => {
                    refuse(out, svc, at, status, 1, request_line_of(&data[pos..]));
                    return data.len();
                }
            };
            let body_start = pos + head.len;
            let mut decoded = std::mem::take(&mut self.decoded);
            if self.chunking.is_none() {
                decoded.clear();
            }
            let mut streamed = false;
            let arrived = &data[body_start..];
            let end = match body_end(
                &head,
                arrived,
                self.max_body,
                &mut self.chunking,
                &mut decoded,
            ) {
                Ok(Some(n)) => body_start + n,
                // A job takes the rest of this body as it comes (`Service::feed_body`).
                Ok(None) if svc.streams_body(&request::Head::from_http1(&head)) => {
                    streamed = true;
                    self.chunking = None;
                    data.len()
                }
                Ok(None) => {
                    self.body_pending(&head, out);
                    self.decoded = decoded;
                    break;
                }
                Err(status) => {
                    refuse(out, svc, at, status, head.minor, head.request_line());
                    self.chunking = None;
                    self.decoded = decoded;
                    return data.len();
                }
            };
            self.next_request();
            let body: &[u8] = match head.body {
                Body::Chunked => &decoded,
                _ => &data[body_start..end],
            };
            let req = request::Head::from_http1(&head);
            let keep = head.keep_alive && !at.draining;
            out.outbox.closing |= !keep;
            let mut framing = Framing {
                minor: head.minor,
                keep,
            };
            let asked = Asked {
                head: &req,
                body,
                stream: REQUEST,
                max_jobs: 1,
            };
            let mut sink = Writer {
                framing: &mut framing,
                date_line: at.date_line,
                out,
            };
            match svc.serve(&asked, &mut sink) {
                Served::Answered { throttle, .. } => {
                    out.outbox.throttle = throttle.or(out.outbox.throttle);
                }
                Served::Started | Served::Busy => self.pending = Some(framing),
            }
            if streamed {
                self.body_streams(&head, out, svc);
            }
            self.decoded = decoded;
            pos = end;
        }
        pos
    }

    /// A request whose body is still arriving: send "100 Continue" once if the client waits for it.
    fn body_pending(&mut self, head: &Head, out: &mut Out) {
        self.awaiting_body = true;
        if head.expect_continue && head.minor == 1 && !self.continue_sent {
            self.continue_sent = true;
            out.bytes
                .extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
    }

    /// A request whose body is being streamed was dispatched: "100 Continue" if a job now waits for
    /// the body and the client for the go-ahead; if it was answered at once instead (404, 401…),
    /// the unread rest of the body is swallowed by a lingering close.
    fn body_streams(&mut self, head: &Head, out: &mut Out, svc: &mut dyn Service) {
        if svc.jobs() == 0 {
            out.outbox.close(true);
        } else if head.expect_continue && head.minor == 1 && !self.continue_sent {
            out.bytes
                .extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
    }
}

impl Protocol for Http1 {
    fn receive(&mut self, new: &[u8], at: &Moment, out: &mut Out, svc: &mut dyn Service) {
        if self.pending.is_some() && !new.is_empty() {
            if let Some(used) = svc.feed_body(REQUEST, new) {
                // The body of the request in flight; what follows it waits for its answer.
                self.inbuf.extend_from_slice(&new[used..]);
                self.stalled |= used < new.len();
                return;
            }
        }
        let mut inbuf = std::mem::take(&mut self.inbuf);
        let data: &[u8] = if inbuf.is_empty() {
            new
        } else {
            inbuf.extend_from_slice(new);
            &inbuf
        };
        let total = data.len();
        let used = self.serve(data, at, out, svc);
        let rest = total - used;
        if rest == 0 {
            inbuf.clear();
        } else if inbuf.is_empty() {
            inbuf.extend_from_slice(&new[used..]);
        } else {
            inbuf.drain(..used);
        }
        if used > 0 || self.head_started.is_none() {
            self.head_started = (rest > 0).then_some(at.now);
        }
        self.inbuf = inbuf;
    }

    fn resume(&mut self, at: &Moment, out: &mut Out, svc: &mut dyn Service) -> bool {
        let held = std::mem::take(&mut self.stalled);
        if held {
            self.receive(&[], at, out, svc);
        }
        held
    }

    /// The header timeout expired on a partial request: 408, then close.
    fn timeout(&mut self, at: &Moment, out: &mut Out, svc: &mut dyn Service) {
        let inbuf = std::mem::take(&mut self.inbuf);
        refuse(out, svc, at, 408, 1, request_line_of(&inbuf));
    }

    fn answer(&mut self, _: u32, at: &Moment, out: &mut Out, f: &mut dyn FnMut(&mut dyn Sink)) {
        let Some(framing) = self.pending.as_mut() else {
            return;
        };
        // Draining: the answer says the connection closes after it.
        framing.keep &= !at.draining;
        f(&mut Writer {
            framing,
            date_line: at.date_line,
            out,
        });
    }

    fn answered(&mut self, _: u32, status: u16, body_owed: bool, at: &Moment, out: &mut Out) {
        let Some(framing) = self.pending.take() else {
            return;
        };
        if !framing.keep || !keeps_connection(status) || at.draining {
            out.outbox.closing = true;
        }
        if body_owed {
            // The rest of the body is still on its way: answer, then close without a reset.
            out.outbox.close(true);
        }
    }

    fn pass_bodies(&mut self, _: &mut dyn Service) -> bool {
        false
    }

    fn partial_input(&self) -> bool {
        !self.inbuf.is_empty()
    }

    fn stalled(&self) -> bool {
        self.stalled
    }

    fn has_output(&self) -> bool {
        false
    }

    fn multiplexed(&self) -> bool {
        false
    }

    /// While a body arrives, the I/O timeout from the last bytes; for a partial head, the header
    /// timeout counted from its first byte.
    fn wait_deadline(&self, now: Instant, config: &Config) -> Option<Instant> {
        match self.head_started {
            _ if self.inbuf.is_empty() => None,
            _ if self.awaiting_body => Some(now + config.io_timeout),
            Some(t) => Some(t + config.header_timeout),
            None => None,
        }
    }

    fn frame_output(&mut self, _: &mut Vec<u8>) {}

    fn farewell(&mut self) -> Vec<u8> {
        Vec::new()
    }
}

/// Answers `status` and closes the connection: its input can no longer be framed.
fn refuse(
    out: &mut Out,
    svc: &mut dyn Service,
    at: &Moment,
    status: u16,
    minor: u8,
    request_line: &[u8],
) {
    let mut framing = Framing { minor, keep: false };
    let mut sink = Writer {
        framing: &mut framing,
        date_line: at.date_line,
        out,
    };
    let bytes = response::simple(&mut sink, status, b"", false);
    out.outbox.close(true);
    svc.log(request_line, status, bytes);
}

/// A chunked body part-way: its decoder, and the bytes of the body it has read.
struct Chunking {
    decoder: chunked::Decoder,
    read: usize,
}

/// How many bytes of `arrived` (what came after the head) the request's body takes (a chunked
/// body is decoded into `decoded`, carrying on with `chunking` from the last read):
/// `Ok(None)` while it is still arriving, `Err(status)` when it cannot be taken (413 over
/// `max_body`, 400 malformed).
fn body_end(
    head: &Head,
    arrived: &[u8],
    max_body: u64,
    chunking: &mut Option<Chunking>,
    decoded: &mut Vec<u8>,
) -> Result<Option<usize>, u16> {
    match head.body {
        Body::None => Ok(Some(0)),
        Body::Length(n) if n > max_body => Err(413),
        Body::Length(n) if (arrived.len() as u64) < n => Ok(None),
        Body::Length(n) => Ok(Some(n as usize)),
        Body::Chunked => {
            let c = chunking.get_or_insert_with(|| Chunking {
                decoder: chunked::Decoder::new(chunked::Policy::strict(max_body)),
                read: 0,
            });
            let fed = c.read;
            match c
                .decoder
                .feed(&arrived[fed..], |d| decoded.extend_from_slice(d))
            {
                Ok(chunked::Progress::More) => {
                    c.read = arrived.len();
                    Ok(None)
                }
                Ok(chunked::Progress::Done(n)) => {
                    *chunking = None;
                    Ok(Some(fed + n))
                }
                Err(e) => {
                    *chunking = None;
                    Err(e.status())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunked body that arrives a byte at a time is decoded once, each read taking only the
    /// byte that is new (found by AFL++: decoding from the start at every read made a 4 KiB
    /// body sent in small reads cost a second of CPU).
    #[test]
    fn a_chunked_body_arriving_a_byte_at_a_time_is_decoded_once() {
        let request = b"POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
        let limits = Config::default().limits();
        let head = parse_head(request, &limits).unwrap().unwrap();
        let mut body = Vec::new();
        let mut expected = Vec::new();
        for i in 0..300u32 {
            let data = format!("chunk {i};");
            body.extend_from_slice(format!("{:x}\r\n{data}\r\n", data.len()).as_bytes());
            expected.extend_from_slice(data.as_bytes());
        }
        body.extend_from_slice(b"0\r\n\r\nGET /next HTTP/1.1\r\n\r\n");
        let (mut chunking, mut decoded) = (None, Vec::new());
        let mut end = None;
        for k in 1..=body.len() {
            let before = chunking.as_ref().map_or(0, |c: &Chunking| c.read);
            assert_eq!(
                before,
                k - 1,
                "what an earlier read brought is not read again"
            );
            match body_end(&head, &body[..k], 1 << 20, &mut chunking, &mut decoded) {
                Ok(None) => {}
                Ok(Some(n)) => {
                    end = Some(n);
                    break;
                }
                Err(status) => panic!("refused with {status} at {k}"),
            }
        }
        let end = end.expect("the body ends");
        assert_eq!(&body[end..], b"GET /next HTTP/1.1\r\n\r\n");
        assert_eq!(decoded, expected);
        assert!(chunking.is_none(), "a finished body leaves nothing behind");
    }
}
