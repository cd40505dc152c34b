//! A session's state through the real binary, as the hosts' hooks move it: every host's events
//! (the payloads as the pinned hosts send them, see `tests/real-hosts`), read back by `status`
//! and `status --json`. The state events print nothing, exit 0, answer no permission, keep
//! nothing of a tool's input, read nothing but the session's spool, and take input they do not
//! expect as nothing (logged once by kind).
#![cfg(unix)] // a temporary HOME given by HOME and XDG variables, FIFOs, strace

mod common;

use std::process::Output;

use common::{Home, stdout, write};
use serde_json::{Value, json};

const SESSION_HOOKS: &[&str] = &["session-hooks/1"];
/// A command no file of ours may ever hold.
const SECRET_COMMAND: &str = "touch SECRET-COMMAND-MUST-NOT-LEAK";

/// A home with Fabric running with session hooks and `host` registered.
fn home_for(host: &str) -> Home {
    let home = Home::new();
    home.register(host);
    home.fabric_running(SESSION_HOOKS);
    home
}

fn event(home: &Home, session: &str, name: &str, extra: Value) -> Value {
    let mut payload = json!({
        "session_id": session,
        "transcript_path": home.path().join("t.jsonl"),
        "cwd": home.project(),
        "hook_event_name": name,
        "permission_mode": "default",
    });
    for (key, value) in extra.as_object().unwrap() {
        payload[key] = value.clone();
    }
    payload
}

