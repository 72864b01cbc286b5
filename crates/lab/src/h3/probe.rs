//! The robustness probe's HTTP/3 category (`compare --probe`, servers that speak HTTP/3): five
//! hostile QUIC clients over real UDP sockets on loopback (`quic`), each case judged as the probe's
//! other categories are, in their words: **safe** (the server survived: a fresh HTTP/3 request was
//! answered during the case and after it, and the bad input ended as RFC 9000, 9114 and 9204 say),
//! **lenient** (degraded: it survived, but a fresh request went unanswered during the case, or the
//! bad input did not end as the RFCs say), **unsafe** (down: no fresh request answered after it).

use quinn_proto::{ClientConfig, Dir, StreamId, VarInt};
use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::time::{Duration, Instant};
use webstand_h3::frame::write;
use webstand_h3::{stream, varint};
use webstand_results::Counts;

use super::quic::{client_config, first_flight, Client};
use crate::checks::h3::answered_within;

/// The category's name in the robustness table and in `--probe-only`.
pub const CATEGORY: &str = "h3";

/// How long the stall, the flood and the stream flood last.
const HOLD: Duration = Duration::from_secs(3);

/// A fresh request must be answered within this, during a case and after it.
const FRESH_WITHIN: Duration = Duration::from_secs(3);

/// The handshakes left stalled at once, and the source ports the Initial flood cycles through.
const STALLED: usize = 64;
const FLOOD_PORTS: usize = 256;

const H3_FRAME_ERROR: u64 = 0x106;
const H3_REQUEST_CANCELLED: u32 = 0x10c;
const QPACK_DECOMPRESSION_FAILED: u64 = 0x200;

/// One hostile HTTP/3 case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// Initials that start handshakes never finished: the server's anti-amplification limit.
    HandshakeStall,
    /// Initials of new connections from many loopback ports, never answered.
    InitialFlood,
    /// Every request stream the server allows, each reset as soon as its GET is sent, again as
    /// credit comes back (HTTP/2's rapid reset, over QUIC).
    StreamFlood,
    /// A HEADERS frame cut short by the end of its stream.
    MalformedFrame,
    /// A QPACK field line indexing past the static table.
    QpackPastTable,
}

impl Case {
    pub const ALL: [Case; 5] = [
        Case::HandshakeStall,
        Case::InitialFlood,
        Case::StreamFlood,
        Case::MalformedFrame,
        Case::QpackPastTable,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Case::HandshakeStall => "h3-handshake-stall",
            Case::InitialFlood => "h3-initial-flood",
            Case::StreamFlood => "h3-stream-flood",
            Case::MalformedFrame => "h3-malformed-frame",
            Case::QpackPastTable => "h3-qpack-past-table",
        }
    }

    /// `--probe-only`'s list split: the HTTP/3 cases it names (by case or by the category), and
    /// the rest for the HTTP/1 probe. Every case for an empty list.
    pub fn pick(only: &[String]) -> (Vec<Case>, Vec<String>) {
        if only.is_empty() {
            return (Case::ALL.to_vec(), Vec::new());
        }
        let named = |c: &Case| only.iter().any(|o| o == CATEGORY || o == c.name());
        let cases = Case::ALL.into_iter().filter(named).collect();
        let rest = only
            .iter()
            .filter(|o| *o != CATEGORY && !Case::ALL.iter().any(|c| c.name() == *o))
            .cloned()
            .collect();
        (cases, rest)
    }
}

/// The category's counts, and a note for every case that was not safe.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub counts: Counts,
    pub notes: Vec<String>,
}

