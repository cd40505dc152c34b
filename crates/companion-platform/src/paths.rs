//! Where things live: Fabric's folder, our cache (log and spools), the hosts' config files,
//! and the stable copy of this binary the installer points hooks at.
//!
//! The person's base folders come from the `directories` crate (each OS's own conventions);
//! [`Paths::layout`] turns them into ours, one table per OS:
//!
//! | | Linux (XDG) | macOS | Windows |
//! |---|---|---|---|
//! | Fabric's folder | `$XDG_DATA_HOME/passioncode-fabric` | `~/Library/Application Support/ai.passioncode.fabric` | `%LOCALAPPDATA%\passioncode-fabric` |
//! | our cache (log, spools) | `$XDG_CACHE_HOME/fabric-companion` | `~/Library/Caches/ai.passioncode.fabric-companion` | `%LOCALAPPDATA%\fabric-companion` |
//! | our data (`bin/`) | `$XDG_DATA_HOME/fabric-companion` | `~/Library/Application Support/ai.passioncode.fabric-companion` | `%LOCALAPPDATA%\fabric-companion` |
//! | our config (settings) | `$XDG_CONFIG_HOME/fabric-companion` | `~/Library/Application Support/ai.passioncode.fabric-companion` | `%APPDATA%\fabric-companion` |
//!
//! Fabric's folder is where Fabric itself writes `hub.json` on each OS. The hosts keep their
//! configuration under the home folder on every OS, as each documents it: Claude Code
//! `~/.claude` (`%USERPROFILE%\.claude` on Windows; `$CLAUDE_CONFIG_DIR` replaces it), Codex
//! `~/.codex` (`$CODEX_HOME`; Codex takes the home folder from `dirs::home_dir`, which is
//! `%USERPROFILE%` on Windows), Kimi Code `~/.kimi-code` (`$KIMI_CODE_HOME`; Node's
//! `os.homedir()`). This module only computes paths; it never creates or reads anything.

use std::path::{Path, PathBuf};

use directories::BaseDirs;

use crate::env_vars;
use crate::platform::Os;

/// The installed app's identifier (`identifier` in `src-tauri/tauri.conf.json`): its macOS
/// bundle id, and on Windows the AppUserModelID its Start menu shortcut carries, which the
/// tray's notifications must name.
pub const APP_IDENTIFIER: &str = "ai.passioncode.fabric-companion.dashboard";
/// Our bundle id, used for the macOS folders.
pub const BUNDLE_ID: &str = "ai.passioncode.fabric-companion";
/// Our folder name on Linux and Windows.
pub const APP_FOLDER: &str = "fabric-companion";
/// The file name of the hook program (without `.exe`): what the hooks run, what a process
/// list and a host's config are searched for.
pub const PROGRAM_NAME: &str = "fabric-session";
/// Fabric's folder name on Linux and Windows.
const FABRIC_FOLDER: &str = "passioncode-fabric";
/// Fabric's bundle id, its folder name on macOS.
const FABRIC_BUNDLE_ID: &str = "ai.passioncode.fabric";

/// The person's base folders as the OS names them (what `directories::BaseDirs` gives).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseFolders {
    /// The home folder.
    pub home: PathBuf,
    /// Roaming data: `$XDG_DATA_HOME`, `~/Library/Application Support`, `%APPDATA%`.
    pub data: PathBuf,
    /// Machine-local data: as `data`, except `%LOCALAPPDATA%` on Windows.
    pub data_local: PathBuf,
    /// Caches: `$XDG_CACHE_HOME`, `~/Library/Caches`, `%LOCALAPPDATA%`.
    pub cache: PathBuf,
    /// Configuration: `$XDG_CONFIG_HOME`, `~/Library/Application Support`, `%APPDATA%`.
    pub config: PathBuf,
}

impl BaseFolders {
    /// The running person's folders; `None` only when no home folder is known.
    pub fn from_env() -> Option<Self> {
        let base = BaseDirs::new()?;
        Some(BaseFolders {
            home: base.home_dir().to_path_buf(),
            data: base.data_dir().to_path_buf(),
            data_local: base.data_local_dir().to_path_buf(),
            cache: base.cache_dir().to_path_buf(),
            config: base.config_dir().to_path_buf(),
        })
    }
}

