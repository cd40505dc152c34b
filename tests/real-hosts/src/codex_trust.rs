//! Codex's record of a person's approval of a hook, for tests only: computed exactly as
//! Codex's source computes it, and granted through Codex's own app-server with the very calls
//! its `/hooks` screen makes. Product code never grants approval.
//!
//! What Codex 0.169.0 does (source: `codex-rs/hooks/src/lib.rs` `hook_key` and
//! `hook_event_key_label`; `codex-rs/hooks/src/engine/discovery.rs` `append_matcher_groups`
//! and `command_hook_hash`; `codex-rs/config/src/fingerprint.rs` `version_for_toml`;
//! `codex-rs/tui/src/hooks_rpc.rs` `write_hook_trusts`), checked against the real binary's
//! `hooks/list`:
//! - the record is `[hooks.state."<key>"] trusted_hash = "<hash>"` in `$CODEX_HOME/config.toml`;
//! - `<key>` is `<absolute hooks.json path>:<event label>:<group index>:<handler index>`,
//!   the label being `session_start`, `user_prompt_submit`, `stop`, `session_end`, …;
//! - `<hash>` is `sha256:` and the hex SHA-256 of the compact JSON, keys sorted at every
//!   level, of `{"event_name": <label>, "matcher": <m>, "hooks": [{"type": "command",
//!   "command": <c>, "timeout": <t>, "async": <a>}]}`, where `matcher` is left out when
//!   absent or the event takes none, `timeout` is the hook's (600 when absent, at least 1,
//!   SessionEnd clamped to 3) and `statusMessage` is added only when set;
//! - `/hooks` lists hooks with `hooks/list {cwds}` and approves with `config/batchWrite
//!   {edits: [{keyPath: "hooks.state", value: {<key>: {trusted_hash}}, mergeStrategy:
//!   "upsert"}], reloadUserConfig: true}`.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::home::TestHome;
use crate::jsonrpc::LineChild;

/// Events whose matcher Codex hashes (`HOOK_EVENT_NAMES_WITH_MATCHERS`).
const MATCHER_EVENTS: &[&str] = &[
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PreCompact",
    "PostCompact",
    "SessionStart",
    "SubagentStart",
    "SubagentStop",
];

/// Codex's hook-state label of an event name as written in `hooks.json`.
pub fn event_label(event: &str) -> Option<&'static str> {
    Some(match event {
        "PreToolUse" => "pre_tool_use",
        "PermissionRequest" => "permission_request",
        "PostToolUse" => "post_tool_use",
        "PreCompact" => "pre_compact",
        "PostCompact" => "post_compact",
        "SessionStart" => "session_start",
        "SessionEnd" => "session_end",
        "UserPromptSubmit" => "user_prompt_submit",
        "SubagentStart" => "subagent_start",
        "SubagentStop" => "subagent_stop",
        "Interrupt" => "interrupt",
        "Stop" => "stop",
        _ => return None,
    })
}

/// The key Codex files a hook's state under.
pub fn hook_key(hooks_json: &Path, event: &str, group: usize, handler: usize) -> Option<String> {
    Some(format!(
        "{}:{}:{group}:{handler}",
        hooks_json.display(),
        event_label(event)?
    ))
}

/// JSON text with every object's keys sorted, no whitespace (Codex's `canonicalize` then
/// `serde_json::to_vec`). Written by hand: this workspace may build `serde_json` with
/// `preserve_order`, so a `Map` does not sort by itself.
pub fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|key| {
                    format!(
                        "{}:{}",
                        Value::String(key.clone()),
                        canonical_json(&map[key])
                    )
                })
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// The hash Codex computes for one command hook.
pub fn trusted_hash(
    event: &str,
    matcher: Option<&str>,
    command: &str,
    timeout: Option<u64>,
    is_async: bool,
    status_message: Option<&str>,
) -> Option<String> {
    let label = event_label(event)?;
    let mut timeout = timeout.unwrap_or(600).max(1);
    if matches!(event, "SessionEnd" | "Interrupt") {
        timeout = timeout.min(3);
    }
    let mut handler = Map::new();
    handler.insert("type".into(), json!("command"));
    handler.insert("command".into(), json!(command));
    handler.insert("timeout".into(), json!(timeout));
    handler.insert("async".into(), json!(is_async));
    if let Some(message) = status_message {
        handler.insert("statusMessage".into(), json!(message));
    }
    let mut identity = Map::new();
    identity.insert("event_name".into(), json!(label));
    identity.insert("hooks".into(), json!([Value::Object(handler)]));
    if let Some(matcher) = matcher.filter(|_| MATCHER_EVENTS.contains(&event)) {
        identity.insert("matcher".into(), json!(matcher));
    }
    let digest = Sha256::digest(canonical_json(&Value::Object(identity)).as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("sha256:{hex}"))
}

