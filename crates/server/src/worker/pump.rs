//! The `Worker`'s concern of a connection's jobs (see mod.rs): moving them on through the sink of
//! the request each answers (after the connection's output is flushed: a slow client holds its
//! jobs back), ending them at their deadline, and, once one ended, logging its answer and telling
//! the protocol — or, for a local redirect, serving the path it names for the request instead.

use super::Worker;
use crate::job::Progress;
use crate::jobs::Owner;
use crate::output::Out;
use crate::request::{self, Version};
use crate::service::{Asked, Moment, Served, Service};

/// What a step of the connection's jobs came to.
#[derive(Clone, Copy)]
pub(super) enum Pump {
    /// Nothing more until a source (or the client) is ready.
    Wait,
    /// Output was produced or a job ended: flush and go on.
    Progress,
    /// A job has all it was given and the body is still coming: read the client.
    Body,
}

impl Worker {
    /// Moves the connection's jobs on (each writing into its request's sink); ends those that
    /// ended.
    pub(super) fn pump_jobs(&mut self, idx: usize) -> Pump {
        let mut overall = Pump::Wait;
        let mut i = 0;
        while i < self.slot(idx).jobs.len() {
            let id = self.slot(idx).jobs[i];
            let progress = self.advance_job(idx, id, false);
            let ended = progress.ended();
            let this = match progress {
                Progress::Wait => Pump::Wait,
                Progress::Body => Pump::Body,
                _ => Pump::Progress,
            };
            overall = match (overall, this) {
                (Pump::Progress, _) | (_, Pump::Progress) => Pump::Progress,
                (Pump::Body, _) | (_, Pump::Body) => Pump::Body,
                _ => Pump::Wait,
            };
            if ended {
                self.job_ended(idx, id, progress);
            } else {
                i += 1;
            }
        }
        overall
    }

    /// Moves job `id` of connection `idx` on (or, `expired`, ends it at its deadline) through the
    /// sink of the request it answers.
    fn advance_job(&mut self, idx: usize, id: usize, expired: bool) -> Progress {
        let now = self.now;
        let Worker {
            slots,
            wbuf,
            jobs,
            date,
            draining,
            ..
        } = self;
        let Some(running) = jobs.get_mut(id) else {
            return Progress::Done {
                status: 0,
                bytes: 0,
            };
        };
        let conn = &mut slots[idx].as_mut().expect("a live slot").conn;
        let Some(protocol) = conn.protocol.as_deref_mut() else {
            return Progress::Wait;
        };
        let at = Moment {
            now,
            date_line: super::date_line(date, &conn.transport),
            draining: *draining,
        };
        let mut out = Out {
            bytes: wbuf,
            outbox: &mut conn.outbox,
        };
        let mut progress = Progress::Wait;
        protocol.answer(running.owner.stream, &at, &mut out, &mut |sink| {
            progress = match expired {
                true => running.job.expire(now, sink),
                false => running.job.advance(now, sink),
            };
        });
        progress
    }

    /// Job `id` of connection `idx` ended: its answer is logged and the protocol told, or (a local
    /// redirect) the path it names is served for the request instead.
    fn job_ended(&mut self, idx: usize, id: usize, progress: Progress) {
        let body_owed = self.jobs.get(id).is_some_and(|r| r.job.body_owed());
        self.slot(idx).jobs.retain(|&j| j != id);
        let Some(owner) = self.jobs.end(id) else {
            return;
        };
        match progress {
            Progress::Redirect(path) => self.serve_redirect(idx, &owner, &path),
            Progress::Done { status, bytes } => {
                self.with_dispatch(idx, None, |protocol, at, out, svc| {
                    let user = owner.user.as_deref();
                    svc.log_line(&owner.request_line, status, bytes, user);
                    if let Some(p) = protocol {
                        p.answered(owner.stream, status, body_owed, at, out);
                    }
                });
            }
            _ => {}
        }
    }

    /// Serves `path` for the request a job answered with a local redirect (a GET in the
    /// request's version, answered on its stream; RFC 3875 §6.2.2).
    fn serve_redirect(&mut self, idx: usize, owner: &Owner, path: &[u8]) {
        let mut raw = b"GET ".to_vec();
        raw.extend_from_slice(path);
        raw.extend_from_slice(match owner.version {
            Version::Http1(0) => b" HTTP/1.0\r\n",
            _ => b" HTTP/1.1\r\n",
        });
        // HTTP/1.1 requires a Host field: without one the head is refused (400).
        raw.extend_from_slice(b"Host: localhost\r\n\r\n");
        let limits = self.site.config.limits();
        let parsed = webstand_http1::request::parse_head(&raw, &limits);
        let redirect = Some((&owner.request_line[..], owner.redirects + 1));
        self.with_dispatch(idx, redirect, |protocol, at, out, svc| {
            let Some(p) = protocol else {
                return;
            };
            let mut served = None;
            p.answer(owner.stream, at, out, &mut |sink| {
                let Ok(Some(parsed)) = &parsed else {
                    let n = crate::response::simple(sink, 502, b"", false);
                    svc.log_line(&owner.request_line, 502, n, None);
                    served = Some(502);
                    return;
                };
                let mut head = request::Head::from_http1(parsed);
                head.version = owner.version;
                let asked = Asked {
                    head: &head,
                    body: b"",
                    stream: owner.stream,
                    max_jobs: usize::MAX,
                };
                if let Served::Answered { status, .. } = svc.serve(&asked, sink) {
                    served = Some(status);
                }
            });
            if let Some(status) = served {
                p.answered(owner.stream, status, false, at, out);
            }
        });
    }

    /// Hands HTTP/2 request bodies already received to the jobs that now take them.
    pub(super) fn pass_bodies(&mut self, idx: usize) -> bool {
        self.with_protocol(idx, |p, _, _, svc| p.pass_bodies(svc))
    }

    /// Ends the connection's jobs that are past their deadline (504, 408, or a cut answer).
    pub(super) fn expire_jobs(&mut self, idx: usize) {
        let mut late = self.slot(idx).jobs.clone();
        let (jobs, now) = (&self.jobs, self.now);
        late.retain(|&id| jobs.get(id).is_some_and(|r| now >= r.job.deadline()));
        if late.is_empty() {
            return;
        }
        for id in late {
            let progress = self.advance_job(idx, id, true);
            self.job_ended(idx, id, progress);
        }
        self.drive(idx, false, false);
    }
}
