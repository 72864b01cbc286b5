//! What the lab leaves on the machine and who its processes run as. A comparison with PHP and CGI
//! workloads (nginx with fcgiwrap, lighttpd with its own CGI, one PHP-FPM) stopped mid-run by SIGTERM,
//! SIGHUP or Ctrl-C saves what it measured, marks the run interrupted and leaves no process and no
//! scratch directory; a second signal stops everything at once; a webstand killed outright is cleaned
//! up after by the next lab command, which says so. During a comparison nothing that runs a request's
//! code (PHP-FPM's workers, fcgiwrap, CGI programs) runs as root, and no socket the lab made is open
//! to every local user. Each comparison has a TMPDIR and a history of its own; the tests take turns,
//! since a lab command cleans up after any dead webstand, another test's killed one included.

use crate::common;

use common::short_compare;
use std::collections::HashSet;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use webstand_lab::procstat;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A process as seen during a run: pid and start time (one process for good), its effective uid
/// and command line.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Seen {
    pid: i32,
    start: u64,
    uid: u32,
    cmd: String,
}

impl Seen {
    fn read(pid: i32) -> Option<Seen> {
        let stat = procstat::stat(pid).filter(|s| s.state != 'Z')?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let uid = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        Some(Seen {
            pid,
            start: stat.start,
            uid,
            cmd: cmd.trim_end().to_string(),
        })
    }

    /// Still running (same pid, same start time, not a zombie).
    fn alive(&self) -> bool {
        procstat::stat(self.pid).is_some_and(|s| s.start == self.start && s.state != 'Z')
    }
}

/// A comparison run by the test, in a TMPDIR and with a history of its own.
struct Lab {
    tmp: tempfile::TempDir,
    db: PathBuf,
    child: Child,
}

