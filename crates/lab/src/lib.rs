//! The lab: experiments made of engine runs. Sweeps over clients, the max-users search, and real web
//! servers (builtin, nginx, lighttpd, apache, h2o, caddy, mini_httpd) started on one docroot with
//! equal limits, pinned to CPUs, each in a cgroup of its own that counts its CPU time.

mod accounting; // a server's CPU and memory per level, wrapping the caller's observer
pub mod affinity; // pinning a process (or thread) to CPUs
pub mod cgroup; // a cgroup per server: CPU time of everything it starts
pub mod checks; // basic auth, chroot, throttling, TLS, HTTP/2 and HTTP/3 of a running server, over the wire
pub mod client; // the lab's blocking HTTP/1 client over the real parser, plain or TLS
pub mod compare; // `webstand compare`: servers × workloads
pub mod disclosure; // what each row must say about how its server ran, from each kind's notes
pub mod group; // a process group the lab started, and the one way it stops one
pub mod h2; // the lab over HTTP/2: equal settings, the h2 check
pub mod h3; // the lab over HTTP/3: which servers speak it, the h3 check, hostile QUIC clients
pub mod interrupt; // SIGINT, SIGTERM, SIGHUP: stop the runs in order; a second one stops everything
pub mod leftovers; // what a lab that must end at once, or a killed one, leaves: stopped and removed
pub mod limits; // backlog, keep-alive and caps every server gets alike
pub mod maxrate; // raise an open-loop rate until an SLO is not met, bisect, confirm
pub mod maxusers; // raise clients until a bound breaks, then bisect
mod memory; // resident memory per idle keep-alive connection of a lab server
pub mod owner; // whose the lab's directories, cgroups and process groups are
pub mod php; // PHP-FPM, a private MariaDB, the php page and WordPress
pub mod procstat; // CPU time and resident memory of a process tree from /proc
pub mod programs; // finding the programs the lab runs, and running a tool bounded
pub mod progress; // a bar (or periodic lines) with a run's live counters
pub mod robustness; // compare --probe: probe cases, slowhttptest, keep-alive connections held
mod round; // one server's turn in a round of a comparison
pub mod servers; // the known servers, a file per kind behind one trait
pub mod session; // history + progress + Ctrl-C around every lab command's runs
mod slowhttp; // slowhttptest's slowloris and slow-read attacks, availability from its CSV
pub mod spawn; // one process of a lab server: pinned, grouped, in its cgroup
pub mod sweep; // a workload at rising concurrency
pub mod tls; // the lab over HTTPS: its certificate, equal TLS settings, the TLS check
pub mod up; // `webstand lab up`: one lab server on the lab's config until a signal
pub mod users; // who what the lab starts runs as; the modes of what they share
pub mod verify; // compare --verify: the same targets through wrk and ab
