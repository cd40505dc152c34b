//! `fabric-session status` and `status --json`, run as the real binary in a temporary HOME.

mod common;

use common::{Home, stdout, write};

fn status_json(home: &Home) -> serde_json::Value {
    let out = home.command(&["status", "--json"]).output().unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn fabric_down_and_nothing_wired() {
    let home = Home::new();
    let out = home.command(&["status"]).output().unwrap();
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("Fabric: down (no hub.json)"), "{text}");
    assert!(text.contains("Session hooks: inert"), "{text}");
    assert!(
        text.contains("Claude Code: fabric not registered; hooks not installed"),
        "{text}"
    );
    assert!(text.contains("Live sessions: none"), "{text}");
    let json = status_json(&home);
    assert_eq!(json["schema"], "fabric-session-status/1");
    assert_eq!(json["fabric"]["state"], "down");
    assert_eq!(json["fabric"]["downReason"], "no hub.json");
    assert_eq!(json["sessionHooks"], "inert");
    assert_eq!(json["hosts"].as_array().unwrap().len(), 3);
    assert_eq!(json["services"]["descriptors"], 0);
}

#[test]
fn running_with_features_registrations_hooks_and_live_sessions_only() {
    let home = Home::new();
    home.fabric_running(&["session-hooks/1"]);
    home.register("codex");
    fabric_fake::write_service(&home.services_dir(), "a", "one", "http://127.0.0.1:5").unwrap();
    // Install the Codex hook through the real installer.
    let plan = home
        .command(&[
            "install-host-hooks",
            "--host",
            "codex",
            "--json",
            "--script",
            "/opt/fabric/fabric-session",
        ])
        .output()
        .unwrap();
    assert!(
        plan.status.success(),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    let digest = plan["digest"].as_str().unwrap();
    let apply = home
        .command(&[
            "install-host-hooks",
            "--host",
            "codex",
            "--script",
            "/opt/fabric/fabric-session",
            "--apply",
            "--expect-sha256",
            digest,
        ])
        .output()
        .unwrap();
    assert!(
        apply.status.success(),
        "{}",
        String::from_utf8_lossy(&apply.stderr)
    );
    // One live session (this test process is its host) and one whose host is gone.
    home.hook(
        "session-start",
        "codex",
        &home.payload("live-1", "SessionStart"),
    );
    write(
        &home.spool("gone-1").join("session.json"),
        r#"{"host":"claude","project":"old","startedAt":"2026-01-01T00:00:00Z","hostPid":4194304}"#,
    );
    let json = status_json(&home);
    assert_eq!(json["fabric"]["state"], "running");
    assert_eq!(json["fabric"]["features"][0], "session-hooks/1");
    assert_eq!(json["sessionHooks"], "active");
    let codex = &json["hosts"][1];
    assert_eq!(codex["host"], "codex");
    assert_eq!(codex["fabricRegistered"], true);
    assert_eq!(codex["scopes"][0], "user");
    // The program does not exist: installed with a stale path.
    assert_eq!(codex["hooks"]["state"], "stale");
    assert_eq!(codex["hooks"]["commandPath"], "/opt/fabric/fabric-session");
    assert_eq!(json["services"]["descriptors"], 1);
    assert_eq!(json["services"]["local"], 1);
    let sessions = json["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["id"], "live-1");
    assert_eq!(sessions[0]["host"], "codex");
    assert!(sessions[0]["board"].is_null());
    let text = stdout(&home.command(&["status"]).output().unwrap());
    assert!(
        text.contains("Codex: fabric registered (user); hooks installed with a stale path"),
        "{text}"
    );
    assert!(
        text.contains("my-project · codex · unread unknown · idle (live-1)"),
        "{text}"
    );
}
