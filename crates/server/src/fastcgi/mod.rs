//! FastCGI/1.0 (responder role) for URLs matching `--fastcgi PATTERN=ADDRESS` rules: PHP through
//! php-fpm, or any FastCGI application.
//!
//! A request becomes a job (job.rs) that the loop drives like any other (job.rs at the crate's
//! root). Its backend socket is registered with the client connection's own loop under the job's
//! token, so nothing blocks: connecting, writing the request records and reading the answer all
//! advance when the loop moves the job on, which it does from the client connection's step after
//! the client's output is flushed (that ordering is the back-pressure: a slow client stops the
//! reading of its backend). Connections are kept
//! (FCGI_KEEP_CONN) in each loop's bounded pool (backend.rs says why the bound counts busy ones
//! too), which the loop's jobs share (backends.rs). The request body goes out as STDIN records as the backend socket takes them: collected by
//! HTTP/1 framing when small or chunked, streamed from the client when large (body.rs says when
//! and why).
//!
//! Failures: a backend that cannot be reached is 502 at once; one silent for `fastcgi_timeout` is
//! 504; records that are not FastCGI, an oversized header block, a body beyond
//! `fastcgi_max_output` or a connection lost mid-answer are 502 (or a cut answer once its head is
//! sent), each with one line on stderr. A kept connection that turns out closed before it answered
//! anything is retried once on a new one.

mod backend;
mod backends;
mod body;
mod gzip;
mod job;
mod params;
mod record;
mod response;

pub use backends::{Backends, Settings};
pub use job::{FcgiJob, Script};
#[cfg(feature = "fuzzing")]
pub(crate) use {
    record::{next as next_record, Record},
    response::{Done, Reply},
};