/// One command hook of a `hooks.json`, with the key and hash Codex will give it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedHook {
    pub event: String,
    pub command: String,
    pub key: String,
    pub hash: String,
}

/// Every command hook in `hooks_json` (an absolute path) whose command satisfies `pick`.
pub fn expected_hooks(hooks_json: &Path, pick: impl Fn(&str) -> bool) -> Vec<ExpectedHook> {
    let text = std::fs::read_to_string(hooks_json)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", hooks_json.display()));
    let doc: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", hooks_json.display()));
    let mut found = Vec::new();
    let Some(events) = doc.get("hooks").and_then(Value::as_object) else {
        return found;
    };
    for (event, groups) in events {
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            let matcher = group.get("matcher").and_then(Value::as_str);
            for (h, handler) in group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let Some(command) = handler.get("command").and_then(Value::as_str) else {
                    continue;
                };
                if !pick(command) {
                    continue;
                }
                let (Some(key), Some(hash)) = (
                    hook_key(hooks_json, event, g, h),
                    trusted_hash(
                        event,
                        matcher,
                        command,
                        handler.get("timeout").and_then(Value::as_u64),
                        handler
                            .get("async")
                            .and_then(Value::as_bool)
                            .unwrap_or(false),
                        handler.get("statusMessage").and_then(Value::as_str),
                    ),
                ) else {
                    continue;
                };
                found.push(ExpectedHook {
                    event: event.clone(),
                    command: command.to_owned(),
                    key,
                    hash,
                });
            }
        }
    }
    found
}

/// A running `codex app-server` in a test HOME (the engine Codex's TUI drives).
pub struct AppServer {
    child: LineChild,
}

const RPC_LIMIT: Duration = Duration::from_secs(60);

impl AppServer {
    /// Starts it and says hello (`initialize`, `initialized`).
    pub fn start(home: &TestHome) -> Result<AppServer, String> {
        let mut command = home.command(&home.program.path);
        command.arg("app-server");
        let mut child = LineChild::spawn(
            command,
            home.scratch_output("codex-app-server.stderr"),
            "codex app-server",
        )?;
        child.request(
            "initialize",
            json!({"clientInfo": {"name": "fabric-real-hosts", "title": null, "version": "0"}}),
            RPC_LIMIT,
        )?;
        child.notify("initialized")?;
        Ok(AppServer { child })
    }

    /// The line client, for sessions.
    pub fn client(&mut self) -> &mut LineChild {
        &mut self.child
    }

    /// `hooks/list` for the project: every hook Codex found, as it describes them.
    pub fn hooks(&mut self, cwd: &Path) -> Result<Vec<Value>, String> {
        let result = self
            .child
            .request("hooks/list", json!({"cwds": [cwd]}), RPC_LIMIT)?;
        Ok(result["data"]
            .as_array()
            .and_then(|data| data.first())
            .and_then(|entry| entry["hooks"].as_array())
            .cloned()
            .unwrap_or_default())
    }

    /// Approves hooks as `/hooks` does: `config/batchWrite` of `hooks.state.<key>.trusted_hash`.
    pub fn trust(&mut self, hooks: &[(String, String)]) -> Result<Value, String> {
        let value: Map<String, Value> = hooks
            .iter()
            .map(|(key, hash)| (key.clone(), json!({"trusted_hash": hash})))
            .collect();
        self.child.request(
            "config/batchWrite",
            json!({
                "edits": [{"keyPath": "hooks.state", "value": value, "mergeStrategy": "upsert"}],
                "filePath": null,
                "expectedVersion": null,
                "reloadUserConfig": true,
            }),
            RPC_LIMIT,
        )
    }

