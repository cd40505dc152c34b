//! The dashboard's dealings with the rest of the desktop: starting the tray when none runs
//! (detached, never as a child we keep), the test-notification request the tray answers
//! (only the tray notifies), and what this desktop needs for the tray icon and the jump
//! ([`DesktopView`]: GNOME without its AppIndicator extension, our GNOME Shell extension off). Finding programs, the tray's lock and the autostart entry are
//! the core's (`companion_desktop::{programs, tray_lock, autostart}`), the same code the tray
//! runs.
//!
//! Environment variables this module reads (names only are ever logged):
//! - `FABRIC_COMPANION_NO_TRAY=1`: never start the tray (tests).
//!   (`FABRIC_TRAY_BIN` and `FABRIC_SESSION_BIN` are read by `companion_desktop::programs`.)

use std::ffi::OsStr;
use std::path::PathBuf;

use companion_desktop::programs::{self, FindError, Program, Search};
use companion_desktop::tray_lock;
use companion_platform::paths::Paths;

pub const FABRIC_COMPANION_NO_TRAY: &str = "FABRIC_COMPANION_NO_TRAY";

/// The `fabric-session` program hooks should run when the app's stable copy is not installed.
pub fn find_session_binary() -> Result<PathBuf, FindError> {
    programs::find(Program::Session, Search::BesideOrPath)
}

/// Whether the tray runs: its lock is held (the tray's own lock code).
pub fn tray_running(paths: &Paths) -> bool {
    tray_lock::tray_running(paths)
}

/// Starts the tray when none runs, detached ([`companion_platform::detach`]), so the tray is
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
    match companion_platform::detach::spawn_detached(&tray, &[] as &[&OsStr]) {
        Ok(()) => tracing::info!("started the tray"),
        Err(e) => tracing::warn!(error = %e.kind(), "could not start the tray"),
    }
}

/// Asks the tray to show a test notification: writes the request file atomically.
pub fn request_test_notification(paths: &Paths) -> std::io::Result<()> {
    let file = paths.test_notification_request();
    if let Some(dir) = file.parent() {
        companion_platform::fsutil::create_private_dir(dir)?;
    }
    let body = serde_json::json!({
        "request": "test-notification",
        "requestedAt": companion_platform::clock::now_rfc3339(),
        "by": "fabric-companion",
    });
    companion_platform::fsutil::write_atomic(
        &file,
        format!("{body}\n").as_bytes(),
        companion_platform::fsutil::PRIVATE_FILE_MODE,
    )
}

/// What this desktop lacks for the tray icon and for jumping to a session, said in the
/// Overview (nothing when nothing is missing).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DesktopView {
    /// GNOME without a tray host: what to turn on, and that notifications and the jump work
    /// without it.
    pub tray_help: Option<String>,
    pub jump: JumpView,
}

/// Whether a session's "Go to" can raise its window here.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(
    tag = "state",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum JumpView {
    Works,
    /// GNOME Shell on Wayland with our extension installed and off: the person may turn it on
    /// (the button, or the command).
    GnomeExtensionOff {
        why: String,
        command: String,
    },
    /// GNOME Shell on Wayland without our extension.
    GnomeExtensionMissing {
        why: String,
    },
    /// GNOME Shell on Wayland, our extension installed for other versions of the shell.
    GnomeExtensionOutOfDate {
        why: String,
    },
    /// GNOME Shell on Wayland, our extension failed to load: why, and the shell's own error
    /// (cleaned and bounded).
    GnomeExtensionFailed {
        why: String,
        error: String,
    },
    /// A desktop that offers no way.
    NotPossible {
        why: String,
    },
}

/// What this desktop lacks (asks the session bus: a moment, never long).
pub fn desktop_view(paths: &Paths) -> DesktopView {
    use companion_desktop::desktop;
    let tray_help = (desktop::is_gnome() && !desktop::sni_watcher_present()).then(|| {
        let data_home = paths.data_dir.parent();
        desktop::gnome_tray_help(desktop::installed_appindicator_extension(data_home))
    });
    DesktopView {
        tray_help,
        jump: jump_view(session_focus::jump_support()),
    }
}

/// The page's view of the jump's support.
pub fn jump_view(support: Result<(), session_focus::Refusal>) -> JumpView {
    use session_focus::Refusal;
    match support {
        Ok(()) => JumpView::Works,
        Err(refusal @ Refusal::GnomeExtensionOff) => JumpView::GnomeExtensionOff {
            why: refusal.describe().to_string(),
            command: companion_desktop::desktop::GNOME_FOCUS_ENABLE_COMMAND.to_string(),
        },
        Err(refusal @ Refusal::GnomeExtensionMissing) => JumpView::GnomeExtensionMissing {
            why: refusal.describe().to_string(),
        },
        Err(refusal @ Refusal::GnomeExtensionOutOfDate) => JumpView::GnomeExtensionOutOfDate {
            why: refusal.describe().to_string(),
        },
        Err(Refusal::GnomeExtensionFailed(error)) => JumpView::GnomeExtensionFailed {
            why: "GNOME Shell lets a program raise another's window only through an \
                  extension, and Fabric Companion's failed to load; reinstalling the Linux \
                  package, then logging out and in, may fix it"
                .to_string(),
            error: error.to_string(),
        },
        Err(refusal) => JumpView::NotPossible {
            why: refusal.describe().to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use session_focus::Refusal;

    #[test]
    fn the_jump_view_says_how_to_turn_our_gnome_extension_on() {
        assert_eq!(jump_view(Ok(())), JumpView::Works);
        match jump_view(Err(Refusal::GnomeExtensionOff)) {
            JumpView::GnomeExtensionOff { why, command } => {
                assert!(why.contains("installed but off"));
                assert_eq!(
                    command,
                    companion_desktop::desktop::GNOME_FOCUS_ENABLE_COMMAND
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            jump_view(Err(Refusal::GnomeExtensionMissing)),
            JumpView::GnomeExtensionMissing { .. }
        ));
        assert!(matches!(
            jump_view(Err(Refusal::GnomeExtensionOutOfDate)),
            JumpView::GnomeExtensionOutOfDate { why } if why.contains("out of date")
        ));
        let failed = jump_view(Err(Refusal::GnomeExtensionFailed(
            session_focus::gnome_extension::ShellError::new("An object is already exported"),
        )));
        let json = serde_json::to_value(&failed).unwrap();
        assert_eq!(json["state"], "gnomeExtensionFailed");
        assert_eq!(json["error"], "An object is already exported");
        let json = serde_json::to_value(jump_view(Err(Refusal::Wayland))).unwrap();
        assert_eq!(json["state"], "notPossible");
    }
}
