//! The Windows test bench: the Windows builds of our programs (`x86_64-pc-windows-gnu`, built
//! by `scripts/build-windows.sh`) run under Debian's Wine, each test in a fresh Wine prefix
//! of its own, as a person's machine would see them. Test scaffolding only; Linux only.
//!
//! - [`Bench`]: the Windows programs, Wine, and the one prefix template of this run (made
//!   once by `wineboot`, with the `ProcessPrng` shim in its `system32`: see
//!   `shim/bcryptprimitives.c`); a test that cannot run says so and why, or fails when
//!   `FABRIC_REQUIRE_DESKTOP_TESTS=1` (as `scripts/test.sh` sets).
//! - [`Prefix`]: one test's prefix, copied from the template (its large read-only DLL folders
//!   hard-linked), with its own `wineserver`; Windows paths of its folders.
//! - [`host::Host`]: an agent host as its hooks see it (`host-stand-in.exe`).
//! - [`display::Display`]: Xvfb, and a watch of the windows mapped on it.
//! - [`payload`]: each host's real hook input.
#![cfg(target_os = "linux")] // Wine, Xvfb and /proc

pub mod display;
pub mod host;
pub mod payload;
pub mod prefix;

pub use prefix::{Bench, Prefix};

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Set (to `1`) by `scripts/test.sh`: what this bench needs must be there, never skipped.
pub const REQUIRE: &str = "FABRIC_REQUIRE_DESKTOP_TESTS";

/// Whether a missing requirement must fail the test instead of skipping it.
pub fn required() -> bool {
    std::env::var_os(REQUIRE).is_some_and(|v| v == "1")
}

/// Says a test is not run and why, past the harness's capture; panics instead when
/// [`required`].
pub fn skip(test: &str, why: &str) {
    if required() {
        panic!("{test}: {why}; ${REQUIRE}=1 says this test must run");
    }
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED {test}: {why}. scripts/test.sh builds and installs what it needs and runs it."
    );
}

/// A hung process is killed after this long (a failure, not a measurement).
pub const WATCHDOG: Duration = Duration::from_secs(60);

/// Runs `command` to its end with `stdin` written from a thread; a run past [`WATCHDOG`] is
/// killed and fails the test.
pub fn run_watched(mut command: Command, stdin: &[u8], what: &str) -> Output {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let mut pipe = child.stdin.take().expect("piped");
    let payload = stdin.to_vec();
    std::thread::spawn(move || {
        let _ = pipe.write_all(&payload);
    });
    wait_watched(child, what)
}

/// Waits for `child` under [`WATCHDOG`], collecting its output.
pub fn wait_watched(mut child: Child, what: &str) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > WATCHDOG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} hung (killed after {WATCHDOG:?})");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits until `check` holds (what a detached worker brings about), failing after `limit`.
pub fn wait_until(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < limit, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// The text of a file, empty when it cannot be read.
pub fn read_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Writes `text` to `path`, creating its folders.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("create folders");
    std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}
