//! The network link a target is reached over, and its speed: the local address the kernel picks for
//! the target (a UDP socket connected to it: a route lookup, no packet sent), the interface holding
//! that address (getifaddrs), and that interface's speed from /sys/class/net/IF/speed. Loopback and
//! most virtual links (veth, tunnels) report no speed, nor does sysfs know a rate a router or a
//! traffic shaper further on imposes: the user says it with `--link-speed RATE` ([`parse_rate`]),
//! which wins over sysfs. Without either there is no bandwidth to approach and no finding.

use std::ffi::CStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};

/// A link with a known speed.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Link {
    pub interface: String,
    /// The link's speed in Mbit/s (10⁶ bits a second).
    pub mbit_per_sec: f64,
    /// Where the speed comes from: "--link-speed" (the user) or "sysfs" (the driver).
    pub source: &'static str,
}

/// The link the kernel would use to reach `target`, at `given` Mbit/s when the user said so (then
/// the interface is only named), else when its driver reports a speed.
pub fn link_to(target: SocketAddr, given: Option<f64>) -> Option<Link> {
    let interface = interface_to(target);
    if let Some(mbit_per_sec) = given {
        return Some(Link {
            interface: interface.unwrap_or_else(|| "the link".into()),
            mbit_per_sec,
            source: "--link-speed",
        });
    }
    let interface = interface?;
    let speed = std::fs::read_to_string(format!("/sys/class/net/{interface}/speed")).ok()?;
    // -1 (or a read error, EINVAL) when the link is down or has no fixed speed.
    let mbit_per_sec = speed.trim().parse::<i64>().ok().filter(|s| *s > 0)? as f64;
    Some(Link {
        interface,
        mbit_per_sec,
        source: "sysfs",
    })
}

/// A link rate as tc(8) writes it, in Mbit/s: "20mbit", "1gbit", "500kbit", "100Mbit/s". Bytes
/// per second ("mbps" is megabytes in tc, megabits elsewhere) and bare numbers are refused.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim().to_ascii_lowercase();
    let t = t.strip_suffix("/s").unwrap_or(&t);
    let units = [
        ("kbit", 1e-3),
        ("mbit", 1.0),
        ("gbit", 1e3),
        ("tbit", 1e6),
        ("bit", 1e-6),
    ];
    let parsed = units.iter().find_map(|(unit, scale)| {
        let n: f64 = t.strip_suffix(unit)?.trim().parse().ok()?;
        Some(n * scale)
    });
    match parsed {
        Some(mbit) if mbit.is_finite() && mbit > 0.0 => Ok(mbit),
        _ => Err(format!(
            "{text:?} is not a rate: give a positive number of bits a second with its unit, as tc writes it: 20mbit, 1gbit, 500kbit"
        )),
    }
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
        assert_eq!(link_to(target, None), None);
        let given = link_to(target, Some(20.0)).unwrap();
        assert_eq!(
            (given.interface.as_str(), given.source),
            ("lo", "--link-speed")
        );
    }

    #[test]
    fn rates_are_read_as_tc_writes_them() {
        assert_eq!(parse_rate("20mbit"), Ok(20.0));
        assert_eq!(parse_rate("1Gbit/s"), Ok(1000.0));
        assert_eq!(parse_rate("500kbit"), Ok(0.5));
        assert_eq!(parse_rate("2.5 gbit"), Ok(2500.0));
        for bad in ["20", "20mbps", "mbit", "-5mbit", "0gbit", "fast"] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.contains("20mbit, 1gbit"), "{bad}: {e}");
        }
    }
}
