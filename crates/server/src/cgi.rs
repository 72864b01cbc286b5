//! CGI/1.1 (RFC 3875) for URLs matching the configured patterns.
//!
//! The program runs in its own process group with an environment built from scratch: the RFC's
//! meta-variables, `HTTP_*` for request headers except `Proxy` (httpoxy: no HTTP_PROXY ever),
//! `Authorization`, `Content-Length` and `Content-Type`, and a fixed PATH. The request body is
//! handed over as an in-memory file (memfd) on stdin, so no pipe has to be fed from the loop; stdout
//! is a non-blocking pipe watched by the loop. A time limit (SIGKILL to the group, then 504) and an
//! output limit (502) bound each run. The output is collected whole and answered with a
//! Content-Length, so the connection stays keep-alive.

use crate::conn::Conn;
use crate::handler::Ctx;
use crate::protocol::Channel;
use crate::request::Head;
use crate::respond;
use crate::worker::CGI_BASE;
use mio::unix::SourceFd;
use mio::{Interest, Token};
use std::ffi::OsString;
use std::io::{self, Read, Seek, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

/// A CGI program running for one connection.
pub struct CgiJob {
    pub deadline: Instant,
    child: Child,
    stdout: ChildStdout,
    output: Vec<u8>,
    head_only: bool,
    /// Where the answer goes (and whether the connection stays open after it).
    ch: Channel,
    /// For the access log once the answer is known.
    pub request_line: Vec<u8>,
    pub user: Option<Arc<str>>,
}

impl CgiJob {
    /// The HTTP/2 stream it answers (None for HTTP/1).
    pub fn stream(&self) -> Option<u32> {
        self.ch.stream_id()
    }

    fn new(child: Child, stdout: ChildStdout, req: &Request, deadline: Instant) -> CgiJob {
        let head = req.head;
        CgiJob {
            deadline,
            child,
            stdout,
            output: Vec::new(),
            head_only: head.method == crate::request::Method::Head,
            ch: req.ch,
            request_line: head.request_line().to_vec(),
            user: req.user.clone(),
        }
    }
}

/// What the handler found for a CGI URL.
pub struct Script<'a> {
    /// Path of the program relative to the root.
    pub rel: &'a str,
    /// The decoded rest of the URL path after the program ("" or "/…").
    pub path_info: &'a str,
}

/// Everything the environment needs besides the head.
pub struct Request<'a> {
    pub head: &'a Head<'a>,
    pub body: &'a [u8],
    pub query: &'a [u8],
    pub script: Script<'a>,
    pub user: Option<Arc<str>>,
    pub ch: Channel,
}

impl Ctx {
    /// Starts the program; on failure answers 500 right away. Returns the status when answered now.
    pub fn start_cgi(
        &mut self,
        conn: &mut Conn,
        req: Request,
        out: &mut Vec<u8>,
        idx: usize,
        registry: &mio::Registry,
    ) -> Option<u16> {
        match self.spawn(conn, &req) {
            Ok(mut job) => {
                let fd = job.stdout.as_raw_fd();
                if registry
                    .register(
                        &mut SourceFd(&fd),
                        Token(CGI_BASE + idx),
                        Interest::READABLE,
                    )
                    .is_err()
                {
                    kill_group(&mut job.child);
                    self.zombies.push(job.child);
                    respond::simple(out, self.date.line(), req.ch, 500, b"", false);
                    return Some(500);
                }
                conn.cgi.push(Box::new(job));
                None
            }
            Err(_) => {
                respond::simple(out, self.date.line(), req.ch, 500, b"", false);
                Some(500)
            }
        }
    }

