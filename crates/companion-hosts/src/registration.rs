//! Whether a host has an MCP server named `fabric` registered, and in which scope.
//!
//! Claude Code: user scope (`mcpServers` in `~/.claude.json`), local scope (`projects[<cwd>]`
//! in the same file) and project scope (`<cwd>/.mcp.json`). Codex: `[mcp_servers.fabric]` in
//! `$CODEX_HOME/config.toml`. Kimi Code: `mcpServers.fabric` in `$KIMI_CODE_HOME/mcp.json` and
//! `<cwd>/.kimi-code/mcp.json`. Only key presence is looked at; server settings (which may
//! hold tokens) are skipped unread.
//!
//! A person's `~/.claude.json` grows to megabytes (every project, with its history), and the
//! hooks ask on every session start. So JSON files are walked with [`crate::json_scan`], which
//! jumps over what it does not need, and the verdict on a large file (user scope, and which
//! projects have a local registration, by digest) is kept in [`crate::config_cache`] keyed by
//! the file's identity: an unchanged file costs a `stat` and a small read. Files are opened
//! without blocking ([`fsutil::open_regular`]): a FIFO or a device is no config.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::config_cache::{self, ConfigCache};
use crate::host::Host;
use crate::json_scan;
use companion_platform::fsutil;
use companion_platform::paths::Paths;

/// The MCP server name we look for.
pub const FABRIC_SERVER: &str = "fabric";
/// Claude Code's `.claude.json` can grow large; we read at most this much.
const CONFIG_LIMIT: u64 = 32 * 1024 * 1024;
/// Config files at least this large have their verdict cached; a smaller one is read
/// directly, which costs no more than reading the cache.
const CACHE_FROM_BYTES: u64 = 64 * 1024;

/// Where a `fabric` registration was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Claude Code user scope, Codex's config, or Kimi Code's home `mcp.json`.
    User,
    /// Claude Code local scope: this project's entry in `.claude.json`.
    Local,
    /// The project's own file (`.mcp.json`, `.kimi-code/mcp.json`).
    Project,
}

/// What one config file says about `fabric`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Verdict {
    /// Registered at the file's own (user) scope.
    user: bool,
    /// Projects with a local-scope registration, as [`config_cache::path_digest`]s of their
    /// folders (Claude Code's `projects` only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    projects: Vec<String>,
}

/// How a config file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `~/.claude.json`: `mcpServers` and `projects.<folder>.mcpServers`.
    ClaudeState,
    /// `.mcp.json`, Kimi Code's `mcp.json`: `mcpServers`.
    McpJson,
    /// Codex's `config.toml`: `[mcp_servers]`.
    CodexToml,
}

