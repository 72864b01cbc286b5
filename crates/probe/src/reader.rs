//! What a probe connection makes of the server's bytes, read by read: responses split by the
//! engine's response parser (their statuses, the first that cannot be parsed), and whether a leak
//! marker went by, searched across read boundaries. No socket: `conn.rs` hands it what it read.

use crate::result::Seen;
use crate::template::LeakTarget;
use webstand_engine::{Feed, ResponseParser};

/// Statuses kept per connection (the count goes on beyond).
pub const STATUSES_KEPT: usize = 16;

/// The reading half of a probe connection.
pub struct Reader {
    parser: ResponseParser,
    /// The last bytes read, so a marker split across two reads is still found.
    tail: Vec<u8>,
}

impl Default for Reader {
    fn default() -> Reader {
        let mut parser = ResponseParser::default();
        parser.begin(false);
        Reader {
            parser,
            tail: Vec::new(),
        }
    }
}

impl Reader {
    /// Whether a response has begun and not finished.
    pub fn mid_response(&self) -> bool {
        self.parser.started()
    }

    /// Bytes read `at_ms` after the case started, into `seen`.
    pub fn absorb(&mut self, seen: &mut Seen, mut data: &[u8], markers: &[LeakTarget], at_ms: u64) {
        seen.bytes += data.len() as u64;
        seen.first_answer_ms.get_or_insert(at_ms);
        self.scan(seen, data, markers);
        while seen.garbage.is_none() && !data.is_empty() {
            match self.parser.feed(data) {
                Ok(Feed::Done(n)) => {
                    self.response_done(seen);
                    data = &data[n.min(data.len())..];
                    if n == 0 {
                        break;
                    }
                }
                Ok(Feed::More) => break,
                Err(e) => seen.garbage = Some(e.to_string()),
            }
        }
    }

    /// The server closed the connection: a response that runs to the close ends there.
    pub fn closed(&mut self, seen: &mut Seen) {
        if self.parser.eof() {
            self.response_done(seen);
        }
    }

    fn response_done(&mut self, seen: &mut Seen) {
        if seen.statuses.len() < STATUSES_KEPT {
            seen.statuses.push(self.parser.status);
        }
        seen.responses += 1;
        self.parser.begin(false);
    }

    fn scan(&mut self, seen: &mut Seen, data: &[u8], markers: &[LeakTarget]) {
        let longest = markers
            .iter()
            .flat_map(|t| t.markers.iter().map(Vec::len))
            .max()
            .unwrap_or(0);
        if longest == 0 {
            return;
        }
        self.tail.extend_from_slice(data);
        for target in markers {
            if target
                .markers
                .iter()
                .any(|m| memchr::memmem::find(&self.tail, m).is_some())
            {
                seen.leaked.get_or_insert_with(|| target.name.clone());
            }
        }
        let keep = longest.saturating_sub(1).min(self.tail.len());
        self.tail.drain(..self.tail.len() - keep);
    }
}
