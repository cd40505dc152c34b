//! Each agent's wait is its own, through the real binary: parallel subagents (and the main
//! thread) each open their own wait with their permission prompts; an event of one agent never
//! ends another's, and the session needs you, since the oldest wait, until every wait is
//! answered. Read back with `status --json`, as the tray and the dashboard read it.
#![cfg(unix)] // a temporary HOME given by HOME and XDG variables

mod common;

use common::{Home, stdout, write};
use serde_json::{Value, json};

/// A home with Fabric running with session hooks and Claude Code registered, and one recorded
/// session `s` hosted by this (living) test process, in a turn.
fn session_in_a_turn() -> Home {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(&["session-hooks/1"]);
    hook(
        &home,
        "session-start",
        "SessionStart",
        json!({"source": "startup"}),
    );
    let spool = home.spool("s");
    let text = std::fs::read_to_string(spool.join("session.json")).unwrap();
    let mut record: Value = serde_json::from_str(&text).unwrap();
    record["hostPid"] = json!(std::process::id());
    record["hostStartTicks"] = json!(0);
    write(&spool.join("session.json"), &record.to_string());
    hook(
        &home,
        "user-prompt-submit",
        "UserPromptSubmit",
        json!({"prompt": "p"}),
    );
    assert_eq!(session(&home)["state"], "working");
    home
}

/// Runs one of Claude Code's hooks for session `s` with `fields` in its payload.
fn hook(home: &Home, hook: &str, event: &str, fields: Value) {
    let mut payload = json!({
        "session_id": "s",
        "transcript_path": home.path().join("t.jsonl"),
        "cwd": home.project(),
        "hook_event_name": event,
        "permission_mode": "default",
    });
    for (key, value) in fields.as_object().unwrap() {
        payload[key] = value.clone();
    }
    let out = home.hook_with(hook, "claude", payload.to_string().as_bytes(), |c| {
        c.env("CLAUDE_PID", std::process::id().to_string());
    });
    assert_eq!(out.status.code(), Some(0), "{hook}: {}", stdout(&out));
}

/// The agent fields of an event: the main thread's (none) or a subagent's.
fn by(agent: Option<&str>) -> Value {
    match agent {
        Some(id) => json!({"agent_id": id, "agent_type": "general-purpose"}),
        None => json!({}),
    }
}

fn with(mut fields: Value, agent: Option<&str>) -> Value {
    for (key, value) in by(agent).as_object().unwrap() {
        fields[key] = value.clone();
    }
    fields
}

fn asks(home: &Home, agent: Option<&str>) {
    let fields = with(
        json!({"tool_name": "Bash", "tool_input": {"command": "x"}}),
        agent,
    );
    hook(home, "permission-request", "PermissionRequest", fields);
}

fn tool_ran(home: &Home, agent: Option<&str>) {
    let fields = with(json!({"tool_name": "Bash"}), agent);
    hook(home, "post-tool-use", "PostToolUse", fields);
}

fn ends(home: &Home, agent: &str) {
    let fields = with(json!({"stop_hook_active": false}), Some(agent));
    hook(home, "subagent-stop", "SubagentStop", fields);
}

fn session(home: &Home) -> Value {
    let out = home.command(&["status", "--json"]).output().unwrap();
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "s")
        .cloned()
        .expect("session s is listed")
}

/// The session needs you, since the wait that opened at `since`.
fn needs_you_since(home: &Home, since: &Value, after: &str) {
    let s = session(home);
    assert_eq!(s["state"], "needs-you", "after {after}: {s}");
    assert!(since.is_string(), "a wait has a time: {since}");
    assert_eq!(
        &s["stateSince"], since,
        "after {after}: the oldest wait's time"
    );
}

#[test]
fn another_agent_s_tool_or_end_never_ends_a_wait() {
    // The main thread waits; a background subagent's tool runs.
    let home = session_in_a_turn();
    asks(&home, None);
    let since = session(&home)["stateSince"].clone();
    tool_ran(&home, Some("agent-bg"));
    needs_you_since(&home, &since, "a background subagent's tool");
    tool_ran(&home, None);
    assert_eq!(session(&home)["state"], "working");

    // Subagent 1 waits; subagent 2's tool runs, then subagent 2 ends.
    let home = session_in_a_turn();
    asks(&home, Some("agent-1"));
    let since = session(&home)["stateSince"].clone();
    tool_ran(&home, Some("agent-2"));
    needs_you_since(&home, &since, "another subagent's tool");
    ends(&home, "agent-2");
    needs_you_since(&home, &since, "another subagent's end");
    tool_ran(&home, Some("agent-1"));
    assert_eq!(session(&home)["state"], "working");
}

#[test]
fn the_session_needs_you_until_every_wait_is_answered() {
    let home = session_in_a_turn();
    asks(&home, Some("agent-1"));
    let since = session(&home)["stateSince"].clone();
    asks(&home, Some("agent-2"));
    asks(&home, None);
    assert_eq!(
        session(&home)["subagent"],
        true,
        "the oldest wait is a subagent's"
    );
    tool_ran(&home, None);
    needs_you_since(&home, &since, "the main thread's answer");
    ends(&home, "agent-1");
    let s = session(&home);
    assert_eq!(s["state"], "needs-you", "agent-2 still waits: {s}");
    assert!(s["stateSince"].is_string());
    assert_ne!(s["stateSince"], since, "since agent-2's wait now");
    // The main turn ends while agent-2 waits: still waiting, finished once it is answered.
    hook(&home, "stop", "Stop", json!({"stop_hook_active": false}));
    assert_eq!(session(&home)["state"], "needs-you");
    tool_ran(&home, Some("agent-2"));
    assert_eq!(session(&home)["state"], "finished");
}
