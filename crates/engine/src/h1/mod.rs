//! HTTP/1.x on the generator's side: the request bytes of a URL (`request.rs`), the response
//! reader (`response.rs`, whose framing is `webstand-http1`'s) and ab's `-v` echo (`verbose.rs`).

pub(crate) mod request;
pub(crate) mod response;
mod verbose;
