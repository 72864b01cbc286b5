//! The switch both roles' QUIC sockets read for UDP segmentation offload: GSO (many datagrams
//! handed to the kernel in one send) and GRO (many read in one receive) are used where the kernel
//! has them, unless the environment says `WEBSTAND_UDP_OFFLOAD=off`, which turns both off, so
//! that what they save can be measured (scripts/bench/h3-cpu.sh).

use std::os::fd::AsRawFd;

/// The environment variable, and the value that turns offload off.
pub const ENV: &str = "WEBSTAND_UDP_OFFLOAD";
pub const OFF: &str = "off";

/// Whether this process runs with GSO and GRO off.
pub fn off() -> bool {
    std::env::var_os(ENV).is_some_and(|v| v == OFF)
}

/// Stops the kernel joining datagrams received on `sock` (UDP_GRO 0), which quinn-udp turns on
/// when it takes a socket; reads then return one datagram each.
pub fn stop_gro(sock: &impl AsRawFd) -> std::io::Result<()> {
    let zero: libc::c_int = 0;
    // SAFETY: a valid descriptor, an option of the size the kernel expects, read only for the call.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_UDP,
            libc::UDP_GRO,
            (&zero as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
