//! The byte stream under a connection. Today a plain TCP socket; TLS adds a variant and a file of
//! its own (the handshake, then records over the same socket), and nothing above this changes: a
//! connection reads, writes, sends file ranges and shuts down only through these methods.

use mio::net::TcpStream;
use std::fs::File;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

pub enum Transport {
    Tcp(TcpStream),
}

impl Transport {
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp(s) => s.read(buf),
        }
    }

    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp(s) => s.write(buf),
        }
    }

    /// Sends bytes; `more` when more output follows at once (MSG_MORE before a file range: the head
    /// and the first file bytes leave in one packet, thttpd's delayed-ACK lesson, without a
    /// TCP_CORK round trip).
    pub fn send(&mut self, buf: &[u8], more: bool) -> io::Result<usize> {
        match self {
            Transport::Tcp(s) => {
                let flags = libc::MSG_NOSIGNAL | if more { libc::MSG_MORE } else { 0 };
                // SAFETY: the pointer and length describe live bytes of `buf`; the descriptor is
                // the open socket `s` owns.
                let r = unsafe { libc::send(s.as_raw_fd(), buf.as_ptr().cast(), buf.len(), flags) };
                if r < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(r as usize)
            }
        }
    }

    /// Sends up to `len` bytes of `file` from `*offset` (sendfile: no copy through user space) and
    /// advances the offset. Ok(0) means the file ended early.
    pub fn send_file(&mut self, file: &File, offset: &mut u64, len: usize) -> io::Result<usize> {
        match self {
            Transport::Tcp(s) => {
                let mut off = *offset as libc::off_t;
                // SAFETY: both descriptors are open (the socket owned by `s`, the file by `file`);
                // `off` is a live local the kernel updates.
                let r = unsafe { libc::sendfile(s.as_raw_fd(), file.as_raw_fd(), &mut off, len) };
                if r < 0 {
                    return Err(io::Error::last_os_error());
                }
                *offset = off as u64;
                Ok(r as usize)
            }
        }
    }

    /// Shuts down the sending side (the peer sees the end of the stream).
    pub fn shutdown_write(&self) {
        match self {
            Transport::Tcp(s) => {
                let _ = s.shutdown(std::net::Shutdown::Write);
            }
        }
    }

    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        match self {
            Transport::Tcp(s) => s.peer_addr(),
        }
    }

    /// Whether the stream is TLS (FastCGI's HTTPS=on).
    pub fn is_tls(&self) -> bool {
        match self {
            Transport::Tcp(_) => false,
        }
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        match self {
            Transport::Tcp(s) => s.local_addr(),
        }
    }

    /// What the event loop registers for readiness.
    pub fn source(&mut self) -> &mut dyn mio::event::Source {
        match self {
            Transport::Tcp(s) => s,
        }
    }
}
