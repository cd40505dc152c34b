//! The dashboard's dealings with the rest of the desktop: finding and starting the tray
//! (detached, never as a child we keep), "launch the tray at login" through an XDG autostart
//! entry, and the test-notification request the tray answers (only the tray notifies).
//!
//! Environment variables this crate reads (names only are ever logged):
//! - `FABRIC_TRAY_BIN`: the `fabric-tray` program to start and to put in the autostart entry.
//! - `FABRIC_SESSION_BIN`: the `fabric-session` program hooks should run when the app's stable
//!   copy is not installed.
//! - `FABRIC_COMPANION_NO_TRAY=1`: never start the tray (tests).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use companion_core::paths::Paths;

pub const FABRIC_TRAY_BIN: &str = "FABRIC_TRAY_BIN";
pub const FABRIC_SESSION_BIN: &str = "FABRIC_SESSION_BIN";
pub const FABRIC_COMPANION_NO_TRAY: &str = "FABRIC_COMPANION_NO_TRAY";

const TRAY_NAME: &str = "fabric-tray";
const SESSION_NAME: &str = "fabric-session";
const AUTOSTART_FILE: &str = "fabric-tray.desktop";

/// `$NAME` when set to an existing file, else `name` next to our own exe, else on `PATH`.
pub fn find_program(var: &str, name: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        return path.is_file().then_some(path);
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        let beside = dir.join(name);
        if beside.is_file() {
            return Some(beside);
        }
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

pub fn find_tray() -> Option<PathBuf> {
    find_program(FABRIC_TRAY_BIN, TRAY_NAME)
}

pub fn find_session_binary() -> Option<PathBuf> {
    find_program(FABRIC_SESSION_BIN, SESSION_NAME)
}

/// The tray's lock file name (`tray/src/single_instance.rs`).
const TRAY_LOCK: &str = "fabric-tray.lock";

/// Where the tray keeps its lock: `$XDG_RUNTIME_DIR` when set, absolute and present, else our
/// cache folder (both are checked, in case the tray saw another environment).
fn tray_lock_candidates(paths: &Paths) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute() && dir.is_dir())
    {
        out.push(run.join(TRAY_LOCK));
    }
    out.push(paths.cache_dir.join(TRAY_LOCK));
    out
}

/// Whether `path` exists and another process holds an exclusive `flock` on it.
fn is_locked(path: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    // SAFETY: flock on a descriptor we own; released when `file` drops.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    rc != 0
}

/// Whether a process named `fabric-tray` runs for this user (the fallback check).
fn tray_process_running() -> bool {
    let uid = unsafe { libc::getuid() };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        use std::os::unix::fs::MetadataExt;
        let is_pid = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
        is_pid
            && entry.metadata().is_ok_and(|m| m.uid() == uid)
            && std::fs::read_to_string(entry.path().join("comm"))
                .is_ok_and(|c| c.trim_end() == TRAY_NAME)
    })
}

pub fn tray_running(paths: &Paths) -> bool {
    tray_lock_candidates(paths).iter().any(|p| is_locked(p)) || tray_process_running()
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
    let Some(tray) = find_tray() else {
        tracing::info!("no tray program found; not starting one");
        return;
    };
    match companion_core::detach::spawn_detached(&tray, &[] as &[&OsStr]) {
        Ok(()) => tracing::info!("started the tray"),
        Err(e) => tracing::warn!(error = %e.kind(), "could not start the tray"),
    }
}

/// `$XDG_CONFIG_HOME/autostart/fabric-tray.desktop`.
pub fn autostart_file(paths: &Paths) -> PathBuf {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| paths.home.join(".config"));
    config.join("autostart").join(AUTOSTART_FILE)
}

fn desktop_exec_quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    let escaped: String = text
        .chars()
        .flat_map(|c| match c {
            '"' | '`' | '$' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    format!("\"{escaped}\"")
}

/// The autostart entry's text for `tray`.
pub fn autostart_text(tray: &Path) -> String {
    format!(
        "[Desktop Entry]\nType=Application\nName=Fabric Companion\nComment=Fabric's unread count and session hooks in the tray\nExec={}\nTerminal=false\nX-GNOME-Autostart-enabled=true\n",
        desktop_exec_quote(tray)
    )
}

/// Makes the autostart entry match `enabled`. Writes atomically; removes only our own file.
pub fn set_autostart(paths: &Paths, enabled: bool) -> std::io::Result<()> {
    let file = autostart_file(paths);
    if !enabled {
        return match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    let tray = find_tray().unwrap_or_else(|| PathBuf::from(TRAY_NAME));
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    companion_core::fsutil::write_atomic(&file, autostart_text(&tray).as_bytes(), 0o644)
}

/// The file the tray watches for a test-notification request.
pub fn test_notification_request(paths: &Paths) -> PathBuf {
    paths
        .cache_dir
        .join("requests")
        .join("test-notification.json")
}

/// Asks the tray to show a test notification: writes the request file atomically.
pub fn request_test_notification(paths: &Paths) -> std::io::Result<()> {
    let file = test_notification_request(paths);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autostart_entry_quotes_the_program() {
        let text = autostart_text(Path::new("/opt/my apps/fabric-tray"));
        assert!(text.contains("Exec=\"/opt/my apps/fabric-tray\"\n"));
        assert!(text.starts_with("[Desktop Entry]\n"));
    }

    #[test]
    fn an_unlocked_or_missing_lock_file_is_not_locked() {
        let dir = std::env::temp_dir().join(format!("fc-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lock = dir.join(TRAY_LOCK);
        assert!(!is_locked(&lock));
        std::fs::write(&lock, "").unwrap();
        assert!(!is_locked(&lock));
        let held = std::fs::File::open(&lock).unwrap();
        use std::os::fd::AsRawFd;
        assert_eq!(
            unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
            0
        );
        assert!(is_locked(&lock));
        drop(held);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
