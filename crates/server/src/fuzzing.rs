//! The entry points of the coverage-guided fuzz targets (fuzz/, built with the `fuzzing`
//! feature; nothing here is in the server): a connection's protocol, HTTP/1 or HTTP/2, driven by
//! a byte stream with no socket, as the loop drives it (receive, resume, the answers of jobs
//! that end later, the round's output framed and written, the header timeout), each request
//! answered by a small service of this file through the protocol's real sinks; and a CGI
//! program's and a FastCGI backend's output read as the server reads them, into the real HTTP/1
//! writer, so that what the client would get can be parsed back.

use crate::config::Config;
use crate::fastcgi::{next_record, Done, Record, Reply};
use crate::h1::{Framing, Http1};
use crate::h2;
use crate::output::{Out, Outbox, Segment};
use crate::protocol::Protocol;
use crate::request::Head;
use crate::response::{self, Length, Sink};
use crate::service::{Asked, Moment, Served, Service};
use std::time::{Duration, Instant};
use webstand_http1::request::Method;

/// The protocol a fuzzed connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Speak {
    Http1,
    Http2,
}

/// What a fuzzed connection wrote, and what its reader needs to know to parse it.
#[derive(Default, Debug)]
pub struct Session {
    /// Every byte the connection wrote, in order.
    pub written: Vec<u8>,
    /// Per answer the service made, in order: whether the request was a HEAD (an HTTP/1 reader
    /// cannot tell a HEAD's answer from its head alone).
    pub head_requests: Vec<bool>,
    /// The connection asked to be closed.
    pub closed: bool,
}

/// The Date line every answer carries.
const DATE_LINE: &[u8] = b"Date: Sun, 29 Nov 2026 10:00:00 GMT\r\n";

/// Answers each request itself: a target `/NNN` (200 to 599) with that status, `/later…` through
/// a job that answers after the round (as a CGI program does), `/stream…` with a streamed body,
/// anything else with a 200 whose body is the request's body.
#[derive(Default)]
struct Answers {
    later: Vec<(u32, bool, Vec<u8>)>,
    heads: Vec<bool>,
}

fn status_of(target: &[u8]) -> u16 {
    match target {
        [b'/', a, b, c] if [a, b, c].iter().all(|d| d.is_ascii_digit()) => {
            let n = u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0');
            if (200..600).contains(&n) {
                n
            } else {
                200
            }
        }
        _ => 200,
    }
}

impl Service for Answers {
    fn serve(&mut self, asked: &Asked, sink: &mut dyn Sink) -> Served {
        let head = asked.head;
        let head_only = head.method == Method::Head;
        if head.target.starts_with(b"/later") {
            if self.later.len() >= asked.max_jobs {
                return Served::Busy;
            }
            self.later
                .push((asked.stream, head_only, asked.body.to_vec()));
            return Served::Started;
        }
        self.heads.push(head_only);
        if head.target.starts_with(b"/stream") && !head_only {
            sink.head(&response::Head {
                status: 200,
                fields: b"Content-Type: text/plain\r\n",
                length: Length::Streamed,
            });
            let half = asked.body.len() / 2;
            sink.stream(&asked.body[..half]);
            sink.stream(&asked.body[half..]);
            sink.end_stream();
            return Served::Answered {
                status: 200,
                throttle: None,
            };
        }
        let status = status_of(head.target);
        response::whole(
            sink,
            (status, b"Content-Type: text/plain\r\n"),
            asked.body,
            head_only,
        );
        Served::Answered {
            status,
            throttle: None,
        }
    }
    fn streams_body(&self, _: &Head) -> bool {
        false
    }
    fn feed_body(&mut self, _: u32, _: &[u8]) -> Option<usize> {
        None
    }
    fn takes_body(&self, _: u32) -> bool {
        false
    }
    fn cancel(&mut self, stream: u32) {
        self.later.retain(|l| l.0 != stream);
    }
    fn jobs(&self) -> usize {
        self.later.len()
    }
    fn log(&mut self, _: &[u8], _: u16, _: u64) {}
}

/// A connection of `speak` with `config`'s limits, fed `pieces` one read at a time; after the
/// last, a client that stopped halfway meets the header timeout, and the connection says goodbye.
pub fn drive(speak: Speak, config: &Config, pieces: &[&[u8]]) -> Session {
    let start = Instant::now();
    let mut protocol: Box<dyn Protocol> = match speak {
        Speak::Http1 => Box::new(Http1::new(config)),
        Speak::Http2 => Box::new(h2::State::new(start, config.max_body)),
    };
    let mut svc = Answers::default();
    let mut outbox = Outbox::default();
    let mut bytes = Vec::new();
    let mut session = Session::default();
    for (i, piece) in pieces.iter().enumerate() {
        let at = Moment {
            now: start + Duration::from_millis(i as u64),
            date_line: DATE_LINE,
            draining: false,
        };
        let mut out = Out {
            bytes: &mut bytes,
            outbox: &mut outbox,
        };
        protocol.receive(piece, &at, &mut out, &mut svc);
        settle(protocol.as_mut(), &at, &mut out, &mut svc);
        write(protocol.as_mut(), &mut bytes, &mut outbox, &mut session);
        if session.closed {
            break;
        }
    }
    let at = Moment {
        now: start + config.header_timeout,
        date_line: DATE_LINE,
        draining: true,
    };
    if !session.closed && protocol.partial_input() {
        let mut out = Out {
            bytes: &mut bytes,
            outbox: &mut outbox,
        };
        protocol.timeout(&at, &mut out, &mut svc);
        write(protocol.as_mut(), &mut bytes, &mut outbox, &mut session);
    }
    if speak == Speak::Http2 {
        session.written.extend(protocol.farewell());
    }
    session.head_requests = svc.heads;
    session
}

