//! Staged records: how a multiplexed connection (HTTP/2, HTTP/3) takes its answers while its state
//! is busy reading (the handlers answer from inside `answer_ready`, jobs later). An answer reaches
//! the `Writer` of its stream, the `Sink` its request's answer goes to, which appends records to
//! the round's output: a head (status, length kind and value, field lines, the Date line), body
//! bytes, a file range (an index into the connection's staged files), the end of a streamed body,
//! or its abort (a FastCGI answer cut short: the stream is reset, the others go on). Before the
//! connection writes, its protocol reads them back with `read` and frames each its own way.

use crate::answer_fields::pairs;
use crate::response::{digits, Head as Answer, Length, Prepared, Sink};
use std::fs::File;
use std::sync::Arc;

/// A file range [start, end) staged for a stream.
pub type FileRange = (Arc<File>, u64, u64);

const HEAD: u8 = 1;
const DATA: u8 = 2;
const FILE: u8 = 3;
const END: u8 = 4;
const ABORT: u8 = 5;
/// Tag, stream ID, payload length.
const RECORD: usize = 13;
/// The staged form's slot among a `Prepared` head's forms (HTTP/1 has slot 0).
const FORM: usize = 1;

fn record(out: &mut Vec<u8>, tag: u8, stream: u64, len: usize) {
    out.push(tag);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(&(len as u32).to_be_bytes());
}

/// A head's payload before its date line: status, length kind and value, field lines.
fn prepare(head: &Answer) -> Box<[u8]> {
    let mut out = Vec::with_capacity(11 + head.fields.len());
    prepare_into(head, &mut out);
    out.into_boxed_slice()
}

/// Appends `prepare`'s bytes to `out`.
fn prepare_into(head: &Answer, out: &mut Vec<u8>) {
    out.extend_from_slice(&head.status.to_be_bytes());
    let (kind, n) = match head.length {
        Length::None => (0u8, 0),
        Length::Known(n) => (1, n),
        Length::Streamed => (2, 0),
    };
    out.push(kind);
    out.extend_from_slice(&n.to_be_bytes());
    out.extend_from_slice(head.fields);
}

/// The sink of one stream's answer.
pub struct Writer<'a> {
    /// The stream's ID (HTTP/2's 31 bits or QUIC's 62).
    pub stream: u64,
    pub date_line: &'a [u8],
    pub bytes: &'a mut Vec<u8>,
    pub staged: &'a mut Vec<FileRange>,
}

impl Sink for Writer<'_> {
    fn head(&mut self, head: &Answer) {
        let out = &mut *self.bytes;
        let at = out.len();
        record(out, HEAD, self.stream, 0);
        prepare_into(head, out);
        out.extend_from_slice(self.date_line);
        let len = (out.len() - at - RECORD) as u32;
        out[at + 9..at + RECORD].copy_from_slice(&len.to_be_bytes());
    }

    /// A prepared head's staged form is made once and kept with it.
    fn prepared(&mut self, head: &Prepared) {
        let prepared = head.form(FORM, prepare);
        let len = prepared.len() + self.date_line.len();
        record(self.bytes, HEAD, self.stream, len);
        self.bytes.extend_from_slice(prepared);
        self.bytes.extend_from_slice(self.date_line);
    }

    fn body(&mut self, data: &[u8]) {
        if !data.is_empty() {
            record(self.bytes, DATA, self.stream, data.len());
            self.bytes.extend_from_slice(data);
        }
    }

    fn file(&mut self, file: &Arc<File>, start: u64, end: u64) {
        record(self.bytes, FILE, self.stream, 4);
        let index = self.staged.len() as u32;
        self.bytes.extend_from_slice(&index.to_be_bytes());
        self.staged.push((file.clone(), start, end));
    }

    fn stream(&mut self, data: &[u8]) {
        self.body(data);
    }

    fn end_stream(&mut self) {
        record(self.bytes, END, self.stream, 0);
    }

    /// The stream is reset; the connection's other streams go on.
    fn abort(&mut self) -> bool {
        record(self.bytes, ABORT, self.stream, 0);
        true
    }

    fn gathered(&self) -> usize {
        self.bytes.len()
    }
}

/// A staged head read back.
pub struct StagedHead<'a> {
    pub status: u16,
    pub length: Length,
    /// The field lines, then the Date line.
    pub fields: &'a [u8],
}

impl StagedHead<'_> {
    /// The field list of its HEADERS: `:status`, `server`, the head's own fields (`lower`: its
    /// field lines with names lower-cased) but content-length, then content-length when the
    /// length is known. `bufs` hold the numbers' digits.
    pub fn block_fields<'b>(
        &self,
        lower: &'b [u8],
        bufs: &'b mut ([u8; 20], [u8; 20]),
    ) -> impl Iterator<Item = (&'b [u8], &'b [u8])> {
        let status = digits(u64::from(self.status), &mut bufs.0);
        let length_field = match self.length {
            Length::Known(n) => Some((&b"content-length"[..], digits(n, &mut bufs.1))),
            _ => None,
        };
        [(&b":status"[..], status), (b"server", b"webstand")]
            .into_iter()
            .chain(pairs(lower).filter(|(n, _)| *n != b"content-length"))
            .chain(length_field)
    }
}

/// A staged record read back.
pub enum Record<'a> {
    Head(StagedHead<'a>),
    Data(&'a [u8]),
    File(&'a FileRange),
    /// A streamed body ended.
    End,
    /// The answer was cut short: reset the stream.
    Abort,
}

/// Each record staged in `out`, with its stream, in the order staged.
pub fn read(out: &[u8], files: &[FileRange], mut each: impl FnMut(u64, Record)) {
    let mut pos = 0;
    while pos + RECORD <= out.len() {
        let tag = out[pos];
        let stream = u64::from_be_bytes(out[pos + 1..pos + 9].try_into().unwrap_or_default());
        let len = u32::from_be_bytes(out[pos + 9..pos + RECORD].try_into().unwrap_or_default());
        let payload = &out[pos + RECORD..pos + RECORD + len as usize];
        pos += RECORD + len as usize;
        let record = match tag {
            HEAD => {
                let n = u64::from_be_bytes(payload[3..11].try_into().unwrap_or_default());
                Record::Head(StagedHead {
                    status: u16::from_be_bytes([payload[0], payload[1]]),
                    length: match payload[2] {
                        0 => Length::None,
                        1 => Length::Known(n),
                        _ => Length::Streamed,
                    },
                    fields: &payload[11..],
                })
            }
            DATA => Record::Data(payload),
            FILE => {
                let i = u32::from_be_bytes(payload.try_into().unwrap_or_default()) as usize;
                match files.get(i) {
                    Some(range) => Record::File(range),
                    None => continue,
                }
            }
            ABORT => Record::Abort,
            _ => Record::End,
        };
        each(stream, record);
    }
}
