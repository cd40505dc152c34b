//! Time helpers: now as Unix seconds, RFC 3339 in and out, and the local wall clock (through
//! `localtime_r`, which is safe in a threaded process, unlike reading the offset via `time`).

use companion_platform::clock as lib_clock;
use time::OffsetDateTime;

/// Seconds since the Unix epoch.
pub fn now_unix() -> i64 {
    OffsetDateTime::now_utc().unix_timestamp()
}

/// Parses RFC 3339 into Unix seconds.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    lib_clock::parse_rfc3339(text.trim()).map(OffsetDateTime::unix_timestamp)
}

/// Formats Unix seconds as RFC 3339 (UTC).
pub fn format_rfc3339(unix: i64) -> String {
    OffsetDateTime::from_unix_timestamp(unix)
        .map(lib_clock::rfc3339)
        .unwrap_or_default()
}

/// The local time of `unix` as (seconds since local midnight).
#[cfg(unix)]
pub fn local_seconds_of_day(unix: i64) -> u32 {
    // SAFETY: localtime_r writes only into the tm we pass; a zeroed tm is a valid value.
    unsafe {
        let t: libc::time_t = unix as libc::time_t;
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return (unix.rem_euclid(86_400)) as u32;
        }
        (tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec) as u32
    }
}

#[cfg(not(unix))]
pub fn local_seconds_of_day(unix: i64) -> u32 {
    (unix.rem_euclid(86_400)) as u32
}

/// The minute of the local day (0–1439) of `unix`.
pub fn local_minute_of_day(unix: i64) -> u32 {
    local_seconds_of_day(unix) / 60
}

/// The next local midnight after `unix`, as Unix seconds ("until tomorrow").
pub fn next_local_midnight(unix: i64) -> i64 {
    unix - local_seconds_of_day(unix) as i64 + 86_400
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trip_and_midnight_is_ahead_within_a_day() {
        let t = 1_790_000_000;
        assert_eq!(parse_rfc3339(&format_rfc3339(t)), Some(t));
        assert_eq!(parse_rfc3339("nope"), None);
        let midnight = next_local_midnight(t);
        assert!(midnight > t && midnight - t <= 86_400);
        assert_eq!(local_seconds_of_day(midnight), 0);
        assert!(local_minute_of_day(t) < 1440);
    }
}
