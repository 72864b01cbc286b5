//! The `Worker`'s concern of moving one connection forward (see mod.rs): write what is queued,
//! move its jobs on (pump.rs), then read and hand the bytes to its protocol, which answers through
//! a `Dispatch` (the server as a `Service`), until the socket has nothing more, output blocks, or
//! the connection is to close. A connection's protocol is chosen at its first bytes (`choose`:
//! the one line that picks among the protocols a listener serves).

use super::pump::Pump;
use super::Worker;
use crate::conn::{Conn, Written};
use crate::dispatch::Dispatch;
use crate::h1::Http1;
use crate::h2;
use crate::h3;
use crate::output::Out;
use crate::protocol::Protocol;
use crate::service::Moment;
use crate::site::Site;
use crate::transport::Transport;
use std::io;
use std::time::{Duration, Instant};

/// How long a lingering close waits for the peer's FIN after an error answer (for a QUIC
/// connection's acknowledgements and closing period).
const LINGER: Duration = Duration::from_secs(2);

/// The protocol a connection speaks, from its first bytes: HTTP/3 over QUIC; HTTP/2 when TLS
/// negotiated `h2`, or when a plain connection opens with the HTTP/2 preface and `--h2c` allows
/// it; else HTTP/1.
fn choose(transport: &Transport, first: &[u8], site: &Site, now: Instant) -> Box<dyn Protocol> {
    let config = &site.config;
    if let Transport::Quic(_) = transport {
        return Box::new(h3::State::new(now, config.max_body));
    }
    let n = first.len().min(webstand_h2::PREFACE.len());
    let h2 = match transport.is_tls() {
        true => transport.alpn_h2(),
        false => config.h2c && n >= 3 && first[..n] == webstand_h2::PREFACE[..n],
    };
    match h2 {
        true => Box::new(h2::State::new(now, config.max_body)),
        false => Box::new(Http1::new(config)),
    }
}

