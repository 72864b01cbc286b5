//! Network namespaces a test makes for itself, so that it may narrow the ephemeral port range or
//! shape a link without touching the host's: each one is held open by a process of its own
//! (`unshare --net … sleep`) and ends with it. Traffic stays inside the namespaces the test made.

use super::require;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

/// A network namespace with loopback up, held by its own process; ends when dropped.
pub struct Netns {
    holder: Child,
    file: File,
}

impl Netns {
    /// A new namespace in which the shell commands `setup` ran (as root: sysctls, links, addresses).
    /// Fails the test, with the commands' stderr, when they fail.
    pub fn new(setup: &str) -> Netns {
        let (unshare, _) = (require("unshare"), require("ip"));
        let script = format!("ip link set lo up && {setup} && echo ready && exec sleep 600");
        let mut holder = Command::new(unshare)
            .args(["--net", "--", "sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start unshare");
        let mut line = String::new();
        let _ = BufReader::new(holder.stdout.take().unwrap()).read_line(&mut line);
        if line.trim() != "ready" {
            let mut err = String::new();
            let _ = holder.stderr.take().unwrap().read_to_string(&mut err);
            let _ = holder.kill();
            panic!("the namespace's set-up failed (needs root, as CI runs): {setup}\n{err}");
        }
        let file = File::open(format!("/proc/{}/ns/net", holder.id())).expect("the namespace");
        Netns { holder, file }
    }

    /// The holder's pid: `ip link set … netns PID` moves a link into this namespace.
    pub fn pid(&self) -> u32 {
        self.holder.id()
    }

    /// `cmd` runs inside this namespace (its child joins it between fork and exec).
    pub fn enter<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        let fd = self.file.as_raw_fd();
        // SAFETY: setns only moves the forked child into the namespace `fd` names; `fd` stays open
        // in the parent until the namespace is dropped, after the child has started.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        }
    }

    /// Runs `f` on a thread inside this namespace: sockets it makes (a listener) belong to it.
    pub fn inside<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        let fd = self.file.as_raw_fd();
        std::thread::scope(|s| {
            s.spawn(|| {
                // SAFETY: setns moves only this thread, which ends when `f` returns.
                assert_eq!(unsafe { libc::setns(fd, libc::CLONE_NEWNET) }, 0, "setns");
                f()
            })
            .join()
            .unwrap()
        })
    }

    /// Runs the shell commands `script` inside this namespace, failing the test if they fail.
    pub fn sh(&self, script: &str) {
        let out = self
            .enter(Command::new("sh").args(["-c", script]))
            .output()
            .expect("run sh");
        assert!(
            out.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}