    fn spawn(&self, conn: &Conn, req: &Request) -> io::Result<CgiJob> {
        let head = req.head;
        let shared = &self.shared;
        let program = shared.root_path.join(req.script.rel);
        let dir = program
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_else(|| shared.root_path.clone());
        let mut cmd = Command::new(&program);
        cmd.env_clear().current_dir(dir).process_group(0);
        let mut env = |k: &str, v: &[u8]| {
            cmd.env(k, OsString::from_vec(v.to_vec()));
        };
        env("GATEWAY_INTERFACE", b"CGI/1.1");
        env("SERVER_SOFTWARE", b"webstand");
        env("SERVER_PROTOCOL", head.version.name());
        let (name, port) = conn
            .transport
            .local_addr()
            .ok()
            .map(|a| (a.ip().to_string(), a.port().to_string()))
            .unwrap_or_default();
        env("SERVER_NAME", name.as_bytes());
        env("SERVER_PORT", port.as_bytes());
        if conn.transport.is_tls() {
            env("HTTPS", b"on");
        }
        env("REQUEST_METHOD", head.method_name.as_bytes());
        env("REQUEST_URI", head.target);
        env("SCRIPT_NAME", format!("/{}", req.script.rel).as_bytes());
        env("SCRIPT_FILENAME", program.as_os_str().as_encoded_bytes());
        env(
            "DOCUMENT_ROOT",
            shared.root_path.as_os_str().as_encoded_bytes(),
        );
        if !req.script.path_info.is_empty() {
            env("PATH_INFO", req.script.path_info.as_bytes());
            let translated = shared
                .root_path
                .join(req.script.path_info.trim_start_matches('/'));
            env("PATH_TRANSLATED", translated.as_os_str().as_encoded_bytes());
        }
        env("QUERY_STRING", req.query);
        env("REMOTE_ADDR", conn.peer.to_string().as_bytes());
        env("REMOTE_HOST", conn.peer.to_string().as_bytes());
        env("PATH", b"/usr/local/bin:/usr/bin:/bin");
        if let Some(user) = &req.user {
            env("AUTH_TYPE", b"Basic");
            env("REMOTE_USER", user.as_bytes());
        }
        if head.body != crate::request::RequestBody::None
            || head.method == crate::request::Method::Post
        {
            env("CONTENT_LENGTH", req.body.len().to_string().as_bytes());
        }
        for (name, value) in header_vars(head.fields()) {
            env(&name, &value);
        }
        cmd.stdin(body_file(req.body)?)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("no stdout"))?;
        set_nonblocking(stdout.as_raw_fd())?;
        let deadline = self.now + shared.config.cgi_timeout;
        Ok(CgiJob::new(child, stdout, req, deadline))
    }

    /// Reads what the connection's programs wrote; writes the answer of each one that is done (or
    /// over the limit) into `out`. Returns true when one was answered.
    pub fn cgi_progress(
        &mut self,
        conn: &mut Conn,
        out: &mut Vec<u8>,
        registry: &mio::Registry,
    ) -> bool {
        let mut answered = false;
        let mut i = 0;
        while i < conn.cgi.len() {
            match self.read_program(&mut conn.cgi[i]) {
                None => i += 1,
                Some(forced) => {
                    self.finish_cgi(conn, i, out, registry, forced);
                    answered = true;
                }
            }
        }
        answered
    }

    /// Reads what one program wrote: None while it runs, Some(forced status) once it is done.
    fn read_program(&self, job: &mut CgiJob) -> Option<Option<u16>> {
        let max = self.shared.config.cgi_max_output;
        let mut buf = [0u8; 16 << 10];
        loop {
            match job.stdout.read(&mut buf) {
                Ok(0) => return Some(None),
                Ok(n) => {
                    job.output.extend_from_slice(&buf[..n]);
                    if job.output.len() as u64 > max {
                        return Some(Some(502));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return None,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Some(None),
            }
        }
    }

    /// The time limit passed for some of the connection's programs: kill them and answer 504.
    pub fn cgi_timed_out(&mut self, conn: &mut Conn, out: &mut Vec<u8>, registry: &mio::Registry) {
        let mut i = 0;
        while i < conn.cgi.len() {
            if self.now >= conn.cgi[i].deadline {
                self.finish_cgi(conn, i, out, registry, Some(504));
            } else {
                i += 1;
            }
        }
    }

    /// Ends job `i` (killing the program if it still runs) and answers: `forced` status, or the
    /// program's own answer.
    fn finish_cgi(
        &mut self,
        conn: &mut Conn,
        i: usize,
        out: &mut Vec<u8>,
        registry: &mio::Registry,
        forced: Option<u16>,
    ) {
        let mut job = conn.cgi.remove(i);
        let _ = registry.deregister(&mut SourceFd(&job.stdout.as_raw_fd()));
        if self.draining {
            job.ch.close();
        }
        if forced.is_some() {
            kill_group(&mut job.child);
        }
        let (status, bytes) = match forced {
            Some(s) => (
                s,
                respond::simple(out, self.date.line(), job.ch, s, b"", job.head_only),
            ),
            None => answer(&job, out, self.date.line()),
        };
        if job.ch.ends_connection(status) {
            conn.closing = true;
        }
        self.log(
            conn.peer,
            job.user.as_deref(),
            &job.request_line,
            status,
            bytes,
        );
        self.reap_or_keep(job.child);
    }

    /// The connection went away (`stream` None) or the client reset that HTTP/2 stream: stop
    /// the programs answering it.
    pub fn end_cgi(&mut self, conn: &mut Conn, stream: Option<u32>, registry: &mio::Registry) {
        let mut i = 0;
        while i < conn.cgi.len() {
            if stream.is_some_and(|id| conn.cgi[i].ch.stream_id() != Some(id)) {
                i += 1;
                continue;
            }
            let mut job = conn.cgi.remove(i);
            let _ = registry.deregister(&mut SourceFd(&job.stdout.as_raw_fd()));
            kill_group(&mut job.child);
            self.reap_or_keep(job.child);
        }
    }

    fn reap_or_keep(&mut self, mut child: Child) {
        if !matches!(child.try_wait(), Ok(Some(_))) {
            self.zombies.push(child);
        }
    }

    /// Collects exited programs (called on the loop's tick).
    pub fn reap(&mut self) {
        self.zombies
            .retain_mut(|c| !matches!(c.try_wait(), Ok(Some(_)) | Err(_)));
    }
}

/// Turns the program's output (CGI header fields, blank line, body) into an HTTP answer.
fn answer(job: &CgiJob, out: &mut Vec<u8>, date_line: &[u8]) -> (u16, u64) {
    let bad = |out: &mut Vec<u8>| {
        (
            502,
            respond::simple(out, date_line, job.ch, 502, b"", job.head_only),
        )
    };
    let o = &job.output;
    let (head_end, body_start) = match (find(o, b"\r\n\r\n"), find(o, b"\n\n")) {
        (Some(a), Some(b)) if b < a => (b, b + 2),
        (Some(a), _) => (a, a + 4),
        (None, Some(b)) => (b, b + 2),
        (None, None) => return bad(out),
    };
    let body = &o[body_start..];
    let Some(CgiHead {
        status,
        fields,
        has_type,
        has_location,
    }) = read_cgi_head(&o[..head_end])
    else {
        return bad(out);
    };
    let status = status.unwrap_or(if has_location { 302 } else { 200 });
    if !has_type && !has_location && status == 200 {
        return bad(out);
    }
    let mut ch = job.ch;
    let sent = respond::whole(
        out,
        date_line,
        &mut ch,
        (status, &fields),
        body,
        job.head_only,
    );
    (status, sent)
}

/// The request's header fields as CGI variables: `HTTP_*` (repeated fields joined with ", "), and
/// CONTENT_TYPE; never Proxy (httpoxy), Authorization or Content-Length. The head is parsed again
/// here, a cold path, to see every field.
pub(crate) fn header_vars(fields: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut storage = [httparse::EMPTY_HEADER; crate::config::HEADERS_HARD_MAX];
    let mut vars: Vec<(String, Vec<u8>)> = Vec::new();
    let Ok(httparse::Status::Complete((_, parsed))) = httparse::parse_headers(fields, &mut storage)
    else {
        return vars;
    };
    for h in parsed.iter() {
        let name: String = h
            .name
            .chars()
            .map(|c| {
                if c == '-' {
                    '_'
                } else {
                    c.to_ascii_uppercase()
                }
            })
            .collect();
        if matches!(name.as_str(), "PROXY" | "AUTHORIZATION" | "CONTENT_LENGTH") {
            continue;
        }
        let key = if name == "CONTENT_TYPE" {
            name
        } else {
            format!("HTTP_{name}")
        };
        match vars.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) if key != "CONTENT_TYPE" => {
                v.extend_from_slice(b", ");
                v.extend_from_slice(h.value);
            }
            Some((_, v)) => *v = h.value.to_vec(),
            None => vars.push((key, h.value.to_vec())),
        }
    }
    vars
}

