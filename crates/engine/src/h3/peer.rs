//! The server's unidirectional streams (RFC 9114 §6.2, RFC 9204 §4.2): each opens with its type;
//! its control stream must begin with SETTINGS and may later carry GOAWAY, its QPACK encoder and
//! decoder streams may say only what a table of capacity 0 allows (`webstand-h3`'s readers), a
//! push stream is an error (we never allowed a push), and any other type is read and dropped.
//! What matters to the connection comes out as [`Peer::settled`] and [`Peer::goaway`]; a mistake
//! is the connection's error.

use quinn_proto::{ReadError, StreamId};
use webstand_h3::frame::{self, kind, Frame, Place, Sender};
use webstand_h3::qpack::{read_decoder_stream, read_encoder_stream};
use webstand_h3::stream::UniKind;
use webstand_h3::{varint, Error, ErrorCode};

/// A server's control frame longer than this is refused (SETTINGS and GOAWAY are a few bytes).
const MAX_CONTROL_FRAME: u64 = 16 * 1024;

/// One of the server's unidirectional streams.
struct Uni {
    id: u64,
    kind: Option<UniKind>,
    held: Vec<u8>,
}

/// The server's unidirectional streams on one connection.
#[derive(Default)]
pub(crate) struct Peer {
    streams: Vec<Uni>,
    control_seen: bool,
    /// The server's SETTINGS arrived.
    pub settled: bool,
    /// The lowest GOAWAY stream ID: requests on streams from it on were not processed.
    pub goaway: Option<u64>,
    pub goaways: u64,
}

impl Peer {
    /// Bytes of the server's stream `id`.
    pub(crate) fn feed(&mut self, id: u64, bytes: &[u8]) -> Result<(), Error> {
        let i = match self.streams.iter().position(|s| s.id == id) {
            Some(i) => i,
            None => {
                self.streams.push(Uni {
                    id,
                    kind: None,
                    held: Vec::new(),
                });
                self.streams.len() - 1
            }
        };
        let mut s = std::mem::replace(
            &mut self.streams[i],
            Uni {
                id,
                kind: None,
                held: Vec::new(),
            },
        );
        s.held.extend_from_slice(bytes);
        let result = self.take(&mut s);
        self.streams[i] = s;
        result
    }

