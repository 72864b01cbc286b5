//! php-fpm as the FastCGI backend of the serve tests (Debian's php8.2-fpm): started in the
//! foreground with a config of the test's own in a private directory, its pools as an unprivileged
//! user when the tests run as root, stopped when dropped.

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// php-fpm in the foreground, stopped (SIGTERM, then SIGKILL) when dropped, also on a failure. Its
/// configuration, log and unix socket are in a directory of its own that only the test's user
/// reaches (mode 0700).
pub struct PhpFpm {
    pub child: std::process::Child,
    pub socket: PathBuf,
    /// The TCP pool's port, for the one test of a TCP backend.
    pub port: Option<u16>,
    _state: tempfile::TempDir,
    /// PHP's temporary files (request bodies it buffers, uploads): the pool's own, and gone with
    /// the test also when a test kills a PHP process mid-request.
    _php_tmp: tempfile::TempDir,
}

impl Drop for PhpFpm {
    fn drop(&mut self) {
        // SIGTERM lets php-fpm stop its pool's children itself; SIGKILL should it not have exited
        // within 5 s.
        super::send_signal(self.child.id(), libc::SIGTERM);
        if super::exit_within(&mut self.child, Duration::from_secs(5)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The unprivileged user php-fpm's pools run as when the tests run as root (CI): Debian's web
/// server user. The scripts' directory is shared with its group ([`share_with_pool`]).
pub const POOL_USER: &str = "www-data";

/// Whether the tests run as root, where php-fpm's master starts as root and its pools drop to
/// [`POOL_USER`].
pub fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The uid and gid of [`POOL_USER`], read from the password file.
pub fn pool_ids() -> (u32, u32) {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    let entry = passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f[0] == POOL_USER)
        .unwrap_or_else(|| panic!("no user {POOL_USER} in /etc/passwd"));
    (entry[2].parse().unwrap(), entry[3].parse().unwrap())
}

/// The scripts' directory `root` is reachable by the pool's group and no other user (mode 0770:
/// PHP writes its flags and markers there). Nothing to share when the tests do not run as root:
/// the pool is then the test's own user.
pub fn share_with_pool(root: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if as_root() {
        std::os::unix::fs::chown(root, None, Some(pool_ids().1)).unwrap();
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o770)).unwrap();
    }
}

/// Starts php-fpm with a static pool of `children` listening on a unix socket, to run the scripts
/// of `root`, and waits until it accepts connections.
pub fn start_php_fpm(root: &Path, children: usize) -> PhpFpm {
    start_php_fpm_pools(root, children, false)
}

/// [`start_php_fpm`] with a second pool on a TCP port of 127.0.0.1 (`tcp`), for the test of a TCP
/// backend: any local user may reach it while it runs, so it runs as [`POOL_USER`] too.
pub fn start_php_fpm_pools(root: &Path, children: usize, tcp: bool) -> PhpFpm {
    let fpm = super::require("php-fpm8.2");
    share_with_pool(root);
    use std::os::unix::fs::PermissionsExt;
    let private = || {
        tempfile::Builder::new()
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .unwrap()
    };
    let (state, php_tmp) = (private(), private());
    if as_root() {
        let (uid, gid) = pool_ids();
        std::os::unix::fs::chown(php_tmp.path(), Some(uid), Some(gid)).unwrap();
    }
    let dir = state.path();
    let socket = dir.join("fpm.sock");
    let port = tcp.then(super::free_port);
    let user = match as_root() {
        true => format!("user = {POOL_USER}\ngroup = {POOL_USER}\n"),
        false => String::new(),
    };
    let pool = |name: &str, listen: &str| {
        format!(
            "[{name}]\nlisten = {listen}\n{user}pm = static\npm.max_children = {children}\n\
             clear_env = yes\nphp_admin_value[sys_temp_dir] = {tmp}\n\
             php_admin_value[upload_tmp_dir] = {tmp}\n",
            tmp = php_tmp.path().display()
        )
    };
    let conf = format!(
        "[global]\nerror_log = {}\ndaemonize = no\npid = {}\n{}{}",
        dir.join("fpm.log").display(),
        dir.join("fpm.pid").display(),
        pool("unix", &socket.display().to_string()),
        port.map(|p| pool("tcp", &format!("127.0.0.1:{p}")))
            .unwrap_or_default(),
    );
    let conf_path = dir.join("fpm.conf");
    std::fs::write(&conf_path, conf).unwrap();
    let child = Command::new(fpm)
        .args(["-F", "-y"])
        .arg(&conf_path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start php-fpm8.2");
    let guard = PhpFpm {
        child,
        socket,
        port,
        _state: state,
        _php_tmp: php_tmp,
    };
    let tcp = port.map(|p| SocketAddr::from(([127, 0, 0, 1], p)));
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::os::unix::net::UnixStream::connect(&guard.socket).is_err()
        || tcp.is_some_and(|a| TcpStream::connect(a).is_err())
    {
        assert!(Instant::now() < deadline, "php-fpm never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    guard
}
