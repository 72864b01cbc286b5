//! The access log in Common Log Format:
//! `host ident authuser [day/Mon/year:hh:mm:ss +0000] "request line" status bytes`.
//! Each loop buffers its lines and writes them in whole-line chunks (once a second, when the buffer
//! is large, and at exit) to a file opened O_APPEND, so loops never interleave within a line.

use std::fs::File;
use std::io::Write;
use std::net::IpAddr;
use std::path::Path;

const FLUSH_AT: usize = 32 << 10;

/// Where the lines go: a file shared by the loops (O_APPEND keeps each write whole), or stderr.
pub enum Sink {
    File(File),
    Stderr,
}

impl Sink {
    pub fn open(path: &Path) -> std::io::Result<Sink> {
        if path == Path::new("-") {
            return Ok(Sink::Stderr);
        }
        Ok(Sink::File(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?,
        ))
    }

    fn write_all(&self, bytes: &[u8]) {
        // A failing log must not stop the server; the lines are dropped.
        let _ = match self {
            Sink::File(f) => (&*f).write_all(bytes),
            Sink::Stderr => std::io::stderr().lock().write_all(bytes),
        };
    }
}

/// One loop's buffer of log lines.
pub struct Buffer {
    buf: Vec<u8>,
    stamp_secs: i64,
    stamp: [u8; 28],
}

impl Default for Buffer {
    fn default() -> Self {
        Buffer {
            buf: Vec::with_capacity(FLUSH_AT + 1024),
            stamp_secs: i64::MIN,
            stamp: [b' '; 28],
        }
    }
}

impl Buffer {
    /// Appends one line; `request` is the request line, `user` the authenticated user if any.
    #[allow(clippy::too_many_arguments)]
    pub fn line(
        &mut self,
        sink: &Sink,
        secs: i64,
        peer: IpAddr,
        user: Option<&str>,
        request: &[u8],
        status: u16,
        bytes: u64,
    ) {
        if secs != self.stamp_secs {
            self.stamp_secs = secs;
            self.stamp = clf_time(secs);
        }
        let b = &mut self.buf;
        let _ = write!(b, "{peer} - {} ", user.unwrap_or("-"));
        b.extend_from_slice(&self.stamp);
        b.extend_from_slice(b" \"");
        // Escape quotes, backslashes and non-printing bytes so one request stays one parseable line.
        for &c in request {
            match c {
                b'"' | b'\\' => {
                    b.push(b'\\');
                    b.push(c);
                }
                0x20..=0x7e => b.push(c),
                _ => {
                    let _ = write!(b, "\\x{c:02x}");
                }
            }
        }
        let _ = writeln!(b, "\" {status} {bytes}");
        if b.len() >= FLUSH_AT {
            self.flush(sink);
        }
    }

    pub fn flush(&mut self, sink: &Sink) {
        if !self.buf.is_empty() {
            sink.write_all(&self.buf);
            self.buf.clear();
        }
    }
}

/// "[10/Oct/2000:13:55:36 +0000]": the Unix second in UTC, as Common Log Format writes it.
fn clf_time(secs: i64) -> [u8; 28] {
    let mut out = *b"[01/Jan/1970:00:00:00 +0000]";
    let Ok(t) = jiff::Timestamp::from_second(secs) else {
        return out;
    };
    let text = t.strftime("[%d/%b/%Y:%H:%M:%S +0000]").to_string();
    if text.len() == out.len() {
        out.copy_from_slice(text.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_clf_and_escaped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let sink = Sink::open(&path).unwrap();
        let mut b = Buffer::default();
        b.line(
            &sink,
            971_186_136,
            "127.0.0.1".parse().unwrap(),
            None,
            b"GET /a HTTP/1.1",
            200,
            2048,
        );
        b.line(
            &sink,
            971_186_136,
            "::1".parse().unwrap(),
            Some("ann"),
            b"GET /\"x\x01 HTTP/1.0",
            404,
            0,
        );
        assert!(
            std::fs::read_to_string(&path).unwrap().is_empty(),
            "buffered until flushed"
        );
        b.flush(&sink);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 2048"
        );
        assert_eq!(
            lines[1],
            "::1 - ann [10/Oct/2000:13:55:36 +0000] \"GET /\\\"x\\x01 HTTP/1.0\" 404 0"
        );
    }
}
