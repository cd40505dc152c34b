//! The Windows programs under Wine, the Windows test bench (issue 24): everything Wine can
//! run of what a person's Windows machine does with them. Each test has a fresh prefix of its
//! own (see `wine_bench::prefix`); the programs are the `x86_64-pc-windows-gnu` builds
//! `scripts/build-windows.sh` makes (`FABRIC_WINE_BIN_DIR`).
//!
//! - `hooks`: every hook event of every host through the host's shell, the detached worker,
//!   the host's pid through `cmd`, the deadline, no console window;
//! - `hostile`: the hostile-stdin and special-file cases of the Linux suite that Windows has;
//! - `install`: `install-host-hooks` dry run, apply and remove, each written command run as its
//!   host runs it;
//! - `package`: the Windows installer installed, upgraded and uninstalled silently;
//! - `tray`: `fabric-tray` docked into `trayer` by Wine's notification area: icon, count,
//!   menu, balloon, Quit;
//! - `watch`: `watch-mail`.
//!
//! What Wine cannot run is said in the README's Windows row.
#![cfg(target_os = "linux")]

mod common;
mod hooks;
mod hostile;
mod install;
mod package;
mod tray;
mod watch;
