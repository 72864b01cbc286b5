//! The lab: experiments made of engine runs. Sweeps over clients, the max-users search, and real web
//! servers (builtin, nginx, lighttpd, apache, h2o, caddy, mini_httpd) started on one docroot with
//! equal limits, pinned to CPUs, each in a cgroup of its own that counts its CPU time.

mod accounting; // a server's CPU and memory per level, wrapping the caller's observer (issue 19)
pub mod cgroup; // a cgroup per server: CPU time of everything it starts (issue 19)
pub mod compare; // `webstand compare`: servers × workloads (issue 5)
pub mod disclosure; // what each row must say about how its server ran (issue 19)
pub mod h2; // the lab over HTTP/2: which servers speak it, equal settings, the h2 check (issue 11)
pub mod interrupt; // SIGINT, SIGTERM, SIGHUP: stop the runs in order; a second one stops everything
pub mod leftovers; // what a lab that must end at once, or a killed one, leaves: stopped and removed
pub mod limits; // backlog, keep-alive and caps every server gets alike (issue 19)
pub mod maxusers; // raise clients until a bound breaks, then bisect (issue 4)
mod memory; // resident memory per idle keep-alive connection of a lab server (issue 15)
pub mod owner; // whose the lab's directories, cgroups and process groups are
pub mod php; // PHP-FPM, a private MariaDB, the php page and WordPress (issue 12)
pub mod procstat; // CPU time and resident memory of a process tree from /proc (issue 5)
pub mod progress; // a bar (or periodic lines) with a run's live counters
pub mod robustness; // compare --probe: probe cases, slowhttptest, keep-alive connections held (issue 15)
mod round; // one server's turn in a round of a comparison (issue 19)
pub mod servers; // the known servers: start, stop, versions, features (issue 5)
pub mod session; // history + progress + Ctrl-C around every lab command's runs
mod slowhttp; // slowhttptest's slowloris and slow-read attacks, availability from its CSV
pub mod spawn; // one process of a lab server: pinned, grouped, in its cgroup (issue 19)
pub mod sweep; // a workload at rising concurrency (issue 4)
pub mod tls; // the lab over HTTPS: its certificate, equal TLS settings, the TLS check (issue 10)
pub mod users; // who what the lab starts runs as; the modes of what they share
pub mod verify; // compare --verify: the same targets through wrk and ab
