//! `webstand serve` never serves, lists or runs a file it uses itself (its TOML config, htpasswd
//! files, the throttle file, the access log), however the request spells the path: encoded, with
//! extra slashes or dots, through a symlink or a hard link, after the file was replaced by rename,
//! and from the cache's hot path.

use crate::common;

use common::{raw_exchange, webstand, Running};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// Secret markers: one per own file, so a leak names the file that leaked.
const FILES: [(&str, &str); 4] = [
    (
        "users.htpasswd",
        "SECRET-ann:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=",
    ),
    ("throttle.conf", "/big/* 1000000 # SECRET-THROTTLE"),
    ("serve.toml", ""), // written below: it names the others
    ("access.log", ""), // created by the server
];

fn get(addr: SocketAddr, target: &str) -> String {
    let req = format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    String::from_utf8_lossy(&raw_exchange(addr, req.as_bytes(), Duration::from_secs(5)))
        .into_owned()
}

fn status(resp: &str) -> &str {
    resp.get(9..12).unwrap_or(resp)
}

/// Starts the server with `--config serve.toml` from `dir` (paths in the config are relative to
/// the working directory, as `serve --help` says), waiting for its "listening on" line.
fn serve_with_config(dir: &Path) -> Running {
    serve_from(dir, &["--config", "serve.toml"])
}

/// Starts `webstand serve ARGS --listen 127.0.0.1:0` with `dir` as its working directory.
fn serve_from(dir: &Path, args: &[&str]) -> Running {
    use std::io::BufRead;
    let mut child = webstand()
        .arg("serve")
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn webstand serve");
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("serve printed a line").expect("stderr");
        if let Some(a) = line.strip_prefix("listening on http://") {
            break a.parse().expect("an address");
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    Running { child, addr }
}

fn setup() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    std::fs::write(p.join("index.html"), "<h1>home</h1>").unwrap();
    std::fs::create_dir(p.join("cgi-bin")).unwrap();
    std::fs::write(p.join(FILES[0].0), format!("{}\n", FILES[0].1)).unwrap();
    std::fs::write(p.join(FILES[1].0), format!("{}\n", FILES[1].1)).unwrap();
    std::fs::write(
        p.join("serve.toml"),
        "# SECRET-CONFIG\nroot = \".\"\nthreads = 1\nlisting = true\naccess_log = \"access.log\"\n\
         throttle_file = \"throttle.conf\"\ncgi = [\"/cgi-bin/*\"]\n\
         [[auth]]\nprefix = \"/private/\"\nhtpasswd = \"users.htpasswd\"\n",
    )
    .unwrap();
    // Other names for the same files: symlinks (also one inside the CGI directory) and a hard link.
    std::os::unix::fs::symlink("users.htpasswd", p.join("pw.txt")).unwrap();
    std::os::unix::fs::symlink("../serve.toml", p.join("cgi-bin/conf")).unwrap();
    std::fs::hard_link(p.join("throttle.conf"), p.join("limits.txt")).unwrap();
    d
}

#[test]
fn own_files_are_never_served_listed_or_run() {
    let d = setup();
    let s = serve_with_config(d.path());
    assert!(status(&get(s.addr, "/index.html")).starts_with("200"));
    let spellings = [
        "/users.htpasswd",
        "/%75sers.htpasswd",
        "/users%2Ehtpasswd",
        "//users.htpasswd",
        "/./users.htpasswd",
        "/sub/../users.htpasswd",
        "/pw.txt",
        "/serve.toml",
        "/serve%2etoml",
        "/throttle.conf",
        "/limits.txt",
        "/access.log",
        "/%61ccess.log",
        "/cgi-bin/conf",
        "/cgi-bin/../serve.toml",
        "http://x/users.htpasswd",
    ];
    for target in spellings {
        // Twice: the second request would be the cache's hot path if the first had been admitted.
        for _ in 0..2 {
            let r = get(s.addr, target);
            assert!(matches!(status(&r), "404" | "400"), "{target}: {r}");
            assert!(
                !r.contains("SECRET") && !r.contains("GET /"),
                "{target} leaked: {r}"
            );
        }
    }
    let listing = get(s.addr, "/");
    assert!(status(&listing).starts_with("200"), "{listing}");
    for name in [
        "users.htpasswd",
        "pw.txt",
        "serve.toml",
        "throttle.conf",
        "limits.txt",
        "access.log",
    ] {
        assert!(
            !listing.contains(name),
            "the listing shows {name}: {listing}"
        );
    }
    // The htpasswd file replaced by rename (as an editor saves it): the new file is refused too.
    std::fs::write(
        d.path().join("new.tmp"),
        "SECRET-bob:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n",
    )
    .unwrap();
    std::fs::rename(d.path().join("new.tmp"), d.path().join("users.htpasswd")).unwrap();
    let r = get(s.addr, "/users.htpasswd");
    assert_eq!(status(&r), "404", "{r}");
    assert!(!r.contains("SECRET"));
}

