//! slowhttptest (Debian's package of the same name) against one lab server: a slowloris attack
//! (headers that never end) or a slow read (a receive window that barely opens), and whether the
//! service stayed available each second, read from the tool's own per-second CSV. slowhttptest
//! judges availability itself: a fresh connection of its own must be answered within 3 s.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::programs::run_bounded;
use webstand_results::Attacked;

/// How hard an attack is: connections held, for how long.
#[derive(Clone, Copy, Debug)]
pub struct Strength {
    pub connections: usize,
    pub time: Duration,
}

/// How long slowhttptest's probe connection may wait for an answer before the second counts as
/// unavailable (its `-p`).
const PROBE_TIMEOUT_SECS: u64 = 3;

/// The command line of one attack on `http://addr{path}` (`https://` with `tls`: slowhttptest speaks
/// TLS itself, by OpenSSL, without verifying the certificate), writing `prefix.csv`.
pub fn command(
    addr: SocketAddr,
    tls: bool,
    path: &str,
    slow_read: bool,
    strength: Strength,
    prefix: &Path,
) -> Command {
    let secs = strength.time.as_secs().max(1);
    let connections = strength.connections.max(1);
    // Every connection opened within the first third of the attack, so most of it runs at full count.
    let rate = (connections as u64 * 3 / secs).max(50);
    let mut cmd = Command::new("slowhttptest");
    let n = |v: u64| v.to_string();
    if slow_read {
        // Windows of 512-1024 bytes, 32 bytes read every 5 s, the file asked three times.
        cmd.args([
            "-X", "-w", "512", "-y", "1024", "-n", "5", "-z", "32", "-k", "3",
        ]);
    } else {
        // A 24-byte header line every 10 s on each connection, never the blank line.
        cmd.args(["-H", "-i", "10", "-s", "8192", "-t", "GET", "-x", "24"]);
    }
    cmd.args(["-c", &n(connections as u64), "-l", &n(secs), "-r", &n(rate)]);
    cmd.args(["-p", &n(PROBE_TIMEOUT_SECS), "-g", "-o"]);
    cmd.arg(prefix);
    let scheme = if tls { "https" } else { "http" };
    cmd.arg("-u").arg(format!("{scheme}://{addr}{path}"));
    cmd
}

/// Runs one attack (over TLS with `tls`) to its end (bounded: its length plus a margin) and reads
/// its CSV.
pub fn attack(
    addr: SocketAddr,
    tls: bool,
    path: &str,
    slow_read: bool,
    strength: Strength,
    dir: &Path,
) -> Attacked {
    let name = if slow_read { "slow-read" } else { "slowloris" };
    let prefix = dir.join(name);
    let mut out = Attacked {
        connections: strength.connections,
        seconds: strength.time.as_secs(),
        ..Default::default()
    };
    let cmd = command(addr, tls, path, slow_read, strength, &prefix);
    let limit = strength.time.as_secs() + 30;
    if let Err(e) = run_bounded(cmd, limit) {
        out.note = Some(e);
        return out;
    }
    let csv = prefix.with_extension("csv");
    match std::fs::read_to_string(&csv) {
        Ok(text) => match availability(&text) {
            Some((samples, available, most)) => {
                out.samples = samples;
                out.available = available;
                out.most_connected = most;
            }
            None => {
                out.note = Some(format!(
                    "slowhttptest wrote no samples to {}",
                    csv.display()
                ))
            }
        },
        Err(e) => out.note = Some(format!("slowhttptest left no {}: {e}", csv.display())),
    }
    out
}

/// From slowhttptest's CSV (`Seconds,Closed,Pending,Connected,Service Available`, a row per
/// second; the last column is non-zero when its probe was answered): seconds sampled, seconds
/// available, and the most connections open at once. None without a row.
pub fn availability(csv: &str) -> Option<(usize, usize, usize)> {
    let mut rows = 0;
    let mut available = 0;
    let mut most = 0;
    for line in csv.lines().skip(1) {
        let cols: Vec<usize> = line
            .split(',')
            .map(|c| c.trim().parse().unwrap_or(0))
            .collect();
        let [_, _, _, connected, service] = cols[..] else {
            continue;
        };
        rows += 1;
        available += usize::from(service > 0);
        most = most.max(connected);
    }
    (rows > 0).then_some((rows, available, most))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csv_gives_seconds_available_and_the_most_connected() {
        let csv = "Seconds,Closed,Pending,Connected,Service Available\n\
                   0,0,1,0,50\n1,0,1,49,50\n2,3,0,47,0\n3,3,0,47,50\n";
        assert_eq!(availability(csv), Some((4, 3, 49)));
        assert_eq!(
            availability("Seconds,Closed,Pending,Connected,Service Available\n"),
            None
        );
    }
}
