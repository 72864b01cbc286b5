//! php-fpm as the FastCGI backend of the serve tests (Debian's php8.2-fpm): started in the
//! foreground with a config of the test's own, listening on a unix socket and a TCP port, stopped
//! when dropped.

use super::Running;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// php-fpm in the foreground, stopped (SIGTERM, then SIGKILL) when dropped, also on a failure.
pub struct PhpFpm {
    pub process: Running,
    pub socket: PathBuf,
    pub port: u16,
}

impl Drop for PhpFpm {
    fn drop(&mut self) {
        // SIGTERM lets php-fpm stop its pool's children itself; `process`'s own drop then sends
        // SIGKILL should it not have exited within 5 s.
        super::send_signal(self.process.child.id(), libc::SIGTERM);
        let _ = super::exit_within(&mut self.process.child, Duration::from_secs(5));
    }
}

/// Starts php-fpm with a static pool of `children` listening on a unix socket and on a TCP port
/// (two pools), and waits until both accept connections.
pub fn start_php_fpm(dir: &Path, children: usize) -> PhpFpm {
    let fpm = super::require("php-fpm8.2");
    let socket = dir.join("fpm.sock");
    let port = super::free_port();
    let pool = |name: &str, listen: &str| {
        format!(
            "[{name}]\nlisten = {listen}\npm = static\npm.max_children = {children}\nclear_env = yes\n"
        )
    };
    let conf = format!(
        "[global]\nerror_log = {}\ndaemonize = no\npid = {}\n{}{}",
        dir.join("fpm.log").display(),
        dir.join("fpm.pid").display(),
        pool("unix", &socket.display().to_string()),
        pool("tcp", &format!("127.0.0.1:{port}")),
    );
    let conf_path = dir.join("fpm.conf");
    std::fs::write(&conf_path, conf).unwrap();
    let mut cmd = Command::new(fpm);
    cmd.args(["-F", "-y"]).arg(&conf_path);
    // SAFETY: geteuid has no preconditions. As root (CI), php-fpm needs -R to run its pools.
    if unsafe { libc::geteuid() } == 0 {
        cmd.arg("-R");
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start php-fpm8.2");
    let tcp: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let guard = PhpFpm {
        process: Running { child, addr: tcp },
        socket,
        port,
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::os::unix::net::UnixStream::connect(&guard.socket).is_err()
        || TcpStream::connect(tcp).is_err()
    {
        assert!(Instant::now() < deadline, "php-fpm never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    guard
}
