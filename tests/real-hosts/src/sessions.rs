//! One real session per host, turn by turn, each turn timed:
//! - Claude Code: one `claude -p --input-format stream-json --output-format stream-json
//!   --verbose` process, one JSON user message per stdin line, a `result` line per turn;
//! - Codex: one `codex app-server` (the engine its TUI drives): `thread/start`, then
//!   `turn/start` per turn until `turn/completed`; closing stdin ends the session;
//! - Kimi Code: `kimi -p <prompt> --output-format stream-json` for the first turn, then
//!   `kimi -S <session id> -p …` for each next one (one process per turn); or, as
//!   [`Route::KimiAcp`], one `kimi acp` server as an editor drives it (`session/new`,
//!   `session/prompt` per turn, `session/close`: the only non-interactive way its SessionEnd
//!   fires).
//!
//! Every wait has a deadline; a host that hangs is killed and the turn is an error.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::codex_trust::AppServer;
use crate::home::TestHome;
use crate::hosts::Host;
use crate::jsonrpc::LineChild;

/// The longest a turn may take.
pub const TURN_LIMIT: Duration = Duration::from_secs(180);
/// The longest a host may take to exit once its session is over.
pub const EXIT_LIMIT: Duration = Duration::from_secs(60);

/// One finished turn.
#[derive(Clone, Debug)]
pub struct Turn {
    /// The model's answer as the host reported it.
    pub answer: String,
    pub elapsed: Duration,
    /// Exit code of the process that ran the turn, for hosts with a process per turn.
    pub exit_code: Option<i32>,
    /// What the host printed during the turn (diagnostics).
    pub output: Vec<String>,
}

/// The end of a session.
#[derive(Clone, Debug)]
pub struct Finished {
    /// Exit codes of the host's processes (one for Claude Code and Codex, one per turn for
    /// Kimi Code).
    pub exit_codes: Vec<Option<i32>>,
    pub elapsed: Duration,
    /// What the host printed on its way out (diagnostics).
    pub output: Vec<String>,
}

/// A session in progress.
pub trait Session {
    /// The host's own id of the session, once known.
    fn session_id(&self) -> Option<String>;
    /// How long starting took (before the first turn).
    fn start_time(&self) -> Duration;
    fn turn(&mut self, prompt: &str) -> Result<Turn, String>;
    fn finish(self: Box<Self>) -> Result<Finished, String>;
    /// The host's own process, when the session has one we started directly.
    fn host_pid(&self) -> Option<u32> {
        None
    }
}

/// How a session is driven.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// Each host's usual non-interactive route (see the module header).
    Usual,
    /// Kimi Code's ACP server (`kimi acp`).
    KimiAcp,
    /// One process per turn, each next turn resuming the session by its id:
    /// `claude -p [--resume <id>]`, `codex exec [resume <id>]`, `kimi [-S <id>] -p`.
    Resume,
}

/// Starts a session of the home's host in its project, its usual way.
pub fn start(home: &TestHome) -> Result<Box<dyn Session>, String> {
    start_with(home, Route::Usual)
}

/// Starts a session of the home's host in its project, driven along `route`.
pub fn start_with(home: &TestHome, route: Route) -> Result<Box<dyn Session>, String> {
    match (route, home.host()) {
        (Route::KimiAcp, _) => {
            return KimiAcpSession::start(home).map(|s| Box::new(s) as Box<dyn Session>);
        }
        (Route::Resume, Host::Claude | Host::Codex) => {
            return Ok(Box::new(ResumeSession {
                host: home.host(),
                home_env: home.env(),
                program: home.program.path.clone(),
                project: home.project.clone(),
                session_id: None,
                exit_codes: Vec::new(),
            }));
        }
        _ => {}
    }
    match home.host() {
        Host::Claude => ClaudeSession::start(home).map(|s| Box::new(s) as Box<dyn Session>),
        Host::Codex => CodexSession::start(home).map(|s| Box::new(s) as Box<dyn Session>),
        Host::Kimi => Ok(Box::new(KimiSession {
            home_env: home.env(),
            program: home.program.path.clone(),
            project: home.project.clone(),
            session_id: None,
            exit_codes: Vec::new(),
        })),
    }
}

struct ClaudeSession {
    child: LineChild,
    session_id: Option<String>,
    started: Duration,
}

