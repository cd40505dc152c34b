//! The dashboard's dealings with the rest of the desktop: starting the tray when none runs
//! (detached, never as a child we keep) and the test-notification request the tray answers
//! (only the tray notifies). Finding programs, the tray's lock and the autostart entry are
//! the core's (`companion_core::{programs, tray_lock, autostart}`), the same code the tray
//! runs.
//!
//! Environment variables this module reads (names only are ever logged):
//! - `FABRIC_COMPANION_NO_TRAY=1`: never start the tray (tests).
//!   (`FABRIC_TRAY_BIN` and `FABRIC_SESSION_BIN` are read by `companion_core::programs`.)

use std::ffi::OsStr;
use std::path::PathBuf;

use companion_core::paths::Paths;
use companion_core::programs::{self, FindError, Program, Search};
use companion_core::tray_lock;

pub const FABRIC_COMPANION_NO_TRAY: &str = "FABRIC_COMPANION_NO_TRAY";

/// The `fabric-session` program hooks should run when the app's stable copy is not installed.
pub fn find_session_binary() -> Result<PathBuf, FindError> {
    programs::find(Program::Session, Search::BesideOrPath)
}

/// Whether the tray runs: its lock is held (the tray's own lock code).
pub fn tray_running(paths: &Paths) -> bool {
    tray_lock::tray_running(paths)
}

/// Starts the tray when none runs, detached ([`companion_core::detach`]), so the tray is
/// never our child and outlives the dashboard.
pub fn ensure_tray(paths: &Paths) {
    if std::env::var_os(FABRIC_COMPANION_NO_TRAY).is_some_and(|v| v == OsStr::new("1")) {
        return;
    }
    if tray_running(paths) {
        return;
    }
    let tray = match programs::find(Program::Tray, Search::BesideOrPath) {
        Ok(tray) => tray,
        Err(error) => {
            tracing::info!(%error, "not starting a tray");
            return;
        }
    };
    match companion_core::detach::spawn_detached(&tray, &[] as &[&OsStr]) {
        Ok(()) => tracing::info!("started the tray"),
        Err(e) => tracing::warn!(error = %e.kind(), "could not start the tray"),
    }
}

/// Asks the tray to show a test notification: writes the request file atomically.
pub fn request_test_notification(paths: &Paths) -> std::io::Result<()> {
    let file = paths.test_notification_request();
    if let Some(dir) = file.parent() {
        companion_core::fsutil::create_private_dir(dir)?;
    }
    let body = serde_json::json!({
        "request": "test-notification",
        "requestedAt": companion_core::clock::now_rfc3339(),
        "by": "fabric-companion",
    });
    companion_core::fsutil::write_atomic(
        &file,
        format!("{body}\n").as_bytes(),
        companion_core::fsutil::PRIVATE_FILE_MODE,
    )
}
