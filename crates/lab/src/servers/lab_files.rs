//! The lab's own files in the docroot, none of which a workload requests: the basic-auth protected
//! page and its password files, the throttled file, the chroot marker; and the permissions a server
//! that drops to an unprivileged user needs to read the docroot.

use anyhow::Context;

use crate::users::running_as_root;
use std::path::Path;

/// Basic-auth credentials of the lab's protected path.
pub const AUTH_USER: &str = "lab";
pub const AUTH_PASSWORD: &str = "stand-by";
/// Paths the lab adds to a docroot to check features; none of the workloads requests them.
pub const PRIVATE_PATH: &str = "/lab/private/secret.html";
pub const THROTTLED_PATH: &str = "/lab/throttled/blob.bin";
pub const CHROOT_PATH: &str = "/lab/chroot.txt";
/// Size of the throttled file and the limit set on it: about two seconds at the limit.
pub const THROTTLED_BYTES: usize = 96 * 1024;
pub const THROTTLE_KIB_PER_SEC: u64 = 48;

pub fn lab_file_bytes(path: &str) -> Vec<u8> {
    match path {
        THROTTLED_PATH => (0..THROTTLED_BYTES)
            .map(|i| b'a' + (i % 26) as u8)
            .collect(),
        _ => format!("webstand lab file {path}\n").into_bytes(),
    }
}

/// Writes the lab's own files into `docroot` (the protected page, the throttled file, the chroot
/// marker, mini_httpd's per-directory password file) and makes the docroot readable by the
/// unprivileged users servers switch to when started as root.
pub fn write_lab_files(docroot: &Path) -> anyhow::Result<()> {
    for p in [PRIVATE_PATH, THROTTLED_PATH, CHROOT_PATH] {
        let file = docroot.join(&p[1..]);
        std::fs::create_dir_all(file.parent().unwrap())
            .with_context(|| format!("cannot write to docroot {}", docroot.display()))?;
        std::fs::write(&file, lab_file_bytes(p))
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    // mini_httpd reads a .htpasswd beside the files it protects, with crypt(3) hashes.
    let htpasswd = docroot.join("lab/private/.htpasswd");
    std::fs::write(&htpasswd, format!("{AUTH_USER}:{}\n", bcrypt_hash()))
        .with_context(|| format!("cannot write {}", htpasswd.display()))?;
    if running_as_root() {
        make_world_readable(docroot);
    }
    Ok(())
}

/// Servers started as root drop to `nobody`/`www-data`: they must be able to reach and read the
/// docroot (a temporary directory is 0700 by default). Failures are left to show up as 403s.
pub fn make_world_readable(docroot: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut dir = Some(docroot);
    while let Some(d) = dir {
        if let Ok(m) = std::fs::metadata(d) {
            let mode = m.permissions().mode();
            if mode & 0o005 != 0o005
                && d.starts_with(std::env::temp_dir())
                && d != std::env::temp_dir()
            {
                let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode | 0o055));
            }
        }
        dir = d.parent();
    }
    walk(docroot, &mut |p, is_dir| {
        if let Ok(m) = std::fs::metadata(p) {
            let mode = m.permissions().mode();
            let want = if is_dir || mode & 0o100 != 0 {
                mode | 0o055
            } else {
                mode | 0o044
            };
            if want != mode {
                let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(want));
            }
        }
    });
}

fn walk(dir: &Path, f: &mut dyn FnMut(&Path, bool)) {
    f(dir, true);
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&p, f),
            Ok(_) => f(&p, false),
            Err(_) => {}
        }
    }
}

pub fn bcrypt_hash() -> String {
    // Cost 5: the check is made a handful of times, never under load.
    bcrypt::hash(AUTH_PASSWORD, 5).expect("bcrypt of a fixed password")
}

pub fn sha_hash() -> String {
    use base64::Engine;
    use sha1::Digest;
    format!(
        "{{SHA}}{}",
        base64::engine::general_purpose::STANDARD
            .encode(sha1::Sha1::digest(AUTH_PASSWORD.as_bytes()))
    )
}
