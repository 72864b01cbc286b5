//! The byte stream under a connection: a plain TCP socket, TLS over one (tls.rs), or a QUIC
//! connection's streams as records (quic/conn.rs; its protocol, HTTP/3, reads and writes them).
//! A connection reads, writes, sends file ranges and shuts down only through these methods, so
//! nothing above knows which it has; the differences it may ask about are a handshake still under
//! way and whether the loop wakes it through a socket of its own (QUIC's share the loop's).

use crate::quic::conn::QuicConn;
use crate::tls::TlsStream;
use mio::net::TcpStream;
use std::fs::File;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

pub enum Transport {
    Tcp(TcpStream),
    Tls(Box<TlsStream>),
    Quic(Box<QuicConn>),
}

impl Transport {
    /// Reads input (plaintext under TLS); Ok(0) at the end of the stream.
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp(s) => s.read(buf),
            Transport::Tls(t) => t.read(buf),
            Transport::Quic(q) => q.read(buf),
        }
    }

    /// Whether more input may wait after a read of `n` bytes into a buffer of `cap`: a short TCP
    /// read drained the socket, and edge-triggered epoll reports the next arrival.
    pub fn may_have_more(&self, n: usize, cap: usize) -> bool {
        match self {
            Transport::Tcp(_) => n == cap,
            Transport::Tls(t) => t.may_have_more(),
            Transport::Quic(q) => q.may_have_more(),
        }
    }

    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp(s) => s.write(buf),
            Transport::Tls(t) => t.write(buf),
            Transport::Quic(q) => q.write(buf),
        }
    }

    /// Sends bytes; `more` when more output follows at once (MSG_MORE before a file range: the head
    /// and the first file bytes leave in one packet, thttpd's delayed-ACK lesson, without a
    /// TCP_CORK round trip). TLS gathers records itself and ignores it.
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
            Transport::Tls(t) => t.write(buf),
            Transport::Quic(q) => q.write(buf),
        }
    }

    /// Sends up to `len` bytes of `file` from `*offset` and advances the offset (TCP: sendfile, no
    /// copy through user space; TLS: read and encrypted). Ok(0) means the file ended early.
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
            Transport::Tls(t) => t.send_file(file, offset, len),
            // HTTP/3 reads its file ranges itself (h3/send.rs): records are not file bytes.
            Transport::Quic(_) => Err(io::ErrorKind::Unsupported.into()),
        }
    }

    /// Writes what the transport itself still holds (TLS records); Ok(false) while the socket is
    /// full.
    pub fn flush(&mut self) -> io::Result<bool> {
        match self {
            Transport::Tcp(_) => Ok(true),
            Transport::Tls(t) => t.flush(),
            Transport::Quic(q) => q.flush(),
        }
    }

    /// Output the transport holds that the socket has not taken yet.
    pub fn pending(&self) -> bool {
        match self {
            Transport::Tcp(_) => false,
            Transport::Tls(t) => t.pending(),
            Transport::Quic(q) => q.pending(),
        }
    }

    /// A TLS handshake is under way (no request can have started; the header timeout bounds it).
    pub fn handshaking(&self) -> bool {
        match self {
            Transport::Tcp(_) => false,
            Transport::Tls(t) => t.handshaking(),
            Transport::Quic(q) => q.handshaking(),
        }
    }

    /// Shuts down the sending side (the peer sees the end of the stream; a QUIC connection
    /// closes once its answers are acknowledged).
    pub fn shutdown_write(&mut self) {
        match self {
            Transport::Tcp(s) => {
                let _ = s.shutdown(std::net::Shutdown::Write);
            }
            Transport::Tls(t) => t.shutdown_write(),
            Transport::Quic(q) => q.finish(),
        }
    }

    /// Every close lingers (`shutdown_write`, then reading until the connection is over): QUIC's,
    /// whose answers may still be unacknowledged, and whose CONNECTION_CLOSE has a closing
    /// period of its own.
    pub fn always_lingers(&self) -> bool {
        matches!(self, Transport::Quic(_))
    }

    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        match self {
            Transport::Tcp(s) => s.peer_addr(),
            Transport::Tls(t) => t.socket().peer_addr(),
            Transport::Quic(q) => Ok(q.peer_addr()),
        }
    }

    /// Whether the bytes travel encrypted (CGI and FastCGI programs see HTTPS=on).
    /// TLS negotiated `h2` by ALPN.
    pub fn alpn_h2(&self) -> bool {
        match self {
            Transport::Tls(t) => t.alpn_h2(),
            Transport::Tcp(_) | Transport::Quic(_) => false,
        }
    }

    /// QUIC is TLS 1.3 too.
    pub fn is_tls(&self) -> bool {
        matches!(self, Transport::Tls(_) | Transport::Quic(_))
    }

    /// A QUIC connection's streams (its protocol is HTTP/3).
    pub fn quic(&mut self) -> Option<&mut QuicConn> {
        match self {
            Transport::Quic(q) => Some(q),
            _ => None,
        }
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        match self {
            Transport::Tcp(s) => s.local_addr(),
            Transport::Tls(t) => t.socket().local_addr(),
            Transport::Quic(q) => Ok(q.local_addr()),
        }
    }

    /// What the event loop registers for readiness (none for QUIC: the loop's socket carries
    /// every QUIC connection's datagrams).
    pub fn source(&mut self) -> Option<&mut dyn mio::event::Source> {
        match self {
            Transport::Tcp(s) => Some(s),
            Transport::Tls(t) => Some(t.socket_mut()),
            Transport::Quic(_) => None,
        }
    }
}
