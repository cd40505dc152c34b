//! "Launch the tray at login": the login item that starts `fabric-tray`. On Linux and other
//! XDG desktops it is `$XDG_CONFIG_HOME/autostart/fabric-tray.desktop` (default
//! `~/.config/autostart`). The dashboard's Settings turn it on and off through this module.
//!
//! It writes and removes only its own file, atomically; it never starts the tray.

use std::path::{Path, PathBuf};

use crate::fsutil;
use crate::paths::Paths;
use crate::programs::{self, Program, Search};

/// The autostart entry's file name.
pub const AUTOSTART_FILE: &str = "fabric-tray.desktop";

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
/// The entry runs the tray found by [`programs::find`], else `fabric-tray` from `PATH`.
pub fn set_autostart(paths: &Paths, enabled: bool) -> std::io::Result<()> {
    let file = autostart_file(paths);
    if !enabled {
        return match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    let tray = programs::find(Program::Tray, Search::BesideOrPath)
        .unwrap_or_else(|_| PathBuf::from(Program::Tray.name()));
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    fsutil::write_atomic(&file, autostart_text(&tray).as_bytes(), 0o644)
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
}