impl Lab {
    fn start(args: &[&str]) -> Lab {
        let tmp = tempfile::tempdir().unwrap();
        // Servers started as root drop to www-data: they must be able to reach the docroot.
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let db = tmp.path().join("h.db");
        let child = common::webstand()
            .args(["compare", "-q", "--db", db.to_str().unwrap()])
            .args(args)
            .env("TMPDIR", tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Lab { tmp, db, child }
    }

    /// The names of this webstand's cgroups and scratch directories start with this.
    fn prefix(&self) -> String {
        format!("webstand-lab-{}-", self.child.id())
    }

    /// Every live process of the run: the webstand and its descendants, anything in one of its
    /// cgroups, anything whose command line names a path under its TMPDIR.
    fn processes(&self) -> Vec<Seen> {
        let tree: HashSet<i32> = procstat::tree(self.child.id() as i32)
            .iter()
            .map(|s| s.pid)
            .collect();
        let cgroup = format!("/{}", self.prefix());
        let dir = self.tmp.path().display().to_string();
        procstat::all_processes()
            .into_iter()
            .filter(|s| {
                let in_cgroup = std::fs::read_to_string(format!("/proc/{}/cgroup", s.pid))
                    .is_ok_and(|c| c.contains(&cgroup));
                tree.contains(&s.pid) || in_cgroup
            })
            .filter_map(|s| Seen::read(s.pid))
            .chain(
                common::lab::processes_under(self.tmp.path())
                    .iter()
                    .filter_map(|l| Seen::read(l.split(' ').next()?.parse().ok()?))
                    .filter(|s| s.cmd.contains(&dir)),
            )
            .collect::<HashSet<_>>()
            .into_iter()
            .collect()
    }

    /// The live processes in this webstand's cgroups: read from the cgroups' own lists, quick enough
    /// to catch a CGI program, which lives a few milliseconds.
    fn in_cgroups(&self) -> Vec<Seen> {
        self.cgroups()
            .iter()
            .filter_map(|dir| std::fs::read_to_string(dir.join("cgroup.procs")).ok())
            .flat_map(|pids| {
                pids.lines()
                    .filter_map(|p| Seen::read(p.trim().parse().ok()?))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The scratch directories of this webstand left in its TMPDIR.
    fn scratch_dirs(&self) -> Vec<String> {
        let prefix = self.prefix();
        std::fs::read_dir(self.tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&prefix))
            .collect()
    }

    /// The cgroups of this webstand still there.
    fn cgroups(&self) -> Vec<PathBuf> {
        let pid = self.child.id() as i32;
        webstand_lab::cgroup::ours_everywhere()
            .into_iter()
            .filter(|(owner, _)| owner.pid == pid)
            .map(|(_, dir)| dir)
            .collect()
    }

    /// Waits until `n` levels are saved in the history, then for the processes of the run.
    fn measuring(&self, n: usize) -> Vec<Seen> {
        common::wait_for_levels(&self.db, n, Duration::from_secs(90));
        self.processes()
    }

    /// Waits (bounded) for the webstand to exit; its output.
    fn finish(self) -> (Output, Finished) {
        let Lab { tmp, db, child } = self;
        let pid = child.id();
        let done = std::thread::spawn(move || child.wait_with_output().unwrap());
        let deadline = Instant::now() + Duration::from_secs(120);
        while !done.is_finished() {
            assert!(Instant::now() < deadline, "webstand compare did not end");
            std::thread::sleep(Duration::from_millis(50));
        }
        (done.join().unwrap(), Finished { tmp, db, pid })
    }
}

/// What a run left, checked once its webstand has exited.
struct Finished {
    tmp: tempfile::TempDir,
    db: PathBuf,
    pid: u32,
}

impl Finished {
    /// Asserts that nothing of the run is left: none of the processes `seen` during it, nothing in
    /// its cgroups or naming its TMPDIR, no cgroup and no scratch directory of its webstand.
    fn assert_nothing_left(&self, seen: &[Seen]) {
        let left: Vec<&Seen> = seen.iter().filter(|s| s.alive()).collect();
        assert!(left.is_empty(), "left running: {left:#?}");
        let cgroup = format!("/webstand-lab-{}-", self.pid);
        let in_cgroups: Vec<i32> = procstat::all_processes()
            .into_iter()
            .filter(|s| s.state != 'Z')
            .filter(|s| {
                std::fs::read_to_string(format!("/proc/{}/cgroup", s.pid))
                    .is_ok_and(|c| c.contains(&cgroup))
            })
            .map(|s| s.pid)
            .collect();
        assert!(
            in_cgroups.is_empty(),
            "still in its cgroups: {in_cgroups:?}"
        );
        assert_eq!(
            common::lab::processes_under(self.tmp.path()),
            Vec::<String>::new()
        );
        let cgroups: Vec<PathBuf> = webstand_lab::cgroup::ours_everywhere()
            .into_iter()
            .filter(|(owner, _)| owner.pid == self.pid as i32)
            .map(|(_, d)| d)
            .collect();
        assert!(cgroups.is_empty(), "cgroups left: {cgroups:?}");
        let dirs: Vec<String> = std::fs::read_dir(self.tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("webstand-lab-"))
            .collect();
        assert!(dirs.is_empty(), "scratch directories left: {dirs:?}");
    }

    /// The history's run: (status, levels saved).
    fn saved(&self) -> (String, usize) {
        let store = webstand_store::Store::open_existing(Some(&self.db)).unwrap();
        let run = store.load_run(1).unwrap();
        (run.status, run.levels.len())
    }
}

/// nginx then lighttpd, each on the php then the cgi workload at 1 and 2 clients, 2 s a level.
fn php_and_cgi() -> Vec<&'static str> {
    short_compare("nginx,lighttpd", "php,cgi", "1,2", "2s", &[])
}

/// Asserts that `seen` holds PHP-FPM's workers and fcgiwrap: the leftover checks have something to
/// find.
fn assert_backends_seen(seen: &[Seen]) {
    assert!(
        seen.iter().any(|s| s.cmd.starts_with("php-fpm: pool")),
        "no PHP-FPM worker among {seen:#?}"
    );
    assert!(
        seen.iter().any(|s| s.cmd.contains("fcgiwrap")),
        "no fcgiwrap among {seen:#?}"
    );
}

/// `signal` to a comparison once nginx's php levels and its first cgi level are saved (its second
/// cgi level running): the levels done are saved, the run is marked interrupted, the exit status
/// is 128 + the signal, and nothing of it is left.
fn stops_in_order(signal: libc::c_int, name: &str) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lab = Lab::start(&php_and_cgi());
    let seen = lab.measuring(3);
    assert_backends_seen(&seen);
    common::send_signal(lab.child.id(), signal);
    let (out, finished) = lab.finish();
    let (text, err) = (common::stdout(&out), common::stderr(&out));
    assert_eq!(out.status.code(), Some(128 + signal), "{text}\n{err}");
    let last = err.trim_end().lines().last().unwrap_or("");
    assert!(
        last.starts_with(&format!(
            "webstand: interrupted (exit status {}): stopped by {name}",
            128 + signal
        )),
        "{err}"
    );
    assert!(text.contains("lighttpd: not run: interrupted"), "{text}");
    let (status, levels) = finished.saved();
    assert_eq!(status, "interrupted");
    assert!(levels >= 3, "{levels} levels saved");
    finished.assert_nothing_left(&seen);
}

#[test]
fn sigterm_mid_comparison_saves_the_levels_and_leaves_nothing() {
    let _lab = common::busy_lab();
    stops_in_order(libc::SIGTERM, "SIGTERM");
}

#[test]
fn sighup_mid_comparison_saves_the_levels_and_leaves_nothing() {
    let _lab = common::busy_lab();
    stops_in_order(libc::SIGHUP, "SIGHUP");
}

#[test]
fn ctrl_c_mid_comparison_saves_the_levels_and_leaves_nothing() {
    let _lab = common::busy_lab();
    stops_in_order(libc::SIGINT, "Ctrl-C");
}

#[test]
fn a_second_signal_stops_everything_at_once() {
    let _lab = common::busy_lab();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lab = Lab::start(&php_and_cgi());
    let seen = lab.measuring(1);
    assert_backends_seen(&seen);
    // Back to back: the second arrives while the first's orderly stop has barely begun.
    common::send_signal(lab.child.id(), libc::SIGTERM);
    common::send_signal(lab.child.id(), libc::SIGHUP);
    let (out, finished) = lab.finish();
    let err = common::stderr(&out);
    // Whichever of the two was caught first gives the status.
    assert!(
        matches!(out.status.code(), Some(129 | 143)),
        "{:?}\n{err}",
        out.status
    );
    assert!(
        err.contains("webstand: a second signal: stopped at once"),
        "{err}"
    );
    assert_eq!(finished.saved().0, "interrupted");
    finished.assert_nothing_left(&seen);
}

#[test]
fn a_killed_webstand_is_cleaned_up_after_by_the_next_lab_command() {
    let _lab = common::busy_lab();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lab = Lab::start(&php_and_cgi());
    let seen = lab.measuring(1);
    assert_backends_seen(&seen);
    let pid = lab.child.id();
    common::send_signal(pid, libc::SIGKILL);
    let (dirs, cgroups) = (lab.scratch_dirs(), lab.cgroups());
    let (out, finished) = lab.finish();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&out.status),
        Some(9)
    );
    // What it left: its directories, and PHP-FPM's workers, orphaned in its cgroup (the lab's
    // direct children die with it, their children do not).
    assert!(!dirs.is_empty(), "no scratch directory to clean up");
    assert!(!cgroups.is_empty(), "no cgroup to clean up");
    let orphans: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.alive() && s.cmd.starts_with("php-fpm: pool"))
        .collect();
    assert!(!orphans.is_empty(), "nothing left to clean up: {seen:#?}");
    // The next lab command, with the same TMPDIR.
    let tmpdir = finished.tmp.path().to_str().unwrap().to_string();
    let next = common::run_with_env(
        &[
            &["compare", "-q", "--db", finished.db.to_str().unwrap()][..],
            &short_compare("nginx", "2k", "1", "300ms", &[]),
        ]
        .concat(),
        &[("TMPDIR", &tmpdir)],
        Duration::from_secs(60),
    );
    let err = common::stderr(&next);
    assert!(next.status.success(), "{err}");
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("webstand: cleaned up after a webstand that was killed"))
        .collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(said[0].contains(&pid.to_string()), "{err}");
    finished.assert_nothing_left(&seen);
}

