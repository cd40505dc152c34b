//! The four hooks, run as the real binary in a temporary HOME against the Fabric stand-in:
//! every row of the seed's tables, each host, and every "never".
#![cfg(unix)] // the temporary home is given by HOME and XDG variables, which Windows does not read

mod common;

use std::time::Duration;

use common::{Home, claude_context, stdout, wait_until, write};

const SESSION_HOOKS: &[&str] = &["session-hooks/1"];
const WORKER_WAIT: Duration = Duration::from_secs(30);

// ---- SessionStart -------------------------------------------------------------------------

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

// ---- Stop and the worker -----------------------------------------------------------------

#[test]
fn stop_without_session_hooks_writes_nothing_and_calls_nothing() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(&[]);
    let out = home.hook("stop", "claude", &home.payload("s1", "Stop"));
    assert!(out.status.success() && out.stdout.is_empty());
    std::thread::sleep(Duration::from_millis(300));
    assert!(!home.spool("s1").exists());
    assert!(home.fake.calls().is_empty());
    assert!(!home.log_path().exists());
}

#[test]
fn stop_observes_the_turn_and_keeps_the_unread_count() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    home.fake.set_unread(4);
    // A real repository with one commit, one modified file and one untracked file.
    let project = home.project();
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(&project)
            .env("HOME", home.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    write(&project.join("a.txt"), "one\ntwo\n");
    git(&["add", "a.txt"]);
    git(&["commit", "-q", "-m", "first"]);
    write(&project.join("a.txt"), "one\nTWO\nthree\n");
    write(&project.join("new.txt"), "fresh\n");

    let out = home.hook("stop", "claude", &home.payload("s1", "Stop"));
    assert!(out.status.success() && out.stdout.is_empty());
    let board_path = home.spool("s1").join("board.json");
    wait_until("board.json", WORKER_WAIT, || board_path.exists());
    let board: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&board_path).unwrap()).unwrap();
    assert_eq!(board["unread"], 4);
    assert_eq!(board["state"], "ready");
    assert!(board["observedAt"].is_string());

    let observe = home.fake.tool_calls("fabric_session_observe");
    assert_eq!(observe.len(), 1);
    let args = &observe[0]["arguments"];
    assert_eq!(args["event"], "turn");
    assert_eq!(args["runtime"], "claude-code");
    assert_eq!(args["runtimeSessionId"], "s1");
    assert_eq!(args["head"].as_str().unwrap().len(), 40);
    assert_eq!(args["filesChanged"], 2);
    assert_eq!(args["linesAdded"], 2);
    assert_eq!(args["linesRemoved"], 1);
    assert!(
        args["idempotencyKey"]
            .as_str()
            .unwrap()
            .starts_with("fs-turn-1-")
    );
    let argv: Vec<String> = serde_json::from_value(observe[0]["argv"].clone()).unwrap();
    assert_eq!(
        argv,
        [
            "--runner",
            "claude-code",
            "--rejoin-only",
            "--runtime-session-id",
            "s1"
        ]
    );
    assert_eq!(home.fake.tool_calls("com.status").len(), 1);
    wait_until("log lines", WORKER_WAIT, || {
        home.log_text().contains(" status ")
    });
    let log = home.log_text();
    assert!(log.contains(" stop claude s1 ok turn=1"), "{log}");
    assert!(log.contains(" observe-turn claude s1 ok turn=1"), "{log}");
    assert!(
        log.contains(" status claude s1 ok unread=4 board=ready"),
        "{log}"
    );
    // Nothing the person wrote and no branch or path reaches the log.
    assert!(!log.contains("PROMPT") && !log.contains("my-project") && !log.contains("a.txt"));
    // status --json lists the live session with its count and the turn's numbers.
    let status = home.command(&["status", "--json"]).output().unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let session = &status["sessions"][0];
    assert_eq!(session["id"], "s1");
    assert_eq!(session["project"], "my-project");
    assert_eq!(session["board"]["unread"], 4);
    assert_eq!(session["lastTurn"]["seq"], 1);
    assert_eq!(session["lastTurn"]["filesChanged"], 2);
    assert_eq!(session["lastTurn"]["linesAdded"], 2);
    assert_eq!(session["lastTurn"]["linesRemoved"], 1);
    assert_eq!(status["sessionHooks"], "active");
}