#[test]
fn own_files_given_by_flags_are_refused_too() {
    let d = setup();
    let p = d.path();
    let s = common::serve(
        p,
        &[
            "--threads",
            "1",
            "--auth",
            &format!("/private/={}", p.join("users.htpasswd").display()),
            "--throttle",
            &p.join("throttle.conf").display().to_string(),
            "--access-log",
            &p.join("access.log").display().to_string(),
        ],
    );
    for target in [
        "/users.htpasswd",
        "/pw.txt",
        "/throttle.conf",
        "/limits.txt",
        "/access.log",
    ] {
        let r = get(s.addr, target);
        assert_eq!(status(&r), "404", "{target}: {r}");
    }
    // Files the server does not use are served as before.
    let r = get(s.addr, "/serve.toml");
    assert!(
        r.starts_with("HTTP/1.1 200") && r.contains("SECRET-CONFIG"),
        "{r}"
    );
}

/// Chrooted, the server's working directory becomes the jail's root, so own files given by
/// relative paths are recognised through their paths as seen inside the jail: still refused after
/// being replaced by rename, for every spelling, with the server running as nobody.
#[test]
fn own_files_given_by_relative_paths_are_refused_after_chroot() {
    use std::os::unix::fs::PermissionsExt;
    common::require_root("--chroot and --user");
    let jail = tempfile::tempdir().unwrap();
    std::fs::set_permissions(jail.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let www = jail.path().join("www");
    std::fs::create_dir(&www).unwrap();
    std::fs::write(www.join("index.html"), "<h1>home</h1>").unwrap();
    std::fs::write(www.join(FILES[0].0), format!("{}\n", FILES[0].1)).unwrap();
    std::fs::write(www.join(FILES[1].0), format!("{}\n", FILES[1].1)).unwrap();
    std::os::unix::fs::symlink("users.htpasswd", www.join("pw.txt")).unwrap();
    for p in [&www, &www.join(FILES[0].0), &www.join(FILES[1].0)] {
        let mode = if p.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let s = serve_from(
        &www,
        &[
            ".",
            "--threads",
            "1",
            "--chroot",
            jail.path().to_str().unwrap(),
            "--user",
            "nobody",
            "--auth",
            "/private/=users.htpasswd",
            "--throttle",
            "throttle.conf",
            "--access-log",
            "access.log",
        ],
    );
    let root = std::fs::read_link(format!("/proc/{}/root", s.child.id())).unwrap();
    assert_eq!(root, jail.path().canonicalize().unwrap(), "chrooted");
    assert!(status(&get(s.addr, "/index.html")).starts_with("200"));
    let refused = |when: &str| {
        for target in [
            "/users.htpasswd",
            "/%75sers.htpasswd",
            "/pw.txt",
            "/throttle.conf",
            "/access.log",
        ] {
            let r = get(s.addr, target);
            assert_eq!(status(&r), "404", "{when}: {target}: {r}");
            assert!(!r.contains("SECRET"), "{when}: {target} leaked: {r}");
        }
    };
    refused("at start");
    // Each replaced by rename (a new inode the start-up identities do not know).
    for (name, text) in [
        (
            "users.htpasswd",
            "SECRET-carl:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n",
        ),
        ("throttle.conf", "/big/* 5 # SECRET-NEW\n"),
        ("access.log", "SECRET-LOG\n"),
    ] {
        let tmp = www.join("new.tmp");
        std::fs::write(&tmp, text).unwrap();
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::rename(&tmp, www.join(name)).unwrap();
    }
    refused("after rename");
}