/// The places one run of the hook works with, resolved once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// The person's home folder.
    pub home: PathBuf,
    /// Fabric's folder: `hub.json` and, by default, `services/`.
    pub fabric_dir: PathBuf,
    /// Fabric's service descriptors.
    pub services_dir: PathBuf,
    /// Our cache folder: `hooks.log`, `hooks.log.1`, `sessions/`.
    pub cache_dir: PathBuf,
    /// Our data folder, holding the stable copy of the binary in `bin/`.
    pub data_dir: PathBuf,
    /// Our config folder (the desktop app's settings).
    pub config_dir: PathBuf,
}

impl Paths {
    /// Resolves every path from the environment; `None` only when no home folder is known.
    pub fn from_env() -> Option<Self> {
        let mut paths = Self::layout(Os::CURRENT, &BaseFolders::from_env()?);
        if let Some(services) = env_vars::path_var(env_vars::FABRIC_SERVICES_DIR) {
            paths.services_dir = services;
        }
        Some(paths)
    }

    /// Our places on `os` for these base folders: the table in this module's header.
    pub fn layout(os: Os, base: &BaseFolders) -> Self {
        let (fabric_dir, cache_dir, data_dir, config_dir) = match os {
            Os::MacOs => (
                base.data.join(FABRIC_BUNDLE_ID),
                base.cache.join(BUNDLE_ID),
                base.data.join(BUNDLE_ID),
                base.config.join(BUNDLE_ID),
            ),
            Os::Windows => {
                let local = base.data_local.join(APP_FOLDER);
                (
                    base.data_local.join(FABRIC_FOLDER),
                    local.clone(),
                    local,
                    base.config.join(APP_FOLDER),
                )
            }
            Os::Linux => (
                base.data.join(FABRIC_FOLDER),
                base.cache.join(APP_FOLDER),
                base.data.join(APP_FOLDER),
                base.config.join(APP_FOLDER),
            ),
        };
        Self {
            home: base.home.clone(),
            services_dir: fabric_dir.join("services"),
            fabric_dir,
            cache_dir,
            data_dir,
            config_dir,
        }
    }

    /// Fabric's `hub.json`.
    pub fn hub_json(&self) -> PathBuf {
        self.fabric_dir.join("hub.json")
    }

    /// The folder Fabric keeps the sessions it launched in.
    pub fn fabric_sessions_dir(&self) -> PathBuf {
        self.fabric_dir.join("sessions")
    }

    /// Our hook log.
    pub fn hook_log(&self) -> PathBuf {
        self.cache_dir.join("hooks.log")
    }

    /// The tray's record that it told the person GNOME shows no tray icon without its
    /// AppIndicator extension (told once; removed when a tray host shows the icon again).
    pub fn told_no_tray(&self) -> PathBuf {
        self.cache_dir.join("told-no-tray-on-gnome")
    }

    /// Where the dashboard asks the tray for a test notification (only the tray notifies).
    pub fn test_notification_request(&self) -> PathBuf {
        self.cache_dir
            .join("requests")
            .join("test-notification.json")
    }

    /// The folder of per-session spools.
    pub fn sessions_dir(&self) -> PathBuf {
        self.cache_dir.join("sessions")
    }

    /// One session's spool folder. The id must already be checked by [`companion_sessions::spool::SessionId`].
    pub fn spool_dir(&self, session_id: &str) -> PathBuf {
        self.sessions_dir().join(session_id)
    }

    /// The stable copy of `fabric-session` the desktop app installs and hooks point at.
    pub fn stable_binary(&self) -> PathBuf {
        self.data_dir
            .join("bin")
            .join(Os::CURRENT.executable(PROGRAM_NAME))
    }

    /// Claude Code's config folder (`$CLAUDE_CONFIG_DIR`, default `~/.claude`).
    pub fn claude_dir(&self) -> PathBuf {
        env_vars::path_var(env_vars::CLAUDE_CONFIG_DIR).unwrap_or_else(|| self.home.join(".claude"))
    }

    /// Claude Code's global state file holding user- and local-scope MCP servers:
    /// `~/.claude.json`, or `$CLAUDE_CONFIG_DIR/.claude.json` when that is set.
    pub fn claude_json(&self) -> PathBuf {
        match env_vars::path_var(env_vars::CLAUDE_CONFIG_DIR) {
            Some(dir) => dir.join(".claude.json"),
            None => self.home.join(".claude.json"),
        }
    }

