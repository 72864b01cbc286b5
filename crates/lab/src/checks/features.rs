//! thttpd's feature columns, checked rather than claimed: basic auth and throttling over a socket on
//! the running server, chroot by starting a second instance chrooted and looking at /proc.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::client::fetch_over;
use crate::procstat;
use crate::servers::lab_files::{lab_file_bytes, make_world_readable, THROTTLE_KIB_PER_SEC};
use crate::servers::lab_files::{
    AUTH_PASSWORD, AUTH_USER, CHROOT_PATH, PRIVATE_PATH, THROTTLED_BYTES, THROTTLED_PATH,
};
use crate::servers::process::{Server, Setup};
use crate::users::running_as_root;
use rustls::ClientConfig;
use std::sync::Arc;
use webstand_results::{Features, Support};

/// Basic auth: the protected page is refused without credentials (401), refused with a wrong
/// password, and served byte for byte with the right ones.
pub fn check_basic_auth(addr: SocketAddr, tls: Option<&Arc<ClientConfig>>) -> Support {
    let limit = Duration::from_secs(5);
    let want = lab_file_bytes(PRIVATE_PATH);
    let get = |auth| fetch_over(addr, tls, PRIVATE_PATH, auth, limit);
    let none = get(None);
    let wrong = get(Some((AUTH_USER, "wrong")));
    let right = get(Some((AUTH_USER, AUTH_PASSWORD)));
    match (none, wrong, right) {
        (Ok(n), Ok(w), Ok(r))
            if n.status == 401 && w.status == 401 && r.status == 200 && r.body == want =>
        {
            Support::Verified
        }
        (Ok(n), Ok(w), Ok(r)) => Support::Failed(format!(
            "statuses without/wrong/right credentials: {}/{}/{}",
            n.status, w.status, r.status
        )),
        (n, w, r) => Support::Failed(format!(
            "request failed: {:?}",
            n.err().or(w.err()).or(r.err()).map(|e| e.to_string())
        )),
    }
}

/// Throttling: the throttled file arrives whole and takes at least half the time its limit allows
/// (an unthrottled fetch over loopback takes milliseconds).
pub fn check_throttling(addr: SocketAddr, tls: Option<&Arc<ClientConfig>>) -> Support {
    let nominal = THROTTLED_BYTES as f64 / (THROTTLE_KIB_PER_SEC as f64 * 1024.0);
    match fetch_over(
        addr,
        tls,
        THROTTLED_PATH,
        None,
        Duration::from_secs_f64(nominal * 4.0 + 5.0),
    ) {
        Ok(f)
            if f.status == 200
                && f.body.len() == THROTTLED_BYTES
                && f.elapsed.as_secs_f64() >= nominal * 0.5 =>
        {
            Support::Verified
        }
        Ok(f) => Support::Failed(format!(
            "status {}, {} bytes in {:.2}s (limit allows {nominal:.1}s)",
            f.status,
            f.body.len(),
            f.elapsed.as_secs_f64()
        )),
        Err(e) => Support::Failed(e.to_string()),
    }
}

/// Chroot: a server started with `setup.chroot` has a process whose root (/proc/PID/root) is the
/// docroot, and still serves the marker file.
pub fn check_chroot(server: &mut Server, docroot: &Path) -> Support {
    let want = docroot
        .canonicalize()
        .unwrap_or_else(|_| docroot.to_path_buf());
    // A server may open its port before the process that serves chroots (apache's child): look for
    // a few seconds.
    let deadline = Instant::now() + Duration::from_secs(5);
    let rooted = loop {
        server.note_members();
        let rooted = procstat::tree(server.pid()).iter().any(|s| {
            std::fs::read_link(format!("/proc/{}/root", s.pid))
                .map(|r| r == want)
                .unwrap_or(false)
        });
        if rooted || Instant::now() > deadline {
            break rooted;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if !rooted {
        return Support::Failed("no server process has the docroot as its root".into());
    }
    let tls = server.tls.as_ref();
    match fetch_over(server.addr, tls, CHROOT_PATH, None, Duration::from_secs(5)) {
        Ok(f) if f.status == 200 && f.body == lab_file_bytes(CHROOT_PATH) => Support::Verified,
        Ok(f) => Support::Failed(format!("chrooted, but {CHROOT_PATH} answered {}", f.status)),
        Err(e) => Support::Failed(e.to_string()),
    }
}

/// A small directory to chroot a server into: the marker file, and the one library a threaded server
/// loads lazily after chroot (glibc's pthread_exit needs libgcc_s).
fn chroot_jail() -> anyhow::Result<tempfile::TempDir> {
    let jail = crate::owner::scratch_dir("chroot")?;
    let marker = jail.path().join(&CHROOT_PATH[1..]);
    std::fs::create_dir_all(marker.parent().unwrap())?;
    std::fs::write(&marker, lab_file_bytes(CHROOT_PATH))?;
    for lib in [
        "/lib/x86_64-linux-gnu/libgcc_s.so.1",
        "/usr/lib/x86_64-linux-gnu/libgcc_s.so.1",
        "/lib64/libgcc_s.so.1",
        "/lib/aarch64-linux-gnu/libgcc_s.so.1",
    ] {
        if Path::new(lib).is_file() {
            let to = jail.path().join(&lib[1..]);
            std::fs::create_dir_all(to.parent().unwrap())?;
            std::fs::copy(lib, &to)?;
        }
    }
    make_world_readable(jail.path());
    Ok(jail)
}

/// Checks auth and throttling on a running server (started without chroot), and chroot by starting a
/// second instance chrooted into the docroot. Takes a few seconds (the throttled fetch).
pub fn check_features(server: &mut Server, setup: &Setup) -> Features {
    let configured = server.kind().configures();
    let basic_auth = if configured.basic_auth {
        check_basic_auth(server.addr, server.tls.as_ref())
    } else {
        Support::No
    };
    let throttling = if configured.throttling {
        check_throttling(server.addr, server.tls.as_ref())
    } else {
        Support::No
    };
    let chroot = if !configured.chroot {
        Support::No
    } else if !running_as_root() {
        Support::Unverified("chroot needs root".into())
    } else {
        match chroot_jail() {
            Err(e) => Support::Failed(format!("cannot make a chroot directory: {e:#}")),
            Ok(jail) => {
                let mut s2 = setup.clone();
                s2.chroot = true;
                s2.docroot = jail.path().to_path_buf();
                // Chroot is checked over plain HTTP: TLS is the TLS column's.
                s2.tls = None;
                match Server::start(&server.binary, &s2) {
                    Ok(mut chrooted) => {
                        let r = match check_chroot(&mut chrooted, jail.path()) {
                            Support::Failed(why) => Support::Failed(format!(
                                "{why}; log: {}",
                                chrooted.log_tail(2).replace('\n', " | ")
                            )),
                            ok => ok,
                        };
                        let _ = chrooted.stop();
                        r
                    }
                    Err(e) => Support::Failed(format!("{e:#}").replace('\n', " | ")),
                }
            }
        }
    };
    Features {
        basic_auth,
        chroot,
        throttling,
    }
}
