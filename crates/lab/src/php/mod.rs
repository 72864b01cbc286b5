//! PHP behind the lab's servers: PHP-FPM (`fpm`) and, for WordPress, a private MariaDB (`mariadb`),
//! each a backend process of the lab (`daemon`), plus the two dynamic workloads' content: the
//! generated page (`page`) and the WordPress site (`wordpress`, set up by `wp.php`). Each server
//! kind's file spells how it passes PHP on (`crate::servers`). `Backends` is what a comparison runs
//! beside its servers, and what its CPU per request adds to theirs.

pub mod daemon;
pub mod fpm;
pub mod mariadb;
pub mod page;
pub mod wordpress;

use anyhow::Result;
use std::path::{Path, PathBuf};
use webstand_results::CpuTime;

/// How the backends are run.
#[derive(Clone, Debug)]
pub struct Setup {
    /// PHP-FPM's binary: a name found as servers are, or a path.
    pub fpm: String,
    /// PHP-FPM's workers (a static pool).
    pub children: usize,
    /// PHP-FPM's listen backlog (the servers' own).
    pub backlog: usize,
    /// CPUs for PHP-FPM and MariaDB: the servers' (everything serving a page shares them).
    pub cpus: Option<Vec<usize>>,
    /// Also MariaDB and the WordPress site.
    pub wordpress: bool,
}

/// PHP-FPM's workers unless told otherwise: enough to keep one CPU busy while some wait on MariaDB.
pub const DEFAULT_CHILDREN: usize = 8;

/// The processes PHP pages need, started once for a whole comparison (every server passes PHP to
/// the same pool). Dropping it stops them.
#[derive(Debug)]
pub struct Backends {
    /// Dropped before MariaDB (fields drop in order): PHP-FPM may hold connections to it.
    pub fpm: fpm::PhpFpm,
    pub mariadb: Option<mariadb::MariaDb>,
    /// The installed site, with the wordpress workload.
    pub site: Option<wordpress::Site>,
    /// PHP-FPM's config, log and socket, and WordPress's install script: root's, reachable by the
    /// workers' group only (`users::share`).
    dir: tempfile::TempDir,
}

impl Backends {
    /// Starts MariaDB and installs WordPress into `docroot` (with `setup.wordpress`), then PHP-FPM;
    /// writes the `php` workload's page into `docroot` either way. Everything
    /// started so far is stopped when a later step fails.
    pub fn start(docroot: &Path, setup: &Setup) -> Result<Backends> {
        let cpus = setup.cpus.as_deref();
        let dir = crate::owner::scratch_dir("php")?;
        crate::users::share(dir.path(), 0o750)?;
        page::write(docroot)?;
        // PHP-FPM's binary is looked for first: without it nothing else is worth starting.
        fpm::require_program(&setup.fpm)?;
        let (mariadb, site) = if setup.wordpress {
            let db = mariadb::MariaDb::start(cpus)?;
            wordpress::lay_out(docroot, &db.socket)?;
            let site = wordpress::install(docroot, dir.path(), wordpress::TARGET_BYTES)?;
            (Some(db), Some(site))
        } else {
            (None, None)
        };
        let fpm = fpm::PhpFpm::start(&setup.fpm, dir.path(), setup.children, setup.backlog, cpus)?;
        Ok(Backends {
            fpm,
            mariadb,
            site,
            dir,
        })
    }

    /// PHP-FPM's socket.
    pub fn socket(&self) -> PathBuf {
        self.fpm.socket.clone()
    }

    /// The directory holding their configs, sockets and logs.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// CPU time of PHP-FPM and MariaDB so far, every process of theirs included.
    pub fn cpu(&self) -> CpuTime {
        let fpm = self.fpm.daemon.cpu();
        let db = self
            .mariadb
            .as_ref()
            .map(|m| m.daemon.cpu())
            .unwrap_or_default();
        CpuTime {
            user: fpm.user + db.user,
            sys: fpm.sys + db.sys,
        }
    }

    /// Their pids now (for a test's leftover check, or memory).
    pub fn pids(&self) -> Vec<i32> {
        let mut p = self.fpm.daemon.pids();
        if let Some(m) = &self.mariadb {
            p.extend(m.daemon.pids());
        }
        p
    }

    /// Stops PHP-FPM, then MariaDB. Errors name what was left behind.
    pub fn stop(&mut self) -> Result<()> {
        let fpm = self.fpm.daemon.stop();
        let db = self.mariadb.as_mut().map_or(Ok(()), |m| m.daemon.stop());
        fpm.and(db)
    }
}
