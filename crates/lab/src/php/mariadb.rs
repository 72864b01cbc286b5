//! A private MariaDB for the WordPress workload: `mariadb-install-db` into a directory of its own,
//! then `mariadbd` in the foreground on a Unix socket there, with no TCP port (`skip-networking`) and
//! no option file of the system's (`--no-defaults`); an init file creates WordPress's database and
//! user. As root it runs as its own user (`mysql`), in a directory that user owns and only the
//! servers' workers' group may enter (PHP's workers reach the socket there).

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::daemon::Daemon;
use crate::programs::require;
use crate::users;

pub const PACKAGE: &str = "mariadb-server";
/// WordPress's database, user and password (a private server on a socket only the lab uses).
pub const DATABASE: &str = "wordpress";
pub const USER: &str = "wordpress";
pub const PASSWORD: &str = "webstand-lab";

/// A running MariaDB.
#[derive(Debug)]
pub struct MariaDb {
    /// Dropped before its directory (fields drop in order).
    pub daemon: Daemon,
    pub socket: PathBuf,
    dir: tempfile::TempDir,
}

impl MariaDb {
    /// Creates a directory of its own with the data in it and starts the server on a socket there,
    /// pinned to `cpus`. Without the binaries, the error is one line naming the package.
    pub fn start(cpus: Option<&[usize]>) -> Result<MariaDb> {
        let install = require("mariadb-install-db", PACKAGE)?;
        let server = require("mariadbd", PACKAGE)?;
        let own = crate::owner::scratch_dir("mariadb")?;
        let dir = own.path();
        let account = users::database();
        if let Some(a) = &account {
            users::give(dir, a)?;
        }
        let data = dir.join("mariadb-data");
        let user = account.map_or_else(own_user, |a| a.name);
        // Its temporary files go in its own directory: TMPDIR may not be writable by its user.
        let tmpdir = format!("--tmpdir={}", dir.display());
        let out = Command::new(&install)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--user={user}"))
            .arg(&tmpdir)
            .args(["--auth-root-authentication-method=socket", "--skip-test-db"])
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", install.display()))?;
        if !out.status.success() {
            // Its first error says why; the last is only "Aborting".
            let text = String::from_utf8_lossy(&out.stderr);
            let why = text
                .lines()
                .find(|l| l.contains("[ERROR]"))
                .or_else(|| text.lines().rev().find(|l| !l.trim().is_empty()))
                .unwrap_or("");
            bail!("mariadb-install-db failed ({}): {why}", out.status);
        }
        let init = dir.join("mariadb-init.sql");
        std::fs::write(
            &init,
            format!(
                "CREATE DATABASE IF NOT EXISTS {DATABASE};\n\
                 CREATE USER IF NOT EXISTS '{USER}'@'localhost' IDENTIFIED BY '{PASSWORD}';\n\
                 GRANT ALL ON {DATABASE}.* TO '{USER}'@'localhost';\n"
            ),
        )?;
        let socket = dir.join("mariadb.sock");
        let d = |flag: &str, p: &Path| format!("--{flag}={}", p.display());
        let args = vec![
            "--no-defaults".to_string(),
            d("datadir", &data),
            d("socket", &socket),
            d("pid-file", &dir.join("mariadb.pid")),
            d("init-file", &init),
            format!("--user={user}"),
            tmpdir,
            "--skip-networking".into(),
            "--skip-log-bin".into(),
            "--innodb-buffer-pool-size=64M".into(),
            "--max-connections=1000".into(),
        ];
        let daemon = Daemon::start(
            "mariadb",
            &server,
            &args,
            dir,
            cpus,
            &socket,
            Duration::from_secs(60),
        )?;
        // mariadbd opens its socket to everyone (0777): only the workers' group may connect.
        users::share(&socket, 0o660)?;
        Ok(MariaDb {
            daemon,
            socket,
            dir: own,
        })
    }

    /// Its directory: data, socket, logs.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// The lab's own user, which mariadbd runs as when the lab is not root.
fn own_user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "nobody".into())
}
