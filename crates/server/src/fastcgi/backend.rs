//! FastCGI backends: a non-blocking connection to one (where it listens is configuration:
//! config.rs's `FastCgiRule`), and each event loop's bounded pool of connections kept open between requests
//! (FCGI_KEEP_CONN).
//!
//! Why the bound counts every open connection, idle or busy, and not only the idle ones: a
//! php-fpm child serves one connection for as long as it stays open, so a kept connection pins a
//! child. With more connections than children, a new connection waits in the backend's listen
//! queue for a child that the kept connections never release, and its request times out. So a loop
//! opens at most its share of `fastcgi_connections` (which should not exceed the backend's
//! workers), and requests beyond it wait in the loop's queue for a connection to come back.
//!
//! The queue holds client connections, each once however many of its requests (HTTP/2 streams)
//! wait. A freed backend connection goes to the queue's first: it takes one and, if more of its
//! requests wait, goes to the back. So a connection with many PHP streams takes turns with the
//! others instead of taking every backend connection that comes back.

use crate::config::BackendAddress as Address;
use mio::net::{TcpStream, UnixStream};
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;

/// A connection to a backend (connecting, busy or idle in the pool).
pub enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Conn {
    /// Starts connecting without blocking: a unix socket connects at once or fails (ENOENT,
    /// ECONNREFUSED, EAGAIN when its queue is full); TCP finishes later (see `connected`).
    pub fn connect(address: &Address) -> io::Result<Conn> {
        match address {
            Address::Unix(p) => UnixStream::connect(p).map(Conn::Unix),
            Address::Tcp(a) => {
                let s = TcpStream::connect(*a)?;
                let _ = s.set_nodelay(true);
                Ok(Conn::Tcp(s))
            }
        }
    }

    /// Whether a connect in progress finished: Ok(true) connected, Ok(false) not yet, Err refused.
    pub fn connected(&self) -> io::Result<bool> {
        match self {
            Conn::Unix(_) => Ok(true),
            Conn::Tcp(s) => {
                if let Some(e) = s.take_error()? {
                    return Err(e);
                }
                match s.peer_addr() {
                    Ok(_) => Ok(true),
                    Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(false),
                    Err(e) => Err(e),
                }
            }
        }
    }

    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(buf),
            Conn::Unix(s) => s.read(buf),
        }
    }

    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(buf),
            Conn::Unix(s) => s.write(buf),
        }
    }

    pub fn source(&mut self) -> &mut dyn mio::event::Source {
        match self {
            Conn::Tcp(s) => s,
            Conn::Unix(s) => s,
        }
    }

    /// An idle kept connection is still usable: no end of stream and no stray bytes waiting (the
    /// backend may have closed it since, e.g. php-fpm's pm.max_requests).
    fn still_open(&self) -> bool {
        let fd = match self {
            Conn::Tcp(s) => s.as_raw_fd(),
            Conn::Unix(s) => s.as_raw_fd(),
        };
        let mut byte = 0u8;
        // SAFETY: a one-byte peek into a live local on a descriptor this connection owns.
        let r = unsafe {
            libc::recv(
                fd,
                (&mut byte as *mut u8).cast(),
                1,
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        r < 0 && io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock
    }
}

/// One loop's connections to one backend.
#[derive(Default)]
pub struct Pool {
    /// Kept connections waiting for a request (not registered with the loop).
    idle: Vec<Conn>,
    /// Connections open now, idle or busy.
    open: usize,
    /// Connections (by slot) whose request waits for a backend connection, oldest first.
    pub waiting: VecDeque<usize>,
}

/// What `Pool::acquire` found.
pub enum Acquired {
    /// A kept connection, already connected.
    Kept(Conn),
    /// A new connection (maybe still connecting).
    New(Conn),
    /// The loop's share of connections is in use: wait for one to come back.
    Full,
}

impl Pool {
    /// A connection for a request: a kept one, else a new one while under `max` open.
    pub fn acquire(&mut self, address: &Address, max: usize) -> io::Result<Acquired> {
        while let Some(c) = self.idle.pop() {
            if c.still_open() {
                return Ok(Acquired::Kept(c));
            }
            self.open -= 1;
        }
        if self.open >= max {
            return Ok(Acquired::Full);
        }
        let c = Conn::connect(address)?;
        self.open += 1;
        Ok(Acquired::New(c))
    }

    /// A request is done with its connection: keep it (`reusable`) or close it. Returns the slot
    /// whose turn it is now (the queue's first), which the loop must drive; it leaves the queue
    /// when it takes a connection (`forget`).
    pub fn release(&mut self, conn: Conn, reusable: bool) -> Option<usize> {
        if reusable {
            self.idle.push(conn);
        } else {
            self.open -= 1;
        }
        self.waiting.front().copied()
    }

    /// Whether `slot` may take a connection now: nobody waits, or it is the queue's first.
    pub fn turn_of(&self, slot: usize) -> bool {
        self.waiting.front().is_none_or(|&s| s == slot)
    }

    /// The queue's first, when a connection is free for it (under `max` open).
    pub fn next_waiter(&self, max: usize) -> Option<usize> {
        let room = !self.idle.is_empty() || self.open < max;
        room.then(|| self.waiting.front().copied()).flatten()
    }

    /// `slot` waits for a connection (once in the queue however many of its requests wait).
    pub fn queue(&mut self, slot: usize) {
        if !self.waiting.contains(&slot) {
            self.waiting.push_back(slot);
        }
    }

    /// A slot's requests no longer wait (it took a connection, its client went away, or its
    /// request timed out).
    pub fn forget(&mut self, slot: usize) {
        self.waiting.retain(|&s| s != slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn waiting_client_connections_take_turns() {
        let mut pool = Pool::default();
        let address = Address::Unix(PathBuf::from("/nonexistent.sock"));
        let (backend, _peer) = UnixStream::pair().unwrap();
        pool.open = 1; // the loop's one backend connection, busy
                       // Client connection 7 has several requests waiting (HTTP/2 streams), then 9 one.
        for slot in [7, 7, 9] {
            pool.queue(slot);
        }
        assert_eq!(pool.waiting, [7, 9]);
        assert!(matches!(pool.acquire(&address, 1), Ok(Acquired::Full)));
        // The backend connection comes back: 7's turn, not 9's.
        assert_eq!(pool.release(Conn::Unix(backend), true), Some(7));
        assert!(pool.turn_of(7) && !pool.turn_of(9));
        let Ok(Acquired::Kept(backend)) = pool.acquire(&address, 1) else {
            panic!("the kept connection is 7's");
        };
        // 7 took one and still has requests waiting: it goes behind 9.
        pool.forget(7);
        pool.queue(7);
        assert_eq!(pool.waiting, [9, 7]);
        assert_eq!(pool.release(backend, true), Some(9));
        assert!(pool.turn_of(9) && !pool.turn_of(7));
        assert_eq!(pool.next_waiter(1), Some(9));
    }
}
