//! SETTINGS (RFC 9113 §6.5): the six defined parameters, their initial values, the ranges §6.5.2
//! puts on them, and applying a peer's SETTINGS frame. A value out of range is a
//! [`SettingsRefusal`] naming what was wrong; its [`SettingsRefusal::code`] is the connection error
//! to send. Unknown identifiers are ignored, as §6.5.2 requires.

use crate::error::{Error, ErrorCode};
use std::fmt;

/// The parameter identifiers (§6.5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum SettingId {
    HeaderTableSize = 1,
    EnablePush = 2,
    MaxConcurrentStreams = 3,
    InitialWindowSize = 4,
    MaxFrameSize = 5,
    MaxHeaderListSize = 6,
}

/// The largest flow-control window and SETTINGS_INITIAL_WINDOW_SIZE (2^31-1).
pub const MAX_WINDOW: u32 = 0x7fff_ffff;
/// SETTINGS_MAX_FRAME_SIZE's initial value and floor (2^14).
pub const MIN_MAX_FRAME_SIZE: u32 = 16_384;
/// SETTINGS_MAX_FRAME_SIZE's ceiling (2^24-1).
pub const MAX_MAX_FRAME_SIZE: u32 = 0xff_ffff;
/// SETTINGS_INITIAL_WINDOW_SIZE's and a connection window's initial value.
pub const DEFAULT_WINDOW: u32 = 65_535;

/// One side's settings, as that side announced them (initial values until it does).
/// `None` is the RFC's "unlimited" initial value of the two limits that have one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    pub header_table_size: u32,
    pub enable_push: bool,
    pub max_concurrent_streams: Option<u32>,
    pub initial_window_size: u32,
    pub max_frame_size: u32,
    pub max_header_list_size: Option<u32>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            header_table_size: 4096,
            enable_push: true,
            max_concurrent_streams: None,
            initial_window_size: DEFAULT_WINDOW,
            max_frame_size: MIN_MAX_FRAME_SIZE,
            max_header_list_size: None,
        }
    }
}

/// Why a peer's SETTINGS frame is refused (each a connection error).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingsRefusal {
    /// SETTINGS_ENABLE_PUSH other than 0 or 1.
    EnablePushNotBoolean(u32),
    /// A server announcing SETTINGS_ENABLE_PUSH = 1 (§6.5.2: only clients may).
    PushEnabledByServer,
    /// SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1 (FLOW_CONTROL_ERROR).
    InitialWindowTooLarge(u32),
    /// SETTINGS_MAX_FRAME_SIZE outside 2^14 ..= 2^24-1.
    MaxFrameSizeOutOfRange(u32),
}

impl SettingsRefusal {
    /// The error code §6.5.2 names for this refusal.
    pub fn code(self) -> ErrorCode {
        match self {
            SettingsRefusal::InitialWindowTooLarge(_) => ErrorCode::FlowControlError,
            _ => ErrorCode::ProtocolError,
        }
    }

    /// The connection error to raise (GOAWAY with [`SettingsRefusal::code`]).
    pub fn error(self) -> Error {
        let reason = match self {
            SettingsRefusal::EnablePushNotBoolean(_) => "SETTINGS_ENABLE_PUSH not 0 or 1",
            SettingsRefusal::PushEnabledByServer => "server sent SETTINGS_ENABLE_PUSH = 1",
            SettingsRefusal::InitialWindowTooLarge(_) => "SETTINGS_INITIAL_WINDOW_SIZE > 2^31-1",
            SettingsRefusal::MaxFrameSizeOutOfRange(_) => "SETTINGS_MAX_FRAME_SIZE out of range",
        };
        Error::connection(self.code(), reason)
    }
}

impl fmt::Display for SettingsRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SettingsRefusal::EnablePushNotBoolean(v) => write!(f, "SETTINGS_ENABLE_PUSH = {v}"),
            SettingsRefusal::PushEnabledByServer => {
                f.write_str("SETTINGS_ENABLE_PUSH = 1 from a server")
            }
            SettingsRefusal::InitialWindowTooLarge(v) => {
                write!(f, "SETTINGS_INITIAL_WINDOW_SIZE = {v} (above 2^31-1)")
            }
            SettingsRefusal::MaxFrameSizeOutOfRange(v) => {
                write!(
                    f,
                    "SETTINGS_MAX_FRAME_SIZE = {v} (outside 16384..=16777215)"
                )
            }
        }
    }
}

/// Which side sent a SETTINGS frame: a server may not enable push.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sender {
    Client,
    Server,
}

impl Settings {
    /// Applies the parameters of a peer's SETTINGS frame (`params` as [`crate::Frame::Settings`]
    /// gives them), in order, as §6.5.3 requires. On a refusal `self` is left as it was.
    pub fn apply(&mut self, params: &[u8], sender: Sender) -> Result<(), SettingsRefusal> {
        let mut next = *self;
        for param in params.chunks_exact(6) {
            let id = u16::from_be_bytes([param[0], param[1]]);
            let value = u32::from_be_bytes([param[2], param[3], param[4], param[5]]);
            next.set(id, value, sender)?;
        }
        *self = next;
        Ok(())
    }

