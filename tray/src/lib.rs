//! `fabric-tray`: the always-on tray of Fabric Companion.
//!
//! The tray shows the total unread count of the live sessions' project boards in its icon,
//! and a mark while a session needs you; lists Fabric's state, the live sessions (those that
//! need you first) and each host's hooks in its menu; raises a desktop notification when an
//! idle session's count rises and when a session has waited on you for the grace; and runs
//! the watch-mail engine for the idle sessions. It never links a webview: the dashboard (`fabric-companion`) is a separate
//! program started on demand.
//!
//! - [`model`]: the pure tray model (snapshot → view and notification decisions).
//! - [`offers`]: the pure first-run offer rule (which hosts get "Set up hooks for …").
//! - [`snapshot`]: reads one snapshot (library status, settings, hook-log failures).
//! - [`icon`]: the icon's pixels (base art, count, grey, warning mark, needs-you mark).
//! - [`background`]: one thread with a current-thread tokio runtime running the watch-mail
//!   engine, the notifier and the Fabric pid check.
//! - [`notifier`]: desktop notifications (freedesktop D-Bus, Windows toasts, macOS).
//! - [`reader`]: the thread that reads snapshots off the shell's thread.
//! - [`remotes`]: the remotes followed (one link each), their sessions and links for the model.
//! - [`waker`]: the one wake-up the model asks for (a wait's grace, the menu's minute).
//! - [`bus`]: the session-bus connection, bounded calls, kept across losses (Linux).
//! - [`safe_text`]: every string handed to the desktop, cleaned and bounded.
//! - [`tray_host`], [`launcher`], [`clock`]: small platform helpers.
//!
//! The one-tray lock, finding our programs and the file watcher are the core's
//! (`companion_desktop::{tray_lock, programs, file_watch, watched}`), shared with the dashboard.
//! - [`app`]: the entry (command line, lock, which shell runs).
//! - [`controller`]: the same on every shell: snapshot → model → view, actions.
//! - [`shell`]: the tray-icon shell (tao event loop; GTK on Linux, in `fabric-tray-xembed`).
//! - [`sni`]: the GTK-free StatusNotifierItem shell (Linux and the BSDs).

pub mod app;
pub mod background;
#[cfg(all(unix, not(target_os = "macos")))]
pub mod bus;
pub mod clock;
pub mod controller;
pub mod icon;
pub mod launcher;
pub mod model;
pub mod notifier;
pub mod offers;
pub mod reader;
pub mod remotes;
pub mod safe_text;
pub mod shell;
pub mod snapshot;
#[cfg(all(unix, not(target_os = "macos")))]
pub mod sni;
pub mod tray_host;
pub mod waker;

pub use app::run;
