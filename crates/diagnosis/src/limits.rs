//! Limits that make a run meaningless before it starts, refused up front with one line: a
//! concurrency the open-files limit cannot hold would otherwise turn into a run of connect failures.

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
}
