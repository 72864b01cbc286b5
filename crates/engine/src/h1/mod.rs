//! HTTP/1.x on the generator's side: the request bytes of a URL (`request.rs`), the response
//! reader (`response.rs`, whose framing is `webstand-http1`'s), ab's `-v` echo (`verbose.rs`), and
//! the connection slot the load thread's loop drives (`conn.rs`, its requests in flight in
//! `inflight.rs`).

pub(crate) mod conn;
mod inflight;
pub(crate) mod request;
pub(crate) mod response;
mod verbose;
