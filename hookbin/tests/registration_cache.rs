//! A person's real-sized `~/.claude.json` (megabytes: every project with its history) and
//! Codex's `config.toml`, through the real binary: the hooks answer from the cached verdict
//! while the file is unchanged, and never from it after an edit (even one that keeps the size
//! and the modification time), a replace, a file that goes, or a file that appears.

mod common;

use std::fs::File;
use std::path::Path;
use std::time::{Duration, SystemTime};

use common::{Home, claude_context, stdout, write};

/// A `.claude.json` like a person's after months: `projects` projects, each with `history`
/// prompt entries, and `fabric` at user scope when `user`, at local scope for `local`.
fn claude_state(projects: usize, history: usize, user: bool, local: Option<&Path>) -> String {
    let mut all = serde_json::Map::new();
    for p in 0..projects {
        let entries: Vec<serde_json::Value> = (0..history)
            .map(|h| {
                serde_json::json!({
                    "display": format!("please refactor module {h} of project {p} and keep the {{braces}} and \"quotes\" intact, then run the tests again"),
                    "pastedContents": {}
                })
            })
            .collect();
        all.insert(
            format!("/home/someone/src/project-{p:03}"),
            serde_json::json!({
                "allowedTools": [], "history": entries, "mcpServers": {"other": {"command": "x"}},
                "hasTrustDialogAccepted": true, "lastCost": 0.42
            }),
        );
    }
    if let Some(local) = local {
        all.insert(
            local.to_str().unwrap().to_string(),
            serde_json::json!({"mcpServers": {"fabric": {"command": "fabric-mcp"}}}),
        );
    }
    let servers = if user {
        serde_json::json!({"fabric": {"command": "fabric-mcp"}})
    } else {
        serde_json::json!({"fabriX": {"command": "fabric-mcp"}})
    };
    serde_json::json!({"numStartups": 42, "projects": all, "mcpServers": servers}).to_string()
}

fn set_mtime(path: &Path, at: SystemTime) {
    File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(at)
        .unwrap();
}

fn briefed(home: &Home) -> bool {
    let out = home.hook(
        "session-start",
        "claude",
        &home.payload("s1", "SessionStart"),
    );
    !stdout(&out).is_empty() && claude_context(&out, "SessionStart").contains("fabric_whoami")
}

fn cache_file(home: &Home) -> std::path::PathBuf {
    home.cache_dir().join("config-verdicts.json")
}

/// Waits out the racy window after the file's last change, so its verdict may be cached.
fn let_it_settle() {
    std::thread::sleep(Duration::from_millis(2_100));
}

#[test]
fn a_cached_registration_is_never_served_after_an_edit_a_replace_or_a_removal() {
    let home = Home::new();
    home.fabric_running(&[]);
    let state = home.path().join(".claude.json");
    let text = claude_state(400, 40, true, None);
    assert!(text.len() > 2_000_000, "real-sized: {} bytes", text.len());
    write(&state, &text);
    let_it_settle();

    assert!(briefed(&home), "registered at user scope");
    let cached = std::fs::read_to_string(cache_file(&home)).expect("the verdict was cached");
    assert!(
        !cached.contains("project-"),
        "no path of the person's: {cached}"
    );
    assert!(briefed(&home), "served from the cache");

    // An edit in place: same size, the old modification time put back.
    let mtime = std::fs::metadata(&state).unwrap().modified().unwrap();
    let edited = text.replacen("\"fabric\":{\"command\"", "\"fabriX\":{\"command\"", 1);
    assert_eq!(edited.len(), text.len());
    std::fs::write(&state, &edited).unwrap();
    set_mtime(&state, mtime);
    assert!(!briefed(&home), "the edit is seen at once");

    // Registered again, settled and cached, then replaced by rename with the same size and
    // modification time.
    std::fs::write(&state, &text).unwrap();
    let_it_settle();
    assert!(briefed(&home));
    let replacement = home.path().join(".claude.json.new");
    std::fs::write(&replacement, &edited).unwrap();
    set_mtime(
        &replacement,
        std::fs::metadata(&state).unwrap().modified().unwrap(),
    );
    std::fs::rename(&replacement, &state).unwrap();
    assert!(!briefed(&home), "the replace is seen at once");

    // Gone, then back.
    std::fs::write(&state, &text).unwrap();
    let_it_settle();
    assert!(briefed(&home));
    std::fs::remove_file(&state).unwrap();
    assert!(!briefed(&home), "a file that went registers nothing");
    std::fs::write(&state, &text).unwrap();
    assert!(briefed(&home), "a file that appears is read");
}

#[test]
fn local_scope_in_a_real_sized_state_file_is_found_and_other_projects_do_not_count() {
    let home = Home::new();
    home.fabric_running(&[]);
    let state = home.path().join(".claude.json");
    write(&state, &claude_state(400, 20, false, Some(&home.project())));
    let_it_settle();
    for _ in 0..2 {
        assert!(briefed(&home), "local scope, read then cached");
        let out = home.hook_with(
            "session-start",
            "claude",
            br#"{"session_id":"s2","cwd":"/home/someone/src/project-007"}"#,
            |_| {},
        );
        assert_eq!(stdout(&out), "", "a project without fabric");
    }
}

#[test]
fn a_special_file_where_a_config_should_be_is_no_registration_and_never_blocks() {
    let home = Home::new();
    home.fabric_running(&[]);
    let state = home.path().join(".claude.json");
    let status = std::process::Command::new("mkfifo")
        .arg(&state)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    // A FIFO with no writer: opened the ordinary way, a read would wait forever. The hook
    // runs under a watchdog so a regression fails here instead of hanging the suite.
    let mut child = home
        .command(&["hook", "session-start", "--host", "claude"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(&home.payload("s1", "SessionStart"))
            .unwrap();
    }
    let mut finished = None;
    common::wait_until("the hook to finish", Duration::from_secs(20), || {
        finished = child.try_wait().unwrap();
        finished.is_some()
    });
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(stdout(&out), "", "a FIFO is no registration");
}
