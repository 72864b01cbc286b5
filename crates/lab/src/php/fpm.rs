//! PHP-FPM from Debian's `php8.2-fpm`, run by the lab: in the foreground (`-F`), with its own config
//! (one static pool of a fixed number of children on a Unix socket in the lab's directory, Debian's
//! php.ini otherwise), so every web server that passes PHP to FastCGI talks to the same backend. As
//! root, the master alone keeps root (to start and stop the pool): the pool runs as the servers'
//! worker user and its socket is the workers' group's alone (0660).

use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::daemon::Daemon;
use crate::programs::require;
use crate::users::{self, Account};

/// The binary's name in Debian's package (the default of `--php-fpm`), and the package.
pub const PROGRAM: &str = "php-fpm8.2";
pub const PACKAGE: &str = "php8.2-fpm";

/// A running PHP-FPM.
#[derive(Debug)]
pub struct PhpFpm {
    pub daemon: Daemon,
    /// Its socket, as a path (servers spell it `unix:…` their own way).
    pub socket: PathBuf,
    /// The config the lab wrote, as (name, text).
    pub config: (String, String),
}

/// The pool's config: `children` workers started at once and kept (`pm = static`: no spawning under
/// load to blur the CPU figures), a listen backlog as deep as the servers' own; with `worker` (the
/// lab runs as root) the pool runs as that user and the socket is its group's (0660), else both are
/// the lab user's (0600).
pub fn config(dir: &Path, children: usize, backlog: usize, worker: Option<&Account>) -> String {
    let d = dir.display();
    let user = match worker {
        Some(w) => format!(
            "user = {u}\ngroup = {g}\nlisten.owner = {u}\nlisten.group = {g}\nlisten.mode = 0660\n",
            u = w.name,
            g = w.group
        ),
        None => "listen.mode = 0600\n".to_string(),
    };
    format!(
        "[global]\nerror_log = {d}/php-fpm.log\ndaemonize = no\nprocess_control_timeout = 5s\n\n\
         [lab]\n{user}listen = {d}/php-fpm.sock\nlisten.backlog = {backlog}\n\
         pm = static\npm.max_children = {children}\npm.max_requests = 0\n\
         request_terminate_timeout = 60s\ncatch_workers_output = yes\nclear_env = no\n"
    )
}

/// PHP-FPM's binary, or the one line saying how to install it.
pub fn require_program(program: &str) -> Result<std::path::PathBuf> {
    require(program, PACKAGE)
}

impl PhpFpm {
    /// Writes the config into `dir` and starts PHP-FPM (`program`: a name or a path) pinned to `cpus`; returns once its socket is
    /// there. Without the binary, the error is one line naming the package.
    pub fn start(
        program: &str,
        dir: &Path,
        children: usize,
        backlog: usize,
        cpus: Option<&[usize]>,
    ) -> Result<PhpFpm> {
        let program = require_program(program)?;
        let text = config(dir, children, backlog, users::worker());
        let file = dir.join("php-fpm.conf");
        std::fs::write(&file, &text)?;
        let socket = dir.join("php-fpm.sock");
        let _ = std::fs::remove_file(&socket);
        let args = vec![
            "-F".to_string(),
            "-y".into(),
            file.display().to_string(),
            "-p".into(),
            dir.display().to_string(),
        ];
        let daemon = Daemon::start(
            "php-fpm",
            &program,
            &args,
            dir,
            cpus,
            &socket,
            Duration::from_secs(15),
        )?;
        Ok(PhpFpm {
            daemon,
            socket,
            config: ("php-fpm.conf".into(), text),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_is_static_on_a_socket_in_the_lab_directory() {
        let c = config(Path::new("/tmp/lab"), 4, 511, None);
        assert!(c.contains("listen = /tmp/lab/php-fpm.sock\n"), "{c}");
        assert!(c.contains("pm = static\npm.max_children = 4\n"), "{c}");
        assert!(c.contains("daemonize = no"), "{c}");
        assert!(
            c.contains("listen.mode = 0600\n") && !c.contains("user ="),
            "{c}"
        );
        let www = Account {
            name: "www-data".into(),
            uid: 33,
            gid: 33,
            group: "www-data".into(),
        };
        let c = config(Path::new("/tmp/lab"), 4, 511, Some(&www));
        assert!(c.contains("user = www-data\ngroup = www-data\n"), "{c}");
        assert!(
            c.contains("listen.group = www-data\nlisten.mode = 0660\n"),
            "{c}"
        );
    }
}