/// Runs `cases` against the server's QUIC port at `server`, trusting the lab's CA in `ca`.
pub fn run(server: SocketAddr, ca: &Path, cases: &[Case]) -> Outcome {
    let mut out = Outcome {
        counts: Counts {
            category: CATEGORY.into(),
            ..Counts::default()
        },
        notes: Vec::new(),
    };
    let config = match client_config(ca) {
        Ok(c) => c,
        Err(e) => {
            out.counts.unsafe_ = cases.len();
            out.notes.push(format!("h3: no QUIC client: {e:#}"));
            return out;
        }
    };
    for &case in cases {
        let (during, expected) = std::thread::scope(|s| {
            let during = matches!(
                case,
                Case::HandshakeStall | Case::InitialFlood | Case::StreamFlood
            )
            .then(|| {
                s.spawn(|| {
                    std::thread::sleep(HOLD / 3);
                    fresh(server, ca)
                })
            });
            let expected = hostile(case, server, &config);
            let during = during.map(|h| h.join().unwrap_or_else(|_| Err("panicked".into())));
            (during, expected)
        });
        let after = fresh(server, ca);
        let notes = judge(during, after.clone(), expected);
        match (&after, notes.is_empty()) {
            (Err(_), _) => out.counts.unsafe_ += 1,
            (Ok(()), true) => out.counts.safe += 1,
            (Ok(()), false) => out.counts.lenient += 1,
        }
        if !notes.is_empty() {
            out.notes
                .push(format!("{}: {}", case.name(), notes.join("; ")));
        }
    }
    out
}

/// A fresh HTTP/3 request for /2k.html on a connection of its own.
fn fresh(server: SocketAddr, ca: &Path) -> Result<(), String> {
    answered_within(server, ca, "/2k.html", None, FRESH_WITHIN)
}

/// What was not as it should be, worst first: down, then degraded.
fn judge(
    during: Option<Result<(), String>>,
    after: Result<(), String>,
    expected: Result<(), String>,
) -> Vec<String> {
    let mut notes = Vec::new();
    if let Err(e) = after {
        notes.push(format!(
            "down: no fresh request answered after the case: {e}"
        ));
    }
    if let Some(Err(e)) = during {
        notes.push(format!("degraded: a fresh request during the case: {e}"));
    }
    if let Err(e) = expected {
        notes.push(e);
    }
    notes
}

/// Runs one case; Err: how the server's answer differs from what the RFCs ask.
fn hostile(case: Case, server: SocketAddr, config: &ClientConfig) -> Result<(), String> {
    match case {
        Case::HandshakeStall => stall(server, config),
        Case::InitialFlood => flood(server, config),
        Case::StreamFlood => stream_flood(server, config),
        Case::MalformedFrame => {
            // HEADERS announcing 100 bytes, 10 sent, then the stream's end (RFC 9114 §7.1).
            let mut bytes = Vec::new();
            varint::write(&mut bytes, 0x1);
            varint::write(&mut bytes, 100);
            bytes.extend_from_slice(&[0; 10]);
            closes_with(server, config, &bytes, H3_FRAME_ERROR, "RFC 9114 §7.1")
        }
        Case::QpackPastTable => {
            // A field section: Required Insert Count 0, Base 0, then an indexed field line of the
            // static table at 99, one past its end (6-bit prefix 63, then 36).
            let mut bytes = Vec::new();
            write::headers(&mut bytes, &[0x00, 0x00, 0xff, 0x24]);
            let rfc = "RFC 9204 §3.1";
            closes_with(server, config, &bytes, QPACK_DECOMPRESSION_FAILED, rfc)
        }
    }
}

