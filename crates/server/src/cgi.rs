//! CGI/1.1 (RFC 3875): running a program for a request. (Being written; no job is started yet.)

use crate::conn::Conn;
use crate::handler::Ctx;
use std::time::Instant;

/// A CGI program running for one connection.
pub struct CgiJob {
    pub deadline: Instant,
}

impl Ctx {
    pub fn end_cgi(&mut self, conn: &mut Conn, _registry: &mio::Registry) {
        conn.cgi = None;
    }
    pub fn cgi_progress(&mut self, _conn: &mut Conn, _out: &mut Vec<u8>, _registry: &mio::Registry) -> bool {
        false
    }
    pub fn cgi_timed_out(&mut self, conn: &mut Conn, _out: &mut Vec<u8>, _registry: &mio::Registry) {
        conn.cgi = None;
    }
}
