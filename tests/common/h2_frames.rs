//! Raw HTTP/2 frames for the tests' own in-test servers (a rogue server, a header-block recorder):
//! one frame written, one read whole, with no library between the test and the wire; and the
//! start every such server shares (listener, client preface, SETTINGS exchange, frame loop).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

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

/// An in-test h2c server on a loopback port of its own (returned): each connection gets a thread
/// running [`serve_frames`] with `settings` and its own copy of `on_frame`. It serves for the rest
/// of the test binary's life.
pub fn h2_server<F>(settings: Vec<u8>, on_frame: F) -> u16
where
    F: FnMut(&mut TcpStream, Frame) + Clone + Send + 'static,
{
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let (settings, on_frame) = (settings.clone(), on_frame.clone());
            std::thread::spawn(move || serve_frames(s, &settings, on_frame));
        }
    });
    port
}

/// One connection of an in-test h2c server: the client's 24-byte preface read, the server's
/// SETTINGS (`settings`, its payload) sent, then every frame to `on_frame` until the client goes
/// away, but for the client's SETTINGS, each acknowledged here (its ACKs do go to `on_frame`).
pub fn serve_frames(
    mut s: TcpStream,
    settings: &[u8],
    mut on_frame: impl FnMut(&mut TcpStream, Frame),
) {
    let mut preface = [0u8; 24];
    if s.read_exact(&mut preface).is_err() {
        return;
    }
    let _ = s.write_all(&frame(4, 0, 0, settings));
    while let Some(f) = read_frame(&mut s) {
        if f.kind == 4 && f.flags & 1 == 0 {
            let _ = s.write_all(&frame(4, 1, 0, &[]));
        } else {
            on_frame(&mut s, f);
        }
    }
}
