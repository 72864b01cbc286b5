//! CGI/1.1 (RFC 3875) for URLs matching the configured patterns.
//!
//! The program runs in its own process group with an environment built from scratch: the RFC's
//! meta-variables, `HTTP_*` for request headers except `Proxy` (httpoxy: no HTTP_PROXY ever),
//! `Authorization`, `Content-Length` and `Content-Type`, and a fixed PATH. The request body is
//! handed over as an in-memory file (memfd) on stdin, so no pipe has to be fed from the loop; stdout
//! is a non-blocking pipe watched by the loop. A time limit (SIGKILL to the group, then 504) and an
//! output limit (502) bound each run. The output is collected whole and answered with a
//! Content-Length, so the connection stays keep-alive.

use crate::gateway::{find, header_vars, read_cgi_head, CgiHead};
use crate::job::{Job, Progress, Start};
use crate::request::{Method, RequestBody};
#[cfg(test)]
use crate::response::Length;
use crate::response::{self, Sink};
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use std::ffi::OsString;
use std::io::{self, Read, Seek, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// The program a request runs.
pub struct Program<'a> {
    /// Path of the program relative to the root, and the decoded rest of the URL path after it.
    pub rel: &'a str,
    pub path_info: &'a str,
    pub timeout: Duration,
    pub max_output: u64,
}

/// A CGI program running for one request.
pub struct CgiJob {
    deadline: Instant,
    child: Child,
    /// The program's output, watched by the loop (None once the job ended: closing it takes it
    /// out of the loop's watch).
    stdout: Option<ChildStdout>,
    output: Vec<u8>,
    max_output: u64,
    head_only: bool,
}

impl CgiJob {
    /// Starts the program, its output watched under `token`.
    pub fn start(
        req: &Start,
        program: &Program,
        now: Instant,
        registry: &Registry,
        token: Token,
    ) -> io::Result<CgiJob> {
        let mut child = spawn(req, program)?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("no stdout"));
        let watched = stdout.and_then(|out| {
            set_nonblocking(out.as_raw_fd())?;
            let fd = out.as_raw_fd();
            registry.register(&mut SourceFd(&fd), token, Interest::READABLE)?;
            Ok(out)
        });
        let stdout = match watched {
            Ok(out) => out,
            Err(e) => {
                kill_group(&mut child);
                let _ = child.try_wait();
                return Err(e);
            }
        };
        Ok(CgiJob {
            deadline: now + program.timeout,
            child,
            stdout: Some(stdout),
            output: Vec::new(),
            max_output: program.max_output,
            head_only: req.head.method == Method::Head,
        })
    }

    /// Reads what the program wrote: None while it runs, Some(forced status) once it is done.
    fn read_program(&mut self) -> Option<Option<u16>> {
        let stdout = self.stdout.as_mut()?;
        let mut buf = [0u8; 16 << 10];
        loop {
            match stdout.read(&mut buf) {
                Ok(0) => return Some(None),
                Ok(n) => {
                    self.output.extend_from_slice(&buf[..n]);
                    if self.output.len() as u64 > self.max_output {
                        return Some(Some(502));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return None,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Some(None),
            }
        }
    }

    /// Ends the job (killing the program if it still runs when `forced`) and answers: `forced`
    /// status, or the program's own answer.
    fn finish(&mut self, sink: &mut dyn Sink, forced: Option<u16>) -> Progress {
        self.stdout = None;
        if forced.is_some() {
            kill_group(&mut self.child);
        }
        let (status, bytes) = match forced {
            Some(s) => (s, response::simple(sink, s, b"", self.head_only)),
            None => answer(&self.output, sink, self.head_only),
        };
        Progress::Done { status, bytes }
    }
}

impl Job for CgiJob {
    fn advance(&mut self, _: Instant, sink: &mut dyn Sink) -> Progress {
        match self.read_program() {
            None => Progress::Wait,
            Some(forced) => self.finish(sink, forced),
        }
    }

    fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The time limit passed: kill the program and answer 504.
    fn expire(&mut self, _: Instant, sink: &mut dyn Sink) -> Progress {
        self.finish(sink, Some(504))
    }

    fn cancel(&mut self) {
        self.stdout = None;
        kill_group(&mut self.child);
    }

    /// The body went to the program whole, on its stdin.
    fn take_body(&mut self, _: Instant, _: &[u8]) -> usize {
        0
    }

    fn body_owed(&self) -> bool {
        false
    }

    fn wants_body(&self) -> bool {
        false
    }

    /// The program has exited and been reaped.
    fn settled(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)) | Err(_))
    }
}