/// A socket the lab made, as seen during the run: its path and mode, and its directory's mode.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Socket {
    path: PathBuf,
    mode: u32,
    dir_mode: u32,
}

fn sockets_under(dir: &Path, out: &mut HashSet<Socket>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if meta.is_dir() {
            sockets_under(&e.path(), out);
        } else if meta.file_type().is_socket() {
            let dir_mode = std::fs::metadata(dir).map_or(0, |m| m.permissions().mode() & 0o777);
            out.insert(Socket {
                path: e.path(),
                mode: meta.permissions().mode() & 0o777,
                dir_mode,
            });
        }
    }
}

#[test]
fn nothing_that_runs_php_or_cgi_runs_as_root_and_no_socket_is_open_to_all() {
    let _lab = common::busy_lab();
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut lab = Lab::start(&short_compare(
        "nginx,lighttpd,builtin",
        "php,cgi",
        "1,2",
        "1s",
        &[],
    ));
    // Every process and socket of the run, sampled until it ends.
    let (mut seen, mut sockets) = (HashSet::new(), HashSet::new());
    let deadline = Instant::now() + Duration::from_secs(150);
    let status = loop {
        if let Some(status) = lab.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the comparison did not end");
        seen.extend(lab.in_cgroups());
        sockets_under(lab.tmp.path(), &mut sockets);
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(status.success(), "{status:?}");
    let workers: Vec<&Seen> = seen
        .iter()
        .filter(|s| {
            s.cmd.starts_with("php-fpm: pool")
                || s.cmd.contains("fcgiwrap")
                || s.cmd.contains("cgi-bin/hello")
        })
        .collect();
    for what in ["php-fpm: pool", "fcgiwrap", "cgi-bin/hello"] {
        assert!(
            workers.iter().any(|s| s.cmd.contains(what)),
            "no {what} seen during the comparison: {seen:#?}"
        );
    }
    let as_root: Vec<&&Seen> = workers.iter().filter(|s| s.uid == 0).collect();
    assert!(as_root.is_empty(), "running as root: {as_root:#?}");
    // PHP-FPM's socket and fcgiwrap's: nobody but the servers' group may connect, nor write in
    // their directories.
    let names: HashSet<String> = sockets
        .iter()
        .filter_map(|s| Some(s.path.file_name()?.to_str()?.to_string()))
        .collect();
    for name in ["php-fpm.sock", "fcgiwrap.sock"] {
        assert!(names.contains(name), "no {name} among {sockets:#?}");
    }
    let open: Vec<&Socket> = sockets
        .iter()
        .filter(|s| s.mode & 0o007 != 0 || s.dir_mode & 0o002 != 0)
        .collect();
    assert!(open.is_empty(), "open to every local user: {open:#?}");
}
