//! `webstand serve`: webstand's own event-driven web server, the embedded default target.
//!
//! It owns the listener, the connection state machine, request parsing, static files (cache, ranges,
//! conditional GET), CGI, basic auth, throttling and its config. It knows nothing of the load
//! generator or of reports.
//!
//! Shape: one event loop per thread (mio, edge-triggered), each with its own SO_REUSEPORT listener so
//! the kernel spreads connections; no thread per connection and nothing shared on the hot path. The
//! main thread binds, drops privileges, starts the loops and then only waits for SIGTERM / SIGINT, on
//! which the loops stop accepting, finish what is in flight and exit.
//!
//! Inside a loop data flows one way (docs/ARCHITECTURE.md draws it): the loop (worker/) owns the
//! sockets and the registry; a connection's protocol (h1/, h2/, behind protocol.rs) turns bytes into
//! requests and answers into bytes; the handler (handler/) turns a request into an answer written
//! into a protocol-neutral sink (response.rs), or names a script; a script runs as a job (cgi.rs,
//! fastcgi/, behind job.rs) whose answer comes back through the same sink. Files import downwards
//! only.

pub mod config;
pub mod date;
pub mod mime;
pub mod path;
pub mod pattern;
pub mod range;

mod accesslog;
mod answer_fields;
mod auth;
mod cgi;
mod conn;
mod dispatch;
mod docroot;
mod fastcgi;
mod field_list;
// The fuzz targets' way in (fuzz/): not part of the server.
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod gateway;
mod h1;
mod h2;
mod h3;
mod handler;
mod job;
mod jobs;
mod output;
mod own_files;
mod privs;
mod protocol;
mod quic;
mod request;
mod response;
mod service;
mod site;
mod staged;
mod throttle;
mod tls;
mod transport;
mod turns;
mod worker;

pub use config::Config;

use anyhow::{bail, Context, Result};
use docroot::Docroot;
use mio::{Poll, Waker};
use site::Site;
use socket2::{Domain, Protocol, Socket, Type};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An address the server accepts connections on, as `run` reports it once ready.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    pub addr: SocketAddr,
    pub tls: bool,
    /// HTTP/3 over QUIC (a UDP port; `tls` too).
    pub quic: bool,
}

impl Bound {
    /// `http://ADDR` or `https://ADDR`.
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }
}

/// Runs the server until SIGTERM or SIGINT, then drains and returns. `ready` is called with the
/// bound addresses (plain HTTP first) once the server accepts connections.
pub fn run(config: Config, ready: impl FnOnce(&[Bound])) -> Result<()> {
    config.validate()?;
    raise_fd_limit();
    let threads = if config.threads == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    } else {
        config.threads
    };
    let root = Docroot::open(&config.root)
        .with_context(|| format!("cannot open document root {}", config.root.display()))?;
    // Everything read from the file system is read now, before chroot.
    let root_path = match &config.chroot {
        Some(jail) => privs::path_inside(jail, root.canonical())?,
        None => root.canonical().to_path_buf(),
    };
    let auth = config
        .auth
        .iter()
        .map(auth::Rule::load)
        .collect::<Result<Vec<_>>>()?;
    let mut throttles =
        throttle::parse(config.throttle.iter().map(String::as_str), "throttle rule")?;
    if let Some(file) = &config.throttle_file {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read throttle file {}", file.display()))?;
        throttles.extend(throttle::parse(text.lines(), &file.display().to_string())?);
    }
    let log = match &config.access_log {
        Some(p) => Some(
            accesslog::Sink::open(p)
                .with_context(|| format!("cannot open access log {}", p.display()))?,
        ),
        None => None,
    };
    let own_files = own_files::OwnFiles::collect(&config);
    let fastcgi = config.fastcgi.iter().map(|s| config::parse_fastcgi_rule(s));
    let fastcgi = fastcgi.collect::<Result<Vec<_>>>()?;
    let ids = config.user.as_deref().map(privs::lookup_user).transpose()?;
    let (loops, bound) = listen_all(&config, threads)?;
    let alt_svc = bound
        .iter()
        .find(|b| b.quic)
        .map(|b| format!("Alt-Svc: h3=\":{}\"; ma=86400\r\n", b.addr.port()).into_bytes());
    privs::drop(config.chroot.as_deref(), ids.as_ref())?;
    let site = Arc::new(Site {
        config,
        root,
        root_path,
        auth,
        throttles,
        log,
        own_files,
        boundary: boundary(),
        stopping: AtomicBool::new(false),
        fastcgi,
        threads,
        alt_svc,
    });

    // Signals reach this thread through a socket (signal-hook); the loops retry what they interrupt.
    let signals = StopSignals::catch()?;
    let mut wakers = Vec::new();
    let mut handles = Vec::new();
    for (i, listeners) in loops.into_iter().enumerate() {
        let poll = Poll::new()?;
        wakers.push(Waker::new(poll.registry(), worker::WAKER)?);
        let site = site.clone();
        handles.push(
            std::thread::Builder::new()
                .name(format!("serve-{i}"))
                .spawn(move || worker::Worker::new(poll, listeners, site)?.run())
                .context("cannot start an event loop thread")?,
        );
    }
    ready(&bound);

    wait_for_stop(&site, &signals, &wakers, handles)
}

