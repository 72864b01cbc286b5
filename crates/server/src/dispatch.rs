//! The server as a connection's protocol sees it (`service::Service`) for one step of that
//! connection: a request goes to the loop's handler, which answers it into the request's sink or
//! names a script; a script's request becomes a job in the loop's table (as many at once as the
//! protocol allows), whose later answer the loop moves on. Answers are logged here, in the
//! access log's per-loop buffer.

use crate::accesslog;
use crate::handler::{Handler, Routed};
use crate::job::{Client, Start};
use crate::jobs::{Jobs, Owner};
use crate::path::split_target;
use crate::request::Head;
use crate::response::{self, Sink};
use crate::service::{Asked, Served, Service};
use crate::site::Site;
use crate::transport::Transport;
use crate::{cgi, fastcgi};
use std::net::IpAddr;
use std::time::Instant;

/// One connection's step, as its protocol's `Service`.
pub struct Dispatch<'a> {
    pub site: &'a Site,
    pub handler: &'a mut Handler,
    pub jobs: &'a mut Jobs,
    /// The connection's slot and the jobs running for it.
    pub conn: usize,
    pub mine: &'a mut Vec<usize>,
    pub peer: IpAddr,
    /// The connection's byte stream, and its addresses once read (a job's program is told them).
    pub transport: &'a Transport,
    pub client: &'a mut Option<Client>,
    pub log: &'a mut accesslog::Buffer,
    pub now: Instant,
    /// The Unix second (the file cache and the log go by it).
    pub secs: i64,
    /// A local redirect is being served: the original request's line (which the log shows) and
    /// the redirects followed so far.
    pub redirect: Option<(&'a [u8], u8)>,
}

impl Dispatch<'_> {
    /// One access log line about this connection.
    pub fn log_line(&mut self, request_line: &[u8], status: u16, bytes: u64, user: Option<&str>) {
        if let Some(sink) = &self.site.log {
            let peer = self.peer;
            self.log
                .line(sink, self.secs, peer, user, request_line, status, bytes);
        }
    }

    /// The connection as a job tells its program (its addresses read on first use).
    fn client(&mut self) -> Client {
        let (peer, transport) = (self.peer, self.transport);
        *self.client.get_or_insert_with(|| Client {
            peer,
            local: transport.local_addr().ok(),
            remote: transport.peer_addr().ok(),
            tls: transport.is_tls(),
        })
    }

    /// Whom a job for `asked` answers.
    fn owner(&self, asked: &Asked, user: Option<std::sync::Arc<str>>) -> Owner {
        let (request_line, redirects) = match self.redirect {
            Some((line, n)) => (line, n),
            None => (asked.head.request_line(), 0),
        };
        Owner {
            conn: self.conn,
            stream: asked.stream,
            request_line: request_line.to_vec(),
            user,
            version: asked.head.version,
            redirects,
        }
    }

    /// The jobs of this connection answering request `stream`.
    fn job_of(&self, stream: u32) -> Option<usize> {
        self.mine
            .iter()
            .copied()
            .find(|&id| self.jobs.get(id).is_some_and(|r| r.owner.stream == stream))
    }
}

impl Service for Dispatch<'_> {
    fn serve(&mut self, asked: &Asked, sink: &mut dyn Sink) -> Served {
        let head = asked.head;
        match self.handler.route(head, self.secs, sink) {
            Routed::Answered(a) => {
                let line = self.redirect.map_or(head.request_line(), |r| r.0);
                self.log_line(line, a.status, a.bytes, a.user.as_deref());
                Served::Answered {
                    status: a.status,
                    throttle: a.throttle,
                }
            }
            _ if self.mine.len() >= asked.max_jobs => Served::Busy,
            Routed::Cgi(script) => {
                let client = self.client();
                let start = job_start(self.site, asked, &client, script.user.as_deref());
                let program = cgi::Program {
                    rel: &script.rel,
                    path_info: &script.path_info,
                    timeout: self.site.config.cgi_timeout,
                    max_output: self.site.config.cgi_max_output,
                };
                let owner = self.owner(asked, script.user.clone());
                match self.jobs.start_cgi(&start, &program, owner, self.now) {
                    Ok(id) => {
                        self.mine.push(id);
                        Served::Started
                    }
                    Err(_) => {
                        response::simple(sink, 500, b"", false);
                        let line = self.redirect.map_or(head.request_line(), |r| r.0);
                        self.log_line(line, 500, 0, script.user.as_deref());
                        Served::Answered {
                            status: 500,
                            throttle: None,
                        }
                    }
                }
            }
            Routed::FastCgi(script) => {
                let client = self.client();
                let start = job_start(self.site, asked, &client, script.user.as_deref());
                let target = fastcgi::Script {
                    rule: script.rule,
                    name: &script.script_name,
                    path_info: &script.path_info,
                    redirects: self.redirect.map_or(0, |r| r.1),
                };
                let owner = self.owner(asked, script.user.clone());
                let id = self.jobs.start_fastcgi(&start, &target, owner, self.now);
                self.mine.push(id);
                Served::Started
            }
        }
    }

    fn streams_body(&self, head: &Head) -> bool {
        self.site.streams_body(head)
    }

    fn feed_body(&mut self, stream: u32, bytes: &[u8]) -> Option<usize> {
        let id = self.job_of(stream)?;
        let now = self.now;
        let job = &mut self.jobs.get_mut(id)?.job;
        (job.body_owed() && !bytes.is_empty()).then(|| job.take_body(now, bytes))
    }

    fn takes_body(&self, stream: u32) -> bool {
        self.job_of(stream)
            .and_then(|id| self.jobs.get(id))
            .is_some_and(|r| r.job.wants_body())
    }

    fn cancel(&mut self, stream: u32) {
        while let Some(id) = self.job_of(stream) {
            if let Some(r) = self.jobs.get_mut(id) {
                r.job.cancel();
            }
            self.jobs.end(id);
            self.mine.retain(|&j| j != id);
        }
    }

    fn jobs(&self) -> usize {
        self.mine.len()
    }

    fn log(&mut self, request_line: &[u8], status: u16, bytes: u64) {
        self.log_line(request_line, status, bytes, None);
    }
}

/// What a job for `asked` starts with.
fn job_start<'s>(
    site: &'s Site,
    asked: &Asked<'s>,
    client: &'s Client,
    user: Option<&'s str>,
) -> Start<'s> {
    Start {
        head: asked.head,
        body: asked.body,
        query: split_target(asked.head.target).1.unwrap_or(b""),
        user,
        root: &site.root_path,
        client,
    }
}
