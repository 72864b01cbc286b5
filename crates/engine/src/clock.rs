//! Timing: the load threads' own CPU time, and the kernel's arrival stamps of received data
//! (`SO_TIMESTAMPNS`) turned into `Instant`s with one clock snapshot per pass of the loop
//! ([`PassClock`]), so a response's end time is when it arrived, not when the loop got round to
//! reading it.

use mio::net::TcpStream;
use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A stamp further than this from the clock snapshot is not trusted (the wall clock stepped).
const TRUSTED: Duration = Duration::from_secs(1);

/// CPU time of the calling thread: the load threads measure themselves, so a server running in the
/// same process (the lab can start one in-process) or a progress display is not charged to the generator.
pub(crate) fn thread_cpu() -> webstand_results::result::CpuTime {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_THREAD is valid on Linux.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let d = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    webstand_results::result::CpuTime {
        user: d(ru.ru_utime),
        sys: d(ru.ru_stime),
    }
}

pub(crate) fn micros(d: Duration) -> u64 {
    d.as_micros().min(u64::MAX as u128) as u64
}

/// Asks the kernel to stamp each received segment with its arrival time (read by `recv_stamped`).
pub(crate) fn kernel_arrival_times(s: &TcpStream) {
    let on: libc::c_int = 1;
    // SAFETY: setsockopt with a valid fd and an int option; failure only means no stamps.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// One `recvmsg`: the byte count and, when the kernel stamped the data, the wall-clock time at which
/// the last segment read arrived (convert it with a [`StampClock`]).
pub(crate) fn recv_stamped(s: &TcpStream, buf: &mut [u8]) -> io::Result<(usize, Option<Duration>)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut control = [0u64; 8];
    // SAFETY: msghdr is plain data; zeroed is a valid empty header, filled in below with live buffers.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: the header points at `buf` and `control`, both alive and of the lengths given.
    let n = unsafe { libc::recvmsg(s.as_raw_fd(), &mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut stamp = None;
    // SAFETY: walking the control messages the kernel wrote into `control`, with libc's macros.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                stamp = Some(std::ptr::read_unaligned(
                    libc::CMSG_DATA(c) as *const libc::timespec
                ));
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    let at = stamp.and_then(|ts| {
        Some(Duration::new(
            u64::try_from(ts.tv_sec).ok()?,
            u32::try_from(ts.tv_nsec).ok()?,
        ))
    });
    Ok((n as usize, at))
}

/// The monotonic and the wall clock read together, once per event batch rather than once per read:
/// a wall-clock stamp is then placed on the monotonic time line by its distance from the snapshot.
#[derive(Clone, Copy)]
pub(crate) struct StampClock {
    mono: Instant,
    wall: Duration,
}

impl StampClock {
    pub(crate) fn now() -> StampClock {
        let mono = Instant::now();
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        StampClock { mono, wall }
    }

    /// The `Instant` of a wall-clock stamp; `None` when it lies a second or more from the snapshot.
    pub(crate) fn instant(&self, at: Duration) -> Option<Instant> {
        if at <= self.wall {
            Some(self.wall - at)
                .filter(|age| *age < TRUSTED)
                .and_then(|age| self.mono.checked_sub(age))
        } else {
            Some(at - self.wall)
                .filter(|ahead| *ahead < TRUSTED)
                .map(|ahead| self.mono + ahead)
        }
    }
}

/// A pass's clock for arrival stamps: the snapshot is taken at the first stamp the pass converts
/// (HTTP/1's responses and HTTP/2's reads), and dropped when the driver starts its next pass.
#[derive(Default)]
pub(crate) struct PassClock {
    snapshot: Option<StampClock>,
}

impl PassClock {
    /// When data arrived: the kernel's stamp `at` on this pass's time line, or now without one
    /// (or with one too far from the snapshot to trust).
    pub(crate) fn arrival(&mut self, at: Option<Duration>) -> Instant {
        at.and_then(|at| {
            self.snapshot
                .get_or_insert_with(StampClock::now)
                .instant(at)
        })
        .unwrap_or_else(Instant::now)
    }

    /// A new pass: the next stamp takes a fresh snapshot.
    pub(crate) fn next_pass(&mut self) {
        self.snapshot = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn kernel_stamps_arrival_between_send_and_read() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        kernel_arrival_times(&s);
        let (mut server, _) = listener.accept().unwrap();
        // The kernel switches stamping on for the whole stack asynchronously after the first socket
        // asks for it: wait until a probe byte comes back stamped.
        let mut buf = [0u8; 16];
        for _ in 0..200 {
            server.write_all(b"p").unwrap();
            std::thread::sleep(Duration::from_millis(1));
            if matches!(recv_stamped(&s, &mut buf), Ok((_, Some(_)))) {
                break;
            }
        }
        let before = Instant::now();
        server.write_all(b"hello").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let (n, at) = recv_stamped(&s, &mut buf).unwrap();
        let read_at = Instant::now();
        let arrived = StampClock::now()
            .instant(at.expect("the kernel stamps loopback data"))
            .expect("a fresh stamp is trusted");
        assert_eq!(&buf[..n], b"hello");
        assert!(
            arrived >= before - Duration::from_millis(1),
            "stamped before it was sent"
        );
        assert!(
            read_at - arrived >= Duration::from_millis(15),
            "the stamp is the arrival, not the read"
        );
    }

    #[test]
    fn stamps_convert_on_both_sides_of_the_snapshot_and_far_ones_are_refused() {
        let c = StampClock::now();
        let ms = Duration::from_millis;
        assert_eq!(c.instant(c.wall - ms(5)), Some(c.mono - ms(5)));
        assert_eq!(c.instant(c.wall + ms(5)), Some(c.mono + ms(5)));
        assert_eq!(c.instant(c.wall - ms(1500)), None);
        assert_eq!(c.instant(c.wall + ms(1500)), None);
    }
}
