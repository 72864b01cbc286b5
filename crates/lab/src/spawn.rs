//! Starting one process of a lab server (the server itself, or the fcgiwrap bridge beside it): in the
//! server's directory with its output captured there, pinned to the server's CPUs, in the server's
//! process group and cgroup (a new group is written down there: `owner`), with the same open-file
//! limit as every other server, as an unprivileged user where it cannot drop root itself
//! (`users`), and killed with the lab if the lab dies first. Also the exact command line, as saved
//! with the run.

use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::affinity::pin_current;
use crate::cgroup::CpuCgroup;
use crate::users::{self, Account};

/// How to start one process.
pub struct Spawn<'a> {
    pub program: &'a Path,
    pub args: &'a [String],
    pub env: &'a [(String, String)],
    pub dir: &'a Path,
    /// Appended to: the process's stdout and stderr.
    pub log: &'a Path,
    pub cpus: Option<&'a [usize]>,
    /// The process group to join; 0 makes the process the leader of a new one.
    pub group: i32,
    pub cgroup: Option<&'a CpuCgroup>,
    /// The user to run as (None: the lab's own).
    pub user: Option<&'a Account>,
    /// A listening socket the lab bound, as the process's stdin (FastCGI's convention: fcgiwrap).
    pub listener: Option<&'a UnixListener>,
}

impl Spawn<'_> {
    pub fn start(&self) -> std::io::Result<Child> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log)?;
        let stdin = match self.listener {
            Some(l) => Stdio::from(std::os::fd::OwnedFd::from(l.try_clone()?)),
            None => Stdio::null(),
        };
        let mut cmd = Command::new(self.program);
        cmd.args(self.args)
            .current_dir(self.dir)
            .stdin(stdin)
            .stdout(log.try_clone()?)
            .stderr(log)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .process_group(self.group);
        if let Some(join) = self.cgroup.map(CpuCgroup::join) {
            // SAFETY: the hook only calls write(2) (async-signal-safe) before exec.
            unsafe { cmd.pre_exec(join) };
        }
        let cpus = self.cpus.map(<[usize]>::to_vec);
        let user = self.user.cloned();
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                // Every server gets the same file-descriptor limit: the hard one (as root, nginx's
                // and lighttpd's own settings may raise it further).
                // (getrlimit and setrlimit only: nothing allocates between fork and exec.)
                let _ = rlimit::increase_nofile_limit(u64::MAX);
                if let Some(cpus) = &cpus {
                    pin_current(cpus);
                }
                if let Some(user) = &user {
                    users::become_user(user)?;
                }
                // If the lab dies without stopping it, the process goes too (set after the change
                // of user, which clears it).
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child = cmd.spawn()?;
        if self.group == 0 {
            crate::owner::record_group(child.id() as i32, self.dir);
        }
        Ok(child)
    }

    /// The command as a shell line: the environment the lab sets, the program and its arguments.
    pub fn shown(&self) -> String {
        // A word shlex cannot quote (one holding a NUL byte) cannot be in a command line anyway.
        let quote =
            |s: &str| shlex::try_quote(s).map_or_else(|_| s.to_string(), |q| q.into_owned());
        let mut words: Vec<String> = self
            .env
            .iter()
            .map(|(k, v)| format!("{k}={}", quote(v)))
            .collect();
        words.push(quote(&self.program.display().to_string()));
        words.extend(self.args.iter().map(|a| quote(a)));
        words.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shown_command_quotes_what_a_shell_would_split() {
        let args = vec!["-c".to_string(), "cgi-bin/*".to_string(), "a b".into()];
        let env = vec![("GOMAXPROCS".to_string(), "1".to_string())];
        let s = Spawn {
            program: Path::new("/usr/sbin/mini_httpd"),
            args: &args,
            env: &env,
            dir: Path::new("/tmp"),
            log: Path::new("/dev/null"),
            cpus: None,
            group: 0,
            cgroup: None,
            user: None,
            listener: None,
        };
        assert_eq!(
            s.shown(),
            "GOMAXPROCS=1 /usr/sbin/mini_httpd -c 'cgi-bin/*' 'a b'"
        );
    }
}
