//! HTTP/3 on the generator's side (`bench --h3`): what is built once per run (`prepared.rs`), a
//! request stream's response frames (`response.rs`), the server's unidirectional streams
//! (`peer.rs`), one connection's request streams over QUIC (`streams.rs`), a QUIC connection on
//! its UDP socket (`quic.rs`), the connection slot the load thread's loop drives (`conn.rs`), the
//! lines that end a connection or a run (`refused.rs`), and whether a handshake was resumed
//! (`resumed.rs`).

pub(crate) mod conn;
pub(crate) mod peer;
pub(crate) mod prepared;
mod quic;
mod refused;
mod response;
mod resumed;
pub(crate) mod streams;
