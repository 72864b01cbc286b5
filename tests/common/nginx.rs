//! Servers a test starts from a directory of its own (configuration, docroot, logs, certificates),
//! and Debian's nginx set up that way: one process on a free loopback port serving one page, with
//! the settings a test needs (its own certificates, an access log the test reads, client
//! certificates, one TLS version); plain nginx is the lab's own (`start_nginx`).

use super::lab_up::LabUp;
use super::listen::listens_itself;
use super::{free_port, require, Running};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A server started in a temporary directory of its own: listening on `port` once returned, killed
/// when dropped (the process first, then the directory).
pub struct Daemon {
    pub process: Running,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

impl Daemon {
    /// Starts the server `make(port)` spawns (its output discarded) on a free loopback port, and
    /// waits until it listens there itself. [`free_port`]'s port is free when asked, not reserved:
    /// another test's server or client may take it before this one binds, so a server that exits
    /// first (its bind failed) is started again on another port, and a listener that is another
    /// process's is never taken for it (a connect to the port would have been).
    pub fn start(
        what: &str,
        dir: tempfile::TempDir,
        mut make: impl FnMut(u16) -> Command,
    ) -> Daemon {
        for _ in 0..5 {
            let port = free_port();
            let child = make(port)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("start {what}: {e}"));
            let addr = format!("127.0.0.1:{port}").parse().unwrap();
            let mut process = Running { child, addr };
            if listens_itself(&mut process.child, port, Duration::from_secs(10), what) {
                return Daemon { process, port, dir };
            }
        }
        panic!("{what} exited before listening, on five free ports in a row");
    }

    /// DIR/`name`, as a string for a command line.
    pub fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }
}

/// DIR/www holding page.html, the 6,397-byte page the nginx of the tests serves; returns DIR/www.
pub fn www_with_page(dir: &Path) -> PathBuf {
    let root = dir.join("www");
    std::fs::create_dir(&root).unwrap();
    let page: Vec<u8> = (0..6397u32)
        .map(|i| b"abcdefghijklmnopqrstuvwxyz\n"[(i % 27) as usize])
        .collect();
    std::fs::write(root.join("page.html"), page).unwrap();
    root
}

/// The lab's own nginx (`webstand lab up nginx`: its config, the one `compare` measures) serving a
/// one-file docroot ([`www_with_page`]), on every CPU this test may use (the lab would pin it to
/// one); stopped by SIGTERM when dropped, the docroot removed after it.
pub struct LabNginx {
    pub port: u16,
    /// Dropped before the docroot (fields drop in order).
    _up: LabUp,
    _dir: tempfile::TempDir,
}

/// nginx over plain HTTP/1.1 with a one-file docroot ([`www_with_page`]), as the lab configures it.
pub fn start_nginx() -> LabNginx {
    lab_nginx(&[])
}

/// The lab's nginx with `lab up` flags (`--tls`: HTTPS with the lab's certificate, which a test's
/// client does not verify; `--h2`: HTTP/2 beside HTTP/1.1) serving [`www_with_page`].
pub fn lab_nginx(flags: &[&str]) -> LabNginx {
    let dir = tempfile::tempdir().unwrap();
    let root = www_with_page(dir.path());
    let cpus: Vec<String> = webstand_lab::affinity::allowed_cpus()
        .iter()
        .map(usize::to_string)
        .collect();
    let cpus = cpus.join(",");
    let mut args = vec![
        "nginx",
        "--docroot",
        root.to_str().unwrap(),
        "--cpus",
        &cpus,
    ];
    args.extend_from_slice(flags);
    let up = LabUp::start(&args);
    let port = up.get("port").parse().unwrap();
    LabNginx {
        port,
        _up: up,
        _dir: dir,
    }
}

/// The access log format [`start_nginx_in`] defines, for a test that turns the log on in its
/// server block (`access_log DIR/access.log tests;`) to see requests from the server's side: one
/// line per request, fields split by `|` ([`AccessLine`]).
pub const ACCESS_LOG_FORMAT: &str =
    "$request_method|$request_uri|$ssl_server_name|$ssl_session_reused";

/// One line of the [`ACCESS_LOG_FORMAT`] log.
#[derive(Debug, Clone, PartialEq)]
pub struct AccessLine {
    pub method: String,
    pub uri: String,
    /// The name the client sent in SNI; "-" for none.
    pub server_name: String,
    /// "r" for a resumed TLS session, "." for a full handshake.
    pub session_reused: String,
}

/// The lines of the access log at `path` from line `from` on, once there are `n` of them (nginx
/// writes a request's line as it ends it, which may come just after the client read the answer);
/// the test fails if they do not come within 10 s.
pub fn access_lines(path: &Path, from: usize, n: usize) -> Vec<AccessLine> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<AccessLine> = text
            .lines()
            .skip(from)
            .map(|l| {
                let f: Vec<&str> = l.split('|').collect();
                assert_eq!(f.len(), 4, "not a line of the tests' format: {l}");
                AccessLine {
                    method: f[0].into(),
                    uri: f[1].into(),
                    server_name: f[2].into(),
                    session_reused: f[3].into(),
                }
            })
            .collect();
        if lines.len() >= n {
            return lines;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} of {n} lines in {}:\n{text}",
            lines.len(),
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// nginx from Debian's package in `dir` (which may already hold what `server` names, such as
/// certificates) serving DIR/www ([`www_with_page`]) on a free port: `listen` is what follows the
/// address ("", "ssl", "ssl http2"), `server` goes into the server block. One process
/// (`master_process off`), so the kill on drop leaves no orphaned worker holding the port. Its
/// access log is off unless `server` turns it on (in the [`ACCESS_LOG_FORMAT`], named `tests`).
pub fn start_nginx_in(dir: tempfile::TempDir, listen: &str, server: &str) -> Daemon {
    let nginx = require("nginx");
    let root = www_with_page(dir.path());
    let d = dir.path().display().to_string();
    let conf = |port: u16| {
        format!(
        "master_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{ worker_connections 512; }}\nhttp {{\n  access_log off;\n  \
         log_format tests '{ACCESS_LOG_FORMAT}';\n  client_body_temp_path {d}/tmp;\n  \
         proxy_temp_path {d}/tmp;\n  fastcgi_temp_path {d}/tmp;\n  uwsgi_temp_path {d}/tmp;\n  scgi_temp_path {d}/tmp;\n  \
         server {{ listen 127.0.0.1:{port} {listen}; root {}; {server} }}\n}}\n",
        root.display()
    )
    };
    let conf_path = format!("{d}/nginx.conf");
    Daemon::start("nginx", dir, |port| {
        std::fs::write(&conf_path, conf(port)).unwrap();
        let mut cmd = Command::new(&nginx);
        cmd.args(["-c", &conf_path, "-p", &d, "-e", &format!("{d}/error.log")])
            .args(["-g", "daemon off;"]);
        cmd
    })
}
