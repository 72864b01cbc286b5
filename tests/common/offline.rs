//! Commands whose host names must fail to resolve, run where no packet can leave the machine: a
//! network namespace of their own (loopback only, and down) and a mount namespace in which the name
//! service is the test's: /etc/hosts, /etc/resolv.conf (127.0.0.1, which nothing answers) and
//! /etc/nsswitch.conf (files, then DNS: no lookup through a daemon of the host's, which would ask
//! from the host's network), with the host's name-service cache hidden.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// The hosts file and resolver configuration the commands see; removed when dropped.
pub struct Offline {
    dir: tempfile::TempDir,
}

/// The only nameserver the commands' resolver asks: loopback, which in their namespace reaches
/// nothing (the loopback link is down), so every query fails on the spot.
pub const NAMESERVER: &str = "127.0.0.1";

impl Offline {
    pub fn new() -> Offline {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("hosts"),
            "127.0.0.1 localhost\n::1 localhost\n",
        )
        .unwrap();
        let resolv = format!("nameserver {NAMESERVER}\noptions attempts:1 timeout:1\n");
        std::fs::write(dir.path().join("resolv.conf"), resolv).unwrap();
        std::fs::write(dir.path().join("nsswitch.conf"), "hosts: files dns\n").unwrap();
        std::fs::create_dir(dir.path().join("empty")).unwrap();
        Offline { dir }
    }

    /// `cmd` runs in the namespaces (its child enters them between fork and exec; needs root, as CI
    /// runs). Its child fails to start, and the test with it, if they cannot be made.
    pub fn enter<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).unwrap();
        let ours = |name: &str| c(&self.dir.path().join(name));
        let mut binds = vec![
            (ours("hosts"), c(Path::new("/etc/hosts"))),
            (ours("resolv.conf"), c(Path::new("/etc/resolv.conf"))),
            (ours("nsswitch.conf"), c(Path::new("/etc/nsswitch.conf"))),
        ];
        // nscd's socket: the C library asks the daemon before any DNS server.
        let nscd = Path::new("/run/nscd");
        if nscd.is_dir() {
            binds.push((ours("empty"), c(nscd)));
        }
        let root = c(Path::new("/"));
        // SAFETY: the closure runs in the forked child before exec and makes only system calls
        // (unshare, mount) on strings allocated before the fork.
        unsafe {
            cmd.pre_exec(move || {
                let check = |r: libc::c_int| match r {
                    0 => Ok(()),
                    _ => Err(std::io::Error::last_os_error()),
                };
                check(libc::unshare(libc::CLONE_NEWNET | libc::CLONE_NEWNS))?;
                // The binds below stay in this namespace: nothing propagates back to the host's.
                let private = libc::MS_REC | libc::MS_PRIVATE;
                check(libc::mount(
                    std::ptr::null(),
                    root.as_ptr(),
                    std::ptr::null(),
                    private,
                    std::ptr::null(),
                ))?;
                for (file, over) in &binds {
                    check(libc::mount(
                        file.as_ptr(),
                        over.as_ptr(),
                        std::ptr::null(),
                        libc::MS_BIND,
                        std::ptr::null(),
                    ))?;
                }
                Ok(())
            })
        }
    }
}
