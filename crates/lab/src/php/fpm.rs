//! PHP-FPM from Debian's `php8.2-fpm`, run by the lab: in the foreground (`-F`), with its own config
//! (one static pool of a fixed number of children on a Unix socket in the lab's directory, Debian's
//! php.ini otherwise), so every web server that passes PHP to FastCGI talks to the same backend.

use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::daemon::{require, Daemon};
use crate::servers::running_as_root;

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
/// load to blur the CPU figures), a listen backlog as deep as the servers' own, the socket open to
/// servers whose workers run as another user.
pub fn config(dir: &Path, children: usize, backlog: usize) -> String {
    let d = dir.display();
    format!(
        "[global]\nerror_log = {d}/php-fpm.log\ndaemonize = no\nprocess_control_timeout = 5s\n\n\
         [lab]\nlisten = {d}/php-fpm.sock\nlisten.mode = 0666\nlisten.backlog = {backlog}\n\
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
        let text = config(dir, children, backlog);
        let file = dir.join("php-fpm.conf");
        std::fs::write(&file, &text)?;
        let socket = dir.join("php-fpm.sock");
        let _ = std::fs::remove_file(&socket);
        let mut args = vec![
            "-F".to_string(),
            "-y".into(),
            file.display().to_string(),
            "-p".into(),
            dir.display().to_string(),
        ];
        if running_as_root() {
            // The pool runs as the lab's user, like the servers it serves.
            args.push("-R".into());
        }
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
        let c = config(Path::new("/tmp/lab"), 4, 511);
        assert!(c.contains("listen = /tmp/lab/php-fpm.sock\n"), "{c}");
        assert!(c.contains("pm = static\npm.max_children = 4\n"), "{c}");
        assert!(c.contains("daemonize = no"), "{c}");
    }
}
