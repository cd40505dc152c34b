//! SessionStart: the preamble where Fabric is registered and running, the scopes it is found
//! in, each host's form of answer, a resumed session, the host's pid, Fabric down, the services
//! line, the session recorded and stale ones pruned.

use super::*;

#[test]
fn session_start_not_registered_says_nothing_and_writes_nothing() {
    let home = Home::new();
    home.fabric_running(SESSION_HOOKS);
    for host in ["claude", "codex", "kimi"] {
        let out = home.hook("session-start", host, &home.payload("s1", "SessionStart"));
        assert!(out.status.success());
        assert_eq!(stdout(&out), "", "{host}");
        assert!(out.stderr.is_empty());
    }
    assert!(!home.log_path().exists());
    assert!(!home.cache_dir().join("sessions").exists());
}

#[test]
fn session_start_registered_and_running_gives_claude_the_preamble_as_json() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(&[]);
    let out = home.hook(
        "session-start",
        "claude",
        &home.payload("s1", "SessionStart"),
    );
    assert!(out.status.success());
    let context = claude_context(&out, "SessionStart");
    assert!(context.starts_with("Fabric is running"), "{context}");
    assert!(context.contains("http://127.0.0.1:47070"));
    let whoami = context.find("fabric_whoami").unwrap();
    let submit = context.find("com.submit").unwrap();
    assert!(
        whoami < context.find("com.status").unwrap()
            && context.find("fabric_work_release").unwrap() < submit
    );
    let log = home.log_text();
    assert!(
        log.contains(" session-start claude s1 ok preamble"),
        "{log}"
    );
    assert!(!log.contains("PROMPT-CONTENT"));
    // Without session-hooks/1 nothing is recorded.
    assert!(!home.spool("s1").exists());
}

#[test]
fn session_start_finds_local_and_project_scopes() {
    let home = Home::new();
    home.fabric_running(&[]);
    let project = home.project();
    let local = serde_json::json!({"projects": {project.to_str().unwrap(): {"mcpServers": {"fabric": {}}}}});
    write(&home.path().join(".claude.json"), &local.to_string());
    let out = home.hook(
        "session-start",
        "claude",
        &home.payload("s1", "SessionStart"),
    );
    assert!(claude_context(&out, "SessionStart").contains("fabric_whoami"));

    let home = Home::new();
    home.fabric_running(&[]);
    write(
        &home.project().join(".mcp.json"),
        r#"{"mcpServers":{"fabric":{"command":"x"}}}"#,
    );
    let out = home.hook(
        "session-start",
        "claude",
        &home.payload("s1", "SessionStart"),
    );
    assert!(claude_context(&out, "SessionStart").contains("fabric_whoami"));
    // Another project's registration does not count.
    let out = home.hook_with(
        "session-start",
        "claude",
        br#"{"session_id":"s2","cwd":"/elsewhere"}"#,
        |_| {},
    );
    assert_eq!(stdout(&out), "");
}

#[test]
fn session_start_codex_gets_plain_text_and_kimi_nothing() {
    let home = Home::new();
    home.fabric_running(&[]);
    home.register("codex");
    home.register("kimi");
    let out = home.hook(
        "session-start",
        "codex",
        &home.payload("s1", "SessionStart"),
    );
    let text = stdout(&out);
    assert!(text.starts_with("Fabric is running"), "{text}");
    assert!(serde_json::from_str::<serde_json::Value>(&text).is_err());
    // Kimi Code shows SessionStart output to no one: the preamble waits for the first prompt.
    let out = home.hook("session-start", "kimi", &home.payload("k1", "SessionStart"));
    assert!(out.status.success());
    assert_eq!(stdout(&out), "");
    let first = home.hook(
        "user-prompt-submit",
        "kimi",
        &home.payload("k1", "UserPromptSubmit"),
    );
    assert!(stdout(&first).contains("fabric_whoami"));
    // Kimi's project-scope file counts too.
    let home = Home::new();
    home.fabric_running(&[]);
    write(
        &home.project().join(".kimi-code/mcp.json"),
        r#"{"mcpServers":{"fabric":{}}}"#,
    );
    let out = home.hook(
        "user-prompt-submit",
        "kimi",
        &home.payload("s1", "UserPromptSubmit"),
    );
    assert!(stdout(&out).contains("fabric_whoami"));
}

#[test]
fn a_resumed_session_is_told_again_only_where_the_host_forgets() {
    let home = Home::new();
    home.fabric_running(SESSION_HOOKS);
    for host in ["claude", "codex", "kimi"] {
        home.register(host);
    }
    let with_source = |id: &str, source: &str| {
        let mut payload: serde_json::Value =
            serde_json::from_slice(&home.payload(id, "SessionStart")).unwrap();
        payload["source"] = source.into();
        payload.to_string().into_bytes()
    };
    let resume = |id: &str| with_source(id, "resume");
    // Claude Code does not replay SessionStart context on --resume: it is said again.
    let out = home.hook("session-start", "claude", &resume("c1"));
    assert!(claude_context(&out, "SessionStart").contains("fabric_whoami"));
    // Codex keeps it in the thread: recorded, nothing said.
    let out = home.hook("session-start", "codex", &resume("x1"));
    assert!(out.status.success());
    assert_eq!(stdout(&out), "");
    assert!(home.spool("x1").join("session.json").is_file());
    assert!(
        home.log_text().contains("resumed-quiet"),
        "{}",
        home.log_text()
    );
    // /clear wipes the context: said again.
    let clear = with_source("x1", "clear");
    assert!(stdout(&home.hook("session-start", "codex", &clear)).contains("fabric_whoami"));
    // Kimi Code keeps the first prompt's text: a resumed session's prompt does not bring it.
    let out = home.hook("session-start", "kimi", &resume("k9"));
    assert_eq!(stdout(&out), "");
    let prompt = home.hook(
        "user-prompt-submit",
        "kimi",
        &home.payload("k9", "UserPromptSubmit"),
    );
    assert_eq!(stdout(&prompt), "");
}