impl ClaudeSession {
    fn start(home: &TestHome) -> Result<ClaudeSession, String> {
        let begun = Instant::now();
        let mut command = home.command(&home.program.path);
        command.args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ]);
        let child = LineChild::spawn(command, home.scratch_output("claude.stderr"), "claude")?;
        Ok(ClaudeSession {
            child,
            session_id: None,
            started: begun.elapsed(),
        })
    }
}

impl Session for ClaudeSession {
    fn session_id(&self) -> Option<String> {
        self.session_id.clone()
    }
    fn host_pid(&self) -> Option<u32> {
        // `node_modules/.bin/claude` links to the native program: the child is Claude Code.
        Some(self.child.id())
    }
    fn start_time(&self) -> Duration {
        self.started
    }
    fn turn(&mut self, prompt: &str) -> Result<Turn, String> {
        let begun = Instant::now();
        let message = json!({"type": "user", "message": {"role": "user", "content": prompt}});
        self.child.send_line(&message.to_string())?;
        let values = self
            .child
            .read_until(TURN_LIMIT, |v| v["type"] == "result")?;
        for value in &values {
            if let Some(id) = value["session_id"].as_str() {
                self.session_id = Some(id.to_owned());
            }
        }
        let result = values.last().expect("read_until gives the result last");
        if result["is_error"] == true {
            return Err(format!("Claude Code reported an error turn: {result}"));
        }
        Ok(Turn {
            answer: result["result"].as_str().unwrap_or_default().to_owned(),
            elapsed: begun.elapsed(),
            exit_code: None,
            output: values.iter().map(Value::to_string).collect(),
        })
    }
    fn finish(self: Box<Self>) -> Result<Finished, String> {
        let begun = Instant::now();
        let status = self.child.finish(EXIT_LIMIT)?;
        Ok(Finished {
            exit_codes: vec![status.code()],
            elapsed: begun.elapsed(),
            output: Vec::new(),
        })
    }
}

struct CodexSession {
    child: LineChild,
    thread_id: String,
    started: Duration,
}

impl CodexSession {
    fn start(home: &TestHome) -> Result<CodexSession, String> {
        let begun = Instant::now();
        let mut server = AppServer::start(home)?;
        let result =
            server
                .client()
                .request("thread/start", json!({"cwd": home.project}), TURN_LIMIT)?;
        let thread_id = result["thread"]["id"]
            .as_str()
            .ok_or_else(|| format!("thread/start gave no thread id: {result}"))?
            .to_owned();
        Ok(CodexSession {
            child: server.into_client(),
            thread_id,
            started: begun.elapsed(),
        })
    }
}

impl Session for CodexSession {
    fn session_id(&self) -> Option<String> {
        Some(self.thread_id.clone())
    }
    fn start_time(&self) -> Duration {
        self.started
    }
    fn turn(&mut self, prompt: &str) -> Result<Turn, String> {
        let begun = Instant::now();
        self.child.request(
            "turn/start",
            json!({"threadId": self.thread_id, "input": [{"type": "text", "text": prompt}]}),
            TURN_LIMIT,
        )?;
        let values = self
            .child
            .read_until(TURN_LIMIT, |v| v["method"] == "turn/completed")?;
        let completed = values.last().expect("read_until gives the end last");
        let status = &completed["params"]["turn"]["status"];
        if status != "completed" {
            return Err(format!("Codex ended the turn as {status}: {completed}"));
        }
        let answer = values
            .iter()
            .filter(|v| {
                v["method"] == "item/completed" && v["params"]["item"]["type"] == "agentMessage"
            })
            .filter_map(|v| v["params"]["item"]["text"].as_str())
            .next_back()
            .unwrap_or_default()
            .to_owned();
        Ok(Turn {
            answer,
            elapsed: begun.elapsed(),
            exit_code: None,
            output: values
                .iter()
                .filter(|v| !v["method"].as_str().unwrap_or_default().ends_with("/delta"))
                .map(Value::to_string)
                .collect(),
        })
    }
    fn finish(self: Box<Self>) -> Result<Finished, String> {
        let begun = Instant::now();
        let status = self.child.finish(EXIT_LIMIT)?;
        Ok(Finished {
            exit_codes: vec![status.code()],
            elapsed: begun.elapsed(),
            output: Vec::new(),
        })
    }
}

