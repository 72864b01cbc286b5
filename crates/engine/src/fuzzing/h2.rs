//! HTTP/2's response side fed a server's byte stream in reads, with no socket: the connection's
//! [`Session`] (the one `h2/conn.rs` drives) opened as a run's would be, streams opened after each
//! read as the slot opens them (up to the plan's `-m` or the server's lower limit, in the closed
//! loop's batches), and everything the session wrote kept, so that a target can check what the
//! engine sent and how each stream ended.

use super::StreamEnd;
use crate::h2::prepared::{request_block, Prepared};
use crate::h2::session::Session;
use crate::requests::StreamSend;
use crate::stream::{batch_room, End, Tally};
use std::time::{Duration, Instant};
use webstand_results::{H2Plan, Plan, Target};

/// What the run asks of its HTTP/2 connections.
#[derive(Clone, Copy, Debug)]
pub struct Knobs {
    /// `-m`: streams in flight at most.
    pub max_streams: u32,
    /// `--window-bits` and `-W`: our receive windows are 2^bits - 1.
    pub window_bits: u8,
    pub connection_window_bits: u8,
    /// A request body of this many bytes (POST), or none (GET).
    pub body: Option<usize>,
    /// Streams to open in all.
    pub budget: usize,
    /// A script reads the responses: each stream keeps its head and body.
    pub keep: bool,
}

/// What one connection did.
#[derive(Debug, Default)]
pub struct Run {
    /// Every byte the engine wrote, preface first.
    pub written: Vec<u8>,
    /// The streams that ended, in order.
    pub ended: Vec<StreamEnd>,
    /// The connection error the server caused, if any (the GOAWAY for it is in `written`).
    pub error: Option<String>,
    /// After each read that opened streams: the streams then in flight, and the limit then
    /// (the smaller of `-m` and the server's SETTINGS_MAX_CONCURRENT_STREAMS).
    pub in_flight: Vec<(usize, u32)>,
    /// Our receive windows as announced: each stream's and the connection's.
    pub stream_window: u32,
    pub connection_window: u32,
}

/// The request body: `n` bytes of letters.
pub fn body(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + (i % 26) as u8).collect()
}

/// One connection with `knobs`, fed `reads` one at a time.
pub fn drive(knobs: &Knobs, reads: &[&[u8]]) -> Run {
    let target = Target {
        host: "localhost".into(),
        port: 8080,
        addrs: vec![],
    };
    let mut plan = Plan::new(target, "/");
    plan.h2 = Some(H2Plan {
        max_streams: knobs.max_streams,
        window_bits: knobs.window_bits,
        connection_window_bits: knobs.connection_window_bits,
    });
    let body = knobs.body.map(body);
    if let Some(b) = &body {
        plan.method = "POST".into();
        plan.body = Some((b.clone(), "text/plain".into()));
    }
    let p = Prepared::new(&plan);
    let block = request_block(&plan, "/");
    let start = Instant::now();
    let mut session = Session::new();
    session.begin(&p, start);
    session.connected(1);
    let mut t = Tally::new(true, knobs.keep);
    let mut run = Run {
        stream_window: p.stream_window,
        connection_window: p.connection_window,
        ..Run::default()
    };
    let mut opened = 0;
    for (i, read) in reads.iter().enumerate() {
        let now = start + Duration::from_millis(i as u64 + 1);
        let fed = session.feed(read, now, body.as_deref(), &mut t);
        if let Err(e) = fed {
            run.error = Some(e.to_string());
            let failed = End::Failed(crate::record::Class::Exceptions, "HTTP/2 protocol error");
            session.end_all(failed, now, &mut t);
        }
        run.ended.extend(
            t.ended
                .drain(..)
                .map(|e| StreamEnd::of(&e, u64::from(e.stream.id))),
        );
        if run.error.is_none() {
            // As the slot fills after a read (closed loop): batches of half the limit.
            let limit = session.limit(&p) as usize;
            let room = batch_room(session.capacity(&p), session.streams().len(), limit);
            let now_opening = room.min(knobs.budget - opened);
            for _ in 0..now_opening {
                let send = StreamSend {
                    req: 0,
                    start: now,
                    block: &block,
                    body: body.as_deref(),
                    own: None,
                };
                session.open(&p, send, true, knobs.keep);
            }
            opened += now_opening;
            if now_opening > 0 {
                run.in_flight
                    .push((session.streams().len(), session.limit(&p)));
            }
        }
        run.written.extend_from_slice(session.output());
        session.written();
        if run.error.is_some() || (session.spent() && opened > 0) {
            break;
        }
    }
    run.written.extend_from_slice(session.output());
    run
}