/// Starts the program in its own process group with the CGI environment, the body on its stdin.
fn spawn(req: &Start, script: &Program) -> io::Result<Child> {
    let head = req.head;
    let program = req.root.join(script.rel);
    let dir = program
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_else(|| req.root.to_path_buf());
    let mut cmd = Command::new(&program);
    cmd.env_clear().current_dir(dir).process_group(0);
    let mut env = |k: &str, v: &[u8]| {
        cmd.env(k, OsString::from_vec(v.to_vec()));
    };
    env("GATEWAY_INTERFACE", b"CGI/1.1");
    env("SERVER_SOFTWARE", b"webstand");
    env("SERVER_PROTOCOL", head.version.name());
    let (name, port) = req
        .client
        .local
        .map(|a| (a.ip().to_string(), a.port().to_string()))
        .unwrap_or_default();
    env("SERVER_NAME", name.as_bytes());
    env("SERVER_PORT", port.as_bytes());
    if req.client.tls {
        env("HTTPS", b"on");
    }
    env("REQUEST_METHOD", head.method_name.as_bytes());
    env("REQUEST_URI", head.target);
    env("SCRIPT_NAME", format!("/{}", script.rel).as_bytes());
    env("SCRIPT_FILENAME", program.as_os_str().as_encoded_bytes());
    env("DOCUMENT_ROOT", req.root.as_os_str().as_encoded_bytes());
    if !script.path_info.is_empty() {
        env("PATH_INFO", script.path_info.as_bytes());
        let translated = req.root.join(script.path_info.trim_start_matches('/'));
        env("PATH_TRANSLATED", translated.as_os_str().as_encoded_bytes());
    }
    env("QUERY_STRING", req.query);
    let peer = req.client.peer.to_string();
    env("REMOTE_ADDR", peer.as_bytes());
    env("REMOTE_HOST", peer.as_bytes());
    env("PATH", b"/usr/local/bin:/usr/bin:/bin");
    if let Some(user) = req.user {
        env("AUTH_TYPE", b"Basic");
        env("REMOTE_USER", user.as_bytes());
    }
    if head.body != RequestBody::None || head.method == Method::Post {
        env("CONTENT_LENGTH", req.body.len().to_string().as_bytes());
    }
    for (name, value) in header_vars(head.fields()) {
        env(&name, &value);
    }
    cmd.stdin(body_file(req.body)?)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    cmd.spawn()
}

/// Turns the program's output (CGI header fields, blank line, body) into an HTTP answer.
pub(crate) fn answer(o: &[u8], sink: &mut dyn Sink, head_only: bool) -> (u16, u64) {
    let bad = |sink: &mut dyn Sink| (502, response::simple(sink, 502, b"", head_only));
    let (head_end, body_start) = match (find(o, b"\r\n\r\n"), find(o, b"\n\n")) {
        (Some(a), Some(b)) if b < a => (b, b + 2),
        (Some(a), _) => (a, a + 4),
        (None, Some(b)) => (b, b + 2),
        (None, None) => return bad(sink),
    };
    let body = &o[body_start..];
    let Some(CgiHead {
        status,
        fields,
        has_type,
        has_location,
    }) = read_cgi_head(&o[..head_end])
    else {
        return bad(sink);
    };
    let status = status.unwrap_or(if has_location { 302 } else { 200 });
    if !has_type && !has_location && status == 200 {
        return bad(sink);
    }
    let sent = response::whole(sink, (status, &fields), body, head_only);
    (status, sent)
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
    use crate::response::Recorder;

    fn run(output: &[u8]) -> (u16, Recorder) {
        let mut sink = Recorder::default();
        let (s, _) = answer(output, &mut sink, false);
        (s, sink)
    }

    #[test]
    fn cgi_output_becomes_a_framed_answer() {
        let (s, r) = run(b"Content-Type: text/plain\nX-A: 1\n\nhello");
        assert_eq!(s, 200);
        assert!(r.fields().contains("X-A: 1\r\n"), "{r:?}");
        assert_eq!(r.length, Some(Length::Known(5)));
        assert_eq!(r.body, b"hello");
        let (s, r) =
            run(b"Status: 404 Nope\r\nContent-Type: text/plain\r\nContent-Length: 999\r\n\r\nx");
        assert_eq!(s, 404);
        assert!(!r.fields().contains("999"), "{r:?}");
        let (s, r) = run(b"Location: /elsewhere\n\n");
        assert_eq!(s, 302);
        assert!(r.fields().contains("Location: /elsewhere\r\n"));
    }

    #[test]
    fn malformed_cgi_output_is_502() {
        assert_eq!(run(b"no header end").0, 502);
        assert_eq!(run(b"X-Only: 1\n\nbody").0, 502);
        assert_eq!(run(b"Content-Type: a\rInjected: b\n\n").0, 502);
        assert_eq!(run(b"Status: abc\nContent-Type: a\n\n").0, 502);
    }
}