    /// Reads the server's stream `id` from QUIC; the bytes read.
    pub(crate) fn read(
        &mut self,
        conn: &mut quinn_proto::Connection,
        id: StreamId,
    ) -> Result<u64, Error> {
        let mut stream = conn.recv_stream(id);
        let Ok(mut chunks) = stream.read(true) else {
            return Ok(0);
        };
        let (mut read, mut result) = (0, Ok(()));
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    read += chunk.bytes.len() as u64;
                    result = self.feed(id.into(), &chunk.bytes);
                    if result.is_err() {
                        break;
                    }
                }
                Ok(None) | Err(ReadError::Reset(_)) => {
                    result = self.finished(id.into());
                    break;
                }
                Err(ReadError::Blocked) => break,
            }
        }
        let _ = chunks.finalize();
        result.map(|()| read)
    }

    /// The server ended its stream `id`: its control stream must never end (§6.2.1).
    pub(crate) fn finished(&self, id: u64) -> Result<(), Error> {
        let control = self
            .streams
            .iter()
            .any(|s| s.id == id && s.kind == Some(UniKind::Control));
        match control {
            true => Err(Error::connection(
                ErrorCode::ClosedCriticalStream,
                "the server closed its control stream",
            )),
            false => Ok(()),
        }
    }

    fn take(&mut self, s: &mut Uni) -> Result<(), Error> {
        if s.kind.is_none() {
            let Some((value, n)) = varint::read(&s.held) else {
                return Ok(());
            };
            s.held.drain(..n);
            let kind = UniKind::from_u64(value);
            match kind {
                UniKind::Control if self.control_seen => {
                    return Err(Error::connection(
                        ErrorCode::StreamCreationError,
                        "a second control stream",
                    ))
                }
                UniKind::Control => self.control_seen = true,
                UniKind::Push => {
                    return Err(Error::connection(
                        ErrorCode::IdError,
                        "a push stream although we allowed no push",
                    ))
                }
                _ => {}
            }
            s.kind = Some(kind);
        }
        let used = match s.kind {
            Some(UniKind::Control) => self.control(&s.held)?,
            Some(UniKind::QpackEncoder) => read_encoder_stream(&s.held)?,
            Some(UniKind::QpackDecoder) => read_decoder_stream(&s.held)?,
            _ => s.held.len(),
        };
        s.held.drain(..used);
        Ok(())
    }

    /// The control stream's whole frames; returns the bytes used.
    fn control(&mut self, bytes: &[u8]) -> Result<usize, Error> {
        let mut pos = 0;
        while let Some(head) = frame::read_head(&bytes[pos..]) {
            if !self.settled && head.kind != kind::SETTINGS {
                return Err(Error::connection(
                    ErrorCode::MissingSettings,
                    "the server's control stream did not begin with SETTINGS",
                ));
            }
            frame::check(head.kind, Place::Control, Sender::Server)?;
            if head.len > MAX_CONTROL_FRAME {
                return Err(Error::connection(
                    ErrorCode::ExcessiveLoad,
                    "a control frame too long",
                ));
            }
            let end = pos + head.size + head.len as usize;
            if end > bytes.len() {
                break;
            }
            match frame::parse(&head, &bytes[pos + head.size..end])? {
                Frame::Settings(_) if self.settled => {
                    return Err(Error::connection(
                        ErrorCode::FrameUnexpected,
                        "a second SETTINGS frame",
                    ))
                }
                Frame::Settings(_) => self.settled = true,
                Frame::GoAway(id) => {
                    if self.goaway.is_some_and(|g| id > g) {
                        return Err(Error::connection(
                            ErrorCode::IdError,
                            "a GOAWAY with a larger stream ID than the last one",
                        ));
                    }
                    self.goaway = Some(id);
                    self.goaways += 1;
                }
                _ => {}
            }
            pos = end;
        }
        Ok(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use webstand_h3::frame::write;

    fn control(frames: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut out = vec![0x00];
        frames(&mut out);
        out
    }

    #[test]
    fn settings_then_goaway_on_the_control_stream_cut_anywhere() {
        let wire = control(|o| {
            write::settings(o, &[(0x06, 1000), (0x21, 1)]);
            write::goaway(o, 8);
        });
        for cut in 0..wire.len() {
            let mut p = Peer::default();
            p.feed(3, &wire[..cut]).unwrap();
            p.feed(3, &wire[cut..]).unwrap();
            assert!(p.settled);
            assert_eq!((p.goaway, p.goaways), (Some(8), 1));
        }
        // Another stream type is read and dropped; the control stream may not end.
        let mut p = Peer::default();
        p.feed(7, &[0x21, 1, 2, 3]).unwrap();
        p.feed(3, &wire).unwrap();
        assert!(p.finished(7).is_ok());
        assert_eq!(
            p.finished(3).unwrap_err().code(),
            ErrorCode::ClosedCriticalStream
        );
    }

    #[test]
    fn a_control_stream_without_settings_first_and_a_push_stream_are_errors() {
        let wire = control(|o| write::goaway(o, 0));
        let mut p = Peer::default();
        assert_eq!(
            p.feed(3, &wire).unwrap_err().code(),
            ErrorCode::MissingSettings
        );
        let mut p = Peer::default();
        assert_eq!(p.feed(3, &[0x01]).unwrap_err().code(), ErrorCode::IdError);
        // An encoder stream with an insert: we gave the table no capacity.
        let mut p = Peer::default();
        assert_eq!(
            p.feed(7, &[0x02, 0x3f, 0xe1, 0x1f]).unwrap_err().code(),
            ErrorCode::QpackEncoderStreamError
        );
    }
}
