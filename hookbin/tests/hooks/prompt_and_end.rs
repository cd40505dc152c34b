//! UserPromptSubmit (one line only when the count rises; Kimi Code's preamble on its first
//! prompt) and SessionEnd (released, observed, the spool removed).

use super::*;

pub(super) fn set_board(home: &Home, session: &str, unread: u64) {
    write(
        &home.spool(session).join("board.json"),
        &format!(r#"{{"unread":{unread},"state":"ready","observedAt":"2026-12-02T10:00:00Z"}}"#),
    );
}

#[test]
fn user_prompt_submit_says_one_line_only_when_the_count_rises() {
    let home = Home::new();
    let payload = home.payload("s1", "UserPromptSubmit");
    // No spool: nothing.
    let out = home.hook("user-prompt-submit", "claude", &payload);
    assert!(out.status.success() && out.stdout.is_empty());
    let steps = [
        (3, Some("3 unread on the project board — com.list")),
        (3, None),
        (1, None),
        (2, Some("2 unread on the project board — com.list")),
        (0, None),
        (0, None),
    ];
    for (unread, expected) in steps {
        set_board(&home, "s1", unread);
        let out = home.hook("user-prompt-submit", "claude", &payload);
        match expected {
            Some(line) => assert_eq!(claude_context(&out, "UserPromptSubmit"), line),
            None => assert_eq!(stdout(&out), "", "unread {unread}"),
        }
        let shown = std::fs::read_to_string(home.spool("s1").join("board.shown")).unwrap();
        assert_eq!(shown.trim(), unread.to_string());
    }
    set_board(&home, "s1", 9);
    let out = home.hook("user-prompt-submit", "codex", &payload);
    assert_eq!(stdout(&out), "9 unread on the project board — com.list\n");
    assert!(!home.log_text().contains("PROMPT"));
}

#[test]
fn kimi_gets_the_preamble_once_on_its_first_prompt() {
    let home = Home::new();
    home.register("kimi");
    home.fabric_running(&[]);
    let payload = home.payload("k1", "UserPromptSubmit");
    let first = stdout(&home.hook("user-prompt-submit", "kimi", &payload));
    assert!(
        first.starts_with("Fabric is running") && first.contains("fabric_whoami"),
        "{first}"
    );
    let second = stdout(&home.hook("user-prompt-submit", "kimi", &payload));
    assert_eq!(second, "");
    // Claude and Codex never get it on a prompt.
    home.register("claude");
    let claude = stdout(&home.hook(
        "user-prompt-submit",
        "claude",
        &home.payload("c1", "UserPromptSubmit"),
    ));
    assert_eq!(claude, "");
}

// ---- SessionEnd ---------------------------------------------------------------------------

#[test]
fn session_end_releases_observes_the_end_and_removes_the_spool() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    home.hook(
        "session-start",
        "claude",
        &home.payload("s1", "SessionStart"),
    );
    assert!(home.spool("s1").join("session.json").exists());
    let out = home.hook("session-end", "claude", &home.payload("s1", "SessionEnd"));
    assert!(out.status.success() && out.stdout.is_empty());
    wait_until("spool removed", WORKER_WAIT, || !home.spool("s1").exists());
    let calls: Vec<_> = home
        .fake
        .calls()
        .into_iter()
        .filter(|c| c["event"] == "call")
        .collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0]["tool"], "fabric_work_release");
    assert_eq!(calls[0]["arguments"]["claims"], "session");
    assert_eq!(calls[0]["arguments"]["outcome"], "let-go");
    assert_eq!(calls[0]["arguments"]["reason"], "prompt_input_exit");
    assert!(calls[0]["arguments"]["idempotencyKey"].is_string());
    assert_eq!(calls[1]["tool"], "fabric_session_observe");
    assert_eq!(calls[1]["arguments"]["event"], "end");
    assert_eq!(calls[1]["arguments"]["reason"], "prompt_input_exit");
}

#[test]
fn session_end_without_session_hooks_does_nothing() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(&[]);
    home.hook("session-end", "claude", &home.payload("s1", "SessionEnd"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(!home.spool("s1").exists());
    assert!(home.fake.calls().is_empty());
}