/// Waits for the loops to finish; on SIGTERM / SIGINT tells them to drain, and gives up waiting
/// after the drain timeout or at a second signal.
fn wait_for_stop(
    site: &Site,
    signals: &StopSignals,
    wakers: &[Waker],
    handles: Vec<std::thread::JoinHandle<std::io::Result<()>>>,
) -> Result<()> {
    let mut stop_deadline: Option<Instant> = None;
    loop {
        if handles.iter().all(|h| h.is_finished()) {
            break;
        }
        if stop_deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        if signals.wait(Duration::from_millis(200)) {
            if stop_deadline.is_some() {
                break; // a second signal: stop waiting
            }
            site.stopping.store(true, Ordering::SeqCst);
            for w in wakers {
                let _ = w.wake();
            }
            stop_deadline =
                Some(Instant::now() + site.config.drain_timeout + Duration::from_secs(1));
        }
    }
    for h in handles {
        if h.is_finished() {
            match h.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => bail!("event loop failed: {e}"),
                Err(_) => bail!("event loop panicked"),
            }
        }
    }
    Ok(())
}

/// The multipart/byteranges boundary of this process (from the time and the pid).
fn boundary() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "webstand-{:016x}",
        (nanos as u64) ^ (u64::from(std::process::id()) << 32)
    )
}

/// The listeners of each loop (plain HTTP, then TLS, then QUIC, as configured) and the addresses
/// they bound. The certificate and key are read here, before chroot.
fn listen_all(config: &Config, threads: usize) -> Result<(Vec<worker::Listeners>, Vec<Bound>)> {
    let mut loops: Vec<worker::Listeners> = (0..threads).map(|_| Default::default()).collect();
    let mut bound = Vec::new();
    let tls = match (&config.listen_tls, &config.tls_cert, &config.tls_key) {
        (Some(addr), Some(cert), Some(key)) => {
            Some((*addr, tls::load(cert, key, &config.tls_protocols)?))
        }
        _ => None,
    };
    let plain = config.plain_listen().map(|a| (a, None));
    for (addr, settings) in plain.into_iter().chain(tls.map(|(a, s)| (a, Some(s)))) {
        let sockets = bind(addr, threads, config.backlog)?;
        bound.push(Bound {
            addr: sockets[0].local_addr()?,
            tls: settings.is_some(),
            quic: false,
        });
        for (socket, listeners) in sockets.into_iter().zip(&mut loops) {
            let tls = settings.clone();
            listeners.tcp.push(worker::Listener { socket, tls });
        }
    }
    if let (Some(addr), Some(cert), Some(key)) =
        (config.listen_quic, &config.tls_cert, &config.tls_key)
    {
        let settings = quic::settings(tls::load_quic(cert, key)?, config)?;
        let sockets = bind_udp(addr, threads)?;
        bound.push(Bound {
            addr: sockets[0].local_addr()?,
            tls: true,
            quic: true,
        });
        for (socket, listeners) in sockets.into_iter().zip(&mut loops) {
            let settings = settings.clone();
            listeners.quic = Some(worker::QuicListener { socket, settings });
        }
    }
    Ok((loops, bound))
}

