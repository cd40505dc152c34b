//! Starting other programs without keeping them: the dashboard (`fabric-companion`) and the
//! hook log's viewer, detached through the core's one way to do it
//! ([`companion_platform::detach`]), so they are not our waited children and outlive the tray.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use companion_desktop::programs::{self, Program, Search};
use companion_platform::detach::spawn_detached_without;

/// Set beside `GDK_GL=disable` when the tray set that for its own GTK (see
/// `app::become_xembed`): the programs it starts get the person's environment back.
pub const GDK_GL_SET_BY_TRAY: &str = "FABRIC_TRAY_SET_GDK_GL";

/// Starts `program` detached, without what the tray set for itself only.
fn spawn_detached(program: &Path, args: &[&OsStr]) -> std::io::Result<()> {
    let ours: &[&str] = if std::env::var_os(GDK_GL_SET_BY_TRAY).is_some() {
        &["GDK_GL", GDK_GL_SET_BY_TRAY]
    } else {
        &[]
    };
    spawn_detached_without(program, args, ours)
}

/// Opens the dashboard, found by [`companion_desktop::programs`]. Errors say what was missing.
pub fn open_dashboard() -> std::io::Result<PathBuf> {
    let program = programs::find(Program::Companion, Search::BesideOrPath)
        .map_err(|error| std::io::Error::new(std::io::ErrorKind::NotFound, error.to_string()))?;
    spawn_detached(&program, &[])?;
    Ok(program)
}

/// Opens the dashboard on `host`'s install plan in its Hooks view (the first-run offer).
pub fn open_dashboard_hooks(host: companion_hosts::host::Host) -> std::io::Result<PathBuf> {
    let program = programs::find(Program::Companion, Search::BesideOrPath)
        .map_err(|error| std::io::Error::new(std::io::ErrorKind::NotFound, error.to_string()))?;
    let args = ["--view", "hooks", "--host", host.cli_name()].map(OsStr::new);
    spawn_detached(&program, &args)?;
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
