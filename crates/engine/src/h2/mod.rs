//! HTTP/2 on the generator's side (`bench --h2`): what is built once per run (`prepared.rs`), one
//! connection's frames and streams without its socket (`session.rs`, each stream's state in the
//! engine's `stream.rs`, which HTTP/3 shares), the connection slot the load thread's loop drives
//! (`conn.rs`), and the one line that ends a run against a server without HTTP/2 (`refused.rs`).

pub(crate) mod conn;
pub(crate) mod prepared;
mod refused;
pub(crate) mod session;
