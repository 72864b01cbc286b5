//! A job: work that answers a request later, from an I/O source of its own (a CGI program's output
//! pipe, a FastCGI backend's socket), registered with the loop under the job's token. The loop
//! drives every job through this one interface — move on when the source is ready or the client
//! took the output, expire at the deadline, stop when the client goes away, take a request body as
//! it comes — and the job answers through the `Sink` of the request it serves, never knowing the
//! protocol or the connection. cgi.rs and fastcgi/ implement it; the loop's table of jobs is
//! jobs.rs.

use crate::request::Head;
use crate::response::Sink;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Instant;

/// What every job is started with: the request, and whom and where it comes from.
pub struct Start<'a> {
    pub head: &'a Head<'a>,
    /// The body received (all of it, or the first part of one that streams).
    pub body: &'a [u8],
    pub query: &'a [u8],
    /// The user basic auth let in.
    pub user: Option<&'a str>,
    /// The document root as the process sees it (after chroot).
    pub root: &'a Path,
    pub client: &'a Client,
}

/// The client connection a request came on, as a job tells its program.
#[derive(Debug, Clone, Copy)]
pub struct Client {
    /// The peer's address as accepted.
    pub peer: IpAddr,
    /// The connection's (local, peer) socket addresses, when they could be read.
    pub local: Option<SocketAddr>,
    pub remote: Option<SocketAddr>,
    /// The bytes travel encrypted (programs see HTTPS=on).
    pub tls: bool,
}

impl Client {
    /// (local, peer) addresses, the unspecified address where one could not be read.
    pub fn addrs(&self) -> (SocketAddr, SocketAddr) {
        let zero = SocketAddr::from(([0, 0, 0, 0], 0));
        (self.local.unwrap_or(zero), self.remote.unwrap_or(zero))
    }
}

/// What a step of a job came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress {
    /// Nothing more until the source (or the client) is ready.
    Wait,
    /// Output was produced: write it, then move the job on again.
    More,
    /// It has written all it was given and waits for more of the request body: read the client.
    Body,
    /// Answered (status, body bytes): the job is over.
    Done { status: u16, bytes: u64 },
    /// The answer is another local path, to be served instead (a GET: RFC 3875 §6.2.2); the job
    /// is over.
    Redirect(Vec<u8>),
}

impl Progress {
    /// The job is over.
    pub fn ended(&self) -> bool {
        matches!(self, Progress::Done { .. } | Progress::Redirect(_))
    }
}

pub trait Job {
    /// Moves the job on: reads its source, writes what it can, answers through `sink`.
    fn advance(&mut self, now: Instant, sink: &mut dyn Sink) -> Progress;

    /// When the job counts as late.
    fn deadline(&self) -> Instant;

    /// The deadline passed: the job ends with an answer (504, 408) or cuts its answer short.
    fn expire(&mut self, now: Instant, sink: &mut dyn Sink) -> Progress;

    /// The client went away or gave up on the request: stop (kill the program, close the backend
    /// connection). Nothing is answered.
    fn cancel(&mut self);

    /// Takes bytes of the request body as they come from the client; how many it took (none when
    /// it owes no more).
    fn take_body(&mut self, now: Instant, bytes: &[u8]) -> usize;

    /// The client still owes request body bytes.
    fn body_owed(&self) -> bool;

    /// It has written all it was given and takes more of the body now.
    fn wants_body(&self) -> bool;

    /// An ended job may still hold something to collect (a CGI program not yet reaped): true once
    /// it holds nothing.
    fn settled(&mut self) -> bool {
        true
    }
}
