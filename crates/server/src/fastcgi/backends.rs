//! One event loop's FastCGI backends, which all its FastCGI jobs share: a pool of kept connections
//! per `--fastcgi` rule (backend.rs), the loop's registry to watch each backend connection under
//! the token of the job that holds it, the client connections whose turn for a backend connection
//! came (`woken`: the loop drives them), the settings a job goes by, and one read buffer.

use super::backend::{self, Acquired, Pool};
use crate::config::FastCgiRule as Rule;
use mio::{Interest, Registry, Token};
use std::collections::HashMap;
use std::time::Duration;

/// What a FastCGI job goes by, from the configuration.
#[derive(Clone, Copy)]
pub struct Settings {
    /// Silence from a backend past this is 504.
    pub timeout: Duration,
    /// A client that sends no more of a streamed body within this loses its job (408).
    pub io_timeout: Duration,
    /// The largest answer body taken from a backend.
    pub max_output: u64,
    /// `--fastcgi-gzip`.
    pub gzip: bool,
    /// Backend connections this loop opens per rule at most.
    pub max_open: usize,
}

pub struct Backends {
    pub rules: Vec<Rule>,
    pub settings: Settings,
    pools: Vec<Pool>,
    registry: Registry,
    /// Jobs waiting in a pool's queue, per (rule, client connection).
    queued: HashMap<(usize, usize), usize>,
    /// Client connections whose turn for a backend connection came: the loop drives them.
    pub woken: Vec<usize>,
    /// The loop's one buffer for reading backends, zeroed once.
    pub rbuf: Vec<u8>,
    /// Scratch for a request's parameters.
    pub scratch: Vec<u8>,
}

/// What `attach` found.
pub enum Attached {
    /// A connection, kept (already connected) or new (maybe still connecting).
    Conn(backend::Conn, bool),
    /// The job waits in the pool's queue.
    Queued,
}

impl Backends {
    pub fn new(rules: Vec<Rule>, settings: Settings, registry: Registry) -> Backends {
        Backends {
            pools: rules.iter().map(|_| Pool::default()).collect(),
            rules,
            settings,
            registry,
            queued: HashMap::new(),
            woken: Vec::new(),
            rbuf: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// A backend connection for a job of client connection `owner`, watched under `token`: a
    /// kept one, a new one, or a place in the queue (`was_queued`: the job waited there already).
    pub fn attach(
        &mut self,
        rule: usize,
        owner: usize,
        token: Token,
        was_queued: bool,
    ) -> Result<Attached, String> {
        let max = self.settings.max_open;
        let pool = &mut self.pools[rule];
        // Connections waiting in the queue go first: an HTTP/2 connection with many PHP streams
        // takes one backend connection per turn, then waits behind the others (backend.rs).
        let acquired = match pool.turn_of(owner) {
            true => pool.acquire(&self.rules[rule].address, max),
            false => Ok(Acquired::Full),
        };
        let (mut conn, kept) = match acquired {
            Ok(Acquired::Kept(c)) => (c, true),
            Ok(Acquired::New(c)) => (c, false),
            Ok(Acquired::Full) => {
                pool.queue(owner);
                if !was_queued {
                    *self.queued.entry((rule, owner)).or_default() += 1;
                }
                return Ok(Attached::Queued);
            }
            Err(e) => return Err(format!("cannot connect: {e}")),
        };
        if was_queued {
            self.unqueue(rule, owner);
            self.pools[rule].forget(owner);
        }
        if let Some(next) = self.pools[rule].next_waiter(max) {
            self.wake(next);
        }
        // A kept connection stays registered between requests (dropping it unregisters it): it
        // only gets this job's token, one epoll_ctl per request rather than an add and a delete.
        let interest = Interest::READABLE | Interest::WRITABLE;
        let watched = match kept {
            true => self.registry.reregister(conn.source(), token, interest),
            false => self.registry.register(conn.source(), token, interest),
        };
        if let Err(e) = watched {
            self.release(rule, conn, false);
            return Err(format!("cannot watch the connection: {e}"));
        }
        Ok(Attached::Conn(conn, kept))
    }

    /// A job is done with its backend connection: kept (`reusable`) or closed; a queued request
    /// is woken.
    pub fn release(&mut self, rule: usize, conn: backend::Conn, reusable: bool) {
        if let Some(waiter) = self.pools[rule].release(conn, reusable) {
            self.wake(waiter);
        }
    }

    /// A queued job of `owner` no longer waits (its client went away or it timed out): the
    /// connection leaves the queue once none of its jobs waits there.
    pub fn leave_queue(&mut self, rule: usize, owner: usize) {
        if self.unqueue(rule, owner) == 0 {
            let pool = &mut self.pools[rule];
            pool.forget(owner);
            if let Some(next) = pool.next_waiter(self.settings.max_open) {
                self.wake(next);
            }
        }
    }

    /// One fewer job of `owner` waits for `rule`; how many still do.
    fn unqueue(&mut self, rule: usize, owner: usize) -> usize {
        let Some(n) = self.queued.get_mut(&(rule, owner)) else {
            return 0;
        };
        *n = n.saturating_sub(1);
        let left = *n;
        if left == 0 {
            self.queued.remove(&(rule, owner));
        }
        left
    }

    /// Asks the loop to drive client connection `owner`, whose turn for a backend came.
    fn wake(&mut self, owner: usize) {
        if !self.woken.contains(&owner) {
            self.woken.push(owner);
        }
    }

    /// One line on stderr about a backend's trouble.
    pub fn log(&self, rule: usize, why: &str) {
        eprintln!(
            "webstand serve: fastcgi backend {}: {why}",
            self.rules[rule].address
        );
    }
}