    fn set(&mut self, id: u16, value: u32, sender: Sender) -> Result<(), SettingsRefusal> {
        match id {
            1 => self.header_table_size = value,
            2 => {
                self.enable_push = match (value, sender) {
                    (0, _) => false,
                    (1, Sender::Client) => true,
                    (1, Sender::Server) => return Err(SettingsRefusal::PushEnabledByServer),
                    _ => return Err(SettingsRefusal::EnablePushNotBoolean(value)),
                }
            }
            3 => self.max_concurrent_streams = Some(value),
            4 if value > MAX_WINDOW => return Err(SettingsRefusal::InitialWindowTooLarge(value)),
            4 => self.initial_window_size = value,
            5 if !(MIN_MAX_FRAME_SIZE..=MAX_MAX_FRAME_SIZE).contains(&value) => {
                return Err(SettingsRefusal::MaxFrameSizeOutOfRange(value))
            }
            5 => self.max_frame_size = value,
            6 => self.max_header_list_size = Some(value),
            _ => {}
        }
        Ok(())
    }

    /// The parameters in which `self` differs from the initial values: what to announce.
    pub fn announce(&self) -> Vec<(SettingId, u32)> {
        let initial = Settings::default();
        let mut params = Vec::new();
        let mut differs = |id, ours: u32, theirs: u32| {
            if ours != theirs {
                params.push((id, ours));
            }
        };
        differs(
            SettingId::HeaderTableSize,
            self.header_table_size,
            initial.header_table_size,
        );
        differs(
            SettingId::EnablePush,
            self.enable_push as u32,
            initial.enable_push as u32,
        );
        let unlimited = u32::MAX;
        let streams = self.max_concurrent_streams.unwrap_or(unlimited);
        differs(SettingId::MaxConcurrentStreams, streams, unlimited);
        differs(
            SettingId::InitialWindowSize,
            self.initial_window_size,
            initial.initial_window_size,
        );
        differs(
            SettingId::MaxFrameSize,
            self.max_frame_size,
            initial.max_frame_size,
        );
        let list = self.max_header_list_size.unwrap_or(unlimited);
        differs(SettingId::MaxHeaderListSize, list, unlimited);
        params
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{write, Frame, Head, HEADER_LEN};

    fn params(list: &[(u16, u32)]) -> Vec<u8> {
        list.iter()
            .flat_map(|&(id, v)| id.to_be_bytes().into_iter().chain(v.to_be_bytes()))
            .collect()
    }

    #[test]
    fn applies_known_values_and_ignores_unknown_ids() {
        let mut s = Settings::default();
        let p = params(&[
            (3, 100),
            (4, 1 << 20),
            (5, 1 << 20),
            (0x99, 7),
            (6, 8192),
            (2, 0),
        ]);
        s.apply(&p, Sender::Server).unwrap();
        assert_eq!(s.max_concurrent_streams, Some(100));
        assert_eq!(s.initial_window_size, 1 << 20);
        assert_eq!(s.max_frame_size, 1 << 20);
        assert_eq!(s.max_header_list_size, Some(8192));
        assert!(!s.enable_push);
    }

    #[test]
    fn out_of_range_values_are_refused_and_leave_settings_unchanged() {
        let cases = [
            (
                (2, 2),
                SettingsRefusal::EnablePushNotBoolean(2),
                ErrorCode::ProtocolError,
            ),
            (
                (2, 1),
                SettingsRefusal::PushEnabledByServer,
                ErrorCode::ProtocolError,
            ),
            (
                (4, 1 << 31),
                SettingsRefusal::InitialWindowTooLarge(1 << 31),
                ErrorCode::FlowControlError,
            ),
            (
                (5, 16_383),
                SettingsRefusal::MaxFrameSizeOutOfRange(16_383),
                ErrorCode::ProtocolError,
            ),
            (
                (5, 1 << 24),
                SettingsRefusal::MaxFrameSizeOutOfRange(1 << 24),
                ErrorCode::ProtocolError,
            ),
        ];
        for ((id, value), refusal, code) in cases {
            let mut s = Settings::default();
            let p = params(&[(3, 5), (id, value)]);
            assert_eq!(s.apply(&p, Sender::Server), Err(refusal));
            assert_eq!(refusal.code(), code);
            assert_eq!(s, Settings::default(), "a refused frame changes nothing");
        }
        let mut s = Settings::default();
        s.apply(&params(&[(2, 1)]), Sender::Client).unwrap();
        assert!(s.enable_push);
    }

    #[test]
    fn announced_values_round_trip_through_a_frame() {
        let ours = Settings {
            enable_push: false,
            max_concurrent_streams: Some(128),
            initial_window_size: (1 << 30) - 1,
            ..Settings::default()
        };
        let mut out = Vec::new();
        write::settings(&mut out, &ours.announce());
        let head = Head::peek(&out).unwrap();
        let Frame::Settings { ack: false, params } =
            Frame::parse(head, &out[HEADER_LEN..]).unwrap()
        else {
            panic!("not a SETTINGS frame");
        };
        let mut theirs = Settings::default();
        theirs.apply(params, Sender::Client).unwrap();
        assert_eq!(theirs, ours);
    }
}
