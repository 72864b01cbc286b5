//! thttpd's feature and protocol columns, checked over the wire on a server the lab started rather
//! than claimed: basic auth, chroot and throttling (`features`), TLS (`tls`: real handshakes, full
//! and resumed) and HTTP/2 (`h2`: an exchange by curl).

pub mod features;
pub mod h2;
pub mod tls;
