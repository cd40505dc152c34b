//! Fabric's `hub.json`: whether Fabric is running, where, and which features it advertises.
//!
//! Fabric is running when `hub.json` parses, its protocol is `fabric-hub/0.1` and the pid it
//! names is alive. Anything else is down, whatever answers on the port. This module never
//! opens the door token the file points at; the field is not even deserialized.

use std::path::Path;

use serde::{Deserialize, Serialize};

use companion_platform::fsutil;

/// The hub protocol we understand.
pub const HUB_PROTOCOL: &str = "fabric-hub/0.1";
/// The feature that turns on Stop, SessionEnd, UserPromptSubmit and watch-mail.
pub const SESSION_HOOKS_FEATURE: &str = "session-hooks/1";
/// `hub.json` is small; anything larger is not a hub file.
const HUB_JSON_LIMIT: u64 = 64 * 1024;

/// The fields of `hub.json` we use (the door token path is deliberately absent).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Hub {
    pub protocol: String,
    pub origin: String,
    #[serde(default)]
    pub mcp: Option<String>,
    pub pid: u32,
    #[serde(rename = "startedAt", default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub features: Vec<String>,
}

impl Hub {
    /// Whether this Fabric advertises `session-hooks/1`.
    pub fn has_session_hooks(&self) -> bool {
        self.features.iter().any(|f| f == SESSION_HOOKS_FEATURE)
    }
}

/// Why Fabric counts as down. Serialized as its words for a person (`status --json`'s
/// `downReason`, schema `fabric-session-status/1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum DownReason {
    /// There is no `hub.json`.
    #[serde(rename = "no hub.json")]
    NoHubFile,
    /// `hub.json` could not be read or parsed, or speaks another protocol.
    #[serde(rename = "hub.json unreadable")]
    BadHubFile,
    /// The pid in `hub.json` is not alive.
    #[serde(rename = "its process is gone")]
    DeadPid,
}

impl DownReason {
    /// A few words for a person.
    pub fn describe(self) -> &'static str {
        match self {
            DownReason::NoHubFile => "no hub.json",
            DownReason::BadHubFile => "hub.json unreadable",
            DownReason::DeadPid => "its process is gone",
        }
    }
}

/// What `hub.json` says about Fabric right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FabricState {
    Running(Hub),
    Down(DownReason),
}

impl FabricState {
    /// The running hub, if any.
    pub fn hub(&self) -> Option<&Hub> {
        match self {
            FabricState::Running(hub) => Some(hub),
            FabricState::Down(_) => None,
        }
    }

    /// Whether Fabric is running and advertises `session-hooks/1`.
    pub fn session_hooks_active(&self) -> bool {
        self.hub().is_some_and(Hub::has_session_hooks)
    }
}

/// Reads `hub.json` and checks its pid.
pub fn read_fabric_state(hub_json: &Path) -> FabricState {
    let bytes = match fsutil::read_bounded(hub_json, HUB_JSON_LIMIT) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return FabricState::Down(DownReason::NoHubFile),
        Err(_) => return FabricState::Down(DownReason::BadHubFile),
    };
    let Ok(hub) = serde_json::from_slice::<Hub>(&bytes) else {
        return FabricState::Down(DownReason::BadHubFile);
    };
    if hub.protocol != HUB_PROTOCOL || hub.pid == 0 {
        return FabricState::Down(DownReason::BadHubFile);
    }
    if !companion_platform::process::pid_alive(hub.pid) {
        return FabricState::Down(DownReason::DeadPid);
    }
    FabricState::Running(hub)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) -> std::path::PathBuf {
        let path = dir.join("hub.json");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn running_hub_with_live_pid_and_features() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!(
            r#"{{"protocol":"fabric-hub/0.1","origin":"http://127.0.0.1:47070","mcp":"/mcp","doorTokenFile":"x","pid":{},"startedAt":"2026-10-01T09:00:00Z","features":["session-hooks/1"]}}"#,
            std::process::id()
        );
        let state = read_fabric_state(&write(dir.path(), &text));
        assert!(state.session_hooks_active());
    }

    #[test]
    fn missing_bad_wrong_protocol_and_dead_pid_are_down() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hub.json");
        assert_eq!(
            read_fabric_state(&path),
            FabricState::Down(DownReason::NoHubFile)
        );
        write(dir.path(), "{not json");
        assert_eq!(
            read_fabric_state(&path),
            FabricState::Down(DownReason::BadHubFile)
        );
        write(
            dir.path(),
            r#"{"protocol":"fabric-hub/9","origin":"x","pid":1}"#,
        );
        assert_eq!(
            read_fabric_state(&path),
            FabricState::Down(DownReason::BadHubFile)
        );
        write(
            dir.path(),
            r#"{"protocol":"fabric-hub/0.1","origin":"x","pid":4194304}"#,
        );
        assert_eq!(
            read_fabric_state(&path),
            FabricState::Down(DownReason::DeadPid)
        );
    }

    #[test]
    fn without_the_feature_session_hooks_are_inert() {
        let dir = tempfile::tempdir().unwrap();
        let text = format!(
            r#"{{"protocol":"fabric-hub/0.1","origin":"http://127.0.0.1:1","pid":{}}}"#,
            std::process::id()
        );
        let state = read_fabric_state(&write(dir.path(), &text));
        assert!(state.hub().is_some());
        assert!(!state.session_hooks_active());
    }
}
