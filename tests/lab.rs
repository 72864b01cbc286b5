//! The lab's servers, for real: every known server is started through the lab on one docroot, every
//! file of the docroot is fetched from it and compared byte for byte, its features are checked, and
//! stopping it must leave no process behind. Plus `webstand compare`'s bad-input errors.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;
use webstand_lab::servers::{self, Kind, Server, Setup, Support};

/// A docroot written by `webstand fixtures`, plus the lab's own files.
fn docroot() -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("webstand-labtest-").tempdir().unwrap();
    let out = common::run(&["fixtures", dir.path().to_str().unwrap()]);
    if !out.status.success() {
        // Until `webstand fixtures` exists: a small docroot of the same shape.
        write_minimal_docroot(dir.path());
    }
    servers::write_lab_files(dir.path()).unwrap();
    dir
}

fn write_minimal_docroot(d: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(d.join("2k.html"), vec![b'a'; 2048]).unwrap();
    std::fs::create_dir_all(d.join("small")).unwrap();
    for i in 0..50 {
        std::fs::write(d.join(format!("small/f{i}.html")), vec![b'b' + (i % 20) as u8; 1024]).unwrap();
    }
    std::fs::write(d.join("large.bin"), (0..1 << 20).map(|i: u32| (i * 7 % 251) as u8).collect::<Vec<u8>>()).unwrap();
    std::fs::create_dir_all(d.join("cgi-bin")).unwrap();
    let cgi = d.join("cgi-bin/hello");
    std::fs::write(&cgi, "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n\\r\\nhello, world\\n'\n").unwrap();
    std::fs::set_permissions(&cgi, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Every regular file under `dir` except CGI programs and dot files, as URL paths.
fn static_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if p.is_dir() {
                if name != "cgi-bin" && name != "lab" {
                    todo.push(p);
                }
            } else if !name.ends_with(".json") || d != dir {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                out.push((format!("/{rel}"), p));
            }
        }
    }
    out.sort();
    out
}

fn builtin_exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_webstand"))
}

/// Starts `kind` through the lab, fetches every static file and the CGI program, checks the features
/// the lab configures, stops it and checks nothing of it is left.
fn serve_every_file(kind: Kind) {
    let Ok(binary) = servers::locate(kind, Some(&builtin_exe())) else {
        eprintln!("skipping {}: not installed (scripts/install-deps.sh installs it)", kind.name());
        return;
    };
    let doc = docroot();
    let mut setup = Setup::new(doc.path());
    setup.cpus = Some(vec![0]);
    let mut server = Server::start(&binary, &setup).unwrap_or_else(|e| panic!("{} did not start: {e:#}", kind.name()));
    let pid = server.pid();
    let files = static_files(doc.path());
    assert!(files.len() >= 10, "docroot too small: {files:?}");
    for (url, path) in &files {
        let want = std::fs::read(path).unwrap();
        let got = servers::fetch(server.addr, url, None, Duration::from_secs(10)).unwrap_or_else(|e| panic!("{}: {url}: {e:#}", kind.name()));
        assert_eq!(got.status, 200, "{} {url}: {}", kind.name(), got.head);
        assert!(got.body == want, "{} {url}: {} bytes, expected {}", kind.name(), got.body.len(), want.len());
    }
    if kind.runs_cgi() {
        let got = servers::fetch(server.addr, "/cgi-bin/hello", None, Duration::from_secs(10)).unwrap();
        assert_eq!(got.status, 200, "{} CGI: {}\nlog: {}", kind.name(), got.head, server.log_tail(5));
        assert!(String::from_utf8_lossy(&got.body).to_lowercase().contains("hello"), "{} CGI body {:?}", kind.name(), String::from_utf8_lossy(&got.body));
    }
    // Pinned as asked.
    let allowed = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(allowed.lines().any(|l| l.starts_with("Cpus_allowed_list:") && l.trim_end().ends_with('0')), "{} not pinned to CPU 0", kind.name());
    let features = servers::check_features(&mut server, &setup);
    let (auth, chroot, throttle) = servers::configures(kind);
    for (name, configured, got) in [("basic auth", auth, &features.basic_auth), ("chroot", chroot, &features.chroot), ("throttling", throttle, &features.throttling)] {
        match got {
            Support::Failed(why) => panic!("{} {name}: {why}", kind.name()),
            Support::No => assert!(!configured, "{} {name} configured but reported absent", kind.name()),
            _ => assert!(configured),
        }
    }
    assert!(server.cpu().total() > Duration::ZERO, "{} used no CPU serving {} files", kind.name(), files.len());
    server.stop().unwrap();
    assert!(server.leftovers().is_empty(), "{} left {:?}", kind.name(), server.leftovers());
    assert!(webstand_lab::procstat::stat(pid).is_none(), "{} main process {pid} still there", kind.name());
}

#[test]
fn builtin_serves_every_file() {
    serve_every_file(Kind::Builtin);
}
#[test]
fn nginx_serves_every_file() {
    serve_every_file(Kind::Nginx);
}
#[test]
fn lighttpd_serves_every_file() {
    serve_every_file(Kind::Lighttpd);
}
#[test]
fn apache_serves_every_file() {
    serve_every_file(Kind::Apache);
}
#[test]
fn h2o_serves_every_file() {
    serve_every_file(Kind::H2o);
}
#[test]
fn caddy_serves_every_file() {
    serve_every_file(Kind::Caddy);
}
#[test]
fn mini_httpd_serves_every_file() {
    serve_every_file(Kind::MiniHttpd);
}
