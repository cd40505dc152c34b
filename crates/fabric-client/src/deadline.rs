//! Deadlines on tokio's clock: `now + wait` that never overflows, through the core's one
//! saturating computation ([`companion_platform::clock::deadline_after`]; a wait too long to add
//! is a deadline 30 years away). Every deadline this crate computes goes through [`after`].

use std::time::Duration;

use tokio::time::Instant;

/// `from + wait`, saturating at [`companion_platform::clock::FAR_FUTURE`] from `from`.
pub fn after(from: Instant, wait: Duration) -> Instant {
    Instant::from_std(companion_platform::clock::deadline_after(
        from.into_std(),
        wait,
    ))
}

/// [`after`] from now.
pub fn from_now(wait: Duration) -> Instant {
    after(Instant::now(), wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_huge_wait_is_a_far_deadline_not_a_panic() {
        let now = Instant::now();
        assert_eq!(
            after(now, Duration::from_secs(3)),
            now + Duration::from_secs(3)
        );
        assert_eq!(
            after(now, Duration::MAX),
            now + companion_platform::clock::FAR_FUTURE
        );
        assert!(from_now(Duration::MAX) > now);
    }
}