#[test]
fn claude_pid_names_the_host_process() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    // A live process that is not our parent: only CLAUDE_PID can name it.
    let mut host = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = host.id();
    let out = home.hook_with(
        "session-start",
        "claude",
        &home.payload("p1", "SessionStart"),
        |command| {
            command.env("CLAUDE_PID", pid.to_string());
        },
    );
    assert!(out.status.success());
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(home.spool("p1").join("session.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(record["hostPid"], pid, "{record}");
    // Another host ignores it (an inherited variable); a dead pid falls back to the walk.
    home.register("codex");
    let out = home.hook_with(
        "session-start",
        "codex",
        &home.payload("p2", "SessionStart"),
        |command| {
            command.env("CLAUDE_PID", pid.to_string());
        },
    );
    assert!(out.status.success());
    let _ = host.kill();
    let _ = host.wait();
    let codex: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(home.spool("p2").join("session.json")).unwrap(),
    )
    .unwrap();
    assert_ne!(codex["hostPid"], pid);
    let out = home.hook_with(
        "session-start",
        "claude",
        &home.payload("p3", "SessionStart"),
        |command| {
            command.env("CLAUDE_PID", pid.to_string());
        },
    );
    assert!(out.status.success());
    let walked: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(home.spool("p3").join("session.json")).unwrap(),
    )
    .unwrap();
    assert_ne!(walked["hostPid"], pid, "a dead CLAUDE_PID is not the host");
}

#[test]
fn session_start_fabric_down_says_exactly_one_line() {
    let home = Home::new();
    home.register("claude");
    // No hub.json, a garbage one, another protocol, a dead pid: all down.
    let cases: Vec<Option<String>> = vec![
        None,
        Some("{garbage".into()),
        Some(r#"{"protocol":"fabric-hub/9.9","origin":"http://127.0.0.1:1","pid":1}"#.into()),
        Some(r#"{"protocol":"fabric-hub/0.1","origin":"http://127.0.0.1:1","pid":4194304}"#.into()),
    ];
    for hub in cases {
        let hub_path = home.fabric_dir().join("hub.json");
        let _ = std::fs::remove_file(&hub_path);
        if let Some(text) = &hub {
            write(&hub_path, text);
        }
        let out = home.hook(
            "session-start",
            "claude",
            &home.payload("s1", "SessionStart"),
        );
        let context = claude_context(&out, "SessionStart");
        assert_eq!(context.lines().count(), 1, "{hub:?}: {context}");
        assert!(
            context.contains("not running") && context.contains("start the Fabric app"),
            "{context}"
        );
    }
}

#[test]
fn session_start_services_line_on_any_host_hidden_files_not_counted() {
    let home = Home::new();
    let services = home.services_dir();
    fabric_fake::write_service(&services, "analytics", "main", "http://127.0.0.1:4100").unwrap();
    fabric_fake::write_service(&services, "search", "one", "https://search.example.test").unwrap();
    write(&services.join(".hidden.json"), "{}");
    write(&services.join("README.txt"), "x");
    for host in ["claude", "codex", "kimi"] {
        // Kimi Code shows no SessionStart output: the line rides on the first prompt.
        let out = if host == "kimi" {
            home.hook(
                "user-prompt-submit",
                host,
                &home.payload("s1", "UserPromptSubmit"),
            )
        } else {
            home.hook("session-start", host, &home.payload("s1", "SessionStart"))
        };
        let text = if host == "claude" {
            claude_context(&out, "SessionStart")
        } else {
            stdout(&out)
        };
        assert_eq!(text.trim_end().lines().count(), 1, "{host}: {text}");
        assert!(text.contains("2 Fabric service descriptors"), "{text}");
        assert!(text.contains("1 on 127.0.0.1"), "{text}");
        assert!(text.contains(services.to_str().unwrap()));
        assert!(
            text.contains("/.well-known/fabric-service") && text.contains("never stop or kill")
        );
    }
    // $FABRIC_SERVICES_DIR moves the folder.
    let mut home = home;
    let other = home.path().join("elsewhere-services");
    fabric_fake::write_service(&other, "only", "one", "http://127.0.0.1:9").unwrap();
    home.extra_env
        .push(("FABRIC_SERVICES_DIR".into(), other.to_str().unwrap().into()));
    let out = home.hook(
        "session-start",
        "codex",
        &home.payload("s1", "SessionStart"),
    );
    assert!(
        stdout(&out).contains("1 Fabric service descriptor "),
        "{}",
        stdout(&out)
    );
}

#[test]
fn session_start_with_session_hooks_records_the_session_and_prunes_stale_ones() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    // A stale spool: its host pid is gone.
    let stale = home.spool("old-session");
    write(
        &stale.join("session.json"),
        r#"{"host":"claude","project":"x","startedAt":"2026-01-01T00:00:00Z","hostPid":4194304}"#,
    );
    let out = home.hook(
        "session-start",
        "claude",
        &home.payload("s1", "SessionStart"),
    );
    assert!(out.status.success());
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.spool("s1").join("session.json")).unwrap())
            .unwrap();
    assert_eq!(record["host"], "claude");
    assert_eq!(record["project"], "my-project");
    assert_eq!(record["hostPid"], std::process::id());
    assert!(record["startedAt"].as_str().unwrap().ends_with('Z'));
    assert!(!stale.exists(), "stale spool pruned");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(home.spool("s1"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o700);
}
