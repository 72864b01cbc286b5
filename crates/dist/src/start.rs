//! One start instant for every rank: each rank's clock offset from rank 0 (from ping-pong samples),
//! and a sleep to an absolute instant of the real-time clock.
//!
//! Ranks on rank 0's host read the same clock, so their offset is zero by construction; ranks on
//! other hosts estimate theirs from the round trip with the smallest delay (NTP's rule: the shortest
//! round trip bounds the error best, by half its length).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, from the real-time clock (the engine's `started_unix` clock).
pub fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// One ping-pong: when this rank sent, rank 0's clock when it answered, when the answer came back.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub sent: f64,
    pub peer: f64,
    pub received: f64,
}

/// This rank's clock minus the peer's, in seconds, from the sample with the shortest round trip.
pub fn offset(samples: &[Sample]) -> Option<f64> {
    samples
        .iter()
        .min_by(|a, b| (a.received - a.sent).total_cmp(&(b.received - b.sent)))
        .map(|s| (s.sent + s.received) / 2.0 - s.peer)
}

/// Sleeps until the real-time clock reads `unix` (returns at once if it already passed). An absolute
/// timer, so the wake-up does not drift by the time spent getting here.
pub fn sleep_until(unix: f64) {
    if !(unix.is_finite() && unix > 0.0) {
        return;
    }
    let at = Duration::from_secs_f64(unix);
    let ts = libc::timespec {
        tv_sec: at.as_secs() as libc::time_t,
        tv_nsec: at.subsec_nanos() as libc::c_long,
    };
    loop {
        // SAFETY: clock_nanosleep reads `ts` and, with TIMER_ABSTIME, writes nothing back.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_REALTIME,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if rc != libc::EINTR {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_comes_from_the_shortest_round_trip() {
        // This clock runs 5 ms ahead; the second sample has the shortest round trip.
        let samples = [
            Sample {
                sent: 10.0,
                peer: 9.998,
                received: 10.010,
            },
            Sample {
                sent: 11.0,
                peer: 10.9952,
                received: 11.0004,
            },
            Sample {
                sent: 12.0,
                peer: 11.996,
                received: 12.020,
            },
        ];
        let off = offset(&samples).unwrap();
        assert!((off - 0.005).abs() < 1e-9, "{off}");
        assert!(offset(&[]).is_none());
    }

    #[test]
    fn sleep_until_wakes_at_the_instant() {
        let at = now_unix() + 0.02;
        sleep_until(at);
        let late = now_unix() - at;
        // Bounded below exactly; above only loosely (a loaded machine wakes late).
        assert!(late >= 0.0, "woke {late} s early");
        sleep_until(now_unix() - 1.0); // in the past: returns at once
    }
}