/// Every scope in which `host` has `fabric` registered, for a session whose folder is `cwd`
/// (`None` looks at user scope only).
pub fn fabric_scopes(host: Host, paths: &Paths, cwd: Option<&Path>) -> Vec<Scope> {
    let cache = ConfigCache::new(&paths.cache_dir);
    let mut scopes = Vec::new();
    match host {
        Host::Claude => {
            let state = verdict(&cache, &paths.claude_json(), Kind::ClaudeState);
            if state.user {
                scopes.push(Scope::User);
            }
            if let Some(cwd) = cwd
                && state.projects.contains(&config_cache::path_digest(cwd))
            {
                scopes.push(Scope::Local);
            }
            if let Some(cwd) = cwd
                && verdict(&cache, &cwd.join(".mcp.json"), Kind::McpJson).user
            {
                scopes.push(Scope::Project);
            }
        }
        Host::Codex => {
            let config = paths.codex_home().join("config.toml");
            if verdict(&cache, &config, Kind::CodexToml).user {
                scopes.push(Scope::User);
            }
        }
        Host::Kimi => {
            if verdict(&cache, &paths.kimi_home().join("mcp.json"), Kind::McpJson).user {
                scopes.push(Scope::User);
            }
            if let Some(cwd) = cwd
                && verdict(
                    &cache,
                    &cwd.join(".kimi-code").join("mcp.json"),
                    Kind::McpJson,
                )
                .user
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

/// The verdict on one file: nothing for a missing, unreadable or special file.
fn verdict(cache: &ConfigCache, path: &Path, kind: Kind) -> Verdict {
    let Ok(Some((mut file, meta))) = fsutil::open_regular(path) else {
        return Verdict::default();
    };
    if meta.len() < CACHE_FROM_BYTES {
        return read_verdict(&mut file, kind);
    }
    cache
        .verdict(path, &mut file, &meta, |file| read_verdict(file, kind))
        .0
}

fn read_verdict(file: &mut File, kind: Kind) -> Verdict {
    let mut bytes = Vec::new();
    if file.take(CONFIG_LIMIT).read_to_end(&mut bytes).is_err() {
        return Verdict::default();
    }
    match kind {
        Kind::ClaudeState => claude_state_verdict(&bytes),
        Kind::McpJson => Verdict {
            user: mcp_servers_has_fabric(&bytes).unwrap_or(false),
            projects: Vec::new(),
        },
        Kind::CodexToml => Verdict {
            user: codex_has_fabric(&bytes),
            projects: Vec::new(),
        },
    }
}

/// `mcpServers.fabric` at the top of a JSON document.
fn mcp_servers_has_fabric(doc: &[u8]) -> Result<bool, json_scan::Malformed> {
    let root = json_scan::root(doc)?;
    if !json_scan::is_object(doc, &root) {
        return Ok(false);
    }
    match json_scan::member(doc, root, "mcpServers")? {
        Some(servers) => servers_have_fabric(doc, servers),
        None => Ok(false),
    }
}

fn servers_have_fabric(
    doc: &[u8],
    servers: std::ops::Range<usize>,
) -> Result<bool, json_scan::Malformed> {
    if !json_scan::is_object(doc, &servers) {
        return Ok(false);
    }
    Ok(json_scan::member(doc, servers, FABRIC_SERVER)?.is_some())
}

/// `~/.claude.json`: user scope, and every project folder with a local registration.
fn claude_state_verdict(doc: &[u8]) -> Verdict {
    let walk = || -> Result<Verdict, json_scan::Malformed> {
        let mut verdict = Verdict::default();
        let root = json_scan::root(doc)?;
        if !json_scan::is_object(doc, &root) {
            return Ok(verdict);
        }
        let mut failed = None;
        json_scan::for_each_member(doc, root, |key, value| {
            let found = match key {
                "mcpServers" => servers_have_fabric(doc, value).map(|user| {
                    verdict.user |= user;
                }),
                "projects" if json_scan::is_object(doc, &value) => {
                    json_scan::for_each_member(doc, value, |folder, project| {
                        let local = json_scan::is_object(doc, &project)
                            .then(|| json_scan::member(doc, project, "mcpServers"))
                            .transpose()
                            .map(Option::flatten)
                            .and_then(|servers| match servers {
                                Some(servers) => servers_have_fabric(doc, servers),
                                None => Ok(false),
                            });
                        match local {
                            Ok(true) => verdict
                                .projects
                                .push(config_cache::path_digest(Path::new(folder))),
                            Ok(false) => {}
                            Err(err) => failed = Some(err),
                        }
                        failed.is_none()
                    })
                }
                _ => Ok(()),
            };
            if let Err(err) = found {
                failed = Some(err);
            }
            failed.is_none()
        })?;
        match failed {
            Some(err) => Err(err),
            None => Ok(verdict),
        }
    };
    walk().unwrap_or_default()
}

/// `[mcp_servers.fabric]` in Codex's `config.toml`.
fn codex_has_fabric(bytes: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct CodexConfig {
        #[serde(default)]
        mcp_servers: std::collections::HashMap<String, serde::de::IgnoredAny>,
    }
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|text| toml::from_str::<CodexConfig>(text).ok())
        .is_some_and(|config| config.mcp_servers.contains_key(FABRIC_SERVER))
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
        if std::env::var_os(companion_platform::env_vars::CLAUDE_CONFIG_DIR).is_some() {
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
        for doc in [
            r#"{"mcpServers":{"fabricate":{}, "other":{}}}"#,
            "not json",
            r#"{"mcpServers":{"fabric":{}}"#,
            r#"{"mcpServers":["fabric"]}"#,
            r#"["mcpServers"]"#,
            r#"{"other":{"mcpServers":{"fabric":{}}}}"#,
        ] {
            assert!(
                !mcp_servers_has_fabric(doc.as_bytes()).unwrap_or(false),
                "{doc}"
            );
        }
        assert!(
            mcp_servers_has_fabric(br#"{"a":[{"}":"{"}],"mcpServers":{"x":1,"fabric":{}}}"#)
                .unwrap()
        );
    }

    /// The walk agrees with a full serde parse on what is registered where.
    #[test]
    fn the_walk_agrees_with_a_full_parse() {
        fn reference(doc: &str) -> Verdict {
            let Ok(serde_json::Value::Object(root)) = serde_json::from_str(doc) else {
                return Verdict::default();
            };
            let has = |v: Option<&serde_json::Value>| {
                v.and_then(|s| s.as_object())
                    .is_some_and(|s| s.contains_key(FABRIC_SERVER))
            };
            let mut projects: Vec<String> = root
                .get("projects")
                .and_then(|p| p.as_object())
                .map(|p| {
                    p.iter()
                        .filter(|(_, v)| has(v.get("mcpServers")))
                        .map(|(k, _)| config_cache::path_digest(Path::new(k)))
                        .collect()
                })
                .unwrap_or_default();
            projects.sort();
            Verdict {
                user: has(root.get("mcpServers")),
                projects,
            }
        }
        let docs = [
            r#"{}"#,
            r#"{"mcpServers":{"fabric":{}}}"#,
            r#"{"mcpServers":{"fabric":{"env":{"A":"}{\"\\"}}},"projects":{}}"#,
            r#"{"projects":{"/a":{"mcpServers":{"fabric":{}}},"/b":{"mcpServers":{}},"/c":[],"/d":{"x":{"mcpServers":{"fabric":1}}}}}"#,
            r#"{"projects":{"/w/\u00e9t\u00e9":{"mcpServers":{"fabric":{}}}},"mcpServers":[]}"#,
            r#"{"history":[{"display":"mcpServers fabric \"fabric\""}],"mcpServers":{"fabricate":true}}"#,
            r#"  {"numStartups":1e3,"tips":{"a":-0.5,"b":[true,false,null]},"mcpServers":{"x":{},"fabric":null}}  "#,
        ];
        for doc in docs {
            let mut walked = claude_state_verdict(doc.as_bytes());
            walked.projects.sort();
            assert_eq!(walked, reference(doc), "{doc}");
        }
    }
}
