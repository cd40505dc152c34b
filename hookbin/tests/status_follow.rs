//! `fabric-session status --json --follow`, the real binary in a temporary HOME: the document
//! at once, a new line after real hooks changed a session, none when nothing changed, the
//! heartbeat, the end when its reader goes, and no CPU while idle.
#![cfg(target_os = "linux")] // the inotify watch, /proc/<pid>/stat

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use common::{Home, stdout, write};
use serde_json::{Value, json};

const SCHEMA: &str = "fabric-session-status/1";

/// A running `status --json --follow` whose lines arrive on a channel.
struct Follow {
    child: Child,
    lines: Receiver<String>,
}

impl Follow {
    fn start(home: &Home, heartbeat_ms: Option<u64>) -> Follow {
        let mut child = spawn(home, heartbeat_ms);
        let out = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Follow { child, lines }
    }

    /// The next line within `limit`, if any.
    fn line(&self, limit: Duration) -> Option<String> {
        match self.lines.recv_timeout(limit) {
            Ok(line) => Some(line),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("the follower ended"),
        }
    }

    /// The next status document (not a heartbeat) within `limit`.
    fn document(&self, limit: Duration) -> Value {
        let line = self
            .line(limit)
            .unwrap_or_else(|| panic!("no line within {limit:?}"));
        let doc = parse(&line);
        assert!(doc.get("heartbeat").is_none(), "a document, not {line}");
        doc
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(home: &Home, heartbeat_ms: Option<u64>) -> Child {
    let mut command = home.command(&["status", "--json", "--follow"]);
    command
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(ms) = heartbeat_ms {
        command.env("FABRIC_SESSION_FOLLOW_HEARTBEAT_MS", ms.to_string());
    }
    command.spawn().unwrap()
}

/// One line: one complete JSON document of the schema.
fn parse(line: &str) -> Value {
    let doc: Value = serde_json::from_str(line)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {line}"));
    assert_eq!(doc["schema"], SCHEMA, "{line}");
    doc
}

/// A home with Fabric running with session hooks, Claude Code registered, and our cache folder.
fn home() -> Home {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(&["session-hooks/1"]);
    std::fs::create_dir_all(home.cache_dir().join("sessions")).unwrap();
    home
}

/// Runs one of Claude Code's hooks for session `s`; it must exit 0.
fn hook(home: &Home, hook: &str, event: &str, fields: Value, env: &[(&str, &str)]) {
    let mut payload = json!({
        "session_id": "s",
        "transcript_path": home.path().join("t.jsonl"),
        "cwd": home.project(),
        "hook_event_name": event,
        "permission_mode": "default",
    });
    for (key, value) in fields.as_object().unwrap() {
        payload[key] = value.clone();
    }
    let started = Instant::now();
    let out = home.hook_with(hook, "claude", payload.to_string().as_bytes(), |c| {
        c.env("CLAUDE_PID", std::process::id().to_string());
        for (key, value) in env {
            c.env(key, value);
        }
    });
    assert_eq!(out.status.code(), Some(0), "{hook}: {}", stdout(&out));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{hook} took {:?} while a follower ran",
        started.elapsed()
    );
}

/// Session `s` recorded by a real session-start hook, hosted by `pid` (alive).
fn session_started(home: &Home, pid: u32) {
    hook(
        home,
        "session-start",
        "SessionStart",
        json!({"source": "startup"}),
        &[("TMUX_PANE", "%7")],
    );
    let spool = home.spool("s");
    let text = std::fs::read_to_string(spool.join("session.json")).unwrap();
    let mut record: Value = serde_json::from_str(&text).unwrap();
    record["hostPid"] = json!(pid);
    record["hostStartTicks"] = json!(0);
    write(&spool.join("session.json"), &record.to_string());
}

fn session_s(doc: &Value) -> Option<Value> {
    doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "s")
        .cloned()
}

/// Documents until one satisfies `done`, each within `limit` of the last.
fn document_until(follow: &Follow, limit: Duration, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let doc = follow.document(left);
        if done(&doc) {
            return doc;
        }
    }
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    // Fields 14 and 15 of the whole line; the state (3) is the first after the name.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn the_first_document_comes_at_once() {
    let home = home();
    let started = Instant::now();
    let follow = Follow::start(&home, None);
    let doc = follow.document(Duration::from_secs(5));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the first line took {:?}",
        started.elapsed()
    );
    assert_eq!(doc["fabric"]["state"], "running");
    assert_eq!(doc["sessions"], json!([]));
    // The same document `status --json` prints.
    let once = home
        .command(&["status", "--json"])
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let once: Value = serde_json::from_slice(&once.stdout).unwrap();
    assert_eq!(doc, once);
}