impl Worker {
    /// Advances one connection: write what is queued, move its jobs on, then read and answer
    /// requests until the socket has nothing more, output blocks, or the connection is to close.
    /// Ok(false) = close it now.
    pub(super) fn step(&mut self, idx: usize, readable: bool, hup: bool) -> io::Result<bool> {
        {
            let conn = &mut self.slot(idx).conn;
            conn.hup |= hup;
            // Input that arrived while the connection was busy is still owed a read.
            conn.unread |= readable;
        }
        loop {
            let now = self.now;
            if !self.write_out(idx)? {
                return Ok(true);
            }
            let conn = &mut self.slots[idx].as_mut().expect("a live slot").conn;
            if conn.lingering {
                return swallow_input(conn, &mut self.rbuf);
            }
            // HTTP/1 waits for a job's answer; HTTP/2 reads and answers its other streams meanwhile.
            let multiplexed = conn.protocol.as_ref().is_some_and(|p| p.multiplexed());
            let body_wanted = match self.slot(idx).jobs.is_empty() {
                true => false,
                false => match self.pump_jobs(idx) {
                    Pump::Progress => continue,
                    // An HTTP/2 stream's body already here goes to its job.
                    Pump::Body if multiplexed && self.pass_bodies(idx) => continue,
                    Pump::Wait | Pump::Body if multiplexed => false,
                    Pump::Wait => return Ok(true),
                    // Read the client on: its bytes are the job's request body.
                    Pump::Body => true,
                },
            };
            let draining = self.draining;
            let slot = self.slots[idx].as_mut().expect("a live slot");
            let conn = &mut slot.conn;
            if !body_wanted && (conn.outbox.closing || (draining && conn.is_idle(slot.jobs.len())))
            {
                if !conn.outbox.linger && !conn.transport.always_lingers() {
                    return Ok(false);
                }
                conn.transport.shutdown_write();
                conn.lingering = true;
                conn.deadline = now + LINGER;
                continue;
            }
            if !body_wanted && self.with_protocol(idx, |p, at, out, svc| p.resume(at, out, svc)) {
                continue;
            }
            let conn = &mut self.slots[idx].as_mut().expect("a live slot").conn;
            if !conn.unread {
                conn.set_wait_deadline(now, &self.site.config);
                return Ok(true);
            }
            let n = match conn.transport.read(&mut self.rbuf) {
                Ok(0) => return Ok(false),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    conn.unread = false;
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            // A short read drained the socket; edge-triggered epoll reports the next arrival.
            // After a hang-up no further edge comes, so read on to the end.
            conn.unread = conn.transport.may_have_more(n, self.rbuf.len()) || conn.hup;
            if conn.protocol.is_none() {
                conn.protocol = Some(choose(&conn.transport, &self.rbuf[..n], &self.site, now));
            }
            let input = std::mem::take(&mut self.rbuf);
            self.with_protocol(idx, |p, at, out, svc| p.receive(&input[..n], at, out, svc));
            self.rbuf = input;
        }
    }

    /// Writes the round's answers and what the connection has queued: true when all is out,
    /// false when the socket is full or a throttle holds the rest (the I/O timeout runs then).
    fn write_out(&mut self, idx: usize) -> io::Result<bool> {
        let (now, io_timeout) = (self.now, self.site.config.io_timeout);
        let conn = &mut self.slots[idx].as_mut().expect("a live slot").conn;
        if !conn.has_output() && self.wbuf.is_empty() {
            return Ok(true);
        }
        let written = conn.flush(&mut self.wbuf, &self.site.throttles, now)?;
        if let Written::Throttled(until) = written {
            conn.throttled_until = Some(until);
        }
        if matches!(written, Written::Done) {
            return Ok(true);
        }
        conn.deadline = now + io_timeout;
        Ok(false)
    }

    /// Calls `f` with the connection's protocol and what it works with: the round's clock, the
    /// output, and the server as its `Service`. False when no protocol was chosen yet.
    pub(super) fn with_protocol<T: Default>(
        &mut self,
        idx: usize,
        f: impl FnOnce(&mut dyn Protocol, &Moment, &mut Out, &mut Dispatch) -> T,
    ) -> T {
        self.with_dispatch(idx, None, |protocol, at, out, svc| match protocol {
            Some(p) => f(p, at, out, svc),
            None => T::default(),
        })
    }

    /// Calls `f` with the connection's protocol (if chosen), the round's clock, the output and a
    /// `Dispatch` for the connection (serving a local redirect when `redirect` is given).
    pub(super) fn with_dispatch<'r, T>(
        &'r mut self,
        idx: usize,
        redirect: Option<(&'r [u8], u8)>,
        f: impl FnOnce(Option<&mut (dyn Protocol + 'static)>, &Moment, &mut Out, &mut Dispatch) -> T,
    ) -> T {
        let Worker {
            slots,
            wbuf,
            site,
            handler,
            jobs,
            log,
            now,
            date,
            draining,
            ..
        } = self;
        let slot = slots[idx].as_mut().expect("a live slot");
        let conn = &mut slot.conn;
        let at = Moment {
            now: *now,
            date_line: super::date_line(date, &conn.transport),
            draining: *draining,
        };
        let mut out = Out {
            bytes: wbuf,
            outbox: &mut conn.outbox,
        };
        let mut svc = Dispatch {
            site,
            handler,
            jobs,
            conn: idx,
            mine: &mut slot.jobs,
            peer: conn.peer,
            transport: &conn.transport,
            client: &mut conn.client,
            log,
            now: *now,
            secs: date.secs(),
            redirect,
        };
        let protocol = conn.protocol.as_deref_mut();
        f(protocol, &at, &mut out, &mut svc)
    }
}

/// Error answer sent and write side shut (or a QUIC connection ending): swallow input until the
/// peer closes (until the QUIC connection is over).
fn swallow_input(conn: &mut Conn, rbuf: &mut [u8]) -> io::Result<bool> {
    loop {
        match conn.transport.read(rbuf) {
            Ok(0) => return Ok(false),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}
