//! The lab over HTTPS: one certificate every server presents, generated at run time (`cert`), the
//! TLS settings every server gets alike in each TLS library's spelling (`ciphers`); the check behind
//! thttpd's TLS column is `crate::checks::tls`. Which servers have TLS here is each server kind's own
//! knowledge (`crate::servers`).

pub mod cert;
pub mod ciphers;

pub use crate::checks::tls::{check, check_feature};
pub use cert::{KeyType, LabCert};
