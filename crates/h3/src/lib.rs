//! HTTP/3 wire syntax (RFC 9114, QPACK RFC 9204) for both of webstand's roles, as `webstand-h2`
//! is HTTP/2's: the server (`webstand serve --listen-quic`) and the load generator.
//!
//! - [`varint`]: QUIC's variable-length integers (RFC 9000 §16).
//! - [`frame`]: frame heads, which stream may carry which type, each frame's payload parsed and
//!   written; unknown and reserved types skipped.
//! - [`settings`]: a peer's SETTINGS with their defaults; HTTP/2's identifiers and duplicates
//!   refused.
//! - [`stream`]: the unidirectional stream types (control, push, QPACK encoder and decoder) and
//!   what a QUIC stream ID says.
//! - [`error`]: the error codes and whether an error ends the connection or one request.
//! - [`qpack`]: our decoder (static table only, as we announce no dynamic table capacity;
//!   bounded by the field section size we allow) and the peer's QPACK instruction streams;
//!   [`qpack_encoder`]: our encoder (static table and literals, Huffman where shorter);
//!   [`qpack_table`]: the static table.
//! - [`offload`]: the switch that turns UDP GSO and GRO off for both roles' QUIC sockets
//!   (`WEBSTAND_UDP_OFFLOAD=off`), to measure what they save.
//!
//! Nothing here owns a socket, a clock, a QUIC connection or a stream state machine: the roles
//! drive these pieces over their QUIC streams.

pub mod error;
pub mod frame;
pub mod offload;
pub mod qpack;
pub mod qpack_encoder;
pub mod qpack_table;
pub mod settings;
pub mod stream;
pub mod varint;

pub use error::{Error, ErrorCode};
pub use settings::Settings;
