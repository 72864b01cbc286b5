//! The limits every lab server gets alike where it has the concept: listen backlog, keep-alive idle
//! timeout and requests per connection, and the worker and connection caps — derived from the most
//! clients the run will open, so that no figure measures a config cap instead of a server
//! (docs/LAB-CONFIGS.md says how each server spells them, and which ones a server cannot set).

/// What every server's config is derived from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most simultaneous clients any level of the run opens (sweep levels and the max-users
    /// search's limit).
    pub largest_level: usize,
    /// The most simultaneous clients on the CGI workload (what a bridge's worker pool must serve).
    pub cgi_level: usize,
}

/// The keep-alive idle timeout every server gets, seconds: longer than any level, so no connection is
/// closed by the server in the middle of a measured run.
pub const KEEPALIVE_TIMEOUT_SECS: u64 = 65;

/// The most files a server's open-file cache holds at once: nginx's `open_file_cache max=`, and room
/// for lighttpd, whose stat cache keeps a descriptor per file it served (the small-files workload alone
/// is 1000 files). Counted in [`Limits::files`]: with too few descriptors for its cache, lighttpd
/// answers 403 and nginx 500 where the file cannot be opened, and the row measures the cap.
pub const OPEN_FILE_CACHE: usize = 4000;

/// The listen backlog's floor: the kernel's default `somaxconn` on current Linux, and what `webstand
/// serve` used before backlogs were derived.
const MIN_BACKLOG: usize = 4096;

impl Limits {
    /// Limits for a run whose levels go up to `largest_level` clients, `cgi_level` on the CGI
    /// workload (0 when it is not run).
    pub fn new(largest_level: usize, cgi_level: usize) -> Limits {
        Limits {
            largest_level: largest_level.max(1),
            cgi_level: cgi_level.max(1),
        }
    }

    /// The listen backlog: room for every client of the largest level connecting at once (levels start
    /// all their connections together). The kernel caps it at `net.core.somaxconn`.
    pub fn backlog(&self) -> usize {
        self.largest_level.max(MIN_BACKLOG)
    }

    /// Open connections a server may hold: twice the largest level (the connections of the level just
    /// finished may still be closing when the next one opens, and a proxying server holds an upstream
    /// connection per CGI request), plus room for the lab's own checks.
    pub fn connections(&self) -> usize {
        2 * self.largest_level + 64
    }

    /// Threads (or processes) serving one request at a time each: one per client of the largest level,
    /// plus room for the lab's checks, so no request waits for a worker.
    pub fn workers(&self) -> usize {
        self.largest_level + 16
    }

    /// Processes of a CGI bridge (fcgiwrap runs one program at a time per process): one per client of
    /// the CGI workload, as the servers that fork a program per request have no cap either.
    pub fn cgi_workers(&self) -> usize {
        self.cgi_level + 2
    }

    /// Open files a server may need: every connection, a file or a pipe per request in flight, and
    /// its open-file cache.
    pub fn files(&self) -> usize {
        3 * self.connections() + 256 + OPEN_FILE_CACHE
    }
}

impl Default for Limits {
    /// The comparison's defaults: levels up to 128 clients, max users up to 1024.
    fn default() -> Limits {
        Limits::new(1024, 128)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cap_follows_the_largest_level() {
        let small = Limits::new(32, 8);
        let big = Limits::new(10_000, 8);
        assert_eq!(small.backlog(), 4096, "never below the kernel's default");
        assert_eq!(big.backlog(), 10_000);
        for l in [small, big, Limits::default()] {
            assert!(l.connections() >= 2 * l.largest_level);
            assert!(l.workers() > l.largest_level);
            assert!(l.cgi_workers() > l.cgi_level);
            assert!(l.files() > l.connections() + OPEN_FILE_CACHE);
        }
        assert_eq!(Limits::new(0, 0), Limits::new(1, 1));
    }
}
