//! Where things live: Fabric's folder, our cache (log and spools), the hosts' config files,
//! and the stable copy of this binary the installer points hooks at.
//!
//! Everything goes through the `directories` crate so each platform gets its own places.
//! This module only computes paths; it never creates or reads anything.

use std::path::{Path, PathBuf};

use directories::BaseDirs;

use crate::env_vars;

/// Our bundle id, used for the macOS cache folder.
pub const BUNDLE_ID: &str = "ai.passioncode.fabric-companion";
/// Our folder name on Linux and Windows.
pub const APP_FOLDER: &str = "fabric-companion";
/// Fabric's folder name on Linux and Windows.
const FABRIC_FOLDER: &str = "passioncode-fabric";
/// Fabric's bundle id, its folder name on macOS.
const FABRIC_BUNDLE_ID: &str = "ai.passioncode.fabric";

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
        let base = BaseDirs::new()?;
        let home = base.home_dir().to_path_buf();
        let fabric_dir = if cfg!(target_os = "macos") {
            base.data_dir().join(FABRIC_BUNDLE_ID)
        } else if cfg!(windows) {
            base.data_local_dir().join(FABRIC_FOLDER)
        } else {
            base.data_dir().join(FABRIC_FOLDER)
        };
        let services_dir = env_vars::path_var(env_vars::FABRIC_SERVICES_DIR)
            .unwrap_or_else(|| fabric_dir.join("services"));
        let (cache_dir, data_dir, config_dir) = if cfg!(target_os = "macos") {
            (
                base.cache_dir().join(BUNDLE_ID),
                base.data_dir().join(BUNDLE_ID),
                base.config_dir().join(BUNDLE_ID),
            )
        } else if cfg!(windows) {
            let local = base.data_local_dir().join(APP_FOLDER);
            (
                local.clone(),
                local.clone(),
                base.config_dir().join(APP_FOLDER),
            )
        } else {
            (
                base.cache_dir().join(APP_FOLDER),
                base.data_dir().join(APP_FOLDER),
                base.config_dir().join(APP_FOLDER),
            )
        };
        Some(Self {
            home,
            fabric_dir,
            services_dir,
            cache_dir,
            data_dir,
            config_dir,
        })
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

    /// One session's spool folder. The id must already be checked by [`crate::spool::SessionId`].
    pub fn spool_dir(&self, session_id: &str) -> PathBuf {
        self.sessions_dir().join(session_id)
    }

    /// The stable copy of `fabric-session` the desktop app installs and hooks point at.
    pub fn stable_binary(&self) -> PathBuf {
        let name = if cfg!(windows) {
            "fabric-session.exe"
        } else {
            "fabric-session"
        };
        self.data_dir.join("bin").join(name)
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