/// The CGI header fields a program wrote, read into what the answer needs.
pub(crate) struct CgiHead {
    pub status: Option<u16>,
    /// The fields passed on, CRLF-terminated (framing and identity are the server's to set).
    pub fields: Vec<u8>,
    pub has_type: bool,
    pub has_location: bool,
}

/// Reads the program's header lines (LF or CRLF); None when one is malformed.
pub(crate) fn read_cgi_head(head: &[u8]) -> Option<CgiHead> {
    let mut status = None;
    let mut fields = Vec::new();
    let (mut has_type, mut has_location) = (false, false);
    for line in head.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let colon = line.iter().position(|&b| b == b':')?;
        let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
        let token = !name.is_empty()
            && name
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(b));
        if !token || value.iter().any(|&b| b < 0x20 && b != b'\t') {
            return None;
        }
        if name.eq_ignore_ascii_case(b"status") {
            let code = value
                .get(..3)
                .and_then(|c| std::str::from_utf8(c).ok())
                .and_then(|c| c.parse::<u16>().ok());
            match code {
                Some(c) if (200..600).contains(&c) => status = Some(c),
                _ => return None,
            }
            continue;
        }
        has_type |= name.eq_ignore_ascii_case(b"content-type");
        has_location |= name.eq_ignore_ascii_case(b"location");
        // Framing and identity are the server's to set.
        if [
            &b"connection"[..],
            b"content-length",
            b"transfer-encoding",
            b"date",
            b"server",
            b"keep-alive",
        ]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
        {
            continue;
        }
        fields.extend_from_slice(name);
        fields.extend_from_slice(b": ");
        fields.extend_from_slice(value);
        fields.extend_from_slice(b"\r\n");
    }
    Some(CgiHead {
        status,
        fields,
        has_type,
        has_location,
    })
}