    /// Closes it.
    pub fn stop(self) -> Result<std::process::ExitStatus, String> {
        self.child.finish(Duration::from_secs(30))
    }

    /// Gives the line client up (sessions finish it themselves).
    pub fn into_client(self) -> LineChild {
        self.child
    }
}

/// Approves every hook of ours Codex lists as needing review, the way `/hooks` does, after
/// checking that Codex's key and hash are the ones computed here. Gives what was approved.
pub fn grant_ours(
    home: &TestHome,
    is_ours: impl Fn(&str) -> bool,
) -> Result<Vec<ExpectedHook>, String> {
    let hooks_json = home.codex_home().join("hooks.json");
    let expected = expected_hooks(&hooks_json, &is_ours);
    let mut server = AppServer::start(home)?;
    let listed = server.hooks(&home.project)?;
    for hook in &expected {
        let entry = listed
            .iter()
            .find(|entry| entry["key"] == hook.key.as_str())
            .ok_or_else(|| {
                format!(
                    "Codex does not list a hook under {:?}; it lists {:?}",
                    hook.key,
                    listed.iter().map(|e| e["key"].clone()).collect::<Vec<_>>()
                )
            })?;
        if entry["currentHash"] != hook.hash.as_str() {
            return Err(format!(
                "Codex hashes {} as {}, the source's formula gives {}",
                hook.key, entry["currentHash"], hook.hash
            ));
        }
    }
    let updates: Vec<(String, String)> = expected
        .iter()
        .map(|hook| (hook.key.clone(), hook.hash.clone()))
        .collect();
    if !updates.is_empty() {
        server.trust(&updates)?;
    }
    server.stop()?;
    Ok(expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_json_sorts_every_level_and_drops_whitespace() {
        let value = json!({"b": [{"z": 1, "a": "x y"}], "a": null});
        assert_eq!(
            canonical_json(&value),
            r#"{"a":null,"b":[{"a":"x y","z":1}]}"#
        );
    }

    /// Hashes `codex app-server`'s `hooks/list` reported for these hooks in Codex 0.169.0.
    #[test]
    fn hashes_match_what_codex_0_169_reported() {
        assert_eq!(
            trusted_hash(
                "SessionStart",
                Some("startup|resume"),
                "/tmp/r/probe.sh SessionStart",
                Some(5),
                false,
                None
            )
            .unwrap(),
            "sha256:4e451f9b26b1855b2da247ff4f07224d843fa7b41144709facf805e35b40c36a"
        );
        assert_eq!(
            trusted_hash(
                "SessionEnd",
                None,
                "/tmp/r/probe.sh SessionEnd",
                Some(5),
                false,
                None
            )
            .unwrap(),
            "sha256:0f736429cd19b0adeb2f9b73de23667ef5e6158e5af22d530784f68336501ba3"
        );
        assert_eq!(
            trusted_hash(
                "UserPromptSubmit",
                None,
                "/tmp/r/probe.sh UserPromptSubmit",
                Some(5),
                false,
                None
            )
            .unwrap(),
            "sha256:729f56ee0978454187805323cf9648a58921171246ebc9915166c5a19a8455b1"
        );
        assert_eq!(
            trusted_hash("Stop", None, "/tmp/r/probe.sh Stop", Some(5), false, None).unwrap(),
            "sha256:298d9e22ff28f45e96a73c0bb63d0042c4d64294720b7ae6a096cec16b3d18d2"
        );
    }

    #[test]
    fn keys_name_the_file_event_and_positions() {
        assert_eq!(
            hook_key(Path::new("/h/.codex/hooks.json"), "UserPromptSubmit", 2, 0).unwrap(),
            "/h/.codex/hooks.json:user_prompt_submit:2:0"
        );
        assert_eq!(hook_key(Path::new("/h"), "Nope", 0, 0), None);
    }
}