struct KimiSession {
    home_env: Vec<(String, String)>,
    program: std::path::PathBuf,
    project: std::path::PathBuf,
    session_id: Option<String>,
    exit_codes: Vec<Option<i32>>,
}

impl Session for KimiSession {
    fn session_id(&self) -> Option<String> {
        self.session_id.clone()
    }
    fn start_time(&self) -> Duration {
        Duration::ZERO
    }
    fn turn(&mut self, prompt: &str) -> Result<Turn, String> {
        let begun = Instant::now();
        let mut command = Command::new(&self.program);
        command
            .env_clear()
            .envs(self.home_env.iter().cloned())
            .current_dir(&self.project);
        if let Some(id) = &self.session_id {
            command.args(["-S", id]);
        }
        command.args(["-p", prompt, "--output-format", "stream-json"]);
        let output = run_with_deadline(command, TURN_LIMIT, "kimi")?;
        let code = output.status;
        self.exit_codes.push(code);
        let lines: Vec<String> = output.stdout.lines().map(str::to_owned).collect();
        let values: Vec<Value> = lines
            .iter()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        if let Some(id) = values.iter().find_map(|v| {
            (v["type"] == "session.resume_hint")
                .then(|| v["session_id"].as_str())
                .flatten()
        }) {
            self.session_id = Some(id.to_owned());
        }
        if code != Some(0) {
            return Err(format!(
                "kimi exited with {code:?}: {}\n{}",
                output.stdout, output.stderr
            ));
        }
        let answer = values
            .iter()
            .filter(|v| v["role"] == "assistant")
            .filter_map(|v| v["content"].as_str())
            .next_back()
            .unwrap_or_default()
            .to_owned();
        let mut all = lines;
        all.extend(output.stderr.lines().map(str::to_owned));
        Ok(Turn {
            answer,
            elapsed: begun.elapsed(),
            exit_code: code,
            output: all,
        })
    }
    fn finish(self: Box<Self>) -> Result<Finished, String> {
        Ok(Finished {
            exit_codes: self.exit_codes,
            elapsed: Duration::ZERO,
            output: Vec::new(),
        })
    }
}

/// Claude Code or Codex, one process per turn, resuming by id.
struct ResumeSession {
    host: Host,
    home_env: Vec<(String, String)>,
    program: std::path::PathBuf,
    project: std::path::PathBuf,
    session_id: Option<String>,
    exit_codes: Vec<Option<i32>>,
}

impl Session for ResumeSession {
    fn session_id(&self) -> Option<String> {
        self.session_id.clone()
    }
    fn start_time(&self) -> Duration {
        Duration::ZERO
    }
    fn turn(&mut self, prompt: &str) -> Result<Turn, String> {
        let begun = Instant::now();
        let mut command = Command::new(&self.program);
        command
            .env_clear()
            .envs(self.home_env.iter().cloned())
            .current_dir(&self.project);
        match (self.host, &self.session_id) {
            (Host::Claude, None) => command.args(["-p", "--output-format", "json", prompt]),
            (Host::Claude, Some(id)) => {
                command.args(["-p", "--output-format", "json", "--resume", id, prompt])
            }
            (_, None) => command.args(["exec", "--json", "--skip-git-repo-check", prompt]),
            (_, Some(id)) => command.args([
                "exec",
                "--json",
                "--skip-git-repo-check",
                "resume",
                id,
                prompt,
            ]),
        };
        let output = run_with_deadline(command, TURN_LIMIT, self.host.display_name())?;
        self.exit_codes.push(output.status);
        if output.status != Some(0) {
            return Err(format!(
                "{} exited with {:?}: {}\n{}",
                self.host, output.status, output.stdout, output.stderr
            ));
        }
        let values: Vec<Value> = output
            .stdout
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        let (id, answer) = match self.host {
            Host::Claude => {
                let result = values
                    .iter()
                    .find(|v| v["type"] == "result")
                    .ok_or_else(|| format!("claude printed no result: {}", output.stdout))?;
                (
                    result["session_id"].as_str().map(str::to_owned),
                    result["result"].as_str().unwrap_or_default().to_owned(),
                )
            }
            _ => (
                values
                    .iter()
                    .find(|v| v["type"] == "thread.started")
                    .and_then(|v| v["thread_id"].as_str().map(str::to_owned)),
                values
                    .iter()
                    .filter(|v| {
                        v["type"] == "item.completed" && v["item"]["type"] == "agent_message"
                    })
                    .filter_map(|v| v["item"]["text"].as_str())
                    .next_back()
                    .unwrap_or_default()
                    .to_owned(),
            ),
        };
        if let Some(id) = id {
            self.session_id = Some(id);
        }
        let mut lines: Vec<String> = output.stdout.lines().map(str::to_owned).collect();
        lines.extend(output.stderr.lines().map(str::to_owned));
        Ok(Turn {
            answer,
            elapsed: begun.elapsed(),
            exit_code: output.status,
            output: lines,
        })
    }
    fn finish(self: Box<Self>) -> Result<Finished, String> {
        Ok(Finished {
            exit_codes: self.exit_codes,
            elapsed: Duration::ZERO,
            output: Vec::new(),
        })
    }
}