/// Answers what was held back and what the jobs answer later, until nothing moves.
fn settle(protocol: &mut dyn Protocol, at: &Moment, out: &mut Out, svc: &mut Answers) {
    for _ in 0..64 {
        let mut moved = protocol.resume(at, out, svc);
        moved |= protocol.pass_bodies(svc);
        if let Some((stream, head_only, body)) = svc.later.first().cloned() {
            svc.later.remove(0);
            svc.heads.push(head_only);
            protocol.answer(stream, at, out, &mut |sink| {
                response::whole(sink, (200, b""), &body, head_only);
            });
            protocol.answered(stream, 200, false, at, out);
            moved = true;
        }
        if !moved {
            return;
        }
    }
}

/// The round's output framed and "written": what was queued first, then the round's bytes.
fn write(protocol: &mut dyn Protocol, bytes: &mut Vec<u8>, outbox: &mut Outbox, s: &mut Session) {
    protocol.frame_output(bytes);
    for segment in outbox.queue.drain(..) {
        if let Segment::Mem(buf, pos) = segment {
            s.written.extend_from_slice(&buf[pos..]);
        }
    }
    s.written.append(bytes);
    s.closed |= outbox.closing;
}

/// A CGI program's output (header lines, blank line, body) as the server answers it to an
/// HTTP/1.1 request: the status, and the bytes written.
pub fn cgi_answer(output: &[u8], head_only: bool) -> (u16, Vec<u8>) {
    answered_h1(|sink| crate::cgi::answer(output, sink, head_only).0)
}

/// Runs `answer` with the sink of a keep-alive HTTP/1.1 response: what it returned, and the bytes
/// the server wrote.
fn answered_h1<R>(answer: impl FnOnce(&mut crate::h1::Writer<'_, '_>) -> R) -> (R, Vec<u8>) {
    let (mut bytes, mut outbox) = (Vec::new(), Outbox::default());
    let mut framing = Framing {
        minor: 1,
        keep: true,
    };
    let mut out = Out {
        bytes: &mut bytes,
        outbox: &mut outbox,
    };
    let mut sink = crate::h1::Writer {
        framing: &mut framing,
        date_line: DATE_LINE,
        out: &mut out,
    };
    let r = answer(&mut sink);
    (r, bytes)
}

/// How the server ended a FastCGI backend's answer.
#[derive(Debug, PartialEq, Eq)]
pub enum FcgiEnd {
    /// Answered with this status.
    Answered(u16),
    /// The answer is a local redirect to this path.
    Redirect(Vec<u8>),
    /// The records are garbage, or the answer they make is: the reason.
    Refused(&'static str),
    /// The records stopped before END_REQUEST.
    Unfinished,
}

/// A FastCGI backend's record stream, read in `pieces` as the server reads it and answered to an
/// HTTP/1.1 request (bodies up to `max_body` bytes): how it ended, and the bytes written.
pub fn fastcgi_answer(pieces: &[&[u8]], head_only: bool, max_body: u64) -> (FcgiEnd, Vec<u8>) {
    answered_h1(|sink| {
        let mut reply = Reply::new(head_only, false);
        let mut held = Vec::new();
        'read: {
            for piece in pieces {
                held.extend_from_slice(piece);
                let mut pos = 0;
                loop {
                    match next_record(&held[pos..]) {
                        Err(garbage) => break 'read FcgiEnd::Refused(garbage.0),
                        Ok(None) => break,
                        Ok(Some((record, used))) => {
                            pos += used;
                            match record {
                                Record::Stdout(data) => {
                                    if let Err(why) = reply.stdout(data, sink, max_body) {
                                        break 'read FcgiEnd::Refused(why);
                                    }
                                }
                                Record::Stderr(_) => {}
                                Record::End { .. } => {
                                    break 'read match reply.finish(sink) {
                                        Ok(Done::Answered(status, _)) => FcgiEnd::Answered(status),
                                        Ok(Done::Redirect(path)) => FcgiEnd::Redirect(path),
                                        Err(why) => FcgiEnd::Refused(why),
                                    };
                                }
                            }
                        }
                    }
                }
                held.drain(..pos);
            }
            FcgiEnd::Unfinished
        }
    })
}
