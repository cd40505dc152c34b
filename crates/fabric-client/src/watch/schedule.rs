//! When the mail watcher looks next: pure arithmetic over [`Duration`]s, with no clock and no
//! randomness of its own (the caller passes a uniform number in `[0, 1]`), so every bound is
//! unit-tested exactly.
//!
//! - The interval is within [`MIN_INTERVAL`] (10 s) and [`MAX_INTERVAL`] (24 hours), the
//!   settings' documented range: a shorter one is raised, a longer one lowered
//!   ([`clamped`]), so no wait computed here comes near overflowing a deadline.
//! - Between two looks that worked, the wait is the interval ± [`JITTER`] (20 %, uniform),
//!   and still never under 10 s (so `--interval 10` waits 10–12 s).
//! - After failures in a row the wait doubles, starting from twice the interval, up to
//!   [`MAX_BACKOFF`] (15 minutes), or the interval itself when that is longer: backing off
//!   never looks more often than the interval. Backoff waits are not jittered, so the cap is
//!   exact. A look that works again resets the count ([`Backoff::reset`]).

use std::time::Duration;

use companion_sessions::settings::{MAX_WATCH_INTERVAL_SECS, MIN_WATCH_INTERVAL_SECS};

/// The shortest interval between two looks.
pub const MIN_INTERVAL: Duration = Duration::from_secs(MIN_WATCH_INTERVAL_SECS);
/// The longest interval between two looks (24 hours).
pub const MAX_INTERVAL: Duration = Duration::from_secs(MAX_WATCH_INTERVAL_SECS);
/// The interval when none is given.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);
/// The longest wait while backing off (unless the interval itself is longer).
pub const MAX_BACKOFF: Duration = Duration::from_secs(15 * 60);
/// The jitter on the interval: ± this fraction, uniform.
pub const JITTER: f64 = 0.2;

/// The interval actually used: `interval` within [`MIN_INTERVAL`] and [`MAX_INTERVAL`].
pub fn clamped(interval: Duration) -> Duration {
    interval.clamp(MIN_INTERVAL, MAX_INTERVAL)
}

/// The wait between two looks that worked: the clamped interval scaled by a factor uniform in
/// `[1 - JITTER, 1 + JITTER]`, chosen by `unit` (0 gives -20 %, 1 gives +20 %; out-of-range or
/// NaN values are clamped to the middle), and never under [`MIN_INTERVAL`].
pub fn jittered(interval: Duration, unit: f64) -> Duration {
    let unit = if unit.is_finite() {
        unit.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let factor = 1.0 - JITTER + 2.0 * JITTER * unit;
    let seconds = clamped(interval).as_secs_f64() * factor;
    Duration::try_from_secs_f64(seconds)
        .unwrap_or(Duration::MAX)
        .max(MIN_INTERVAL)
}

/// The longest backoff wait for `interval`: 15 minutes, or the interval when that is longer.
pub fn backoff_cap(interval: Duration) -> Duration {
    clamped(interval).max(MAX_BACKOFF)
}

/// The wait after the `failures`-th failure in a row: `interval × 2^failures`, capped by
/// [`backoff_cap`]. `failures == 0` is the plain (floored) interval.
pub fn backoff(interval: Duration, failures: u32) -> Duration {
    let cap = backoff_cap(interval);
    2u32.checked_pow(failures)
        .and_then(|factor| clamped(interval).checked_mul(factor))
        .map_or(cap, |wait| wait.min(cap))
}

/// A count of failures in a row and the wait it gives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backoff {
    failures: u32,
}

impl Backoff {
    /// How many failures in a row so far.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Whether at least one failure is being backed off from.
    pub fn is_backing_off(&self) -> bool {
        self.failures > 0
    }

    /// Counts one more failure and returns the wait before the next try.
    pub fn fail(&mut self, interval: Duration) -> Duration {
        self.failures = self.failures.saturating_add(1);
        backoff(interval, self.failures)
    }

