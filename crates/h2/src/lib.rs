//! HTTP/2 wire syntax (RFC 9113, HPACK RFC 7541) for both of webstand's roles: the load generator
//! (`webstand-engine`, `bench --h2`) and the server (`webstand-server`, h2 by ALPN and h2c).
//!
//! - [`frame`]: the connection preface, the 9-byte frame header, each frame type parsed from and
//!   written to bytes, with RFC 9113's per-frame checks (stream 0 or not, fixed lengths, padding).
//! - [`settings`]: SETTINGS values, the §6.5.2 ranges, and what a peer's values refuse as types.
//! - [`error`]: error codes and the connection- or stream-error a check produces.
//! - [`window`]: a flow-control window (overflow past 2^31-1 is FLOW_CONTROL_ERROR) and when to
//!   send WINDOW_UPDATE for data consumed.
//! - [`hpack`]: header blocks: our own decoder (integers, literals, [`hpack_table`]'s static and
//!   dynamic tables, [`huffman`]'s table-driven Huffman decoding) enforcing the header-list size and
//!   dynamic-table size its side announced; [`hpack_encoder`]: our encoder (indexed fields,
//!   incremental indexing of repeating values, Huffman where shorter, table-size updates).
//! - [`block`]: a header block gathered from HEADERS and CONTINUATION frames, bounded in size.
//!
//! Nothing here owns a socket, a clock or a stream state machine: the roles drive these pieces.

pub mod block;
pub mod error;
pub mod frame;
pub mod hpack;
pub mod hpack_encoder;
pub mod hpack_table;
pub mod huffman;
pub mod settings;
pub mod window;

pub use error::{Error, ErrorCode};
pub use frame::{Frame, Head, Kind, PREFACE};
pub use settings::{Sender, SettingId, Settings, SettingsRefusal};
pub use window::Window;
