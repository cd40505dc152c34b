//! An agent host as its hooks see it, under Wine: `host-stand-in.exe` (see its header) kept
//! running as the session's host process, each hook command run through the host's own shell.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use crate::Prefix;

/// How each host runs a hook command on Windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    /// Codex: `%COMSPEC% /C <command>`.
    Codex,
    /// Kimi Code (Node, `shell: true`): `cmd.exe /d /s /c "<command>"`.
    Kimi,
    /// Claude Code runs a hook through Git Bash, which Wine does not have: the command's
    /// program is run directly with its arguments (bash's `[ ! -x … ] ||` done by the stand-in).
    Direct,
}

impl Shell {
    /// The shell a host's commands go through.
    pub fn of(host: &str) -> Shell {
        match host {
            "codex" => Shell::Codex,
            "kimi" => Shell::Kimi,
            _ => Shell::Direct,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Shell::Codex => "codex",
            Shell::Kimi => "kimi",
            Shell::Direct => "direct",
        }
    }
}

/// The job object a host puts its hook's shell in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    None,
    /// Kill-on-close with breakaway allowed, ended as soon as the hook is done.
    BreakawayOk,
    /// Kill-on-close, no breakaway.
    Strict,
}

impl Job {
    fn word(self) -> &'static str {
        match self {
            Job::None => "none",
            Job::BreakawayOk => "breakaway-ok",
            Job::Strict => "strict",
        }
    }
}

/// One hook as the host saw it.
#[derive(Debug, Clone)]
pub struct HookRun {
    pub code: Option<i64>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed_ms: u64,
    pub timed_out: bool,
}

/// A running host stand-in.
pub struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Its Windows pid (what a session it runs is recorded with).
    pub pid: u32,
}

impl Host {
    /// Starts the stand-in in `prefix` with these extra variables (its hooks inherit them).
    pub fn start(prefix: &Prefix, shell: Shell, job: Job, env: &[(String, String)]) -> Host {
        let mut command = prefix.program(
            "host-stand-in",
            &["--shell", shell.word(), "--job", job.word()],
        );
        command
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().expect("start host-stand-in");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped");
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let first = lines
            .recv_timeout(crate::WATCHDOG)
            .expect("host-stand-in says its pid");
        let pid = serde_json::from_str::<Value>(&first).expect("JSON")["pid"]
            .as_u64()
            .expect("a pid") as u32;
        Host {
            child,
            stdin,
            lines,
            pid,
        }
    }

    /// Runs `command` with `input` on its stdin as the host would.
    pub fn run(&mut self, command: &str, input: &str) -> HookRun {
        let request = json!({"command": command, "input": input, "timeout_ms": 30_000});
        let stdin = self.stdin.as_mut().expect("the host is running");
        writeln!(stdin, "{request}").expect("write to host-stand-in");
        stdin.flush().expect("flush");
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(45))
            .unwrap_or_else(|e| panic!("host-stand-in did not answer for {command:?}: {e}"));
        let answer: Value = serde_json::from_str(&line).expect("JSON");
        assert!(
            answer.get("error").is_none(),
            "host-stand-in: {command:?}: {answer}"
        );
        HookRun {
            code: answer["code"].as_i64(),
            stdout: answer["stdout"].as_str().unwrap_or_default().to_owned(),
            stderr: answer["stderr"].as_str().unwrap_or_default().to_owned(),
            elapsed_ms: answer["elapsed_ms"].as_u64().unwrap_or_default(),
            timed_out: answer["timed_out"].as_bool().unwrap_or_default(),
        }
    }

    /// Ends the host: its stdin closes and it exits.
    pub fn end(mut self) {
        drop(self.stdin.take());
        let _ = crate::wait_watched(
            std::mem::replace(
                &mut self.child,
                std::process::Command::new("true").spawn().expect("true"),
            ),
            "host-stand-in",
        );
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
