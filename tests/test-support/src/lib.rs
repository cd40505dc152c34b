//! What the workspace's test suites share, so a new test is a few lines: a dev-dependency of
//! `fabric-session` (hookbin), `fabric-tray`, `fabric-companion` and `desktop-shells`; never
//! part of a program.
//!
//! - [`files`]: writing a file (its folders made), the standard layout under a test's `HOME`.
//! - [`wait`]: waiting for a condition, with a limit that fails the test.
//! - [`watchdog`]: running a process or a call under a watchdog (a hang fails, nothing timed).
//! - [`special_files`] (Unix): the one table of hostile file kinds (a FIFO, `/dev/zero`
//!   through a link, a folder, a symlink loop, an unreadable file) planted where a config or
//!   spool file is expected, and whether what was planted is still there.
//! - [`desktop`] (Unix): the parts of a virtual desktop every suite makes the same way: the
//!   skip-or-fail rule (`$FABRIC_REQUIRE_DESKTOP_TESTS`), Xvfb, a bus's address, a runtime
//!   folder, the artefacts folder.
//! - [`picture`]: a screenshot's pixels (PNG, decoded to RGB).
//! - [`programs`]: `fabric-session` built for the running test's profile (Cargo does not
//!   build a dependency's binaries for a test).
//! - [`ssh_remote`] (Unix, root): a real OpenSSH remote on this machine: a fresh user, sshd on
//!   a loopback port, client configs naming it (known host, unknown host, no key).

pub mod files;
pub mod picture;
pub mod programs;
pub mod wait;
pub mod watchdog;

#[cfg(unix)]
pub mod desktop;
#[cfg(unix)]
pub mod special_files;
#[cfg(unix)]
pub mod ssh_remote;
