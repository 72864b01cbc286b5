//! PHP behind the lab's servers: PHP-FPM (`fpm`) and, for WordPress, a private MariaDB (`mariadb`),
//! each a backend process of the lab (`daemon`), plus the two dynamic workloads' content: the
//! generated page (`page`) and the WordPress site (`wordpress`, set up by `wp.php`). `Backends` is
//! what a comparison runs beside its servers, and what its CPU per request adds to theirs.

pub mod daemon;
pub mod fpm;
pub mod mariadb;
pub mod page;
pub mod wordpress;

use anyhow::Result;
use std::path::{Path, PathBuf};
use webstand_engine::CpuTime;

/// The processes PHP pages need, started once for a whole comparison (every server passes PHP to
/// the same pool). Dropping it stops them.
#[derive(Debug)]
pub struct Backends {
    /// Dropped before MariaDB (fields drop in order): PHP-FPM may hold connections to it.
    pub fpm: fpm::PhpFpm,
    pub mariadb: Option<mariadb::MariaDb>,
    /// The installed site, with the wordpress workload.
    pub site: Option<wordpress::Site>,
    dir: tempfile::TempDir,
}

impl Backends {
    /// Starts MariaDB and installs WordPress into `docroot` (with `wordpress`), then PHP-FPM with
    /// `children` workers; writes the `php` workload's page into `docroot` either way. Everything
    /// started so far is stopped when a later step fails.
    pub fn start(
        docroot: &Path,
        wordpress: bool,
        children: usize,
        backlog: usize,
        cpus: Option<&[usize]>,
    ) -> Result<Backends> {
        let dir = tempfile::Builder::new()
            .prefix("webstand-lab-php-")
            .tempdir()?;
        make_traversable(dir.path());
        page::write(docroot)?;
        let (mariadb, site) = if wordpress {
            let db = mariadb::MariaDb::start(dir.path(), cpus)?;
            wordpress::lay_out(docroot, &db.socket)?;
            let site = wordpress::install(docroot, dir.path(), wordpress::TARGET_BYTES)?;
            (Some(db), Some(site))
        } else {
            (None, None)
        };
        let fpm = fpm::PhpFpm::start(dir.path(), children, backlog, cpus)?;
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
        let db = self.mariadb.as_ref().map(|m| m.daemon.cpu()).unwrap_or_default();
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

/// Servers and PHP workers running as another user (apache's www-data) must reach the sockets.
fn make_traversable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[ignore]
    fn scratch_wordpress_comes_up() {
        let doc = tempfile::tempdir().unwrap();
        let mut b = Backends::start(doc.path(), true, 2, 128, None).unwrap();
        eprintln!("{:?} {:?}", b.site, b.pids());
        let out = std::process::Command::new("php").arg(b.dir().join("wp.php")).arg(doc.path()).args(["render", "127.0.0.1:65535"]).output().unwrap();
        std::fs::write("/tmp/w12l-try/page.html", &out.stdout).unwrap();
        b.stop().unwrap();
    }
}
