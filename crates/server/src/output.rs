//! A connection's output on its way to the socket: the bytes of this round's answers (a buffer
//! the loop lends), and what could not be written at once or must go by sendfile, queued as
//! memory and file segments (`Outbox`), with how the connection ends once they are written.

use std::collections::VecDeque;
use std::fs::File;
use std::sync::Arc;

/// A piece of output waiting to be written.
pub enum Segment {
    /// Bytes, and how many of them are already written.
    Mem(Vec<u8>, usize),
    /// A byte range [pos, end) of a file, sent with sendfile.
    File(Arc<File>, u64, u64),
}

impl Segment {
    pub fn unsent(&self) -> u64 {
        match self {
            Segment::Mem(buf, pos) => (buf.len() - pos) as u64,
            Segment::File(_, pos, end) => end - pos,
        }
    }

    pub fn done(&self) -> bool {
        self.unsent() == 0
    }
}

/// What a connection keeps of its output between rounds.
#[derive(Default)]
pub struct Outbox {
    pub queue: VecDeque<Segment>,
    /// The throttle rule the queued output is paced by.
    pub throttle: Option<usize>,
    /// Close once the queued output is written.
    pub closing: bool,
    /// …and close gracefully (shut down writing, swallow input until the FIN) because the input
    /// was refused mid-stream.
    pub linger: bool,
}

impl Outbox {
    /// Queues `bytes` (emptied).
    pub fn push_bytes(&mut self, bytes: &mut Vec<u8>) {
        if !bytes.is_empty() {
            self.queue.push_back(Segment::Mem(bytes.clone(), 0));
            bytes.clear();
        }
    }

    /// Queues `bytes` (emptied), then a file range to send with sendfile.
    pub fn push_file(&mut self, bytes: &mut Vec<u8>, file: &Arc<File>, start: u64, end: u64) {
        self.push_bytes(bytes);
        if end > start {
            self.queue
                .push_back(Segment::File(file.clone(), start, end));
        }
    }

    /// Bytes queued but not yet written.
    pub fn unsent(&self) -> u64 {
        self.queue.iter().map(Segment::unsent).sum()
    }

    /// Closes the connection once the output is written; `linger` when input may still come.
    pub fn close(&mut self, linger: bool) {
        self.closing = true;
        self.linger |= linger;
    }
}

/// Where a protocol writes one round's answers.
pub struct Out<'a> {
    /// This round's bytes (the loop's buffer, written with one call when nothing is queued).
    pub bytes: &'a mut Vec<u8>,
    pub outbox: &'a mut Outbox,
}

impl Out<'_> {
    /// Output is queued from earlier rounds (or a file this round): later answers wait.
    pub fn backed_up(&self) -> bool {
        !self.outbox.queue.is_empty()
    }
}
