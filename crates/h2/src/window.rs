//! Flow-control windows (RFC 9113 §5.2, §6.9): the connection's and each stream's, on the sending
//! side (how much we may still send) and on the receiving side (how much the peer may still send,
//! and when to give it more with WINDOW_UPDATE).
//!
//! A window may go negative when SETTINGS_INITIAL_WINDOW_SIZE shrinks (§6.9.2); it may never pass
//! 2^31-1, which is a FLOW_CONTROL_ERROR of the stream or the connection it belongs to.

use crate::error::{Error, ErrorCode};
use crate::settings::MAX_WINDOW;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    available: i64,
}

/// A window would pass 2^31-1, or the peer sent more than the window allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowControlError;

impl FlowControlError {
    /// As an error on `stream` (0: the connection's window).
    pub fn on(self, stream: u32) -> Error {
        let reason = "flow-control window exceeded";
        match stream {
            0 => Error::connection(ErrorCode::FlowControlError, reason),
            _ => Error::stream(stream, ErrorCode::FlowControlError, reason),
        }
    }
}

impl Window {
    pub fn new(initial: u32) -> Window {
        Window {
            available: initial as i64,
        }
    }

    /// Bytes that may still be sent (or received) now; 0 when the window is negative.
    pub fn available(&self) -> u32 {
        self.available.clamp(0, MAX_WINDOW as i64) as u32
    }

    /// A WINDOW_UPDATE's increment (sending side).
    pub fn grow(&mut self, increment: u32) -> Result<(), FlowControlError> {
        self.shift(increment as i64)
    }

    /// SETTINGS_INITIAL_WINDOW_SIZE changed from `old` to `new`: every stream window moves by the
    /// difference (§6.9.2), possibly below zero.
    pub fn resize(&mut self, old: u32, new: u32) -> Result<(), FlowControlError> {
        self.shift(new as i64 - old as i64)
    }

    fn shift(&mut self, by: i64) -> Result<(), FlowControlError> {
        let next = self.available + by;
        if next > MAX_WINDOW as i64 {
            return Err(FlowControlError);
        }
        self.available = next;
        Ok(())
    }

    /// Sending `len` bytes; the caller sends no more than [`Window::available`].
    pub fn spend(&mut self, len: u32) {
        debug_assert!(len <= self.available());
        self.available -= len as i64;
    }

    /// Receiving a DATA frame whose flow-controlled length is `len`: more than the window allows
    /// is the peer's FLOW_CONTROL_ERROR.
    pub fn receive(&mut self, len: u32) -> Result<(), FlowControlError> {
        if len as i64 > self.available {
            return Err(FlowControlError);
        }
        self.available -= len as i64;
        Ok(())
    }

    /// On the receiving side, once the window has fallen to half of `target` or below: the
    /// WINDOW_UPDATE increment that brings it back to `target` (and the window is taken as grown).
    /// Updating at half keeps the peer sending without one WINDOW_UPDATE per DATA frame.
    pub fn refill(&mut self, target: u32) -> Option<u32> {
        if self.available > target as i64 / 2 {
            return None;
        }
        let increment = (target as i64 - self.available).min(MAX_WINDOW as i64) as u32;
        self.available += increment as i64;
        Some(increment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growing_past_2_31_minus_1_is_a_flow_control_error() {
        let mut w = Window::new(65_535);
        assert_eq!(w.grow(MAX_WINDOW - 65_535), Ok(()));
        assert_eq!(w.available(), MAX_WINDOW);
        assert_eq!(w.grow(1), Err(FlowControlError));
        assert_eq!(
            w.available(),
            MAX_WINDOW,
            "a refused increment changes nothing"
        );
        assert_eq!(FlowControlError.on(0).code(), ErrorCode::FlowControlError);
        assert!(matches!(
            FlowControlError.on(3),
            Error::Stream { stream: 3, .. }
        ));
    }

    #[test]
    fn a_shrinking_initial_window_can_make_a_window_negative() {
        let mut w = Window::new(65_535);
        w.spend(60_000);
        w.resize(65_535, 1_000).unwrap();
        assert_eq!(w.available(), 0);
        w.grow(60_000).unwrap();
        assert_eq!(w.available(), 1_000);
    }

    #[test]
    fn receiving_more_than_the_window_is_refused_and_refill_tops_up_at_half() {
        let mut w = Window::new(100);
        w.receive(40).unwrap();
        assert_eq!(w.refill(100), None);
        w.receive(20).unwrap();
        assert_eq!(w.refill(100), Some(60));
        assert_eq!(w.receive(101), Err(FlowControlError));
        w.receive(100).unwrap();
        assert_eq!(w.refill(1 << 20), Some(1 << 20));
    }
}
