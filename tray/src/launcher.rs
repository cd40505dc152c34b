//! Starting other programs without keeping them: the dashboard (`fabric-companion`) and the
//! hook log's viewer, detached through the core's one way to do it
//! ([`companion_core::detach`]), so they are not our waited children and outlive the tray.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use companion_core::detach::spawn_detached;

/// The dashboard's program name.
pub const COMPANION: &str = "fabric-companion";
/// The variable that names the dashboard's program.
pub const COMPANION_ENV: &str = "FABRIC_COMPANION_BIN";

fn exe_name(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

/// Finds a program: `$<env>` when set, else next to our own executable, else on `PATH`.
pub fn find_program(env: &str, name: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(env).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let file = exe_name(name);
    if let Some(beside) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(&file)))
        .filter(|p| p.is_file())
    {
        return Some(beside);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(&file))
        .find(|p| p.is_file())
}

/// The dashboard's program.
pub fn companion_program() -> Option<PathBuf> {
    find_program(COMPANION_ENV, COMPANION)
}

/// Opens the dashboard. Errors say what was missing.
pub fn open_dashboard() -> std::io::Result<PathBuf> {
    let program = companion_program().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{COMPANION} not found (${COMPANION_ENV}, beside fabric-tray, or on PATH)"),
        )
    })?;
    spawn_detached(&program, &[] as &[&OsStr])?;
    Ok(program)
}

/// Opens a file with the desktop's default application.
pub fn open_file(path: &Path) -> std::io::Result<()> {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    spawn_detached(Path::new(opener), &[path.as_os_str()])
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_variable_wins() {
        // Only reads the variable when set; no process-wide mutation in a test.
        assert!(find_program("FABRIC_TRAY_TEST_UNSET_VARIABLE", "no-such-program-xyz").is_none());
    }
}
