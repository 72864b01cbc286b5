//! The lab: experiments made of engine runs. Sweeps over clients, the max-users search, and real web
//! servers (builtin, nginx, lighttpd, apache, h2o, caddy, mini_httpd) started on one docroot with
//! equivalent settings, pinned to CPUs and accounted from /proc. (Being written under issues 4 and 5.)

pub mod compare; // `webstand compare`: servers × workloads (issue 5)
pub mod maxusers; // raise clients until a bound breaks, then bisect (issue 4)
pub mod procstat; // CPU time and resident memory of a process tree from /proc (issue 5)
pub mod servers; // the known servers: configs, start, stop, versions (issue 5)
pub mod sweep; // a workload at rising concurrency (issue 4)
