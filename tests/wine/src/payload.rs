//! Each host's hook input as the real host writes it (fields from
//! `/work/shared/reference/interfaces.md`, "What the real hosts did here"), for a session in a
//! Windows project folder. Prompts carry [`PROMPT`], which must never reach a log.

use serde_json::{Value, json};

/// Text in every prompt: it must never appear in the hook log.
pub const PROMPT: &str = "PROMPT-CONTENT-MUST-NOT-LEAK";

/// The hook events: our argument and the hosts' name.
pub const EVENTS: [(&str, &str); 4] = [
    ("session-start", "SessionStart"),
    ("user-prompt-submit", "UserPromptSubmit"),
    ("stop", "Stop"),
    ("session-end", "SessionEnd"),
];

/// The state events (issue 22: which session needs you), our argument and the hosts' name;
/// each host has those [`host_events`] names.
pub const STATE_EVENTS: [(&str, &str); 9] = [
    ("permission-request", "PermissionRequest"),
    ("permission-result", "PermissionResult"),
    ("pre-tool-use", "PreToolUse"),
    ("notification", "Notification"),
    ("post-tool-use", "PostToolUse"),
    ("post-tool-use-failure", "PostToolUseFailure"),
    ("interrupt", "Interrupt"),
    ("stop-failure", "StopFailure"),
    ("subagent-stop", "SubagentStop"),
];

/// The events our installer gives `host`'s config (the hosts' names, sorted), as the Linux
/// installer writes them: the four of the session and the host's state events.
pub fn host_events(host: &str) -> Vec<&'static str> {
    let state: &[&str] = match host {
        "claude" => &[
            "Notification",
            "PermissionRequest",
            "PostToolUse",
            "PostToolUseFailure",
            "StopFailure",
            "SubagentStop",
        ],
        "codex" => &[
            "Interrupt",
            "PermissionRequest",
            "PostToolUse",
            "SubagentStop",
        ],
        "kimi" => &[
            "Interrupt",
            "PermissionRequest",
            "PermissionResult",
            "PostToolUse",
            "PostToolUseFailure",
            "PreToolUse",
            "StopFailure",
            "SubagentStop",
        ],
        other => panic!("unknown host {other}"),
    };
    let mut events: Vec<&str> = EVENTS.iter().map(|(_, name)| *name).collect();
    events.extend(state);
    events.sort_unstable();
    events
}

/// The input `host` (`claude`, `codex`, `kimi`) gives its `event` hook (the host's event
/// name), for `session` in the Windows folder `cwd`.
pub fn input(host: &str, event: &str, session: &str, cwd: &str) -> String {
    let transcript = format!("{cwd}\\..\\transcripts\\{session}.jsonl");
    let mut value = match host {
        "claude" => json!({
            "session_id": session,
            "transcript_path": transcript,
            "cwd": cwd,
            "hook_event_name": event,
        }),
        "codex" => json!({
            "session_id": session,
            "turn_id": "turn-1",
            "transcript_path": transcript,
            "cwd": cwd,
            "hook_event_name": event,
            "model": "gpt-5",
            "permission_mode": "default",
        }),
        "kimi" => json!({
            "session_id": session,
            "cwd": cwd,
            "hook_event_name": event,
            "client_type": "cli",
            "model": "kimi-k2",
        }),
        other => panic!("unknown host {other}"),
    };
    let object = value.as_object_mut().expect("an object");
    match (host, event) {
        (_, "SessionStart") => {
            object.insert("source".into(), "startup".into());
        }
        ("kimi", "UserPromptSubmit") => {
            // Kimi Code's prompt is an array of parts.
            object.insert("prompt".into(), json!([{"type": "text", "text": PROMPT}]));
        }
        (_, "UserPromptSubmit") => {
            object.insert("prompt".into(), PROMPT.into());
        }
        ("claude", "Stop") => {
            object.insert("stop_hook_active".into(), false.into());
            object.insert(
                "last_assistant_message".into(),
                format!("Done. {PROMPT}").into(),
            );
            object.insert("background_tasks".into(), json!([]));
            object.insert("session_crons".into(), json!([]));
            object.insert("effort".into(), "medium".into());
        }
        ("codex", "Stop") => {
            object.insert("stop_hook_active".into(), false.into());
            object.insert(
                "last_assistant_message".into(),
                format!("Done. {PROMPT}").into(),
            );
        }
        (_, "PermissionRequest" | "PermissionResult" | "PostToolUse") => {
            object.insert("tool_name".into(), "Bash".into());
            object.insert(
                "tool_input".into(),
                json!({"command": format!("echo {PROMPT}"), "description": PROMPT}),
            );
            if host == "kimi" {
                object.insert("agent_id".into(), "main".into());
                object.insert("tool_call_id".into(), "toolu_1".into());
                if event == "PermissionResult" {
                    object.insert("decision".into(), "approved".into());
                }
            }
            if event == "PostToolUse" {
                object.insert("tool_response".into(), json!({"stdout": PROMPT}));
            }
        }
        ("kimi", "PreToolUse") => {
            object.insert("tool_name".into(), "AskUserQuestion".into());
            object.insert(
                "tool_input".into(),
                json!({"questions": [{"question": PROMPT}]}),
            );
        }
        (_, "PostToolUseFailure") => {
            object.insert("tool_name".into(), "Bash".into());
            if host == "kimi" {
                object.insert(
                    "error".into(),
                    json!({"code": "internal", "message": PROMPT}),
                );
            } else {
                object.insert("error".into(), PROMPT.into());
            }
        }
        ("claude", "Notification") => {
            object.insert("notification_type".into(), "permission_prompt".into());
            object.insert(
                "message".into(),
                format!("Claude needs your permission: {PROMPT}").into(),
            );
        }
        ("kimi", "Interrupt") => {
            object.insert("turn_id".into(), 3.into());
            object.insert("reason".into(), "cancelled".into());
        }
        (_, "StopFailure") => {
            if host == "kimi" {
                object.insert("error_type".into(), "APIError".into());
                object.insert("error_message".into(), PROMPT.into());
            } else {
                object.insert("error".into(), "rate_limit".into());
            }
        }
        (_, "SubagentStop") => {
            object.insert("agent_id".into(), "a8a31da15f84e3281".into());
            object.insert("agent_type".into(), "general-purpose".into());
            object.insert("stop_hook_active".into(), false.into());
            object.insert(
                "last_assistant_message".into(),
                format!("Done. {PROMPT}").into(),
            );
        }
        (_, "SessionEnd") => {
            object.insert(
                "reason".into(),
                if host == "claude" { "other" } else { "exit" }.into(),
            );
        }
        _ => {}
    }
    Value::Object(object.clone()).to_string()
}
