//! Claude Code: our hooks in the `hooks` object of its user settings
//! (`$CLAUDE_CONFIG_DIR/settings.json`, default `~/.claude/settings.json`), in the JSON shape
//! [`super::json`] edits.
//!
//! Owns the events Claude Code gets and the warnings only its settings can raise. It reads
//! other keys only as yes/no facts (hooks turned off, our plugin enabled) and never prints
//! their values.

use std::path::PathBuf;

use serde_json::Value;

use super::{EventSpec, HOOK_TIMEOUT_SECS};
use companion_platform::paths::Paths;

/// The name of our Claude Code plugin (`hookbin/claude-plugin`).
pub const PLUGIN_NAME: &str = "fabric-session";

/// SessionStart and SessionEnd take a matcher (the source, the reason): `""` matches all.
/// Stop and UserPromptSubmit have none. The state events (a session's state, see
/// `companion_sessions::session_state`) match every tool, notification type and agent: no matcher.
pub(crate) const EVENTS: &[EventSpec] = &[
    EventSpec {
        name: "SessionStart",
        arg: "session-start",
        matcher: Some(""),
        timeout: HOOK_TIMEOUT_SECS,
    },
    EventSpec {
        name: "Stop",
        arg: "stop",
        matcher: None,
        timeout: HOOK_TIMEOUT_SECS,
    },
    EventSpec {
        name: "UserPromptSubmit",
        arg: "user-prompt-submit",
        matcher: None,
        timeout: HOOK_TIMEOUT_SECS,
    },
    EventSpec {
        name: "SessionEnd",
        arg: "session-end",
        matcher: Some(""),
        timeout: HOOK_TIMEOUT_SECS,
    },
    EventSpec::state("PermissionRequest", "permission-request"),
    EventSpec::state("Notification", "notification"),
    EventSpec::state("PostToolUse", "post-tool-use"),
    EventSpec::state("PostToolUseFailure", "post-tool-use-failure"),
    EventSpec::state("StopFailure", "stop-failure"),
    EventSpec::state("SubagentStop", "subagent-stop"),
];

pub(crate) fn config_file(paths: &Paths) -> PathBuf {
    paths.claude_settings()
}

/// Warnings for an install into these settings: hooks turned off, or our plugin enabled
/// too (its hooks would run as well, so every hook would run twice).
pub(crate) fn warnings(text: Option<&str>) -> Vec<String> {
    let Some(Value::Object(root)) = text
        .and_then(|t| serde_json::from_str::<Value>(t.strip_prefix('\u{feff}').unwrap_or(t)).ok())
    else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    if root.get("disableAllHooks") == Some(&Value::Bool(true)) {
        warnings.push(
            "these settings turn all hooks off (\"disableAllHooks\": true): ours will not run until that is removed."
                .to_string(),
        );
    }
    let plugin_enabled = root
        .get("enabledPlugins")
        .and_then(Value::as_object)
        .is_some_and(|plugins| {
            plugins.iter().any(|(id, on)| {
                id.split('@').next() == Some(PLUGIN_NAME) && on == &Value::Bool(true)
            })
        });
    if plugin_enabled {
        warnings.push(format!(
            "the {PLUGIN_NAME} Claude Code plugin is enabled too: with both, every hook runs twice. Use one or the other."
        ));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_about_disabled_hooks_and_the_plugin() {
        let text = r#"{"disableAllHooks": true, "enabledPlugins": {"fabric-session@fabric-companion": true, "other@x": true}}"#;
        let found = warnings(Some(text));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(warnings(Some(r#"{"enabledPlugins": {"fabric-session@m": false}}"#)).is_empty());
        assert!(warnings(None).is_empty());
        assert!(warnings(Some("not json")).is_empty());
    }
}
