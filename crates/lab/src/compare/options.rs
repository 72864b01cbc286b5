//! What a comparison runs (`Options`): its servers, workloads and levels, how long each level runs,
//! the CPUs, the protocols; the limits every server's config is derived from and the plan every
//! level starts from.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use webstand_results::{Plan, SpinRule, Stop, Target, TlsPlan};
use webstand_workload::Workload;

use crate::limits::Limits;
use crate::maxusers::{Bounds, MaxUsersSpec};
use crate::robustness::ProbeSpec;
use crate::servers::binary::locate;
use crate::servers::Kind;
use crate::tls::cert::KeyType;
use webstand_results::WorkloadKind;

/// What a comparison runs.
#[derive(Clone, Debug)]
pub struct Options {
    pub servers: Vec<Kind>,
    pub workloads: Vec<WorkloadKind>,
    /// Client levels of every sweep.
    pub levels: Vec<usize>,
    /// Each level's measured run.
    pub stop: Stop,
    pub warmup: Option<Stop>,
    /// Workloads that also get a max-users search, and its spec.
    pub max_users_for: Vec<WorkloadKind>,
    pub max_users: MaxUsersSpec,
    /// CPUs for the servers and for the generator (disjoint when the machine has two or more).
    pub server_cpus: Vec<usize>,
    pub generator_cpus: Vec<usize>,
    pub keep_alive: bool,
    /// How the generator's closed-loop threads wait (`--spin`); every level of every server alike.
    pub spin: SpinRule,
    /// Check every body against the fixtures manifest (costs generator CPU).
    pub checksum: bool,
    /// Check basic auth, chroot and throttling (a few seconds per server).
    pub features: bool,
    /// Also run wrk and ab on the same targets.
    pub verify: bool,
    /// Where the docroot is written (fixtures + the lab's files).
    pub docroot: PathBuf,
    /// Size of the large file, bytes.
    pub large_size: u64,
    /// The `webstand` binary, for the builtin server.
    pub builtin: Option<PathBuf>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Times the whole comparison is repeated, servers taking turns; the tables give medians.
    pub rounds: usize,
    /// Every server on HTTPS only, with a certificate of this key type the lab generates.
    pub tls: Option<KeyType>,
    /// Every server that can on HTTP/2 too: by ALPN with `tls`, by prior knowledge (h2c) without.
    pub h2: bool,
    /// Every server that can on HTTP/3 too (`crate::h3`), on UDP at its HTTPS port: needs `tls`.
    pub h3: bool,
    /// PHP-FPM's binary (a name or a path) and its workers, for the php and wordpress workloads.
    pub php_fpm: String,
    pub php_children: usize,
    /// `--probe`: each server's robustness row, measured after its workloads in the first round.
    pub probe: Option<ProbeSpec>,
}

impl Options {
    /// Short defaults: a quick look at every server, not a publication run.
    pub fn new(docroot: &Path) -> Options {
        Options {
            servers: Kind::ALL.to_vec(),
            workloads: WorkloadKind::DEFAULT.to_vec(),
            levels: vec![1, 8, 32, 128],
            stop: Stop {
                requests: Some(200_000),
                duration: Some(Duration::from_secs(2)),
            },
            warmup: Some(Stop {
                requests: Some(20_000),
                duration: Some(Duration::from_millis(300)),
            }),
            max_users_for: vec![WorkloadKind::Large],
            max_users: MaxUsersSpec {
                start: 64,
                limit: 1024,
                stop: Stop {
                    requests: Some(200_000),
                    duration: Some(Duration::from_secs(2)),
                },
                warmup: None,
                bounds: Bounds {
                    max_error_pct: 1.0,
                    max_p99_ms: Some(1000.0),
                },
                precision: 0.25,
            },
            server_cpus: vec![0],
            generator_cpus: vec![1],
            keep_alive: true,
            spin: SpinRule::Auto,
            checksum: false,
            features: true,
            verify: false,
            docroot: docroot.to_path_buf(),
            large_size: 1 << 20,
            builtin: None,
            timeout: Duration::from_secs(10),
            rounds: 1,
            tls: None,
            h2: false,
            h3: false,
            php_fpm: crate::php::fpm::PROGRAM.into(),
            php_children: crate::php::DEFAULT_CHILDREN,
            probe: None,
        }
    }
}

