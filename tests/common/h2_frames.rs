//! Raw HTTP/2 frames for the tests' own in-test servers (a rogue server, a header-block recorder):
//! one frame written, one read whole, with no library between the test and the wire.

use std::io::Read;
use std::net::TcpStream;

/// One frame as RFC 9113 §4.1 lays it out.
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.extend([kind, flags]);
    f.extend(stream.to_be_bytes());
    f.extend(payload);
    f
}

/// A frame read from the wire.
pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

/// The next frame, or None once the peer has gone (or sent half a frame).
pub fn read_frame(s: &mut TcpStream) -> Option<Frame> {
    let mut head = [0u8; 9];
    s.read_exact(&mut head).ok()?;
    let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
    let mut payload = vec![0u8; len];
    s.read_exact(&mut payload).ok()?;
    Some(Frame {
        kind: head[3],
        flags: head[4],
        stream: u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff,
        payload,
    })
}
