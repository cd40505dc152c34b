//! Shared set-up for the integration tests: a temporary `HOME` with every folder the hooks
//! use, the real `fabric-session` binary, and the Fabric stand-in.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use fabric_fake::FakeFabric;
#[allow(unused_imports)] // each test file uses its own part
pub use test_support::files::write;
/// Waits for a condition the detached worker brings about (not a timing assertion): a poll
/// every 20 ms, failing after the limit. Its name here is the one the hook tests use.
#[allow(unused_imports)]
pub use test_support::wait::wait_for as wait_until;

#[cfg(unix)] // Xvfb, openbox
pub mod x11_desk;

pub const BIN: &str = env!("CARGO_BIN_EXE_fabric-session");

/// A temporary home with Fabric's folder, our cache, and the stand-in's state.
pub struct Home {
    pub dir: tempfile::TempDir,
    pub fake: FakeFabric,
    /// Extra variables for every command.
    pub extra_env: Vec<(String, String)>,
}

impl Home {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let fake = FakeFabric::new(dir.path());
        let home = Home {
            dir,
            fake,
            extra_env: Vec::new(),
        };
        std::fs::create_dir_all(home.project()).unwrap();
        home
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
    pub fn fabric_dir(&self) -> PathBuf {
        self.path().join(".local/share/passioncode-fabric")
    }
    pub fn services_dir(&self) -> PathBuf {
        self.fabric_dir().join("services")
    }
    pub fn cache_dir(&self) -> PathBuf {
        self.path().join(".cache/fabric-companion")
    }
    pub fn log_path(&self) -> PathBuf {
        self.cache_dir().join("hooks.log")
    }
    pub fn spool(&self, session: &str) -> PathBuf {
        self.cache_dir().join("sessions").join(session)
    }
    pub fn project(&self) -> PathBuf {
        self.path().join("work/my-project")
    }

    /// Registers `fabric` for a host in its user-scope file.
    pub fn register(&self, host: &str) {
        match host {
            "claude" => write(
                &self.path().join(".claude.json"),
                r#"{"numStartups": 3, "mcpServers": {"fabric": {"command": "fabric-mcp", "args": ["--runner", "claude-code"]}}}"#,
            ),
            "codex" => write(
                &self.path().join(".codex/config.toml"),
                "model = \"o4\"\n\n[mcp_servers.fabric]\ncommand = \"fabric-mcp\"\nargs = [\"--runner\", \"codex\"]\n",
            ),
            "kimi" => write(
                &self.path().join(".kimi-code/mcp.json"),
                r#"{"mcpServers": {"fabric": {"command": "fabric-mcp"}}}"#,
            ),
            other => panic!("unknown host {other}"),
        }
    }

    /// Fabric running (the hub names this test process, which is alive).
    pub fn fabric_running(&self, features: &[&str]) {
        fabric_fake::write_hub(&self.fabric_dir(), features, std::process::id()).unwrap();
    }

    pub fn fabric_stopped(&self) {
        fabric_fake::remove_hub(&self.fabric_dir()).unwrap();
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = self.program(BIN);
        command.args(args);
        command
    }

    /// Any program with this home's environment (a shell wrapping the hook, say).
    pub fn program(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path())
            .env("XDG_CACHE_HOME", self.path().join(".cache"))
            .env("XDG_DATA_HOME", self.path().join(".local/share"))
            .env("XDG_CONFIG_HOME", self.path().join(".config"))
            .current_dir(self.path());
        for (key, value) in self.fake.env() {
            command.env(key, value);
        }
        for (key, value) in &self.extra_env {
            command.env(key, value);
        }
        command
    }

    /// Runs `fabric-session hook <event> --host <host>` with `stdin`.
    pub fn hook(&self, event: &str, host: &str, stdin: &[u8]) -> Output {
        self.hook_with(event, host, stdin, |_| {})
    }

    pub fn hook_with(
        &self,
        event: &str,
        host: &str,
        stdin: &[u8],
        adjust: impl FnOnce(&mut Command),
    ) -> Output {
        let mut command = self.command(&["hook", event, "--host", host]);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        adjust(&mut command);
        let mut child = command.spawn().unwrap();
        let mut stdin_pipe = child.stdin.take().unwrap();
        let payload = stdin.to_vec();
        let writer = std::thread::spawn(move || {
            let _ = stdin_pipe.write_all(&payload);
        });
        let output = child.wait_with_output().unwrap();
        let _ = writer.join();
        output
    }

    /// A host payload for this home's project.
    pub fn payload(&self, session: &str, event: &str) -> Vec<u8> {
        serde_json::json!({
            "session_id": session,
            "transcript_path": self.path().join("t.jsonl"),
            "cwd": self.project(),
            "hook_event_name": event,
            "source": "startup",
            "reason": "prompt_input_exit",
            "prompt": "PROMPT-CONTENT-MUST-NOT-LEAK",
        })
        .to_string()
        .into_bytes()
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// The additionalContext of a Claude Code answer.
pub fn claude_context(output: &Output, event: &str) -> String {
    let value: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(output)));
    assert_eq!(value["hookSpecificOutput"]["hookEventName"], event);
    value["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string()
}
