//! Stop and the detached worker: nothing without session hooks, the turn observed and the
//! unread count kept, board readings, a crashing or hanging stand-in, fifty concurrent stops.

use super::*;

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
