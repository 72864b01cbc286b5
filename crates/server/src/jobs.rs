//! The loop's running jobs (job.rs): for each, the client connection and request it answers, what
//! the access log will say of it, and the job itself. A job's place here makes its token (the
//! loop drives the connection a job's source wakes). Starting the two kinds of job is here too
//! (a CGI program, a FastCGI request on the loop's backends); an ended job that still holds a
//! process is kept until it is collected.

use crate::cgi::{self, CgiJob};
use crate::fastcgi::{self, Backends, FcgiJob};
use crate::job::{Job, Start};
use crate::request::Version;
use crate::site::Site;
use mio::{Registry, Token};
use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

/// Tokens at or above this belong to jobs: `JOB_BASE + the job's place`.
pub const JOB_BASE: usize = 1 << 40;

/// Which request a job answers, and what the log says of it.
pub struct Owner {
    /// The client connection's slot.
    pub conn: usize,
    /// The request on it (its HTTP/2 stream; 0 for HTTP/1).
    pub stream: u32,
    /// The request line the access log shows.
    pub request_line: Vec<u8>,
    pub user: Option<Arc<str>>,
    /// The request's version (a local redirect is asked in it).
    pub version: Version,
    /// Local redirects followed to get here.
    pub redirects: u8,
}

/// A job and whom it answers.
pub struct Running {
    pub owner: Owner,
    pub job: Box<dyn Job>,
}

pub struct Jobs {
    running: Vec<Option<Running>>,
    free: Vec<usize>,
    /// Ended jobs still holding something to collect (`Job::settled`).
    ended: Vec<Box<dyn Job>>,
    /// The loop's registry (CGI programs' pipes are watched through it).
    registry: Registry,
    backends: Rc<RefCell<Backends>>,
}

impl Jobs {
    pub fn new(registry: &Registry, site: &Site) -> io::Result<Jobs> {
        let c = &site.config;
        let settings = fastcgi::Settings {
            timeout: c.fastcgi_timeout,
            io_timeout: c.io_timeout,
            max_output: c.fastcgi_max_output,
            gzip: c.fastcgi_gzip,
            max_open: (c.fastcgi_connections / site.threads).max(1),
        };
        let backends = Backends::new(site.fastcgi.clone(), settings, registry.try_clone()?);
        Ok(Jobs {
            running: Vec::new(),
            free: Vec::new(),
            ended: Vec::new(),
            registry: registry.try_clone()?,
            backends: Rc::new(RefCell::new(backends)),
        })
    }

    /// The job a token belongs to.
    pub fn of_token(token: Token) -> Option<usize> {
        token.0.checked_sub(JOB_BASE)
    }

    /// The place the next job takes.
    fn next_place(&self) -> usize {
        self.free.last().copied().unwrap_or(self.running.len())
    }

    fn insert(&mut self, running: Running) -> usize {
        match self.free.pop() {
            Some(i) => {
                self.running[i] = Some(running);
                i
            }
            None => {
                self.running.push(Some(running));
                self.running.len() - 1
            }
        }
    }

    /// Starts a CGI program for `owner`.
    pub fn start_cgi(
        &mut self,
        req: &Start,
        program: &cgi::Program,
        owner: Owner,
        now: Instant,
    ) -> io::Result<usize> {
        let token = Token(JOB_BASE + self.next_place());
        let job = CgiJob::start(req, program, now, &self.registry, token)?;
        let job = Box::new(job);
        Ok(self.insert(Running { owner, job }))
    }

    /// Starts a FastCGI request for `owner`; the loop's next step of its connection sends it.
    pub fn start_fastcgi(
        &mut self,
        req: &Start,
        script: &fastcgi::Script,
        owner: Owner,
        now: Instant,
    ) -> usize {
        let token = Token(JOB_BASE + self.next_place());
        let job = FcgiJob::start(&self.backends, req, script, now, owner.conn, token);
        let job = Box::new(job);
        self.insert(Running { owner, job })
    }

    pub fn get_mut(&mut self, id: usize) -> Option<&mut Running> {
        self.running.get_mut(id).and_then(Option::as_mut)
    }

    pub fn get(&self, id: usize) -> Option<&Running> {
        self.running.get(id).and_then(Option::as_ref)
    }

    /// Takes an ended (or cancelled) job out; what it still holds is collected later.
    pub fn end(&mut self, id: usize) -> Option<Owner> {
        let Running { owner, mut job } = self.running.get_mut(id)?.take()?;
        self.free.push(id);
        if !job.settled() {
            self.ended.push(job);
        }
        Some(owner)
    }

    /// Client connections whose turn for a FastCGI backend came: the loop drives them.
    pub fn woken(&mut self) -> Option<usize> {
        self.backends.borrow_mut().woken.pop()
    }

    /// Collects what ended jobs held (on the loop's tick).
    pub fn reap(&mut self) {
        self.ended.retain_mut(|job| !job.settled());
    }
}