pub(crate) fn find(h: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(h, needle)
}

/// The request body as an anonymous in-memory file, rewound, for the program's stdin.
fn body_file(body: &[u8]) -> io::Result<Stdio> {
    // SAFETY: memfd_create with a valid name; the descriptor is owned by the File.
    let fd = unsafe { libc::memfd_create(c"cgi-body".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: memfd_create just returned this descriptor and nothing else owns it.
    let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
    f.write_all(body)?;
    f.rewind()?;
    Ok(Stdio::from(f))
}

fn set_nonblocking(fd: i32) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// SIGKILL to the program's whole process group (it was started as the group leader).
fn kill_group(child: &mut Child) {
    // SAFETY: kill with a negative pid signals the group we created.
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGKILL);
    }
    let _ = child.kill();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job_with(output: &[u8]) -> CgiJob {
        let mut child = Command::new("true").stdout(Stdio::piped()).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let _ = child.wait();
        CgiJob {
            deadline: Instant::now(),
            child,
            stdout,
            output: output.to_vec(),
            head_only: false,
            ch: Channel::http1(1, true),
            request_line: Vec::new(),
            user: None,
        }
    }

    fn run(output: &[u8]) -> (u16, String) {
        let mut out = Vec::new();
        let (s, _) = answer(&job_with(output), &mut out, b"Date: d\r\n");
        (s, String::from_utf8_lossy(&out).into_owned())
    }

    #[test]
    fn cgi_output_becomes_a_framed_answer() {
        let (s, r) = run(b"Content-Type: text/plain\nX-A: 1\n\nhello");
        assert_eq!(s, 200);
        assert!(
            r.contains("X-A: 1\r\n")
                && r.contains("Content-Length: 5\r\n")
                && r.ends_with("\r\n\r\nhello"),
            "{r}"
        );
        let (s, r) =
            run(b"Status: 404 Nope\r\nContent-Type: text/plain\r\nContent-Length: 999\r\n\r\nx");
        assert_eq!(s, 404);
        assert!(!r.contains("999"), "{r}");
        let (s, r) = run(b"Location: /elsewhere\n\n");
        assert_eq!(s, 302);
        assert!(r.contains("Location: /elsewhere\r\n"));
    }

    #[test]
    fn malformed_cgi_output_is_502() {
        assert_eq!(run(b"no header end").0, 502);
        assert_eq!(run(b"X-Only: 1\n\nbody").0, 502);
        assert_eq!(run(b"Content-Type: a\rInjected: b\n\n").0, 502);
        assert_eq!(run(b"Status: abc\nContent-Type: a\n\n").0, 502);
    }
}
