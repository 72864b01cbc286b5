//! thttpd's feature and protocol columns, checked over the wire on a server the lab started rather
//! than claimed: basic auth, chroot and throttling (`features`), TLS (`tls`: real handshakes, full
//! and resumed), HTTP/2 (`h2`: an exchange by curl) and HTTP/3 (`h3`: an exchange over QUIC).

pub mod features;
pub mod h2;
pub mod h3;
pub mod tls;