struct KimiAcpSession {
    child: LineChild,
    session_id: String,
    started: Duration,
}

impl KimiAcpSession {
    fn start(home: &TestHome) -> Result<KimiAcpSession, String> {
        let begun = Instant::now();
        let mut command = home.command(&home.program.path);
        command.arg("acp");
        let mut child =
            LineChild::spawn(command, home.scratch_output("kimi-acp.stderr"), "kimi acp")?
                .with_jsonrpc2();
        child.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
            TURN_LIMIT,
        )?;
        let result = child.request(
            "session/new",
            json!({"cwd": home.project, "mcpServers": []}),
            TURN_LIMIT,
        )?;
        let session_id = result["sessionId"]
            .as_str()
            .ok_or_else(|| format!("session/new gave no session id: {result}"))?
            .to_owned();
        Ok(KimiAcpSession {
            child,
            session_id,
            started: begun.elapsed(),
        })
    }
}

impl Session for KimiAcpSession {
    fn session_id(&self) -> Option<String> {
        Some(self.session_id.clone())
    }
    fn start_time(&self) -> Duration {
        self.started
    }
    fn turn(&mut self, prompt: &str) -> Result<Turn, String> {
        let begun = Instant::now();
        let (result, updates) = self.child.request_collecting(
            "session/prompt",
            json!({"sessionId": self.session_id, "prompt": [{"type": "text", "text": prompt}]}),
            TURN_LIMIT,
        )?;
        if result["stopReason"] != "end_turn" {
            return Err(format!("Kimi Code ended the turn with {result}"));
        }
        let answer: String = updates
            .iter()
            .filter(|v| v["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|v| v["params"]["update"]["content"]["text"].as_str())
            .collect();
        Ok(Turn {
            answer,
            elapsed: begun.elapsed(),
            exit_code: None,
            output: updates.iter().map(Value::to_string).collect(),
        })
    }
    fn finish(mut self: Box<Self>) -> Result<Finished, String> {
        let begun = Instant::now();
        self.child.request(
            "session/close",
            json!({"sessionId": self.session_id}),
            TURN_LIMIT,
        )?;
        let status = self.child.finish(EXIT_LIMIT)?;
        Ok(Finished {
            exit_codes: vec![status.code()],
            elapsed: begun.elapsed(),
            output: Vec::new(),
        })
    }
}

/// What a process printed, and how it ended.
#[derive(Clone, Debug)]
pub struct Ran {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `command` (stdin closed) to its end, killing it after `limit`.
pub fn run_with_deadline(mut command: Command, limit: Duration, what: &str) -> Result<Ran, String> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start {what}: {e}"))?;
    let out = read_all(child.stdout.take().expect("stdout is piped"));
    let err = read_all(child.stderr.take().expect("stderr is piped"));
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{what} did not finish within {} s; killed",
                    limit.as_secs()
                ));
            }
            Err(e) => return Err(format!("cannot wait for {what}: {e}")),
        }
    };
    // A process the host left behind may still hold the pipes: wait a little, no more.
    let collect = |rx: std::sync::mpsc::Receiver<String>| {
        rx.recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| "<the pipe stayed open after the process ended>".to_owned())
    };
    Ok(Ran {
        status: status.code(),
        stdout: collect(out),
        stderr: collect(err),
    })
}

/// Reads a pipe to its end on a thread; the text arrives on the channel.
fn read_all(mut pipe: impl Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    rx
}
