//! `watch-mail`, against the Fabric stand-in.
//!
//! - The command, as the real binary in a temporary HOME: the three refusals, what the first
//!   look says (a rise, a fall, the same count, a degraded count, an unavailable board, a
//!   refusal, a crash, a hang killed at the 10 s deadline and reaped, Fabric down, Fabric
//!   without session hooks), and every way it exits, each within a second.
//! - The engine in-process on tokio's paused clock, so several looks, the backoff up to its
//!   15-minute cap, the jitter and the 10 s floor are checked without waiting: with a
//!   scripted look, and with the real look against the stand-in (run on a real-time runtime
//!   inside `spawn_blocking`, which keeps the paused clock from jumping while a child runs).
#![cfg(unix)] // signals, a parent that dies, executable scripts: Unix only

#[path = "../common/mod.rs"]
mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant as StdInstant};

use common::{Home, write};
use companion_hosts::host::Host;
use companion_sessions::board::{BoardReading, BoardState, RefusalCode};
use companion_sessions::hub::DownReason;
use companion_sessions::spool::{SessionId, Spool};
use fabric_client::watch::{
    Audience, FabricLook, Look, LookFailure, LookTarget, MailWatcher, Problem, WatchConfig,
    WatchEvent,
};
use tokio::time::Instant;

mod engine;
mod exits;
mod first_look;
mod refusals;
mod stand_in;

const SESSION_HOOKS: &[&str] = &["session-hooks/1"];
/// Generous limits for things that normally take milliseconds (a debug build, a busy machine).
const FIRST_LINE: Duration = Duration::from_secs(20);
/// The spec: every exit path ends the command within a second.
const EXIT_LIMIT: Duration = Duration::from_secs(1);

// ---- the command: helpers ------------------------------------------------------------------

/// A running `fabric-session watch-mail`, its stdout read line by line on a thread.
struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Running {
    fn start(home: &Home, args: &[&str]) -> Running {
        Running::start_with(home, args, Stdio::piped())
    }

    fn start_with(home: &Home, args: &[&str], stdin: Stdio) -> Running {
        let mut full = vec!["watch-mail"];
        full.extend_from_slice(args);
        let mut command = home.command(&full);
        command
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().expect("fabric-session starts");
        let stdin = child.stdin.take();
        let lines = read_lines(child.stdout.take().unwrap());
        Running {
            child,
            stdin,
            lines,
        }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The next stdout line, waiting at most `limit`.
    fn line(&self, limit: Duration) -> String {
        self.lines
            .recv_timeout(limit)
            .unwrap_or_else(|e| panic!("no line from watch-mail within {limit:?}: {e}"))
    }

    fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    fn signal(&self, signal: libc::c_int) {
        // SAFETY: signalling a child we started and have not reaped.
        assert_eq!(unsafe { libc::kill(self.pid(), signal) }, 0);
    }

    /// Waits for the exit; panics past `limit`.
    fn exits_within(&mut self, limit: Duration) -> ExitStatus {
        let start = StdInstant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < limit,
                "watch-mail still runs {limit:?} after it was told to stop"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stops it by closing stdin and returns every line it printed after those already read.
    fn stop(mut self) -> Vec<String> {
        self.close_stdin();
        assert!(self.exits_within(EXIT_LIMIT).success());
        self.lines.try_iter().collect()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_lines(stdout: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// A home with `fabric` registered for Claude Code and Fabric running with session hooks.
fn ready_home(unread: u64) -> Home {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    home.fake.set_unread(unread);
    home
}

fn spool(home: &Home, session: &str) -> Spool {
    Spool::new(&home.cache_dir().join("sessions"), &sid(session))
}

fn sid(id: &str) -> SessionId {
    SessionId::new(id).unwrap()
}

/// The state letter of `/proc/<pid>/stat` (`None`: no such process).
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.get(stat.rfind(')')? + 2..)?.chars().next()
}

/// The pids of every stand-in started so far.
fn fake_pids(home: &Home) -> Vec<u32> {
    home.fake
        .starts()
        .iter()
        .map(|start| start["pid"].as_u64().unwrap() as u32)
        .collect()
}

fn assert_reaped(pids: &[u32]) {
    assert!(!pids.is_empty());
    for pid in pids {
        assert_eq!(
            process_state(*pid),
            None,
            "fabric-mcp {pid} is still there (zombie or alive)"
        );
    }
}

fn refusal(home: &Home, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut full = vec!["watch-mail"];
    full.extend_from_slice(args);
    let mut command = home.command(&full);
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("fabric-session watch-mail: "),
        "{stderr}"
    );
    stderr
}
