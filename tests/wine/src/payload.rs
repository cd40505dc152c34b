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
