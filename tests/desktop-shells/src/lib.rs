//! Tests on the real desktop shells, headless, as a person's desktop runs them: GNOME Shell
//! (43, with Debian's AppIndicator extension v46 and our own extension) and KWin (5.27) as
//! Wayland compositors with no GPU, with real terminals (foot, kitty, konsole) and our real
//! programs. What a test checks is read back from the shell itself: GNOME Shell through a
//! test-only extension (`gnome-extension/`, never shipped) that exposes what the top bar
//! and the message tray hold and which window has the focus; KWin through a KWin script that
//! calls the test back.
//!
//! - [`session`]: a private desktop session (HOME, buses, processes killed on drop, Fabric's
//!   stand-in, real hooks run in a terminal);
//! - [`gnome`]: the headless GNOME Shell and its probe;
//! - [`kwin`]: the headless KWin and its read-back script;
//! - [`terminal`]: foot, kitty (remote control on a socket) and konsole windows;
//! - [`programs`]: our programs in the target folder.
//!
//! Linux only; every test says why it cannot run where it cannot (and fails instead under
//! `FABRIC_REQUIRE_DESKTOP_TESTS=1`, as `scripts/test.sh` runs them).
#![cfg(target_os = "linux")]

pub mod gnome;
pub mod kwin;
pub mod programs;
pub mod session;
pub mod terminal;

pub use session::{Session, WAIT, cannot_run, require, wait_until};
