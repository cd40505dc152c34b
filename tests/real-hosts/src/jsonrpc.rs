//! A child process spoken to in JSON lines over stdio (Codex's app-server), and a line reader
//! with a deadline for any child's stdout. Every wait has a deadline; a child that outlives
//! its [`LineChild`] is killed.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A child whose stdout is read line by line on a thread of its own.
pub struct LineChild {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    what: String,
    next_id: u64,
    /// Whether requests carry `"jsonrpc": "2.0"` (ACP does; Codex's app-server leaves it out).
    jsonrpc2: bool,
    /// Every line read so far, in order (kept for diagnostics and for tests).
    pub seen: Vec<String>,
}

impl LineChild {
    /// Starts `command` with stdin and stdout piped, stderr to `stderr`.
    pub fn spawn(mut command: Command, stderr: Stdio, what: &str) -> Result<LineChild, String> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start {what}: {e}"))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(LineChild {
            stdin: child.stdin.take(),
            child,
            lines,
            what: what.to_owned(),
            next_id: 1,
            jsonrpc2: false,
            seen: Vec::new(),
        })
    }

    /// Makes requests and notifications carry `"jsonrpc": "2.0"`.
    pub fn with_jsonrpc2(mut self) -> LineChild {
        self.jsonrpc2 = true;
        self
    }

    fn message(&self, mut value: Value) -> String {
        if self.jsonrpc2 {
            value["jsonrpc"] = json!("2.0");
        }
        value.to_string()
    }

    /// Writes one line to the child's stdin.
    /// The process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    pub fn send_line(&mut self, line: &str) -> Result<(), String> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| format!("{}: stdin is already closed", self.what))?;
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("{}: cannot write to its stdin: {e}", self.what))
    }

    /// The next stdout line, or an error when none comes within `limit` (or stdout ended).
    pub fn next_line(&mut self, limit: Duration) -> Result<String, String> {
        match self.lines.recv_timeout(limit) {
            Ok(line) => {
                self.seen.push(line.clone());
                Ok(line)
            }
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "{}: no output for {} s",
                self.what,
                limit.as_secs()
            )),
            Err(RecvTimeoutError::Disconnected) => Err(format!("{}: its output ended", self.what)),
        }
    }

    /// Reads JSON lines until one satisfies `done`; non-JSON lines are skipped. Gives every
    /// JSON value read on the way, the last one satisfying `done`.
    pub fn read_until(
        &mut self,
        limit: Duration,
        mut done: impl FnMut(&Value) -> bool,
    ) -> Result<Vec<Value>, String> {
        let deadline = Instant::now() + limit;
        let mut values = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "{}: what was waited for did not come within {} s",
                    self.what,
                    limit.as_secs()
                ));
            }
            let line = self.next_line(left)?;
            let Ok(value) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            let finished = done(&value);
            values.push(value);
            if finished {
                return Ok(values);
            }
        }
    }

    /// Sends a JSON-RPC request and waits for its answer; an error answer is an error.
    pub fn request(
        &mut self,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, String> {
        self.request_collecting(method, params, limit)
            .map(|(result, _)| result)
    }

    /// [`LineChild::request`], also giving the messages read before the answer.
    pub fn request_collecting(
        &mut self,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<(Value, Vec<Value>), String> {
        let id = self.next_id;
        self.next_id += 1;
        let line = self.message(json!({"method": method, "id": id, "params": params}));
        self.send_line(&line)?;
        let mut values = self.read_until(limit, |v| {
            v.get("id") == Some(&json!(id)) && v.get("method").is_none()
        })?;
        let answer = values.pop().expect("read_until gives the answer last");
        if let Some(error) = answer.get("error") {
            return Err(format!("{}: {method} failed: {error}", self.what));
        }
        Ok((answer.get("result").cloned().unwrap_or(Value::Null), values))
    }

    /// Sends a JSON-RPC notification.
    pub fn notify(&mut self, method: &str) -> Result<(), String> {
        let line = self.message(json!({"method": method}));
        self.send_line(&line)
    }

    /// Closes stdin and waits for the child to exit (killing it after `limit`).
    pub fn finish(mut self, limit: Duration) -> Result<ExitStatus, String> {
        drop(self.stdin.take());
        let deadline = Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Ok(status),
                Ok(None) if Instant::now() < deadline => {
                    // Keep draining stdout so the child never blocks on a full pipe.
                    while let Ok(line) = self.lines.try_recv() {
                        self.seen.push(line);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                Ok(None) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err(format!(
                        "{}: did not exit within {} s of its stdin closing; killed",
                        self.what,
                        limit.as_secs()
                    ));
                }
                Err(e) => return Err(format!("{}: cannot wait for it: {e}", self.what)),
            }
        }
    }
}

impl Drop for LineChild {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
