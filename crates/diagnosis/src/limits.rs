//! Limits that make a run meaningless before it starts, refused up front with one line: a
//! concurrency the open-files limit cannot hold, or more connections to one address than the source
//! addresses' ephemeral ports, would otherwise turn into a run of connect failures.

/// Descriptors the generator needs beside its connections (epoll, stdio, the history, /proc reads).
pub const SPARE_FILES: u64 = 64;

/// The message for `clients` connections under an open-files hard limit of `hard`, or None when
/// they fit. The engine raises the soft limit up to the hard one by itself; only the hard limit binds.
pub fn open_files_problem(clients: u64, hard: u64) -> Option<String> {
    let needed = clients.saturating_add(SPARE_FILES);
    (needed > hard).then(|| {
        format!(
            "{clients} connections need about {needed} open files, but the open-files limit (RLIMIT_NOFILE) is {hard}: raise it (as root: ulimit -n {needed}; for a service: LimitNOFILE=, or nofile in /etc/security/limits.conf) or use at most -c {}",
            hard.saturating_sub(SPARE_FILES)
        )
    })
}

/// Checks `clients` against this process's hard open-files limit.
pub fn check_open_files(clients: u64) -> Result<(), String> {
    let Ok((_, hard)) = rlimit::Resource::NOFILE.get() else {
        return Ok(());
    };
    match open_files_problem(clients, hard) {
        Some(msg) => Err(msg),
        None => Ok(()),
    }
}

/// The message for `clients` connections to one server address from `sources` source addresses,
/// each with the ephemeral ports `lo..=hi` (net.ipv4.ip_local_port_range), or None when they fit:
/// the kernel needs a distinct (source address, port) pair for each connection to one address.
pub fn source_ports_problem(clients: u64, sources: u64, (lo, hi): (u64, u64)) -> Option<String> {
    let ports = hi.saturating_sub(lo) + 1;
    let most = ports.saturating_mul(sources.max(1));
    (clients > most).then(|| {
        let from = if sources > 1 {
            format!("{sources} source addresses")
        } else {
            "one source address".into()
        };
        format!(
            "{clients} connections to one address need as many source ports, but {from} give{} {most} (net.ipv4.ip_local_port_range is {lo} {hi}): spread them over more addresses with -B FIRST-LAST (on loopback: -B 127.0.0.2-127.0.0.254), or widen the range (sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\")",
            if sources > 1 { "" } else { "s" }
        )
    })
}

/// This network namespace's ephemeral ports, `lo..=hi` (net.ipv4.ip_local_port_range), when /proc
/// says them.
pub fn port_range() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut it = text.split_whitespace().map(str::parse::<u64>);
    let (Some(Ok(lo)), Some(Ok(hi))) = (it.next(), it.next()) else {
        return None;
    };
    Some((lo, hi))
}

/// Checks `clients` connections from `sources` addresses against this machine's port range (no
/// check where /proc does not say it).
pub fn check_source_ports(clients: u64, sources: u64) -> Result<(), String> {
    let Some((lo, hi)) = port_range() else {
        return Ok(());
    };
    match source_ports_problem(clients, sources, (lo, hi)) {
        Some(msg) => Err(msg),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_limit_and_how_to_raise_it() {
        assert_eq!(open_files_problem(900, 1024), None);
        let m = open_files_problem(5000, 1024).unwrap();
        assert!(m.contains("RLIMIT_NOFILE) is 1024"), "{m}");
        assert!(m.contains("ulimit -n 5064"), "{m}");
        assert!(m.contains("at most -c 960"), "{m}");
        assert_eq!(open_files_problem(u64::MAX, u64::MAX), None);
    }

    #[test]
    fn the_ports_message_names_the_range_and_the_way_out() {
        let range = (32768, 60999);
        assert_eq!(source_ports_problem(28232, 1, range), None);
        let m = source_ports_problem(28233, 1, range).unwrap();
        assert!(m.contains("one source address gives 28232"), "{m}");
        assert!(m.contains("ip_local_port_range is 32768 60999"), "{m}");
        assert!(m.contains("-B 127.0.0.2-127.0.0.254"), "{m}");
        assert_eq!(source_ports_problem(50000, 2, range), None);
        let m = source_ports_problem(60000, 2, range).unwrap();
        assert!(m.contains("2 source addresses give 56464"), "{m}");
    }
}
