//! Silence: in sessions Fabric launched, in background jobs, under an ancestor running with
//! Fabric's MCP config.

use super::prompt_and_end::set_board;
use super::*;

#[test]
fn silent_in_sessions_fabric_launched_and_in_background_jobs() {
    let home = Home::new();
    home.register("claude");
    home.register("codex");
    home.fabric_running(SESSION_HOOKS);
    fabric_fake::write_service(&home.services_dir(), "a", "b", "http://127.0.0.1:1").unwrap();
    let sessions = home.fabric_dir().join("sessions/abc");
    let markers: Vec<(&str, String)> = vec![
        ("FABRIC_LAUNCHED_SESSION", "1".into()),
        ("FABRIC_ACP_SESSION", "x".into()),
        ("FABRIC_BRIDGE_URL", "x".into()),
        ("KILO_CONFIG_CONTENT", "{}".into()),
        ("CLAUDE_CODE_SESSION_KIND", "background".into()),
        ("CODEX_HOME", sessions.to_str().unwrap().into()),
    ];
    for (name, value) in &markers {
        for event in ["session-start", "stop", "user-prompt-submit", "session-end"] {
            set_board(&home, "s1", 5);
            let _ = std::fs::remove_file(home.spool("s1").join("board.shown"));
            let out = home.hook_with(event, "claude", &home.payload("s1", "X"), |c| {
                c.env(name, value);
            });
            assert!(out.status.success());
            assert_eq!(stdout(&out), "", "{name} {event}");
        }
    }
    assert!(!home.log_path().exists(), "{}", home.log_text());
    assert!(home.fake.calls().is_empty());
    // FABRIC_LAUNCHED_SESSION=0 is not the marker.
    let out = home.hook_with("session-start", "claude", &home.payload("s1", "X"), |c| {
        c.env("FABRIC_LAUNCHED_SESSION", "0");
    });
    assert!(claude_context(&out, "SessionStart").contains("fabric_whoami"));
}

#[test]
fn silent_when_an_ancestor_runs_with_fabrics_mcp_config() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(&[]);
    let config = home.fabric_dir().join("sessions/s-9/mcp.json");
    let payload_file = home.path().join("payload.json");
    std::fs::write(&payload_file, home.payload("s1", "SessionStart")).unwrap();
    let run = |config_arg: &str| {
        let script = format!(
            "{} hook session-start < {}; true",
            common::BIN,
            payload_file.display()
        );
        let mut command = std::process::Command::new("bash");
        command
            .args(["-c", &script, "claude", "--mcp-config", config_arg])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", home.path())
            .env("XDG_CACHE_HOME", home.path().join(".cache"))
            .env("XDG_DATA_HOME", home.path().join(".local/share"));
        command.output().unwrap()
    };
    let launched = run(config.to_str().unwrap());
    assert!(launched.status.success());
    assert_eq!(stdout(&launched), "");
    let ordinary = run("/tmp/some-other/mcp.json");
    assert!(stdout(&ordinary).contains("fabric_whoami"));
}
