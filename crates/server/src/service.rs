//! What a connection's protocol asks of the server for the requests it reads, and all it may ask:
//! answer this request through this sink (`Service::serve`: answered now, a job started that
//! answers later, or no job slot free yet), take these bytes of a request body a job is taking as
//! they come, forget a request the client gave up on, log an answer the protocol made itself (a
//! 400 for bytes it could not frame). The protocols (h1/, h2/) see nothing behind it: no files,
//! no CGI, no FastCGI. The loop's implementation is dispatch.rs.

use crate::request::Head;
use crate::response::Sink;
use std::time::Instant;

/// Request bodies declared larger than this may go to their handler as they arrive rather than be
/// collected first (a FastCGI script's: fastcgi/body.rs says why).
pub const STREAM_OVER: u64 = 64 << 10;

/// The loop's clock as a protocol reads it for one round.
#[derive(Clone, Copy)]
pub struct Moment<'a> {
    pub now: Instant,
    /// The `Date: …\r\n` line of this second.
    pub date_line: &'a [u8],
    /// The server is stopping: answers say the connection closes.
    pub draining: bool,
}

/// One request as a protocol hands it over.
pub struct Asked<'a> {
    pub head: &'a Head<'a>,
    /// The body received (all of it, or the first part of one that streams).
    pub body: &'a [u8],
    /// Which of the connection's requests it is: its HTTP/2 stream, 0 for HTTP/1.
    pub stream: u32,
    /// Jobs (CGI programs, FastCGI requests) the connection may run at once.
    pub max_jobs: usize,
}

/// What became of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// Answered into the sink with `status`; the body is paced by this throttle rule, if any.
    Answered {
        status: u16,
        throttle: Option<usize>,
    },
    /// A job runs and answers later (through `Protocol::answer`).
    Started,
    /// It needs a job and the connection runs `max_jobs`: nothing was answered; ask again once
    /// one ends.
    Busy,
}

/// The server as a protocol sees it.
pub trait Service {
    /// Answers one complete request (or one whose body streams: `streams_body`).
    fn serve(&mut self, asked: &Asked, sink: &mut dyn Sink) -> Served;
    /// Whether a request whose body is not all here yet is served now, its body taken as it comes.
    fn streams_body(&self, head: &Head) -> bool;
    /// Bytes of request `stream`'s body for the job taking it: Some(how many it took), None when
    /// no job takes a body for it now.
    fn feed_body(&mut self, stream: u32, bytes: &[u8]) -> Option<usize>;
    /// Whether the job of request `stream` has written all it was given and takes more body now
    /// (a protocol that buffers bodies itself hands them over only then).
    fn takes_body(&self, stream: u32) -> bool;
    /// The client gave up on request `stream` (an HTTP/2 stream reset): its job ends.
    fn cancel(&mut self, stream: u32);
    /// Jobs running for this connection.
    fn jobs(&self) -> usize;
    /// Logs an answer the protocol made itself.
    fn log(&mut self, request_line: &[u8], status: u16, bytes: u64);
}
