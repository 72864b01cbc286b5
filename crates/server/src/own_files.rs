//! The files the server itself uses (its TOML config, htpasswd files, the throttle file, the access
//! log, the TLS certificate and key), which it never serves, lists or runs, however a request
//! spells their path.
//!
//! A path check cannot do this: `/users.htpasswd`, `/%75sers.htpasswd`, `//./users.htpasswd`, a
//! symlink `pw.txt -> users.htpasswd` and a hard link all name one file. So the refusal is by file
//! identity (device, inode) of what was actually opened beneath the root. The identities are taken
//! at start-up, before chroot, and the paths are stat'ed again at each check so that a file replaced
//! by rename (an editor saving the htpasswd file) is still recognised. Checks run only where a file
//! is resolved afresh (a cache miss, a CGI lookup, a listing): never on the cached hot path, whose
//! entries were all admitted by this check and are re-resolved when their file changes.

use crate::config::Config;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// (device, inode) of a file.
type FileId = (u64, u64);

/// The server's own files, by identity and by path.
pub struct OwnFiles {
    /// Identities seen at start-up.
    ids: Vec<FileId>,
    /// Paths to look at again at each check, as the process sees them (inside the chroot, if any).
    paths: Vec<PathBuf>,
}

impl OwnFiles {
    /// Collects the files `config` names. Call after they were opened or created (the access log
    /// is created at start-up) and before chroot.
    pub fn collect(config: &Config) -> OwnFiles {
        let mut named: Vec<&Path> = Vec::new();
        named.extend(config.config_file.as_deref());
        named.extend(config.auth.iter().map(|a| a.htpasswd.as_path()));
        named.extend(config.throttle_file.as_deref());
        named.extend(config.tls_cert.as_deref());
        named.extend(config.tls_key.as_deref());
        named.extend(
            config
                .access_log
                .as_deref()
                .filter(|p| *p != Path::new("-")),
        );
        let mut own = OwnFiles {
            ids: Vec::new(),
            paths: Vec::new(),
        };
        for path in named {
            let Ok(canonical) = path.canonicalize() else {
                continue;
            };
            if let Ok(meta) = std::fs::metadata(&canonical) {
                own.ids.push((meta.dev(), meta.ino()));
            }
            let seen = match &config.chroot {
                None => Some(canonical),
                Some(jail) => jail.canonicalize().ok().and_then(|j| {
                    canonical
                        .strip_prefix(&j)
                        .ok()
                        .map(|rest| Path::new("/").join(rest))
                }),
            };
            own.paths.extend(seen);
        }
        own
    }

    /// Whether the file described by `meta` is one of the server's own.
    pub fn contains(&self, meta: &std::fs::Metadata) -> bool {
        self.contains_id((meta.dev(), meta.ino()))
    }

    /// Whether the file with this device and inode is one of the server's own.
    pub fn contains_id(&self, id: FileId) -> bool {
        if self.ids.contains(&id) {
            return true;
        }
        self.paths
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .any(|m| (m.dev(), m.ino()) == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AuthRule;

    #[test]
    fn own_files_are_known_by_identity_through_links_and_renames() {
        let dir = tempfile::tempdir().unwrap();
        let pw = dir.path().join("users.htpasswd");
        std::fs::write(&pw, "u:{SHA}x\n").unwrap();
        std::fs::write(dir.path().join("page.html"), "hi").unwrap();
        let config = Config {
            auth: vec![AuthRule {
                prefix: "/p/".into(),
                htpasswd: pw.clone(),
                realm: "r".into(),
            }],
            ..Config::default()
        };
        let own = OwnFiles::collect(&config);
        let meta = |p: &Path| std::fs::metadata(p).unwrap();
        assert!(own.contains(&meta(&pw)));
        assert!(!own.contains(&meta(&dir.path().join("page.html"))));
        std::os::unix::fs::symlink("users.htpasswd", dir.path().join("link.txt")).unwrap();
        assert!(own.contains(&meta(&dir.path().join("link.txt"))));
        std::fs::hard_link(&pw, dir.path().join("hard.txt")).unwrap();
        assert!(own.contains(&meta(&dir.path().join("hard.txt"))));
        // Replaced by rename, as editors save: a new inode at the same path is still known.
        std::fs::write(dir.path().join("new"), "u:{SHA}y\n").unwrap();
        std::fs::rename(dir.path().join("new"), &pw).unwrap();
        assert!(own.contains(&meta(&pw)));
    }
}
