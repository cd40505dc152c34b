//! Waiting for something a test brought about (a worker's file, a window, a bus name): a
//! poll with a limit past which the test fails naming what it waited for. Not a timing
//! assertion: the limits are generous.

use std::time::{Duration, Instant};

/// Polls `check` every 100 ms until it gives a value; panics after `limit`.
pub fn wait_until<T>(what: &str, limit: Duration, check: impl FnMut() -> Option<T>) -> T {
    poll(what, limit, Duration::from_millis(100), check)
}

/// Polls `check` every 20 ms until it is true; panics after `limit`. For what a detached
/// process does soon (a file written, a process gone).
pub fn wait_for(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    poll(what, limit, Duration::from_millis(20), || {
        check().then_some(())
    })
}

/// Polls `check` every `every` until it gives a value; panics after `limit`.
pub fn poll<T>(
    what: &str,
    limit: Duration,
    every: Duration,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let start = Instant::now();
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            start.elapsed() < limit,
            "gave up waiting for {what} ({limit:?})"
        );
        std::thread::sleep(every);
    }
}