    /// Forgets the failures (the next look worked).
    pub fn reset(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn interval_is_raised_to_ten_seconds_and_lowered_to_a_day() {
        assert_eq!(clamped(secs(0)), secs(10));
        assert_eq!(clamped(secs(9)), secs(10));
        assert_eq!(clamped(secs(10)), secs(10));
        assert_eq!(clamped(secs(60)), secs(60));
        assert_eq!(clamped(secs(86_400)), secs(86_400));
        assert_eq!(clamped(secs(86_401)), secs(86_400));
        assert_eq!(clamped(secs(u64::MAX)), secs(86_400));
        assert_eq!(clamped(Duration::MAX), secs(86_400));
    }

    #[test]
    fn jitter_spans_plus_minus_twenty_percent() {
        assert_eq!(jittered(secs(60), 0.0), secs(48));
        assert_eq!(jittered(secs(60), 0.5), secs(60));
        assert_eq!(jittered(secs(60), 1.0), secs(72));
        // Out of range and NaN are clamped, never panicking.
        assert_eq!(jittered(secs(60), -3.0), secs(48));
        assert_eq!(jittered(secs(60), 7.0), secs(72));
        assert_eq!(jittered(secs(60), f64::NAN), secs(60));
        // Uniform: the middle of the unit range is the middle of the wait range.
        let quarter = jittered(secs(100), 0.25).as_secs_f64();
        assert!((quarter - 90.0).abs() < 1e-9, "{quarter}");
    }

    #[test]
    fn jitter_never_goes_under_ten_seconds() {
        for unit in [0.0, 0.1, 0.3, 0.5, 0.9, 1.0] {
            for interval in [0, 1, 5, 9, 10, 11, 12] {
                let wait = jittered(secs(interval), unit);
                assert!(wait >= secs(10), "{interval} s at {unit}: {wait:?}");
                assert!(wait <= secs(15), "{interval} s at {unit}: {wait:?}");
            }
        }
        assert_eq!(jittered(secs(5), 0.0), secs(10));
        assert_eq!(jittered(secs(5), 1.0), secs(12));
    }

    #[test]
    fn a_huge_interval_waits_a_day_give_or_take_its_jitter() {
        assert_eq!(jittered(Duration::MAX, 0.5), secs(86_400));
        assert_eq!(jittered(Duration::MAX, 1.0), secs(103_680));
        assert_eq!(backoff(Duration::MAX, 1), secs(86_400));
        assert_eq!(backoff(Duration::MAX, u32::MAX), secs(86_400));
    }

    #[test]
    fn backoff_doubles_from_twice_the_interval_to_fifteen_minutes() {
        let waits: Vec<u64> = (1..=6).map(|n| backoff(secs(60), n).as_secs()).collect();
        assert_eq!(waits, [120, 240, 480, 900, 900, 900]);
        let waits: Vec<u64> = (1..=8).map(|n| backoff(secs(10), n).as_secs()).collect();
        assert_eq!(waits, [20, 40, 80, 160, 320, 640, 900, 900]);
        // The floor applies before doubling.
        assert_eq!(backoff(secs(3), 1), secs(20));
        assert_eq!(backoff(secs(60), 0), secs(60));
        // Huge failure counts do not overflow.
        assert_eq!(backoff(secs(60), u32::MAX), MAX_BACKOFF);
    }

    #[test]
    fn backoff_never_looks_more_often_than_a_long_interval() {
        assert_eq!(backoff_cap(secs(3600)), secs(3600));
        assert_eq!(backoff(secs(3600), 1), secs(3600));
        assert_eq!(backoff(secs(600), 1), secs(900));
        assert_eq!(backoff(secs(600), 2), secs(900));
    }

    #[test]
    fn backoff_counter_fails_and_resets() {
        let mut backoff = Backoff::default();
        assert!(!backoff.is_backing_off());
        assert_eq!(backoff.fail(secs(60)), secs(120));
        assert_eq!(backoff.fail(secs(60)), secs(240));
        assert_eq!(backoff.failures(), 2);
        backoff.reset();
        assert!(!backoff.is_backing_off());
        assert_eq!(backoff.fail(secs(60)), secs(120));
    }
}