/// Runs one hook and checks it printed nothing (the state events) and exited 0.
fn quiet(home: &Home, hook: &str, host: &str, payload: &Value) -> Output {
    let out = home.hook(hook, host, payload.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{hook} {host}");
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{hook} {host} printed: {} {}",
        stdout(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn status_json(home: &Home) -> Value {
    let out = home.command(&["status", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn session_of(home: &Home, session: &str) -> Value {
    status_json(home)["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == session)
        .cloned()
        .unwrap_or_else(|| panic!("{session} is not listed"))
}

fn state(home: &Home, session: &str) -> String {
    session_of(home, session)["state"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Starts a recorded session hosted by this test process (alive).
fn start(home: &Home, host: &str, session: &str) {
    let out = home.hook_with(
        "session-start",
        host,
        event(home, session, "SessionStart", json!({"source": "startup"}))
            .to_string()
            .as_bytes(),
        |c| {
            c.env("CLAUDE_PID", std::process::id().to_string());
        },
    );
    assert!(out.status.success());
    // Claude Code names its pid; the others are found up the tree, which here is cargo's test
    // runner: write the record so the session is this (living) process's.
    let spool = home.spool(session);
    let text = std::fs::read_to_string(spool.join("session.json")).unwrap();
    let mut record: Value = serde_json::from_str(&text).unwrap();
    record["hostPid"] = json!(std::process::id());
    record["hostStartTicks"] = json!(0);
    write(&spool.join("session.json"), &record.to_string());
    assert_eq!(state(home, session), "idle");
}

fn prompt(home: &Home, host: &str, session: &str) {
    let out = home.hook(
        "user-prompt-submit",
        host,
        event(
            home,
            session,
            "UserPromptSubmit",
            json!({"prompt": "PROMPT-CONTENT-MUST-NOT-LEAK"}),
        )
        .to_string()
        .as_bytes(),
    );
    assert!(out.status.success());
    assert_eq!(state(home, session), "working");
}

fn permission(home: &Home, session: &str, tool: &str, extra: Value) -> Value {
    let mut payload = event(
        home,
        session,
        "PermissionRequest",
        json!({"tool_name": tool, "tool_input": {"command": SECRET_COMMAND,
               "description": "SECRET-DESCRIPTION"}}),
    );
    for (key, value) in extra.as_object().unwrap() {
        payload[key] = value.clone();
    }
    payload
}

/// No file of ours holds the prompt, the command or its description.
fn nothing_leaked(home: &Home) {
    for entry in walk(&home.cache_dir()) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        for secret in [
            "SECRET-COMMAND",
            "SECRET-DESCRIPTION",
            "PROMPT-CONTENT",
            "SECRET-TITLE",
        ] {
            assert!(
                !text.contains(secret),
                "{} holds {secret}: {text}",
                entry.display()
            );
        }
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn claude_code_permission_prompt_answered_then_the_turn_finishes() {
    let home = home_for("claude");
    start(&home, "claude", "c1");
    prompt(&home, "claude", "c1");
    quiet(
        &home,
        "permission-request",
        "claude",
        &permission(&home, "c1", "Bash", json!({})),
    );
    let session = session_of(&home, "c1");
    assert_eq!(session["state"], "needs-you");
    assert_eq!(session["reason"], "permission");
    assert_eq!(session["tool"], "Bash");
    let since = session["stateSince"].as_str().unwrap().to_string();
    // Claude Code's own notification six seconds later keeps the wait's start.
    quiet(
        &home,
        "notification",
        "claude",
        &event(
            &home,
            "c1",
            "Notification",
            json!({"message": "Claude needs your permission", "notification_type": "permission_prompt"}),
        ),
    );
    assert_eq!(session_of(&home, "c1")["stateSince"], since.as_str());
    let text = stdout(&home.command(&["status"]).output().unwrap());
    assert!(
        text.contains("my-project · claude · unread unknown · needs you (permission, 0 s) (c1)"),
        "{text}"
    );
    quiet(
        &home,
        "post-tool-use",
        "claude",
        &event(
            &home,
            "c1",
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": SECRET_COMMAND},
                   "tool_response": {"stdout": "SECRET-COMMAND output"}, "tool_use_id": "t1"}),
        ),
    );
    assert_eq!(state(&home, "c1"), "working");
    let out = home.hook(
        "stop",
        "claude",
        event(&home, "c1", "Stop", json!({"stop_hook_active": false}))
            .to_string()
            .as_bytes(),
    );
    assert!(out.status.success() && out.stdout.is_empty());
    let session = session_of(&home, "c1");
    assert_eq!(session["state"], "finished");
    assert_eq!(session["interrupted"], false);
    assert!(session["turnStartedAt"].is_string());
    nothing_leaked(&home);
    // The log says the state, never the tool's input.
    let log = home.log_text();
    assert!(
        log.contains("permission-request claude c1 ok state=needs-you reason=permission"),
        "{log}"
    );
}

#[test]
fn claude_code_questions_errors_subagents_and_its_idle_record() {
    let home = home_for("claude");
    start(&home, "claude", "c2");
    prompt(&home, "claude", "c2");
    quiet(
        &home,
        "permission-request",
        "claude",
        &permission(&home, "c2", "AskUserQuestion", json!({})),
    );
    assert_eq!(session_of(&home, "c2")["reason"], "question");
    quiet(
        &home,
        "post-tool-use",
        "claude",
        &event(
            &home,
            "c2",
            "PostToolUse",
            json!({"tool_name": "AskUserQuestion"}),
        ),
    );
    // A turn ending on an API error.
    quiet(
        &home,
        "stop-failure",
        "claude",
        &event(&home, "c2", "StopFailure", json!({"error": "rate_limit"})),
    );
    assert_eq!(state(&home, "c2"), "failed");
    // A background subagent asks after the turn ended: the session needs you; its Stop
    // changes nothing else, and once it is answered the session is as it was.
    prompt(&home, "claude", "c2");
    home.hook(
        "stop",
        "claude",
        event(&home, "c2", "Stop", json!({})).to_string().as_bytes(),
    );
    let sub = json!({"agent_id": "a8a31da15f84e3281", "agent_type": "general-purpose"});
    quiet(
        &home,
        "permission-request",
        "claude",
        &permission(&home, "c2", "Bash", sub.clone()),
    );
    let session = session_of(&home, "c2");
    assert_eq!(session["state"], "needs-you");
    assert_eq!(session["subagent"], true);
    let mut answered = event(&home, "c2", "PostToolUse", json!({"tool_name": "Bash"}));
    answered["agent_id"] = sub["agent_id"].clone();
    quiet(&home, "post-tool-use", "claude", &answered);
    assert_eq!(state(&home, "c2"), "finished");
    let mut sub_stop = event(
        &home,
        "c2",
        "SubagentStop",
        json!({"stop_hook_active": false}),
    );
    sub_stop["agent_id"] = sub["agent_id"].clone();
    quiet(&home, "subagent-stop", "claude", &sub_stop);
    assert_eq!(state(&home, "c2"), "finished");
    // Approved, the command runs (minutes, maybe) before PostToolUse: Claude Code's own record
    // says busy from the approval on.
    let record = home
        .path()
        .join(".claude/sessions")
        .join(format!("{}.json", std::process::id()));
    let claude_says = |status: &str| {
        write(
            &record,
            &json!({"pid": std::process::id(), "sessionId": "c2", "status": status,
                    "statusUpdatedAt": companion_platform::clock::now_millis()})
            .to_string(),
        );
    };
    prompt(&home, "claude", "c2");
    quiet(
        &home,
        "permission-request",
        "claude",
        &permission(&home, "c2", "Bash", json!({})),
    );
    claude_says("waiting");
    assert_eq!(state(&home, "c2"), "needs-you");
    std::thread::sleep(std::time::Duration::from_millis(5));
    claude_says("busy");
    assert_eq!(state(&home, "c2"), "working");
    std::fs::remove_file(&record).unwrap();
    // Esc at the prompt (or No) runs no hook: Claude Code's own record says idle since then.
    prompt(&home, "claude", "c2");
    quiet(
        &home,
        "permission-request",
        "claude",
        &permission(&home, "c2", "Bash", json!({})),
    );
    assert_eq!(state(&home, "c2"), "needs-you");
    std::thread::sleep(std::time::Duration::from_millis(5));
    let later = companion_platform::clock::now_millis();
    write(
        &record,
        &json!({"pid": std::process::id(), "sessionId": "c2", "status": "idle",
                "statusUpdatedAt": later})
        .to_string(),
    );
    let session = session_of(&home, "c2");
    assert_eq!(session["state"], "finished");
    assert_eq!(session["interrupted"], true);
    let text = stdout(&home.command(&["status"]).output().unwrap());
    assert!(text.contains("finished (interrupted) (c2)"), "{text}");
    // An idle written before the next prompt is an older fact.
    std::thread::sleep(std::time::Duration::from_millis(5));
    prompt(&home, "claude", "c2");
    assert_eq!(state(&home, "c2"), "working");
    // Its idle notification (a minute at the prompt) ends a turn too.
    std::fs::remove_file(&record).unwrap();
    quiet(
        &home,
        "notification",
        "claude",
        &event(
            &home,
            "c2",
            "Notification",
            json!({"notification_type": "idle_prompt",
               "message": "Claude is waiting for your input"}),
        ),
    );
    assert_eq!(state(&home, "c2"), "finished");
    nothing_leaked(&home);
}

#[test]
fn codex_permission_refused_by_an_interrupt_and_a_subagent_s_own_prompt() {
    let home = home_for("codex");
    start(&home, "codex", "x1");
    prompt(&home, "codex", "x1");
    let turn = json!({"turn_id": "t1", "model": "gpt-stand-in"});
    quiet(
        &home,
        "permission-request",
        "codex",
        &permission(&home, "x1", "Bash", turn.clone()),
    );
    assert_eq!(state(&home, "x1"), "needs-you");
    // Esc ("No, and tell Codex what to do differently") interrupts the turn.
    quiet(
        &home,
        "interrupt",
        "codex",
        &event(&home, "x1", "Interrupt", turn.clone()),
    );
    let session = session_of(&home, "x1");
    assert_eq!(session["state"], "finished");
    assert_eq!(session["interrupted"], true);
    // A subagent's own first prompt is not the person's: no turn, nothing said.
    let sub =
        json!({"agent_id": "01a241be-ef9f", "agent_type": "default", "prompt": "PROMPT-CONTENT x"});
    let out = home.hook(
        "user-prompt-submit",
        "codex",
        event(&home, "x1", "UserPromptSubmit", sub.clone())
            .to_string()
            .as_bytes(),
    );
    assert!(out.status.success() && out.stdout.is_empty());
    assert_eq!(state(&home, "x1"), "finished");
    quiet(
        &home,
        "permission-request",
        "codex",
        &permission(&home, "x1", "Bash", sub.clone()),
    );
    assert_eq!(state(&home, "x1"), "needs-you");
    let mut sub_stop = event(&home, "x1", "SubagentStop", sub.clone());
    sub_stop["last_assistant_message"] = json!("x");
    quiet(&home, "subagent-stop", "codex", &sub_stop);
    assert_eq!(state(&home, "x1"), "finished");
    nothing_leaked(&home);
}

#[test]
fn kimi_code_permission_results_and_interrupts() {
    let home = home_for("kimi");
    start(&home, "kimi", "session_k1");
    prompt(&home, "kimi", "session_k1");
    let kimi = json!({"agent_id": "main", "turn_id": 0, "tool_call_id": "toolu_1",
                      "session_title": "SECRET-TITLE", "action": "Running: SECRET-COMMAND"});
    quiet(
        &home,
        "permission-request",
        "kimi",
        &permission(&home, "session_k1", "Bash", kimi.clone()),
    );
    assert_eq!(state(&home, "session_k1"), "needs-you");
    let mut rejected = permission(&home, "session_k1", "Bash", kimi.clone());
    rejected["hook_event_name"] = json!("PermissionResult");
    rejected["decision"] = json!("rejected");
    quiet(&home, "permission-result", "kimi", &rejected);
    assert_eq!(state(&home, "session_k1"), "working");
    quiet(
        &home,
        "post-tool-use-failure",
        "kimi",
        &event(
            &home,
            "session_k1",
            "PostToolUseFailure",
            json!({"tool_name": "Bash",
               "error": {"code": "internal", "message": "SECRET-COMMAND rejected"}}),
        ),
    );
    home.hook(
        "stop",
        "kimi",
        event(
            &home,
            "session_k1",
            "Stop",
            json!({"stop_hook_active": false}),
        )
        .to_string()
        .as_bytes(),
    );
    assert_eq!(state(&home, "session_k1"), "finished");
    prompt(&home, "kimi", "session_k1");
    quiet(
        &home,
        "interrupt",
        "kimi",
        &event(
            &home,
            "session_k1",
            "Interrupt",
            json!({"turn_id": 3, "reason": "cancelled"}),
        ),
    );
    assert_eq!(session_of(&home, "session_k1")["interrupted"], true);
    // A question (Kimi Code's AskUserQuestion asks no permission; its PreToolUse says it).
    prompt(&home, "kimi", "session_k1");
    quiet(
        &home,
        "pre-tool-use",
        "kimi",
        &event(
            &home,
            "session_k1",
            "PreToolUse",
            json!({"tool_name": "AskUserQuestion"}),
        ),
    );
    assert_eq!(session_of(&home, "session_k1")["reason"], "question");
    quiet(
        &home,
        "stop-failure",
        "kimi",
        &event(
            &home,
            "session_k1",
            "StopFailure",
            json!({"error_type": "APIError",
               "error_message": "x"}),
        ),
    );
    assert_eq!(state(&home, "session_k1"), "failed");
    nothing_leaked(&home);
}

#[test]
fn a_resume_clears_a_wait_and_the_session_s_end_takes_it_away() {
    let home = home_for("claude");
    start(&home, "claude", "c3");
    prompt(&home, "claude", "c3");
    quiet(
        &home,
        "permission-request",
        "claude",
        &permission(&home, "c3", "Bash", json!({})),
    );
    let out = home.hook(
        "session-start",
        "claude",
        event(&home, "c3", "SessionStart", json!({"source": "resume"}))
            .to_string()
            .as_bytes(),
    );
    assert!(out.status.success());
    assert_eq!(state(&home, "c3"), "idle");
    // A compaction inside a turn changes nothing.
    prompt(&home, "claude", "c3");
    home.hook(
        "session-start",
        "claude",
        event(&home, "c3", "SessionStart", json!({"source": "compact"}))
            .to_string()
            .as_bytes(),
    );
    assert_eq!(state(&home, "c3"), "working");
    // Fabric gone by the session's end: the session is gone from the list all the same.
    home.fabric_stopped();
    quiet(
        &home,
        "permission-request",
        "claude",
        &permission(&home, "c3", "Bash", json!({})),
    );
    assert_eq!(state(&home, "c3"), "needs-you", "the state needs no Fabric");
    home.hook(
        "session-end",
        "claude",
        event(
            &home,
            "c3",
            "SessionEnd",
            json!({"reason": "prompt_input_exit"}),
        )
        .to_string()
        .as_bytes(),
    );
    assert!(
        status_json(&home)["sessions"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_state_event_of_a_session_we_never_recorded_writes_nothing() {
    let home = home_for("claude");
    for hook in [
        "permission-request",
        "post-tool-use",
        "notification",
        "stop-failure",
        "interrupt",
        "subagent-stop",
        "permission-result",
    ] {
        quiet(
            &home,
            hook,
            "claude",
            &permission(
                &home,
                "never",
                "Bash",
                json!({"notification_type": "permission_prompt"}),
            ),
        );
    }
    assert!(!home.cache_dir().join("sessions").exists());
}

#[test]
fn unexpected_input_changes_nothing_prints_nothing_and_is_logged_once_by_kind() {
    let home = home_for("claude");
    start(&home, "claude", "c4");
    prompt(&home, "claude", "c4");
    let before = std::fs::read(home.spool("c4").join("state.json")).unwrap();
    let mut huge = permission(&home, "c4", "Bash", json!({}));
    huge["tool_input"] = json!({"content": "x".repeat(50 * 1024 * 1024)});
    let huge = huge.to_string().into_bytes();
    let mut not_utf8 = permission(&home, "c4", "Bash", json!({}))
        .to_string()
        .into_bytes();
    not_utf8.extend_from_slice(b"\xff\xfe");
    let cases: Vec<(&str, &str, Vec<u8>)> = vec![
        ("permission-request", "too-large", huge),
        ("permission-request", "not-utf8", not_utf8),
        (
            "post-tool-use",
            "not-json",
            b"{\"session_id\": \"c4\",".to_vec(),
        ),
        (
            "permission-request",
            "no-session-id",
            json!({"tool_name": "Bash"}).to_string().into_bytes(),
        ),
        (
            "notification",
            "unknown-notification-type",
            event(
                &home,
                "c4",
                "Notification",
                json!({"notification_type": "brand_new"}),
            )
            .to_string()
            .into_bytes(),
        ),
        (
            "notification",
            "no-notification-type",
            event(&home, "c4", "Notification", json!({"message": "m"}))
                .to_string()
                .into_bytes(),
        ),
    ];
    for (hook, kind, stdin) in &cases {
        for _ in 0..2 {
            let out = home.hook(hook, "claude", stdin);
            assert_eq!(out.status.code(), Some(0), "{kind}");
            assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{kind}");
        }
        let lines = home
            .log_text()
            .lines()
            .filter(|l| l.ends_with(&format!("unexpected={kind}")))
            .count();
        assert_eq!(lines, 1, "{kind} logged once: {}", home.log_text());
    }
    assert_eq!(
        std::fs::read(home.spool("c4").join("state.json")).unwrap(),
        before,
        "no state changed"
    );
    assert_eq!(state(&home, "c4"), "working");
}

/// Every file a process opened or looked at, from `strace`.
fn files_touched(home: &Home, hook: &str, payload: &Value) -> Option<Vec<String>> {
    let trace = home.path().join("trace.txt");
    let status = std::process::Command::new("strace")
        .arg("-V")
        .output()
        .ok()?;
    if !status.status.success() {
        return None;
    }
    let mut command = home.program("strace");
    command
        .args(["-f", "-qq", "-e", "trace=%file", "-o"])
        .arg(&trace)
        .args([common::BIN, "hook", hook, "--host", "claude"]);
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success() && out.stdout.is_empty());
    let text = std::fs::read_to_string(&trace).unwrap();
    Some(
        text.lines()
            .filter_map(|line| Some(line.split('"').nth(1)?.to_string()))
            .collect(),
    )
}

#[test]
fn a_state_event_reads_only_the_session_s_spool_never_a_host_config() {
    let home = home_for("claude");
    // A person's real-sized ~/.claude.json, just rewritten (inside the config cache's window).
    let big = json!({"numStartups": 3, "mcpServers": {"fabric": {"command": "fabric-mcp"}},
                     "projects": {"p": {"history": "h".repeat(2_500_000)}}});
    start(&home, "claude", "c5");
    prompt(&home, "claude", "c5");
    write(&home.path().join(".claude.json"), &big.to_string());
    let Some(files) = files_touched(
        &home,
        "permission-request",
        &permission(&home, "c5", "Bash", json!({})),
    ) else {
        if std::env::var_os("FABRIC_REQUIRE_DESKTOP_TESTS").is_some() {
            panic!("strace is needed for this test (scripts/test.sh installs it)");
        }
        eprintln!("not run: strace is not installed");
        return;
    };
    assert_eq!(state(&home, "c5"), "needs-you");
    let home_dir = home.path().to_str().unwrap().to_string();
    let spool = home.spool("c5");
    let (cache, log) = (home.cache_dir(), home.log_path());
    let outside: Vec<&String> = files
        .iter()
        .filter(|f| f.starts_with(&home_dir))
        .map(|f| (f, std::path::Path::new(f)))
        .filter(|(_, p)| !p.starts_with(&spool) && *p != cache && *p != log)
        .map(|(f, _)| f)
        .collect();
    assert!(
        outside.is_empty(),
        "a state event looked at files outside its spool and the log: {outside:?}"
    );
    assert!(
        files
            .iter()
            .any(|f| std::path::Path::new(f).starts_with(&spool)),
        "the trace saw the spool: {files:?}"
    );
}

#[test]
fn a_special_file_at_the_state_never_blocks_a_state_event_or_status() {
    use std::os::unix::fs::FileTypeExt;
    let home = home_for("claude");
    start(&home, "claude", "c6");
    prompt(&home, "claude", "c6");
    let state_file = home.spool("c6").join("state.json");
    std::fs::remove_file(&state_file).unwrap();
    let c = std::ffi::CString::new(state_file.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let started = std::time::Instant::now();
    for hook in ["permission-request", "post-tool-use", "stop-failure"] {
        quiet(
            &home,
            hook,
            "claude",
            &permission(&home, "c6", "Bash", json!({})),
        );
    }
    let session = session_of(&home, "c6");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "blocked on the FIFO"
    );
    assert!(
        std::fs::symlink_metadata(&state_file)
            .unwrap()
            .file_type()
            .is_fifo(),
        "the FIFO was replaced"
    );
    // Read as absent: the session works as far as its prompt says.
    assert_eq!(session["state"], "working");
}
