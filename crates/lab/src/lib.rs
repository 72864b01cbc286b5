//! The lab: experiments made of engine runs. Sweeps over clients, the max-users search, and real web
//! servers (builtin, nginx, lighttpd, apache, h2o, caddy, mini_httpd) started on one docroot with
//! equivalent settings, pinned to CPUs and accounted from /proc. (Being written under issues 4 and 5.)
