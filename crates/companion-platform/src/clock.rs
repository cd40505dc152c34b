//! Wall-clock times as we write them: RFC 3339 UTC to the second for files and the log, and
//! the compact `YYYYMMDDTHHMMSSZ` stamp used in backup names; and the one way a deadline is
//! computed from a wait ([`deadline_after`]), which never overflows.

use std::time::{Duration, Instant};

use time::OffsetDateTime;
use time::macros::format_description;

/// Now, as `2026-12-02T15:04:05Z`.
pub fn now_rfc3339() -> String {
    rfc3339(OffsetDateTime::now_utc())
}

/// A time as `2026-12-02T15:04:05Z`.
pub fn rfc3339(at: OffsetDateTime) -> String {
    at.format(format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second]Z"
    ))
    .unwrap_or_default()
}

/// Now to the millisecond, as `2026-12-02T15:04:05.123Z` (spool times that order events
/// within a second: a Stop and the next prompt).
pub fn now_rfc3339_millis() -> String {
    rfc3339_millis(OffsetDateTime::now_utc())
}

/// A time to the millisecond, as `2026-12-02T15:04:05.123Z`.
pub fn rfc3339_millis(at: OffsetDateTime) -> String {
    at.to_offset(time::UtcOffset::UTC)
        .format(format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        ))
        .unwrap_or_default()
}

/// Now in milliseconds since the Unix epoch.
pub fn now_millis() -> i64 {
    i64::try_from(OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000).unwrap_or(0)
}

/// Now, as `20261202T150405Z` (backup names).
pub fn now_stamp() -> String {
    OffsetDateTime::now_utc()
        .format(format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .unwrap_or_else(|_| "00000000T000000Z".into())
}

/// Parses an RFC 3339 time.
pub fn parse_rfc3339(text: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}

/// The furthest a deadline is ever put: 30 years (as tokio's own "far future"), so a wait
/// too long to add to an [`Instant`] is a deadline that never comes, not a panic.
pub const FAR_FUTURE: Duration = Duration::from_secs(30 * 365 * 24 * 3600);

/// `from + after`, saturating: a wait past [`FAR_FUTURE`] (`Duration::MAX`, say) is capped to
/// it. `Instant + Duration` panics on overflow ("overflow when adding duration to instant");
/// every deadline of ours is computed here instead (tokio's `Instant` through
/// `from_std`/`into_std`).
pub fn deadline_after(from: Instant, after: Duration) -> Instant {
    from.checked_add(after.min(FAR_FUTURE))
        .or_else(|| from.checked_add(FAR_FUTURE))
        // No clock is that close to its end; an unreachable fallback, never a panic.
        .unwrap_or(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_never_overflows() {
        let now = Instant::now();
        assert_eq!(
            deadline_after(now, Duration::from_secs(5)),
            now + Duration::from_secs(5)
        );
        assert_eq!(deadline_after(now, Duration::MAX), now + FAR_FUTURE);
        assert_eq!(
            deadline_after(now, Duration::from_secs(u64::MAX)),
            now + FAR_FUTURE
        );
    }

    #[test]
    fn round_trips() {
        let text = now_rfc3339();
        assert_eq!(text.len(), 20);
        assert!(parse_rfc3339(&text).is_some());
        assert_eq!(now_stamp().len(), 16);
        let millis = now_rfc3339_millis();
        assert_eq!(millis.len(), 24);
        assert!(parse_rfc3339(&millis).is_some());
    }
}
