//! The command's refusals: no registration, a session Fabric launched, a bad argument.

use super::*;

#[test]
fn refuses_without_a_session_id() {
    let home = ready_home(1);
    let stderr = refusal(&home, &["--interval", "10"], &[]);
    assert!(stderr.contains("no session id"), "{stderr}");
    let stderr = refusal(&home, &["--session-id", "../etc"], &[]);
    assert!(stderr.contains("session id is not valid"), "{stderr}");
    let stderr = refusal(&home, &[], &[("CLAUDE_CODE_SESSION_ID", "a b")]);
    assert!(stderr.contains("session id is not valid"), "{stderr}");
    assert!(home.fake.calls().is_empty());
    assert!(!home.cache_dir().join("sessions").exists());
}

#[test]
fn refuses_without_a_fabric_registration_for_the_host() {
    let home = Home::new();
    home.fabric_running(SESSION_HOOKS);
    let stderr = refusal(&home, &["--session-id", "s1"], &[]);
    assert!(
        stderr.contains("Claude Code has no `fabric` MCP server"),
        "{stderr}"
    );
    // Another host's registration does not count.
    home.register("kimi");
    let stderr = refusal(&home, &["--session-id", "s1", "--host", "codex"], &[]);
    assert!(stderr.contains("Codex has no `fabric`"), "{stderr}");
    assert!(home.fake.calls().is_empty());
}

#[test]
fn refuses_in_a_session_fabric_launched() {
    let home = ready_home(1);
    let fabric_codex_home = home.fabric_dir().join("sessions/f-1/codex");
    let markers: Vec<(&str, String)> = vec![
        ("FABRIC_LAUNCHED_SESSION", "1".into()),
        ("FABRIC_ACP_SESSION", "x".into()),
        ("FABRIC_BRIDGE_URL", "x".into()),
        ("KILO_CONFIG_CONTENT", "x".into()),
        ("CODEX_HOME", fabric_codex_home.to_str().unwrap().into()),
    ];
    for (name, value) in &markers {
        let stderr = refusal(&home, &["--session-id", "s1"], &[(name, value)]);
        assert!(stderr.contains("launched by Fabric"), "{name}: {stderr}");
    }
    let stderr = refusal(
        &home,
        &["--session-id", "s1"],
        &[("CLAUDE_CODE_SESSION_KIND", "bg")],
    );
    assert!(stderr.contains("background job"), "{stderr}");
    assert!(home.fake.calls().is_empty());
    // `0` is not the marker: that one starts (and is stopped at once).
    let mut home = home;
    home.extra_env
        .push(("FABRIC_LAUNCHED_SESSION".into(), "0".into()));
    let running = Running::start(&home, &["--session-id", "s1"]);
    assert_eq!(
        running.line(FIRST_LINE),
        "1 unread on the project board — com.list"
    );
    running.stop();
}
