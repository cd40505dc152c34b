//! A person's Windows machine under Wine: a fresh prefix, the hosts registered for `fabric`,
//! Fabric running (the stand-in's `hub --hold`, a live Windows process), our stable copy of
//! `fabric-session.exe` where the tray puts it, and the hook commands our installer writes.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};

use fabric_fake::FakeFabric;
use serde_json::Value;
use wine_bench::{Prefix, prefix, write};

pub const HOSTS: [&str; 3] = ["claude", "codex", "kimi"];

pub struct Person {
    pub prefix: Prefix,
    pub fake: FakeFabric,
    fabric: Option<Child>,
}

impl Person {
    /// A fresh machine, or `None` when the bench cannot run here (said on stderr).
    pub fn new(test: &str) -> Option<Person> {
        let bench = prefix::bench(test)?;
        let prefix = Prefix::new(bench, test);
        let fake = FakeFabric::new(&prefix.home);
        std::fs::create_dir_all(prefix.profile().join("work/my-project")).unwrap();
        Some(Person {
            prefix,
            fake,
            fabric: None,
        })
    }

    /// The project folder (Unix path) and its Windows spelling.
    pub fn project(&self) -> PathBuf {
        self.prefix.profile().join("work/my-project")
    }

    pub fn project_win(&self) -> String {
        self.prefix.win(&self.project())
    }

    /// Registers `fabric` for a host in its user-scope file, as each host keeps it.
    pub fn register(&self, host: &str) {
        let profile = self.prefix.profile();
        match host {
            "claude" => write(
                &profile.join(".claude.json"),
                r#"{"numStartups": 3, "mcpServers": {"fabric": {"command": "fabric-mcp", "args": ["--runner", "claude-code"]}}}"#,
            ),
            "codex" => write(
                &profile.join(".codex/config.toml"),
                "model = \"o4\"\n\n[mcp_servers.fabric]\ncommand = \"fabric-mcp\"\nargs = [\"--runner\", \"codex\"]\n",
            ),
            "kimi" => write(
                &profile.join(".kimi-code/mcp.json"),
                r#"{"mcpServers": {"fabric": {"command": "fabric-mcp"}}}"#,
            ),
            other => panic!("unknown host {other}"),
        }
    }

    /// Fabric running: `hub.json` names a live Windows process (the stand-in holding it).
    pub fn fabric_running(&mut self, features: &[&str]) {
        self.fabric_stopped();
        let fabric_dir = self.prefix.win(&self.prefix.fabric_dir());
        let mut args = vec!["hub", "--fabric-dir", &fabric_dir, "--hold"];
        for feature in features {
            args.extend(["--feature", feature]);
        }
        let mut child = self
            .prefix
            .program("fabric-fake", &args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the Fabric stand-in");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("hub.json written");
        assert!(
            line.contains("hub.json"),
            "fabric-fake hub --hold said {line:?}"
        );
        self.fabric = Some(child);
    }

    /// Fabric quits (its `hub.json` goes with it).
    pub fn fabric_stopped(&mut self) {
        if let Some(mut child) = self.fabric.take() {
            drop(child.stdin.take());
            let _ = wine_bench::wait_watched(child, "fabric-fake hub --hold");
        }
    }

    /// What our programs need to start the stand-in as `fabric-mcp`.
    pub fn env(&self) -> Vec<(String, String)> {
        let bench = self.prefix.bench();
        vec![
            (
                "FABRIC_MCP".into(),
                self.prefix.win(&bench.exe("fabric-fake")),
            ),
            (
                "FABRIC_FAKE_STATE".into(),
                self.prefix.win(self.fake.state_dir()),
            ),
        ]
    }

    /// The app's stable copy of `fabric-session.exe` (where the tray keeps it), copied in.
    pub fn install_stable_copy(&self) -> PathBuf {
        let stable = self.prefix.cache_dir().join("bin/fabric-session.exe");
        std::fs::create_dir_all(stable.parent().unwrap()).unwrap();
        std::fs::copy(self.prefix.bench().exe("fabric-session"), &stable).unwrap();
        stable
    }

    /// Runs `fabric-session.exe <args>` (the build's own, not the stable copy).
    pub fn session(&self, args: &[&str], stdin: &[u8]) -> Output {
        self.prefix.run("fabric-session", args, &self.env(), stdin)
    }

    /// `status --json`.
    pub fn status_json(&self) -> Value {
        let out = self.session(&["status", "--json"], b"");
        assert_eq!(out.status.code(), Some(0), "status --json: {out:?}");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("status --json is not JSON ({e}): {out:?}"))
    }

    /// The hook log's text.
    pub fn log(&self) -> String {
        wine_bench::read_text(&self.prefix.log_path())
    }

    /// The config file our installer writes for `host`.
    pub fn config(&self, host: &str) -> PathBuf {
        let profile = self.prefix.profile();
        match host {
            "claude" => profile.join(".claude/settings.json"),
            "codex" => profile.join(".codex/hooks.json"),
            "kimi" => profile.join(".kimi-code/config.toml"),
            other => panic!("unknown host {other}"),
        }
    }

    /// Installs our hooks for `host` as a person does, with the build's `fabric-session.exe`:
    /// the dry run, then the exact command it prints. Returns the dry run's text.
    pub fn install_hooks(&self, host: &str, extra: &[&str]) -> String {
        self.install_hooks_with(&self.prefix.bench().exe("fabric-session"), host, extra)
    }

    /// [`Person::install_hooks`] with the program `exe` (the package's, say).
    pub fn install_hooks_with(&self, exe: &Path, host: &str, extra: &[&str]) -> String {
        let mut args = vec!["install-host-hooks", "--host", host];
        args.extend(extra);
        let dry = self.prefix.run_exe(exe, &args, &self.env(), b"");
        let text = String::from_utf8_lossy(&dry.stdout).into_owned();
        assert_eq!(dry.status.code(), Some(0), "{host} dry run: {dry:?}");
        let digest = text
            .split_whitespace()
            .skip_while(|w| *w != "--expect-sha256")
            .nth(1)
            .unwrap_or_else(|| panic!("{host}: no apply command in the dry run:\n{text}"))
            .to_owned();
        args.extend(["--apply", "--expect-sha256", &digest]);
        let applied = self.prefix.run_exe(exe, &args, &self.env(), b"");
        assert_eq!(applied.status.code(), Some(0), "{host} apply: {applied:?}");
        text
    }

    /// Our hook commands in `host`'s config, by the host's event name.
    pub fn commands(&self, host: &str) -> BTreeMap<String, String> {
        let text = wine_bench::read_text(&self.config(host));
        let mut commands = BTreeMap::new();
        if host == "kimi" {
            let doc: toml::Table = text.parse().expect("Kimi Code's config parses");
            for table in doc["hooks"].as_array().expect("[[hooks]]") {
                let command = table["command"].as_str().unwrap().to_owned();
                if command.contains("fabric-session") {
                    commands.insert(table["event"].as_str().unwrap().to_owned(), command);
                }
            }
        } else {
            let doc: Value = serde_json::from_str(&text).expect("the config parses");
            for (event, groups) in doc["hooks"].as_object().expect("hooks") {
                for group in groups.as_array().unwrap() {
                    for hook in group["hooks"].as_array().unwrap() {
                        let command = hook["command"].as_str().unwrap().to_owned();
                        if command.contains("fabric-session") {
                            commands.insert(event.clone(), command);
                        }
                    }
                }
            }
        }
        commands
    }
}

impl Drop for Person {
    fn drop(&mut self) {
        self.fabric_stopped();
    }
}
