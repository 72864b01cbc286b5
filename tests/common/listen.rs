//! Whether a process a test started holds a listening socket on a loopback port itself (from
//! /proc), not merely whether something answers there: a free port is not reserved, and another
//! test's server may be the one listening.

use std::time::Duration;

/// Whether `child` (or a process it started) comes to hold a listening socket on 127.0.0.1:`port`
/// within `limit`; false when it exits first. Past the limit the test fails.
pub fn listens_itself(
    child: &mut std::process::Child,
    port: u16,
    limit: Duration,
    what: &str,
) -> bool {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if child.try_wait().expect("wait").is_some() {
            return false;
        }
        let mine = socket_inodes(child.id());
        if listening_inodes(port).iter().any(|i| mine.contains(i)) {
            return true;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what} did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The inodes of the sockets open in process `pid` and in its children.
fn socket_inodes(pid: u32) -> Vec<u64> {
    let mut pids = vec![pid.to_string()];
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // The parent's pid is the second field after the command's closing parenthesis.
        let parent = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.split(' ').nth(1));
        if parent == Some(&pid.to_string()) {
            pids.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    let links = pids.iter().flat_map(|p| {
        std::fs::read_dir(format!("/proc/{p}/fd"))
            .into_iter()
            .flatten()
            .flatten()
    });
    links
        .filter_map(|fd| {
            let target = std::fs::read_link(fd.path()).ok()?;
            let t = target.to_str()?;
            t.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
        })
        .collect()
}

/// The inodes of the TCP sockets listening on 127.0.0.1:`port` (or any address), from /proc.
fn listening_inodes(port: u16) -> Vec<u64> {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let ends = [
        format!("0100007F:{port:04X}"),
        format!("00000000:{port:04X}"),
    ];
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let listening =
                f.get(3) == Some(&"0A") && ends.iter().any(|e| f.get(1) == Some(&e.as_str()));
            listening.then(|| f.get(9)?.parse().ok())?
        })
        .collect()
}
