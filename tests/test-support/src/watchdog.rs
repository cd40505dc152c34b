//! Running something that may hang under a watchdog: a hang is killed (or given up on) and
//! fails the test naming what hung; nothing is timed.

use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Runs `command` to its end with `stdin` written to it (from a thread: a program that never
/// reads it does not block us), its output captured; kills it and fails after `limit`.
pub fn run_watched(mut command: Command, stdin: &[u8], what: &str, limit: Duration) -> Output {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let mut pipe = child.stdin.take().unwrap();
    let payload = stdin.to_vec();
    std::thread::spawn(move || {
        use std::io::Write;
        let _ = pipe.write_all(&payload);
    });
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what} hung (killed after {limit:?}); stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Calls `f` on a thread of its own and gives it `limit`: a call that has not returned by
/// then fails the test (the thread is left behind).
pub fn on_thread<T: Send + 'static>(
    what: &str,
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("{what}: hung (gave up after {limit:?})"))
}