#[test]
fn stop_outside_a_repository_sends_null_fields() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    home.hook("stop", "claude", &home.payload("s1", "Stop"));
    wait_until("observe", WORKER_WAIT, || {
        !home.fake.tool_calls("com.status").is_empty()
    });
    let args = &home.fake.tool_calls("fabric_session_observe")[0]["arguments"];
    for field in ["head", "filesChanged", "linesAdded", "linesRemoved"] {
        assert!(args[field].is_null(), "{field}: {args}");
    }
}

#[test]
fn board_readings_degraded_counts_unavailable_and_refusal_never_zero() {
    for (mode, expect_board) in [
        ("degraded", Some("degraded")),
        ("unavailable", None),
        ("refusal", None),
    ] {
        let home = Home::new();
        home.register("claude");
        home.fabric_running(SESSION_HOOKS);
        home.fake.set_mode(mode);
        home.fake.set_unread(6);
        home.hook("stop", "claude", &home.payload("s1", "Stop"));
        wait_until("status line in log", WORKER_WAIT, || {
            home.log_text().contains(" status ")
        });
        let board_path = home.spool("s1").join("board.json");
        match expect_board {
            Some(state) => {
                let board: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(&board_path).unwrap()).unwrap();
                assert_eq!(board["unread"], 6);
                assert_eq!(board["state"], state);
            }
            None => assert!(!board_path.exists(), "{mode}: no count may be written"),
        }
        if mode == "refusal" {
            let log = home.log_text();
            assert!(
                log.contains(" observe-turn claude s1 refused not_available"),
                "{log}"
            );
            assert!(
                log.contains(" status claude s1 refused not_available"),
                "{log}"
            );
        }
    }
}

#[test]
fn worker_against_a_crashing_stand_in_logs_unknown() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    home.fake.set_mode("crash");
    home.hook("stop", "claude", &home.payload("s1", "Stop"));
    wait_until("outcome=unknown", WORKER_WAIT, || {
        home.log_text().contains("outcome=unknown")
    });
    assert!(!home.spool("s1").join("board.json").exists());
}

#[test]
fn worker_against_a_hanging_stand_in_kills_and_reaps_it_at_the_deadline() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    home.fake.set_mode("hang");
    home.hook("stop", "claude", &home.payload("s1", "Stop"));
    wait_until("the stand-in to start", WORKER_WAIT, || {
        !home.fake.calls().is_empty()
    });
    let pid = home.fake.calls()[0]["pid"].as_u64().unwrap();
    wait_until("outcome=unknown", WORKER_WAIT, || {
        home.log_text().contains("outcome=unknown")
    });
    let log = home.log_text();
    assert!(
        log.contains(" observe-turn claude s1 outcome=unknown"),
        "{log}"
    );
    // Killed and reaped: no process, not even a zombie, is left with that pid.
    wait_until("the stand-in to be gone", Duration::from_secs(5), || {
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
    });
    assert!(!home.spool("s1").join("board.json").exists());
}

#[test]
fn fifty_concurrent_stops_lose_and_tear_nothing() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    std::thread::scope(|scope| {
        for _ in 0..50 {
            scope.spawn(|| {
                let out = home.hook("stop", "claude", &home.payload("s1", "Stop"));
                assert!(out.status.success());
            });
        }
    });
    let turns = std::fs::read_to_string(home.spool("s1").join("turns.jsonl")).unwrap();
    let mut seqs: Vec<u64> = turns
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    seqs.sort();
    assert_eq!(seqs, (1..=50).collect::<Vec<_>>());
    // One more turn keeps the cap at 50.
    home.hook("stop", "claude", &home.payload("s1", "Stop"));
    let turns = std::fs::read_to_string(home.spool("s1").join("turns.jsonl")).unwrap();
    assert_eq!(turns.lines().count(), 50);
    // Every turn is observed exactly once, with its own key.
    wait_until("51 observations", WORKER_WAIT * 2, || {
        home.fake.tool_calls("fabric_session_observe").len() >= 51
    });
    std::thread::sleep(Duration::from_millis(500));
    let keys: std::collections::BTreeSet<String> = home
        .fake
        .tool_calls("fabric_session_observe")
        .iter()
        .map(|c| {
            c["arguments"]["idempotencyKey"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(keys.len(), 51);
    assert_eq!(home.fake.tool_calls("fabric_session_observe").len(), 51);
    assert_eq!(
        home.log_text()
            .lines()
            .filter(|l| l.contains(" stop claude s1 ok"))
            .count(),
        51
    );
}

// ---- UserPromptSubmit ---------------------------------------------------------------------

fn set_board(home: &Home, session: &str, unread: u64) {
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

// ---- Silence ------------------------------------------------------------------------------

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

// ---- Never --------------------------------------------------------------------------------

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