/// Handshakes left at their first flight: the server may send an address that never proved
/// itself at most 3× what it received from it (RFC 9000 §8.1).
fn stall(server: SocketAddr, config: &ClientConfig) -> Result<(), String> {
    let mut clients = Vec::new();
    for _ in 0..STALLED {
        let mut c = Client::new(server, config).map_err(|e| format!("{e:#}"))?;
        c.flush();
        clients.push(c);
    }
    let deadline = Instant::now() + HOLD;
    while Instant::now() < deadline {
        for c in clients.iter_mut() {
            c.listen_only();
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let worst = clients
        .iter()
        .max_by_key(|c| c.received * 1000 / c.sent.max(1))
        .expect("clients");
    if worst.received > 3 * worst.sent {
        return Err(format!(
            "sent {} bytes to an address that never completed its handshake, for {} received \
             (RFC 9000 §8.1: at most 3×)",
            worst.received, worst.sent
        ));
    }
    Ok(())
}

/// Initials of new connections from `FLOOD_PORTS` loopback ports in turn, as fast as they can be
/// made, for `HOLD`; never answered (what comes back is left unread).
fn flood(server: SocketAddr, config: &ClientConfig) -> Result<(), String> {
    let failed = |e: std::io::Error| format!("a UDP socket on 127.0.0.1: {e}");
    let mut ports = Vec::new();
    for _ in 0..FLOOD_PORTS {
        let s = UdpSocket::bind(("127.0.0.1", 0)).map_err(failed)?;
        s.set_nonblocking(true).map_err(failed)?;
        ports.push(s);
    }
    let deadline = Instant::now() + HOLD;
    for port in ports.iter().cycle() {
        if Instant::now() >= deadline {
            break;
        }
        for datagram in first_flight(server, config).map_err(|e| format!("{e:#}"))? {
            // A full socket buffer drops it, as a network would.
            let _ = port.send_to(&datagram, server);
        }
    }
    Ok(())
}

/// A connection that opens every request stream it may, sends a GET on each and resets it at
/// once, for `HOLD`. The server may end it (H3_EXCESSIVE_LOAD, say): that is its right.
fn stream_flood(server: SocketAddr, config: &ClientConfig) -> Result<(), String> {
    let mut c = connected(server, config)?;
    let get = get_frame();
    let deadline = Instant::now() + HOLD;
    while Instant::now() < deadline && c.lost.is_none() {
        let mut opened = Vec::new();
        while let Some(id) = c.conn.streams().open(Dir::Bi) {
            let _ = c.conn.send_stream(id).write(&get);
            opened.push(id);
        }
        c.flush();
        for id in opened {
            let _ = c
                .conn
                .send_stream(id)
                .reset(VarInt::from_u32(H3_REQUEST_CANCELLED));
        }
        let pause = (Instant::now() + Duration::from_millis(5)).min(deadline);
        c.drive(pause, |_| false);
    }
    Ok(())
}

/// A GET for /2k.html as one HEADERS frame (QPACK's static table and literals).
fn get_frame() -> Vec<u8> {
    let fields: [(&[u8], &[u8]); 4] = [
        (b":method", b"GET"),
        (b":scheme", b"https"),
        (b":authority", b"localhost"),
        (b":path", b"/2k.html"),
    ];
    let mut section = Vec::new();
    webstand_h3::qpack_encoder::encode(fields, &mut section);
    let mut frame = Vec::new();
    write::headers(&mut frame, &section);
    frame
}

/// A connection whose handshake completed, with our control stream open (its SETTINGS sent).
fn connected(server: SocketAddr, config: &ClientConfig) -> Result<Client, String> {
    let mut c = Client::new(server, config).map_err(|e| format!("{e:#}"))?;
    let deadline = Instant::now() + FRESH_WITHIN;
    if !c.drive(deadline, |c| c.connected || c.lost.is_some()) || !c.connected {
        return Err(match &c.lost {
            Some(e) => format!("the handshake failed: {e}"),
            None => format!("no handshake in {FRESH_WITHIN:?}"),
        });
    }
    let control = c.conn.streams().open(Dir::Uni).expect("a control stream");
    let mut bytes = Vec::new();
    varint::write(&mut bytes, stream::CONTROL);
    write::settings(&mut bytes, &[]);
    let _ = c.conn.send_stream(control).write(&bytes);
    Ok(c)
}

/// Sends `bytes` as a request stream, ended, and waits for the server's answer: Ok when it closes
/// the connection with `code`, as `rfc` says; Err with what it did instead.
fn closes_with(
    server: SocketAddr,
    config: &ClientConfig,
    bytes: &[u8],
    code: u64,
    rfc: &str,
) -> Result<(), String> {
    let mut c = connected(server, config)?;
    let id: StreamId = c.conn.streams().open(Dir::Bi).expect("a request stream");
    let _ = c.conn.send_stream(id).write(bytes);
    let _ = c.conn.send_stream(id).finish();
    let deadline = Instant::now() + FRESH_WITHIN;
    c.drive(deadline, |c| {
        c.lost.is_some() || c.stream_ended(id).is_some()
    });
    let want = format!("{rfc}: the connection closed with {code:#x}");
    match (c.closed_with(), c.stream_ended(id)) {
        (Some(got), _) if got == code => Ok(()),
        (Some(got), _) => Err(format!("closed the connection with {got:#x} ({want})")),
        (None, Some(how)) => Err(format!("{how}, the connection kept ({want})")),
        (None, None) => Err(format!("no answer in {FRESH_WITHIN:?} ({want})")),
    }
}
