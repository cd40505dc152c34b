//! What never happens: bad stdin breaking a hook, unreadable files breaking one, the log
//! growing without bound or readable by others, the door token opened.

use super::*;

#[test]
fn bad_stdin_exits_zero_silently_on_every_hook() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    let huge = vec![b'x'; 12 * 1024 * 1024];
    let inputs: Vec<&[u8]> = vec![
        b"",
        b"garbage",
        b"[1,2,3]",
        b"{\"session_id\": 42}",
        b"\xff\xfe",
        &huge,
    ];
    for input in inputs {
        for event in ["session-start", "stop", "user-prompt-submit", "session-end"] {
            for host in ["claude", "codex", "kimi"] {
                let out = home.hook(event, host, input);
                assert_eq!(out.status.code(), Some(0), "{event} {host}");
                assert!(
                    out.stdout.is_empty() && out.stderr.is_empty(),
                    "{event} {host}"
                );
            }
        }
    }
    // Unknown events and flags are swallowed too.
    for args in [
        &["hook", "nonsense"][..],
        &["hook", "stop", "--host", "vim"],
        &["hook"],
    ] {
        let out = home.command(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stdout.is_empty() && out.stderr.is_empty());
    }
    // A session id that is not a safe folder name writes nothing.
    let evil = br#"{"session_id":"../../escape","cwd":"/tmp"}"#;
    home.hook("stop", "claude", evil);
    assert!(!home.path().join(".cache/escape").exists());
    assert!(!home.cache_dir().join("sessions").exists());
}

#[test]
fn unreadable_files_never_break_a_hook() {
    let home = Home::new();
    // Folders where files should be: every read fails.
    for path in [".claude.json", ".codex/config.toml", ".kimi-code/mcp.json"] {
        std::fs::create_dir_all(home.path().join(path)).unwrap();
    }
    std::fs::create_dir_all(home.fabric_dir().join("hub.json")).unwrap();
    std::fs::create_dir_all(home.cache_dir().join("hooks.log")).unwrap();
    for event in ["session-start", "stop", "user-prompt-submit", "session-end"] {
        for host in ["claude", "codex", "kimi"] {
            let out = home.hook(event, host, &home.payload("s1", "X"));
            assert_eq!(out.status.code(), Some(0));
            assert!(out.stderr.is_empty());
        }
    }
    // A cache folder that cannot be created (a file in its place) is fine as well.
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    write(&home.path().join(".cache"), "not a folder");
    let out = home.hook("session-start", "claude", &home.payload("s1", "X"));
    assert_eq!(out.status.code(), Some(0));
    assert!(claude_context(&out, "SessionStart").contains("fabric_whoami"));
    let out = home.hook("stop", "claude", &home.payload("s1", "X"));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn log_is_private_and_rotates_at_one_megabyte() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(&[]);
    write(&home.log_path(), &"x".repeat(1024 * 1024 - 10));
    home.hook(
        "session-start",
        "claude",
        &home.payload("s1", "SessionStart"),
    );
    let rotated = home.cache_dir().join("hooks.log.1");
    assert_eq!(std::fs::metadata(&rotated).unwrap().len(), 1024 * 1024 - 10);
    let log = home.log_text();
    assert_eq!(log.lines().count(), 1);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(home.log_path())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn the_door_token_is_never_opened() {
    // The token file is a FIFO: opening it for reading would block the hook forever.
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    let token = home.fabric_dir().join("hub-door-token");
    let status = std::process::Command::new("mkfifo")
        .arg(&token)
        .status()
        .unwrap();
    assert!(status.success());
    for event in ["session-start", "stop", "user-prompt-submit", "session-end"] {
        let out = home.hook(event, "claude", &home.payload("s1", "X"));
        assert!(out.status.success());
    }
    home.fabric_stopped();
}