/// One UDP socket per loop for QUIC, all bound to the same address with SO_REUSEPORT (the kernel
/// keeps a client's datagrams on one of them); port 0 as `bind` does.
fn bind_udp(addr: SocketAddr, n: usize) -> Result<Vec<std::net::UdpSocket>> {
    if addr.port() != 0 {
        // As for TCP: a plain bind first turns a port in use into a clear error.
        let probe = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
        probe
            .bind(&addr.into())
            .with_context(|| format!("cannot listen on {addr} (UDP)"))?;
    }
    let mut out = Vec::with_capacity(n);
    let mut addr = addr;
    for _ in 0..n {
        let sock = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
        sock.set_reuse_port(true)?;
        sock.bind(&addr.into())
            .with_context(|| format!("cannot listen on {addr} (UDP)"))?;
        sock.set_nonblocking(true)?;
        let socket: std::net::UdpSocket = sock.into();
        addr = socket.local_addr()?;
        out.push(socket);
    }
    Ok(out)
}

/// One listening socket per loop, all bound to the same address with SO_REUSEPORT. Port 0 picks a
/// free port for the first and reuses it for the rest.
fn bind(addr: SocketAddr, n: usize, backlog: usize) -> Result<Vec<mio::net::TcpListener>> {
    if addr.port() != 0 {
        // SO_REUSEPORT would let us share a port another server already listens on (same user);
        // a plain bind first turns that into a clear "address in use".
        let probe = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
        probe.set_reuse_address(true)?;
        probe
            .bind(&addr.into())
            .with_context(|| format!("cannot listen on {addr}"))?;
    }
    let mut out = Vec::with_capacity(n);
    let mut addr = addr;
    for _ in 0..n {
        let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
        sock.set_reuse_address(true)?;
        sock.set_reuse_port(true)?;
        // Inherited by accepted sockets: responses leave at once (no Nagle wait behind delayed ACKs).
        sock.set_nodelay(true)?;
        sock.bind(&addr.into())
            .with_context(|| format!("cannot listen on {addr}"))?;
        sock.listen(backlog as i32)?;
        // Wake the loop only once the request's first bytes are in (saves a poll round per connection).
        set_defer_accept(&sock, 1);
        sock.set_nonblocking(true)?;
        let std_listener: std::net::TcpListener = sock.into();
        addr = std_listener.local_addr()?;
        out.push(mio::net::TcpListener::from_std(std_listener));
    }
    Ok(out)
}

fn set_defer_accept(sock: &Socket, secs: libc::c_int) {
    use std::os::fd::AsRawFd;
    // SAFETY: setsockopt with an int option on an open socket; failure only loses the optimisation.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_DEFER_ACCEPT,
            (&secs as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// Raises the soft open-files limit to the hard one: each connection is a descriptor. (A failure
/// leaves the limit as it was; connections past it are refused as at any full table.)
fn raise_fd_limit() {
    let _ = rlimit::increase_nofile_limit(u64::MAX);
}

/// SIGTERM and SIGINT: signal-hook (the program's one signal mechanism) writes a byte per signal
/// into a socket this thread reads.
struct StopSignals(std::os::unix::net::UnixStream);

impl StopSignals {
    fn catch() -> Result<StopSignals> {
        let (read, write) = std::os::unix::net::UnixStream::pair()?;
        for sig in [libc::SIGTERM, libc::SIGINT] {
            signal_hook::low_level::pipe::register(sig, write.try_clone()?)?;
        }
        Ok(StopSignals(read))
    }

    /// Waits up to `limit` for a signal; true if one came.
    fn wait(&self, limit: Duration) -> bool {
        use std::io::Read;
        let _ = self.0.set_read_timeout(Some(limit));
        matches!((&self.0).read(&mut [0u8; 1]), Ok(1))
    }
}
