//! A connection's FastCGI jobs (one for HTTP/1, one per stream for HTTP/2): moving each on in
//! turn, ending those past their deadline or whose client went away (the connection closed, the
//! stream reset), and keeping the connection's place in its loop's queue for a backend
//! connection while any of its jobs waits there.

use super::{FcgiJob, Pump, Step, Trouble};
use crate::conn::Conn;
use crate::handler::Ctx;

impl Ctx {
    /// Moves the connection's jobs on: connect, write the request, read and answer. Each job is
    /// taken out while it is worked on (an answer may start another: a local redirect).
    pub fn fastcgi_pump(
        &mut self,
        conn: &mut Conn,
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) -> Pump {
        let mut overall = Pump::Wait;
        let mut i = 0;
        while i < conn.fcgi.len() {
            let job = conn.fcgi.remove(i);
            let (kept, pump) = self.pump_job(conn, job, out, idx, registry);
            if let Some(job) = kept {
                conn.fcgi.insert(i, job);
                i += 1;
            }
            overall = match (overall, pump) {
                (Pump::Progress, _) | (_, Pump::Progress) => Pump::Progress,
                (Pump::Body, _) | (_, Pump::Body) => Pump::Body,
                _ => Pump::Wait,
            };
        }
        overall
    }

    /// Moves one job on; gives it back unless it ended.
    fn pump_job(
        &mut self,
        conn: &mut Conn,
        mut job: Box<FcgiJob>,
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) -> (Option<Box<FcgiJob>>, Pump) {
        if job.backend.is_none() {
            if let Err(why) = self.attach(&mut job, idx, registry) {
                return (None, self.fail(conn, job, out, idx, 502, &why));
            }
            if job.backend.is_none() {
                return (Some(job), Pump::Wait);
            }
        }
        match self.exchange(&mut job, out) {
            Ok(Step::Wait) => (Some(job), Pump::Wait),
            Ok(Step::Body) => {
                job.deadline = self.now + self.shared.config.io_timeout;
                (Some(job), Pump::Body)
            }
            Ok(Step::More) => (Some(job), Pump::Progress),
            Ok(Step::Ended(reusable)) => {
                (None, self.complete(conn, job, out, idx, registry, reusable))
            }
            Err(Trouble::Lost(why))
                if job.kept && !job.reply.started() && !job.retried && !job.streamed =>
            {
                // A kept connection the backend had closed: once more on a new one.
                job.retried = true;
                self.detach(&mut job, false);
                job.sent = 0;
                job.input.clear();
                let _ = why; // logged only if the retry fails too
                (Some(job), Pump::Progress)
            }
            Err(Trouble::Lost(why) | Trouble::Garbage(why)) => {
                (None, self.fail(conn, job, out, idx, 502, &why))
            }
        }
    }

    /// The backend stayed silent past `fastcgi_timeout`: 504 (or the client stopped sending the
    /// body being streamed for `io_timeout`: 408), for each of the connection's jobs past its
    /// deadline.
    pub fn fastcgi_timed_out(&mut self, conn: &mut Conn, out: &mut Vec<u8>, idx: usize) {
        let mut i = 0;
        while i < conn.fcgi.len() {
            if self.now < conn.fcgi[i].deadline {
                i += 1;
                continue;
            }
            let job = conn.fcgi.remove(i);
            let why = match job.wants_body() {
                true => format!(
                    "the client sent no more of its body within {}s",
                    self.shared.config.io_timeout.as_secs_f64()
                ),
                false => format!(
                    "no answer within {}s",
                    self.shared.config.fastcgi_timeout.as_secs_f64()
                ),
            };
            let status = if job.wants_body() { 408 } else { 504 };
            self.fail(conn, job, out, idx, status, &why);
        }
    }

    /// The client went away (`stream` None) or reset that HTTP/2 stream: drop the jobs answering
    /// it (each backend connection is closed, not kept: the backend may still be writing an
    /// answer for it; php-fpm ends the request when it writes to the closed connection).
    pub fn end_fastcgi(&mut self, conn: &mut Conn, idx: usize, stream: Option<u32>) {
        let mut i = 0;
        while i < conn.fcgi.len() {
            if stream.is_some_and(|id| conn.fcgi[i].reply.channel.stream_id() != Some(id)) {
                i += 1;
                continue;
            }
            let mut job = conn.fcgi.remove(i);
            self.drop_job(conn, &mut job, idx);
        }
    }

    /// Frees what a job (out of `conn.fcgi`) held: its backend connection, closed, and its place
    /// in the pool's queue unless another job of the connection still waits there.
    pub(super) fn drop_job(&mut self, conn: &Conn, job: &mut FcgiJob, idx: usize) {
        self.detach(job, false);
        let rule = job.rule;
        if job.queued && !conn.fcgi.iter().any(|j| j.queued && j.rule == rule) {
            let max = (self.shared.config.fastcgi_connections / self.shared.threads).max(1);
            let pool = &mut self.fcgi_pools[rule];
            pool.forget(idx);
            if let Some(next) = pool.next_waiter(max) {
                wake(&mut self.fcgi_wake, next);
            }
        }
    }
}

/// Asks the loop to drive connection `slot`, whose turn for a backend connection came.
pub(super) fn wake(list: &mut Vec<usize>, slot: usize) {
    if !list.contains(&slot) {
        list.push(slot);
    }
}
