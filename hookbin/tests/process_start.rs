//! What the binary's own start-up guarantees (on Linux it skips std's runtime start, see
//! `src/startup.rs`): a host that closed our stdout, or stopped reading it, still gets exit 0,
//! and the answer never lands in a file we opened.

mod common;

use std::process::Stdio;

use common::{BIN, Home};

fn registered_home() -> Home {
    let home = Home::new();
    home.fabric_running(&["session-hooks/1"]);
    home.register("claude");
    home
}

/// `sh -c <script>` with the home's environment (the same one `home.command` gives).
fn sh(home: &Home, script: &str) -> std::process::Output {
    let template = home.command(&[]);
    let mut sh = std::process::Command::new("bash");
    sh.arg("-c").arg(script).env_clear();
    for (key, value) in template.get_envs() {
        if let Some(value) = value {
            sh.env(key, value);
        }
    }
    sh.current_dir(home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn payload_file(home: &Home) -> std::path::PathBuf {
    let payload = home.path().join("payload.json");
    std::fs::write(&payload, home.payload("s1", "SessionStart")).unwrap();
    payload
}

#[test]
fn a_closed_stdout_never_sends_the_answer_into_a_file_we_open() {
    let home = registered_home();
    let payload = payload_file(&home);
    let out = sh(
        &home,
        &format!(
            "exec '{BIN}' hook session-start >&- < '{}'",
            payload.display()
        ),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // The hook opened the log and the spool: neither may hold the answer.
    let mut found = Vec::new();
    for entry in walk(&home.cache_dir()) {
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        if text.contains("hookSpecificOutput") || text.contains("fabric_whoami") {
            found.push(entry);
        }
    }
    assert!(found.is_empty(), "the answer went into {found:?}");
    assert!(
        home.log_text().contains("session-start"),
        "the hook did run"
    );
}

#[test]
fn a_host_that_stopped_reading_still_gets_exit_zero() {
    let home = registered_home();
    // stdout is a pipe whose reader is gone: writing the answer fails with EPIPE, and
    // SIGPIPE must not kill the hook (that would be status 141).
    let payload = payload_file(&home);
    let out = sh(
        &home,
        &format!(
            "exec 3>&1; {{ sleep 0.2; '{BIN}' hook session-start < '{}'; echo \"rc=$?\" >&3; }} | true",
            payload.display()
        ),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("rc=0"), "not exit 0: {text}");
}

#[test]
fn ordinary_commands_still_print_and_exit_as_before() {
    let home = Home::new();
    let out = home.command(&["status"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Fabric: down"));
    let out = std::process::Command::new(BIN)
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("fabric-session "));
    let out = std::process::Command::new(BIN)
        .arg("no-such-command")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "clap's usage error");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                files.extend(walk(&path));
            } else {
                files.push(path);
            }
        }
    }
    files
}
