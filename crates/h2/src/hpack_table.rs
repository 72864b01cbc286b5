//! HPACK's indexing tables (RFC 7541 §2.3): the 61-entry static table and a connection's dynamic
//! table, whose size counts each entry as name + value + 32 and which evicts its oldest entries to
//! stay within its maximum size. The decoder reads them by index; the encoder searches them for a
//! field (`find`): the static table through its names grouped by length (built once), the
//! dynamic table, which holds at most a few dozen entries, from the newest.

use std::collections::VecDeque;
use std::sync::OnceLock;

/// RFC 7541 §4.1: each field counts its name, its value and 32 bytes of overhead. The same sum
/// is what SETTINGS_MAX_HEADER_LIST_SIZE bounds (RFC 9113 §6.5.2).
pub fn field_size(name: &[u8], value: &[u8]) -> usize {
    name.len() + value.len() + 32
}

/// RFC 7541 Appendix A, index 1 first.
#[rustfmt::skip]
const STATIC: [(&str, &str); 61] = [
    (":authority", ""), (":method", "GET"), (":method", "POST"), (":path", "/"),
    (":path", "/index.html"), (":scheme", "http"), (":scheme", "https"), (":status", "200"),
    (":status", "204"), (":status", "206"), (":status", "304"), (":status", "400"),
    (":status", "404"), (":status", "500"), ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"), ("accept-language", ""), ("accept-ranges", ""),
    ("accept", ""), ("access-control-allow-origin", ""), ("age", ""), ("allow", ""),
    ("authorization", ""), ("cache-control", ""), ("content-disposition", ""),
    ("content-encoding", ""), ("content-language", ""), ("content-length", ""),
    ("content-location", ""), ("content-range", ""), ("content-type", ""), ("cookie", ""),
    ("date", ""), ("etag", ""), ("expect", ""), ("expires", ""), ("from", ""), ("host", ""),
    ("if-match", ""), ("if-modified-since", ""), ("if-none-match", ""), ("if-range", ""),
    ("if-unmodified-since", ""), ("last-modified", ""), ("link", ""), ("location", ""),
    ("max-forwards", ""), ("proxy-authenticate", ""), ("proxy-authorization", ""),
    ("range", ""), ("referer", ""), ("refresh", ""), ("retry-after", ""), ("server", ""),
    ("set-cookie", ""), ("strict-transport-security", ""), ("transfer-encoding", ""),
    ("user-agent", ""), ("vary", ""), ("via", ""), ("www-authenticate", ""),
];

/// What the tables hold of a field: the whole field, or its name, at an index.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Found {
    Field(usize),
    Name(usize),
    Nothing,
}

/// The static table's indexes by name length: the first entry of each name only (a name's
/// entries are adjacent).
fn static_by_length() -> &'static [Vec<usize>] {
    static BY_LENGTH: OnceLock<Vec<Vec<usize>>> = OnceLock::new();
    BY_LENGTH.get_or_init(|| {
        let longest = STATIC.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        let mut by_length = vec![Vec::new(); longest + 1];
        for (i, (name, _)) in STATIC.iter().enumerate() {
            if i == 0 || STATIC[i - 1].0 != *name {
                by_length[name.len()].push(i + 1);
            }
        }
        by_length
    })
}

/// The static table's entry for a field, or for its name.
fn find_static(name: &[u8], value: &[u8]) -> Found {
    let Some(candidates) = static_by_length().get(name.len()) else {
        return Found::Nothing;
    };
    let Some(&first) = candidates
        .iter()
        .find(|&&i| STATIC[i - 1].0.as_bytes() == name)
    else {
        return Found::Nothing;
    };
    let same_name = STATIC[first - 1..]
        .iter()
        .take_while(|(n, _)| n.as_bytes() == name);
    for (offset, (_, v)) in same_name.enumerate() {
        if v.as_bytes() == value {
            return Found::Field(first + offset);
        }
    }
    Found::Name(first)
}

/// A dynamic table entry: the name's bytes then the value's in one buffer, and where the name
/// ends. One buffer, not two boxes, so that an evicted entry's buffer can carry the next one: a
/// server that inserts a field per response (nginx inserts `server` and more with incremental
/// indexing into a full table) then costs no allocation, where boxes cost two allocations and
/// two frees per field (measured: 4 % of `bench --h2`'s CPU against nginx).
struct Entry {
    bytes: Vec<u8>,
    name_len: usize,
}

/// The static table followed by a dynamic table, as one index space (1-based).
pub struct Table {
    /// Newest first: index 62 is `dynamic[0]`.
    dynamic: VecDeque<Entry>,
    size: usize,
    max_size: usize,
    /// The last evicted entry's buffer, kept for the next insertion.
    spare: Vec<u8>,
}

impl Table {
    pub fn new(max_size: usize) -> Table {
        Table {
            dynamic: VecDeque::new(),
            size: 0,
            max_size,
            spare: Vec::new(),
        }
    }

    /// The field at `index`, or None past the end of either table (index 0 is never valid).
    pub fn get(&self, index: usize) -> Option<(&[u8], &[u8])> {
        match index {
            0 => None,
            1..=61 => {
                let (name, value) = STATIC[index - 1];
                Some((name.as_bytes(), value.as_bytes()))
            }
            _ => {
                let e = self.dynamic.get(index - 62)?;
                Some(e.bytes.split_at(e.name_len))
            }
        }
    }

    /// Where the tables hold `name: value` (the lowest index), or else its name (the static
    /// table's first: its indexes are the shorter).
    pub fn find(&self, name: &[u8], value: &[u8]) -> Found {
        let fixed = find_static(name, value);
        if let Found::Field(_) = fixed {
            return fixed;
        }
        let mut name_at = None;
        for (i, e) in self.dynamic.iter().enumerate() {
            let (n, v) = e.bytes.split_at(e.name_len);
            if n == name {
                if v == value {
                    return Found::Field(62 + i);
                }
                name_at = name_at.or(Some(62 + i));
            }
        }
        match (fixed, name_at) {
            (Found::Name(index), _) => Found::Name(index),
            (_, Some(index)) => Found::Name(index),
            _ => Found::Nothing,
        }
    }

    /// Adds a field as the newest entry, evicting the oldest ones to make room; a field larger
    /// than the whole table empties it and is not kept (RFC 7541 §4.4).
    pub fn insert(&mut self, name: &[u8], value: &[u8]) {
        let size = field_size(name, value);
        self.evict_to(self.max_size.saturating_sub(size));
        if size <= self.max_size {
            self.size += size;
            let mut bytes = std::mem::take(&mut self.spare);
            bytes.clear();
            bytes.extend_from_slice(name);
            bytes.extend_from_slice(value);
            self.dynamic.push_front(Entry {
                bytes,
                name_len: name.len(),
            });
        }
    }

    /// A dynamic table size update (RFC 7541 §6.3): the caller has checked it against the limit.
    pub fn resize(&mut self, max_size: usize) {
        self.max_size = max_size;
        self.evict_to(max_size);
    }

    fn evict_to(&mut self, size: usize) {
        while self.size > size {
            let e = self.dynamic.pop_back().expect("size counts the entries");
            let (name, value) = e.bytes.split_at(e.name_len);
            self.size -= field_size(name, value);
            self.spare = e.bytes;
        }
    }
}
