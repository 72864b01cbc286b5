//! The interface between the event loop and a connection's protocol. A protocol turns the bytes
//! read into requests, hands each to the `Service` with a `Sink` of its own for the answer, and
//! turns answers into bytes (`Out`); it owns its input state (buffered bytes, requests held back,
//! streams) and knows nothing of sockets, files or CGI. Answers that come later (a CGI program's,
//! a FastCGI backend's) reach it through `answer`, for the request they belong to. HTTP/1 (h1/)
//! and HTTP/2 (h2/) implement it; which one a connection speaks is the loop's choice at its first
//! bytes (worker.rs's `choose`).

use crate::config::Config;
use crate::output::Out;
use crate::response::Sink;
use crate::service::{Moment, Service};
use std::time::Instant;

pub trait Protocol {
    /// Takes freshly read bytes and answers every complete request it can now.
    fn receive(&mut self, new: &[u8], at: &Moment, out: &mut Out, svc: &mut dyn Service);

    /// Answers what was held back while output was pending or a job slot was taken; true when
    /// there was something (the loop goes round again).
    fn resume(&mut self, at: &Moment, out: &mut Out, svc: &mut dyn Service) -> bool;

    /// The client took too long to send what it started: answer that (408, GOAWAY) and close.
    fn timeout(&mut self, at: &Moment, out: &mut Out, svc: &mut dyn Service);

    /// Writes (part of) the later answer to request `stream` through a sink of this protocol.
    fn answer(&mut self, stream: u32, at: &Moment, out: &mut Out, f: &mut dyn FnMut(&mut dyn Sink));

    /// The later answer to request `stream` is complete with `status`; `body_owed` when the client
    /// had not sent all of the request's body (HTTP/1 must close: the rest cannot be framed).
    fn answered(&mut self, stream: u32, status: u16, body_owed: bool, at: &Moment, out: &mut Out);

    /// Hands request bodies that arrived while their job was busy to the jobs that take them now;
    /// true when one took some.
    fn pass_bodies(&mut self, svc: &mut dyn Service) -> bool;

    /// Input is held that is not a complete request yet (HTTP/2: or streams are open).
    fn partial_input(&self) -> bool;

    /// Complete requests are held back until the connection's output is written.
    fn stalled(&self) -> bool;

    /// Output the protocol holds itself (HTTP/2's frames and bodies waiting for a window).
    fn has_output(&self) -> bool;

    /// Several requests are in flight at once: the connection is read and answered while a job
    /// runs for one of them.
    fn multiplexed(&self) -> bool;

    /// Until when the client may take to send the rest of what it started (None: nothing is
    /// partly in, the idle timeout applies).
    fn wait_deadline(&self, now: Instant, config: &Config) -> Option<Instant>;

    /// Makes this round's answers in `bytes` into the bytes to write (HTTP/2 frames its staged
    /// records within the flow-control windows).
    fn frame_output(&mut self, bytes: &mut Vec<u8>);

    /// Last bytes for a connection the server closes (HTTP/2's GOAWAY).
    fn farewell(&mut self) -> Vec<u8>;
}