    /// Claude Code's user settings, where hooks are installed.
    pub fn claude_settings(&self) -> PathBuf {
        self.claude_dir().join("settings.json")
    }

    /// Codex's home folder (`$CODEX_HOME`, default `~/.codex`).
    pub fn codex_home(&self) -> PathBuf {
        env_vars::path_var(env_vars::CODEX_HOME).unwrap_or_else(|| self.home.join(".codex"))
    }

    /// Kimi Code's home folder (`$KIMI_CODE_HOME`, default `~/.kimi-code`).
    pub fn kimi_home(&self) -> PathBuf {
        env_vars::path_var(env_vars::KIMI_CODE_HOME).unwrap_or_else(|| self.home.join(".kimi-code"))
    }
}

/// True when `path` lies inside `dir` (compared component by component, without touching disk).
pub fn is_inside(path: &Path, dir: &Path) -> bool {
    path.starts_with(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Base folders as `directories` documents them for each OS.
    fn bases(os: Os) -> BaseFolders {
        match os {
            Os::Linux => BaseFolders {
                home: "/home/a".into(),
                data: "/home/a/.local/share".into(),
                data_local: "/home/a/.local/share".into(),
                cache: "/home/a/.cache".into(),
                config: "/home/a/.config".into(),
            },
            Os::MacOs => BaseFolders {
                home: "/Users/a".into(),
                data: "/Users/a/Library/Application Support".into(),
                data_local: "/Users/a/Library/Application Support".into(),
                cache: "/Users/a/Library/Caches".into(),
                config: "/Users/a/Library/Application Support".into(),
            },
            Os::Windows => BaseFolders {
                home: r"C:\Users\a".into(),
                data: r"C:\Users\a\AppData\Roaming".into(),
                data_local: r"C:\Users\a\AppData\Local".into(),
                cache: r"C:\Users\a\AppData\Local".into(),
                config: r"C:\Users\a\AppData\Roaming".into(),
            },
        }
    }

    #[test]
    fn linux_follows_xdg() {
        let p = Paths::layout(Os::Linux, &bases(Os::Linux));
        assert_eq!(
            p.fabric_dir,
            Path::new("/home/a/.local/share/passioncode-fabric")
        );
        assert_eq!(
            p.services_dir,
            Path::new("/home/a/.local/share/passioncode-fabric/services")
        );
        assert_eq!(p.cache_dir, Path::new("/home/a/.cache/fabric-companion"));
        assert_eq!(
            p.data_dir,
            Path::new("/home/a/.local/share/fabric-companion")
        );
        assert_eq!(p.config_dir, Path::new("/home/a/.config/fabric-companion"));
    }

    #[test]
    fn macos_uses_the_library_folders_and_bundle_ids() {
        let p = Paths::layout(Os::MacOs, &bases(Os::MacOs));
        assert_eq!(
            p.fabric_dir,
            Path::new("/Users/a/Library/Application Support/ai.passioncode.fabric")
        );
        assert_eq!(
            p.cache_dir,
            Path::new("/Users/a/Library/Caches/ai.passioncode.fabric-companion")
        );
        assert_eq!(
            p.data_dir,
            Path::new("/Users/a/Library/Application Support/ai.passioncode.fabric-companion")
        );
        assert_eq!(p.config_dir, p.data_dir);
        assert_eq!(p.home, Path::new("/Users/a"));
    }

    #[test]
    fn windows_keeps_machine_things_local_and_settings_roaming() {
        let base = bases(Os::Windows);
        let p = Paths::layout(Os::Windows, &base);
        // Fabric's folder is in %LOCALAPPDATA%, as Fabric writes it.
        assert_eq!(p.fabric_dir, base.data_local.join("passioncode-fabric"));
        // Log, spools and the stable binary stay on this machine (%LOCALAPPDATA%)...
        assert_eq!(p.cache_dir, base.data_local.join("fabric-companion"));
        assert_eq!(p.data_dir, base.data_local.join("fabric-companion"));
        // ...the settings roam with the person (%APPDATA%).
        assert_eq!(p.config_dir, base.config.join("fabric-companion"));
        assert_ne!(p.config_dir, p.data_dir);
    }
}