#[test]
fn real_hooks_bring_a_line_showing_the_session_needs_you() {
    let home = home();
    let follow = Follow::start(&home, None);
    follow.document(Duration::from_secs(5));
    session_started(&home, std::process::id());
    let doc = document_until(&follow, Duration::from_secs(2), |d| session_s(d).is_some());
    let s = session_s(&doc).unwrap();
    assert_eq!(s["state"], "idle", "{s}");
    assert_eq!(
        s["tmuxPane"], "%7",
        "the pane the session-start hook recorded: {s}"
    );
    hook(
        &home,
        "user-prompt-submit",
        "UserPromptSubmit",
        json!({"prompt": "p"}),
        &[],
    );
    document_until(&follow, Duration::from_secs(2), |d| {
        session_s(d).is_some_and(|s| s["state"] == "working")
    });
    let asked = Instant::now();
    hook(
        &home,
        "permission-request",
        "PermissionRequest",
        json!({"tool_name": "Bash", "tool_input": {"command": "x"}}),
        &[],
    );
    let doc = document_until(&follow, Duration::from_secs(2), |d| {
        session_s(d).is_some_and(|s| s["state"] == "needs-you")
    });
    assert!(asked.elapsed() < Duration::from_secs(2));
    let s = session_s(&doc).unwrap();
    assert_eq!(s["reason"], "permission", "{s}");
    assert_eq!(s["tool"], "Bash", "{s}");
    // Nothing leaks: the prompt's and the tool's words are in no line.
    assert!(!doc.to_string().contains("\"x\""));
}

#[test]
fn a_host_process_ending_brings_a_line_without_its_session() {
    let home = home();
    let mut host = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let follow = Follow::start(&home, None);
    follow.document(Duration::from_secs(5));
    session_started(&home, host.id());
    document_until(&follow, Duration::from_secs(2), |d| session_s(d).is_some());
    host.kill().unwrap();
    host.wait().unwrap();
    // No file changes: the follower watches the host process itself.
    document_until(&follow, Duration::from_secs(2), |d| session_s(d).is_none());
}

#[test]
fn no_line_when_nothing_changed() {
    let home = home();
    let follow = Follow::start(&home, None);
    follow.document(Duration::from_secs(5));
    assert_eq!(follow.line(Duration::from_millis(800)), None);
    // Files that are watched but change nothing in the document: still no line.
    write(&home.log_path(), "a line\n");
    write(&home.cache_dir().join("sessions/.hidden"), "x");
    write(&home.path().join(".claude/history.jsonl"), "{}\n");
    assert_eq!(follow.line(Duration::from_millis(1500)), None);
}

#[test]
fn a_heartbeat_comes_when_nothing_was_printed() {
    let home = home();
    let follow = Follow::start(&home, Some(300));
    follow.document(Duration::from_secs(5));
    let started = Instant::now();
    let line = follow.line(Duration::from_secs(3)).expect("a heartbeat");
    assert!(started.elapsed() >= Duration::from_millis(200), "too soon");
    let beat = parse(&line);
    let keys: Vec<&String> = beat.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["schema", "heartbeat"], "{line}");
    let at = beat["heartbeat"].as_str().unwrap();
    assert!(at.ends_with('Z'), "UTC: {at}");
    time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|e| panic!("not RFC 3339 ({e}): {at}"));
    // And again.
    let again = follow
        .line(Duration::from_secs(3))
        .expect("another heartbeat");
    assert!(parse(&again).get("heartbeat").is_some(), "{again}");
}

#[test]
fn closing_the_reading_end_ends_it_at_once() {
    let home = home();
    let mut child = spawn(&home, None);
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    parse(first.trim_end());
    // Idle now (no change, no heartbeat for 30 s); the reader goes.
    std::thread::sleep(Duration::from_millis(200));
    drop(reader);
    let closed = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if closed.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            panic!("still running 5 s after its output closed");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(
        closed.elapsed() < Duration::from_secs(1),
        "ended {:?} after its output closed",
        closed.elapsed()
    );
    assert_eq!(status.code(), Some(0));
}

#[test]
fn idle_it_uses_no_cpu() {
    let home = home();
    session_started(&home, std::process::id());
    let follow = Follow::start(&home, None);
    let doc = follow.document(Duration::from_secs(5));
    assert!(session_s(&doc).is_some(), "a live session is watched too");
    std::thread::sleep(Duration::from_millis(300));
    let before = cpu_ticks(follow.pid());
    assert_eq!(follow.line(Duration::from_secs(3)), None);
    let after = cpu_ticks(follow.pid());
    assert!(
        after - before <= 2,
        "{} ticks of CPU in 3 s of nothing",
        after - before
    );
}
