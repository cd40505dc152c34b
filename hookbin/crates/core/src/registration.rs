//! Whether a host has an MCP server named `fabric` registered, and in which scope.
//!
//! Claude Code: user scope (`mcpServers` in `~/.claude.json`), local scope (`projects[<cwd>]`
//! in the same file) and project scope (`<cwd>/.mcp.json`). Codex: `[mcp_servers.fabric]` in
//! `$CODEX_HOME/config.toml`. Kimi Code: `mcpServers.fabric` in `$KIMI_CODE_HOME/mcp.json` and
//! `<cwd>/.kimi-code/mcp.json`. Only key presence is looked at; server settings (which may
//! hold tokens) are skipped unread by the parser.

use std::collections::HashMap;
use std::path::Path;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use crate::fsutil;
use crate::host::Host;
use crate::paths::Paths;

/// The MCP server name we look for.
pub const FABRIC_SERVER: &str = "fabric";
/// Claude Code's `.claude.json` can grow large; we read at most this much.
const CONFIG_LIMIT: u64 = 32 * 1024 * 1024;

/// Where a `fabric` registration was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Claude Code user scope, Codex's config, or Kimi Code's home `mcp.json`.
    User,
    /// Claude Code local scope: this project's entry in `.claude.json`.
    Local,
    /// The project's own file (`.mcp.json`, `.kimi-code/mcp.json`).
    Project,
}

#[derive(Deserialize, Default)]
struct McpServersFile {
    #[serde(rename = "mcpServers", default)]
    mcp_servers: HashMap<String, IgnoredAny>,
}

#[derive(Deserialize, Default)]
struct ClaudeJson {
    #[serde(rename = "mcpServers", default)]
    mcp_servers: HashMap<String, IgnoredAny>,
    #[serde(default)]
    projects: HashMap<String, McpServersFile>,
}

#[derive(Deserialize, Default)]
struct CodexConfig {
    #[serde(default)]
    mcp_servers: HashMap<String, IgnoredAny>,
}

/// Every scope in which `host` has `fabric` registered, for a session whose folder is `cwd`
/// (`None` looks at user scope only).
pub fn fabric_scopes(host: Host, paths: &Paths, cwd: Option<&Path>) -> Vec<Scope> {
    let mut scopes = Vec::new();
    match host {
        Host::Claude => {
            if let Some(claude) = read_json::<ClaudeJson>(&paths.claude_json()) {
                if claude.mcp_servers.contains_key(FABRIC_SERVER) {
                    scopes.push(Scope::User);
                }
                let local = cwd.and_then(|cwd| claude.projects.get(cwd.to_str()?));
                if local.is_some_and(|p| p.mcp_servers.contains_key(FABRIC_SERVER)) {
                    scopes.push(Scope::Local);
                }
            }
            if let Some(cwd) = cwd
                && has_fabric_in(&cwd.join(".mcp.json"))
            {
                scopes.push(Scope::Project);
            }
        }
        Host::Codex => {
            let path = paths.codex_home().join("config.toml");
            let found = fsutil::read_bounded(&path, CONFIG_LIMIT)
                .ok()
                .flatten()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .and_then(|text| toml::from_str::<CodexConfig>(&text).ok())
                .is_some_and(|config| config.mcp_servers.contains_key(FABRIC_SERVER));
            if found {
                scopes.push(Scope::User);
            }
        }
        Host::Kimi => {
            if has_fabric_in(&paths.kimi_home().join("mcp.json")) {
                scopes.push(Scope::User);
            }
            if let Some(cwd) = cwd
                && has_fabric_in(&cwd.join(".kimi-code").join("mcp.json"))
            {
                scopes.push(Scope::Project);
            }
        }
    }
    scopes
}

/// Whether `host` has `fabric` registered in any scope for `cwd`.
pub fn has_fabric(host: Host, paths: &Paths, cwd: Option<&Path>) -> bool {
    !fabric_scopes(host, paths, cwd).is_empty()
}

fn has_fabric_in(path: &Path) -> bool {
    read_json::<McpServersFile>(path)
        .is_some_and(|file| file.mcp_servers.contains_key(FABRIC_SERVER))
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Option<T> {
    fsutil::read_json(path, CONFIG_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths_in(home: &Path) -> Paths {
        Paths {
            home: home.to_path_buf(),
            fabric_dir: home.join("fabric"),
            services_dir: home.join("fabric/services"),
            cache_dir: home.join("cache"),
            data_dir: home.join("data"),
            config_dir: home.join("config"),
        }
    }

    #[test]
    fn claude_scopes_user_local_project() {
        // CLAUDE_CONFIG_DIR may be set by whoever runs the tests; these paths ignore it.
        if std::env::var_os(crate::env_vars::CLAUDE_CONFIG_DIR).is_some() {
            return;
        }
        let home = tempfile::tempdir().unwrap();
        let project = home.path().join("proj");
        std::fs::create_dir_all(&project).unwrap();
        let paths = paths_in(home.path());
        assert!(fabric_scopes(Host::Claude, &paths, Some(&project)).is_empty());
        let claude = serde_json::json!({
            "mcpServers": {"fabric": {"command": "fabric-mcp"}},
            "projects": {project.to_str().unwrap(): {"mcpServers": {"fabric": {}}}}
        });
        std::fs::write(home.path().join(".claude.json"), claude.to_string()).unwrap();
        std::fs::write(project.join(".mcp.json"), r#"{"mcpServers":{"fabric":{}}}"#).unwrap();
        assert_eq!(
            fabric_scopes(Host::Claude, &paths, Some(&project)),
            vec![Scope::User, Scope::Local, Scope::Project]
        );
    }

    #[test]
    fn other_servers_are_not_fabric() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp.json");
        std::fs::write(&path, r#"{"mcpServers":{"fabricate":{}, "other":{}}}"#).unwrap();
        assert!(!has_fabric_in(&path));
        std::fs::write(&path, "not json").unwrap();
        assert!(!has_fabric_in(&path));
    }
}
