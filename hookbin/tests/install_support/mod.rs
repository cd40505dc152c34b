//! Shared helpers for the installer's integration tests: a sandboxed home in a temporary
//! folder, the real `fabric-session` binary run inside it with a clean environment, and
//! readers for each host's config file.
#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

pub const HOSTS: [&str; 3] = ["claude", "codex", "kimi"];

/// A temporary home with every variable the binary reads pointing inside it.
pub struct Sandbox {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
}

/// One run of the binary.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Exit 0, nothing on stderr.
    pub fn ok(&self) -> &Self {
        assert_eq!(self.code, 0, "expected success: {self:#?}");
        assert_eq!(self.stderr, "", "expected a quiet stderr: {self:#?}");
        self
    }

    /// Exit 1 with exactly one line on stderr, starting `fabric-session: `.
    pub fn refused(&self) -> &Self {
        assert_eq!(self.code, 1, "expected a refusal: {self:#?}");
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line on stderr: {self:#?}");
        assert!(lines[0].starts_with("fabric-session: "), "{self:#?}");
        self
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:#?}"))
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = dir.path().join("home");
        fs::create_dir_all(&home).unwrap();
        Sandbox { _dir: dir, home }
    }

    pub fn data_home(&self) -> PathBuf {
        self.home.join(".local/share")
    }

    pub fn host_dir(&self, host: &str) -> PathBuf {
        match host {
            "claude" => self.home.join(".claude"),
            "codex" => self.home.join(".codex"),
            "kimi" => self.home.join(".kimi-code"),
            other => panic!("unknown host {other}"),
        }
    }

    /// The file the installer edits for `host`.
    pub fn config(&self, host: &str) -> PathBuf {
        let name = match host {
            "claude" => "settings.json",
            "codex" => "hooks.json",
            _ => "config.toml",
        };
        self.host_dir(host).join(name)
    }

    /// Where the app's stable copy of the binary lives (`Paths::stable_binary`).
    pub fn stable_binary(&self) -> PathBuf {
        self.data_home().join("fabric-companion/bin/fabric-session")
    }

    /// Puts a (fake) stable copy in place, so installs point at it without warnings.
    pub fn install_stable_binary(&self) -> PathBuf {
        let path = self.stable_binary();
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// Runs `fabric-session <args>` with only our variables set.
    pub fn run(&self, args: &[&str]) -> Run {
        let output = Command::new(env!("CARGO_BIN_EXE_fabric-session"))
            .args(args)
            .env_clear()
            .env("HOME", &self.home)
            .env("XDG_DATA_HOME", self.data_home())
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("CODEX_HOME", self.host_dir("codex"))
            .env("KIMI_CODE_HOME", self.host_dir("kimi"))
            .env("CLAUDE_CONFIG_DIR", self.host_dir("claude"))
            .env("PATH", "/usr/bin:/bin")
            .current_dir(&self.home)
            .output()
            .expect("run fabric-session");
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// `install-host-hooks --host <host> <extra…>`.
    pub fn install(&self, host: &str, extra: &[&str]) -> Run {
        let mut args = vec!["install-host-hooks", "--host", host];
        args.extend_from_slice(extra);
        self.run(&args)
    }

    /// The dry run's plan as JSON (it must succeed).
    pub fn plan(&self, host: &str, extra: &[&str]) -> Value {
        let mut args = vec!["--json"];
        args.extend_from_slice(extra);
        let run = self.install(host, &args);
        run.ok();
        run.json()
    }

    /// Dry run, then apply with the digest it printed.
    pub fn apply(&self, host: &str, extra: &[&str]) -> Run {
        let plan = self.plan(host, extra);
        let digest = plan["digest"].as_str().expect("digest").to_string();
        let mut args = extra.to_vec();
        args.extend_from_slice(&["--apply", "--expect-sha256", &digest]);
        self.install(host, &args)
    }

    /// The backups beside the config file (or beside its symlink target), oldest first.
    pub fn backups(&self, host: &str) -> Vec<PathBuf> {
        let config = self.config(host);
        let target = fs::canonicalize(&config).unwrap_or(config);
        backups_of(&target)
    }
}

pub fn backups_of(file: &Path) -> Vec<PathBuf> {
    let Some(dir) = file.parent() else {
        return Vec::new();
    };
    let prefix = format!("{}.", file.file_name().unwrap().to_string_lossy());
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    name.starts_with(&prefix) && name.ends_with(".bak")
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort_by_key(|p| backup_order(p));
    found
}

/// `<file>.<stamp>.bak` then `<file>.<stamp>.1.bak`, `.2.bak`, … (same-second backups).
fn backup_order(path: &Path) -> (String, u32) {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let parts: Vec<&str> = name.trim_end_matches(".bak").rsplit('.').collect();
    match parts[0].parse::<u32>() {
        Ok(number) => (parts[1].to_string(), number + 1),
        Err(_) => (parts[0].to_string(), 0),
    }
}

pub fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

pub fn sha256_of(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Our commands in a host's config text, as (event, command), in file order.
pub fn our_commands(host: &str, text: &str) -> Vec<(String, String)> {
    let is_ours = companion_hosts::hook_command::is_ours;
    if host == "kimi" {
        let table: toml::Table = text.parse().expect("config.toml parses");
        let Some(hooks) = table.get("hooks").and_then(|h| h.as_array()) else {
            return Vec::new();
        };
        return hooks
            .iter()
            .filter_map(|h| {
                let command = h.get("command")?.as_str()?;
                is_ours(command).then(|| {
                    let event = h.get("event").and_then(|e| e.as_str()).unwrap_or("");
                    (event.to_string(), command.to_string())
                })
            })
            .collect();
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let value: Value = serde_json::from_str(text).expect("JSON parses");
    let mut found = Vec::new();
    if let Some(events) = value.get("hooks").and_then(Value::as_object) {
        for (event, groups) in events {
            for group in groups.as_array().into_iter().flatten() {
                for hook in group["hooks"].as_array().into_iter().flatten() {
                    if let Some(command) = hook["command"].as_str().filter(|c| is_ours(c)) {
                        found.push((event.clone(), command.to_string()));
                    }
                }
            }
        }
    }
    found
}

/// The events a full install gives each host.
pub fn our_events(host: &str) -> Vec<&'static str> {
    match host {
        "claude" => vec![
            "SessionStart",
            "Stop",
            "UserPromptSubmit",
            "SessionEnd",
            "PermissionRequest",
            "Notification",
            "PostToolUse",
            "PostToolUseFailure",
            "StopFailure",
            "SubagentStop",
        ],
        "codex" => vec![
            "SessionStart",
            "UserPromptSubmit",
            "Stop",
            "SessionEnd",
            "PermissionRequest",
            "PostToolUse",
            "Interrupt",
            "SubagentStop",
        ],
        _ => vec![
            "SessionStart",
            "UserPromptSubmit",
            "Stop",
            "SessionEnd",
            "PermissionRequest",
            "PermissionResult",
            "PreToolUse",
            "PostToolUse",
            "PostToolUseFailure",
            "StopFailure",
            "Interrupt",
            "SubagentStop",
        ],
    }
}