impl Options {
    /// Refuses, in one line, a run whose workloads need a protocol the options do not put the
    /// servers on, or an `--h2` (`--h3`) run none of whose servers speaks HTTP/2 (HTTP/3).
    pub fn check(&self) -> anyhow::Result<()> {
        use anyhow::bail;
        let first = |need: fn(&WorkloadKind) -> bool| self.workloads.iter().copied().find(need);
        if let (None, Some(w)) = (self.tls, first(|w| w.needs_tls())) {
            bail!("workload {} runs over HTTPS: add --tls", w.name());
        }
        if let (false, Some(w)) = (self.h2, first(|w| w.h2_streams().is_some())) {
            bail!("workload {} runs over HTTP/2: add --h2", w.name());
        }
        if let (false, Some(w)) = (self.h3, first(|w| w.h3_streams().is_some())) {
            bail!("workload {} runs over HTTP/3: add --h3", w.name());
        }
        if self.h3 {
            check_h3(self.tls.is_some(), &self.servers, self.builtin.as_deref())?;
        }
        if !self.h2 {
            return Ok(());
        }
        if let (None, Some(w)) = (self.tls, first(|w| w.h2_streams().is_none())) {
            bail!(
                "workload {} speaks HTTP/1.1, but --h2 without --tls puts the servers on h2c \
                 (nginx's port then takes HTTP/2 only): add --tls, or run it without --h2",
                w.name()
            );
        }
        if self.tls.is_none() && (self.verify || self.probe.is_some()) {
            bail!("--verify and --probe speak HTTP/1.1: with --h2 add --tls (h2 by ALPN)");
        }
        if self.servers.iter().all(|k| k.h2().is_err()) {
            let speak: Vec<&str> = Kind::ALL
                .iter()
                .filter(|k| k.h2().is_ok())
                .map(|k| k.name())
                .collect();
            bail!(
                "--h2: none of the servers speaks HTTP/2 ({}); these do: {}",
                self.servers
                    .iter()
                    .filter_map(|k| k.h2().err())
                    .collect::<Vec<_>>()
                    .join("; "),
                speak.join(", ")
            );
        }
        Ok(())
    }

    /// The limits every server's config gets: from the most clients any level (or `--probe`) opens,
    /// and the most on the CGI workload.
    pub fn limits(&self) -> Limits {
        let most = |wk: Option<WorkloadKind>| {
            let search = wk.map_or(!self.max_users_for.is_empty(), |w| {
                self.max_users_for.contains(&w)
            });
            let levels = self.levels.iter().copied().max().unwrap_or(1);
            levels.max(if search { self.max_users.limit } else { 0 })
        };
        let cgi = self.workloads.contains(&WorkloadKind::Cgi);
        let probe = self.probe.as_ref().map_or(0, |p| p.most_connections());
        Limits::new(
            most(None).max(probe),
            if cgi {
                most(Some(WorkloadKind::Cgi))
            } else {
                1
            },
        )
    }

    /// The plan every level of a workload starts from: keep-alive where the server does it, one generator
    /// thread per generator CPU, HTTPS with `--tls` (unverified, like ab: the lab's TLS column is where
    /// its certificate is verified; a full handshake per connection unless the workload resumes).
    pub fn base_plan(&self, addr: SocketAddr, kind: Kind, workload: &Workload) -> Plan {
        let target = Target {
            host: addr.ip().to_string(),
            port: addr.port(),
            addrs: vec![addr],
        };
        let mut plan = Plan::new(target, "/");
        workload.apply(&mut plan);
        plan.keep_alive = self.keep_alive && kind.keeps_alive();
        plan.threads = self.generator_cpus.len().max(1);
        plan.spin = self.spin;
        plan.timeout = self.timeout;
        plan.tls = self.tls.map(|_| TlsPlan {
            sni: true,
            ..TlsPlan::default()
        });
        plan
    }
}

/// Refuses, in one line, an h3 run without the lab's certificate, or none of whose `servers`
/// speaks HTTP/3 here (saying why not for each, and which kinds do).
fn check_h3(tls: bool, servers: &[Kind], builtin: Option<&Path>) -> anyhow::Result<()> {
    if !tls {
        anyhow::bail!("--h3 needs the servers on HTTPS: QUIC is always TLS 1.3 (add --tls)");
    }
    let speaks = |k: &Kind| locate(*k, builtin).and_then(|b| k.h3(&b.path));
    let why: Vec<String> = servers.iter().filter_map(|k| speaks(k).err()).collect();
    if why.len() < servers.len() {
        return Ok(());
    }
    let these: Vec<&str> = Kind::ALL
        .iter()
        .filter(|k| speaks(k).is_ok())
        .map(|k| k.name())
        .collect();
    anyhow::bail!(
        "--h3: none of the servers speaks HTTP/3 here ({}); these do: {}",
        why.join("; "),
        these.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_follow_the_largest_level() {
        let mut o = Options::new(Path::new("/tmp"));
        assert_eq!(
            o.limits(),
            Limits::new(1024, 128),
            "max users on large to 1024"
        );
        o.max_users.limit = 4096;
        o.max_users_for = vec![WorkloadKind::Cgi];
        o.levels = vec![1, 300];
        assert_eq!(o.limits(), Limits::new(4096, 4096));
        o.max_users_for.clear();
        o.workloads = vec![WorkloadKind::TwoK];
        assert_eq!(o.limits(), Limits::new(300, 1));
    }
}
