//! HTTP/3's layer above QUIC fed a server's streams as byte streams, with no QUIC connection: the
//! request streams' responses through the connection's [`Streams`] (frames, QPACK, how each ends)
//! and the server's unidirectional streams (control, QPACK encoder and decoder, others) through
//! its [`Peer`], as `h3/conn.rs` hands them what quinn-proto read; quinn-proto itself stays out
//! (its authors fuzz it). A GOAWAY ends the requests it names, as the slot does.

use super::StreamEnd;
use crate::h3::peer::Peer;
use crate::h3::streams::{Ask, Got, Streams};
use crate::stream::Tally;
use quinn_proto::{Dir, Side, StreamId, VarInt};
use std::time::{Duration, Instant};

/// What the server's side of the connection does next.
#[derive(Clone, Copy, Debug)]
pub enum Event<'a> {
    /// Bytes on request `n` (the client's `n`th bidirectional stream); `fin`: the stream ends
    /// after them.
    Request { n: u64, bytes: &'a [u8], fin: bool },
    /// The server resets request `n`'s response with `code`.
    Reset { n: u64, code: u64 },
    /// Bytes on the server's `n`th unidirectional stream; `fin`: it ends after them.
    Uni { n: u64, bytes: &'a [u8], fin: bool },
}

/// What one connection did.
#[derive(Debug, Default)]
pub struct Run {
    /// The requests that ended, in order.
    pub ended: Vec<StreamEnd>,
    /// The connection error the server caused, if any.
    pub error: Option<String>,
    /// The server's SETTINGS arrived; its lowest GOAWAY.
    pub settled: bool,
    pub goaway: Option<u64>,
}

/// The QUIC stream ID of request `n`.
pub fn request_id(n: u64) -> u64 {
    StreamId::new(Side::Client, Dir::Bi, n).into()
}

/// One connection with `requests` requests open (a script's `keep` or not), fed `events`.
pub fn drive(requests: u64, keep: bool, events: &[Event]) -> Run {
    let start = Instant::now();
    let mut streams = Streams::new();
    streams.begin(start);
    let frame = [0u8; 0];
    for n in 0..requests {
        let ask = Ask {
            req: n as usize,
            start,
            frame: &frame,
            body: None,
            check: true,
            connect_us: 1,
            keep,
            own: None,
        };
        let r = streams.request(StreamId::new(Side::Client, Dir::Bi, n), &ask);
        streams.list.push(r);
    }
    let mut peer = Peer::default();
    let mut t = Tally::new(true, keep);
    let mut run = Run::default();
    for (i, event) in events.iter().enumerate() {
        let now = start + Duration::from_millis(i as u64 + 1);
        if let Err(e) = on(&mut streams, &mut peer, *event, now, &mut t) {
            run.error = Some(e.to_string());
        }
        if let Some(first) = peer.goaway {
            streams.goaway(first, now, &mut t);
        }
        // Each request's index is its stream's (`req`): HTTP/3 keeps the QUIC ID beside it.
        run.ended.extend(
            t.ended
                .drain(..)
                .map(|e| StreamEnd::of(&e, request_id(e.stream.req as u64))),
        );
        if run.error.is_some() {
            break;
        }
    }
    run.settled = peer.settled;
    run.goaway = peer.goaway;
    run
}

fn on(
    streams: &mut Streams,
    peer: &mut Peer,
    event: Event,
    now: Instant,
    t: &mut Tally,
) -> Result<(), webstand_h3::Error> {
    let (n, got) = match event {
        Event::Uni { n, bytes, fin } => {
            let id = StreamId::new(Side::Server, Dir::Uni, n).into();
            peer.feed(id, bytes)?;
            return match fin {
                true => peer.finished(id),
                false => Ok(()),
            };
        }
        Event::Request {
            n,
            bytes,
            fin: false,
        } => (n, Got::Bytes(bytes)),
        Event::Request {
            n,
            bytes,
            fin: true,
        } => {
            on(
                streams,
                peer,
                Event::Request {
                    n,
                    bytes,
                    fin: false,
                },
                now,
                t,
            )?;
            (n, Got::Fin)
        }
        Event::Reset { n, code } => (n, Got::Reset(VarInt::from_u64(code).unwrap_or(VarInt::MAX))),
    };
    let id = StreamId::new(Side::Client, Dir::Bi, n);
    // A stream already ended (reset, or a stream error of its own): nothing more is read of it.
    let Some(i) = streams.list.iter().position(|r| r.id == id) else {
        return Ok(());
    };
    let step = streams.got(i, got, now, t);
    streams.conclude(i, step, now, t).map(|_| ())
}
