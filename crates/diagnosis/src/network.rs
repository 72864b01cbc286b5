//! The network link a target is reached over, and its speed: the local address the kernel picks for
//! the target (a UDP socket connected to it: a route lookup, no packet sent), the interface holding
//! that address (getifaddrs), and that interface's speed from /sys/class/net/IF/speed. Loopback and
//! most virtual links report no speed: then there is no bandwidth to approach and no finding.

use std::ffi::CStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};

/// A link with a known speed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Link {
    pub interface: String,
    /// The link's speed as the driver reports it, in Mbit/s (10⁶ bits a second).
    pub mbit_per_sec: u64,
}

/// The link the kernel would use to reach `target`, when its speed is known.
pub fn link_to(target: SocketAddr) -> Option<Link> {
    let interface = interface_to(target)?;
    let speed = std::fs::read_to_string(format!("/sys/class/net/{interface}/speed")).ok()?;
    // -1 (or a read error, EINVAL) when the link is down or has no fixed speed.
    let mbit_per_sec = speed.trim().parse::<i64>().ok().filter(|s| *s > 0)? as u64;
    Some(Link {
        interface,
        mbit_per_sec,
    })
}

/// The name of the interface holding the local address the kernel picks for `target`.
pub fn interface_to(target: SocketAddr) -> Option<String> {
    let any: SocketAddr = match target {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let probe = UdpSocket::bind(any).ok()?;
    probe.connect(target).ok()?;
    interface_of(probe.local_addr().ok()?.ip())
}

/// The interface that holds `local`.
fn interface_of(local: IpAddr) -> Option<String> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs writes a list head into `list`, freed below by freeifaddrs.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return None;
    }
    let mut found = None;
    let mut node = list;
    while !node.is_null() {
        // SAFETY: `node` is a node of the list getifaddrs returned, alive until freeifaddrs.
        let ifa = unsafe { &*node };
        // SAFETY: ifa_addr is null or points to a sockaddr of the family it names.
        if unsafe { address(ifa.ifa_addr) } == Some(local) {
            // SAFETY: ifa_name is a NUL-terminated string owned by the list.
            found = Some(
                unsafe { CStr::from_ptr(ifa.ifa_name) }
                    .to_string_lossy()
                    .into_owned(),
            );
            break;
        }
        node = ifa.ifa_next;
    }
    // SAFETY: `list` came from getifaddrs and is freed once; nothing borrowed from it outlives this.
    unsafe { libc::freeifaddrs(list) };
    found
}

/// The IP address in a sockaddr of family AF_INET or AF_INET6.
///
/// # Safety
/// `sa` is null or points to a valid sockaddr whose storage matches its family.
unsafe fn address(sa: *const libc::sockaddr) -> Option<IpAddr> {
    if sa.is_null() {
        return None;
    }
    match i32::from((*sa).sa_family) {
        libc::AF_INET => {
            let v4 = &*(sa as *const libc::sockaddr_in);
            Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr))))
        }
        libc::AF_INET6 => {
            let v6 = &*(sa as *const libc::sockaddr_in6);
            Some(IpAddr::V6(Ipv6Addr::from(v6.sin6_addr.s6_addr)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_reached_over_lo_which_has_no_speed() {
        let target: SocketAddr = "127.0.0.1:80".parse().unwrap();
        assert_eq!(interface_to(target).as_deref(), Some("lo"));
        assert_eq!(link_to(target), None);
    }
}
