//! One temporary HOME for one host: the person's folders, a project under git, Fabric's
//! folder and the `fabric-fake` state, the host's own config pointing at the model
//! stand-in, and `fabric` registered (or not) in the host's own MCP config.
//!
//! Everything is written the way the person or the host would write it; nothing here
//! touches our hooks (that is [`crate::install`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use fabric_fake::FakeFabric;
use serde_json::json;
use tempfile::TempDir;

use crate::binaries;
use crate::hosts::{Host, HostProgram, text};

/// The key every host gets for the stand-in (it checks none).
pub const API_KEY: &str = "stand-in-key";
/// The feature a Fabric with session hooks lists in `hub.json`.
pub const SESSION_HOOKS_FEATURE: &str = "session-hooks/1";

/// A temporary HOME for one host.
pub struct TestHome {
    _dir: TempDir,
    pub home: PathBuf,
    pub project: PathBuf,
    pub fake: FakeFabric,
    pub program: HostProgram,
    pub model_url: String,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a file has a folder"))
        .unwrap_or_else(|e| panic!("cannot create the folder of {}: {e}", path.display()));
    std::fs::write(path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

fn run_git(project: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(project)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", project)
        .stdout(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("cannot run git {args:?}: {e}"));
    assert!(status.success(), "git {args:?} failed: {status}");
}

impl TestHome {
    /// A fresh HOME under `base` (the test's `CARGO_TARGET_TMPDIR`: not under `/tmp`, where
    /// Codex refuses to set up its helpers) for `program`, its model at `model_url`.
    /// Fabric is not running and not registered yet.
    pub fn new(base: &Path, program: &HostProgram, model_url: &str) -> TestHome {
        std::fs::create_dir_all(base)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", base.display()));
        let dir = tempfile::Builder::new()
            .prefix(&format!("{}-", program.host.cli_name()))
            .tempdir_in(base)
            .unwrap_or_else(|e| panic!("cannot create a temporary folder: {e}"));
        let home = dir.path().join("home");
        let project = home.join("work").join("project");
        std::fs::create_dir_all(&project).expect("the project folder");
        let fake = FakeFabric::new(dir.path());
        let test_home = TestHome {
            _dir: dir,
            home,
            project,
            fake,
            program: program.clone(),
            model_url: model_url.to_owned(),
        };
        write(
            &test_home.project.join("README.md"),
            "A project the real-hosts suite works in.\n",
        );
        run_git(&test_home.project, &["init", "--quiet"]);
        run_git(
            &test_home.project,
            &[
                "-c",
                "user.name=Test",
                "-c",
                "user.email=test@example.invalid",
                "commit",
                "--quiet",
                "--allow-empty",
                "-m",
                "start",
            ],
        );
        test_home.write_model_config();
        test_home
    }

    /// A file outside HOME for a host's stderr (appended to), as a `Stdio`.
    pub fn scratch_output(&self, name: &str) -> Stdio {
        let path = self._dir.path().join(name);
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            Ok(file) => Stdio::from(file),
            Err(_) => Stdio::null(),
        }
    }

    pub fn host(&self) -> Host {
        self.program.host
    }

    pub fn xdg_cache(&self) -> PathBuf {
        self.home.join(".cache")
    }
    pub fn xdg_data(&self) -> PathBuf {
        self.home.join(".local/share")
    }
    pub fn xdg_config(&self) -> PathBuf {
        self.home.join(".config")
    }
    /// Fabric's folder (Linux).
    pub fn fabric_dir(&self) -> PathBuf {
        self.xdg_data().join("passioncode-fabric")
    }
    /// Our cache folder: `hooks.log`, `sessions/`.
    pub fn cache_dir(&self) -> PathBuf {
        self.xdg_cache().join("fabric-companion")
    }
    /// Every folder we write to.
    pub fn our_dirs(&self) -> Vec<PathBuf> {
        vec![
            self.cache_dir(),
            self.xdg_data().join("fabric-companion"),
            self.xdg_config().join("fabric-companion"),
        ]
    }
    /// Where the desktop app keeps the stable copy of `fabric-session` hooks point at.
    pub fn stable_binary(&self) -> PathBuf {
        self.xdg_data().join("fabric-companion/bin/fabric-session")
    }
    pub fn hook_log(&self) -> PathBuf {
        self.cache_dir().join("hooks.log")
    }
    pub fn spool(&self, session: &str) -> PathBuf {
        self.cache_dir().join("sessions").join(session)
    }
    pub fn codex_home(&self) -> PathBuf {
        self.home.join(".codex")
    }
    pub fn kimi_home(&self) -> PathBuf {
        self.home.join(".kimi-code")
    }

    /// The product's own idea of where things are, for this HOME (Linux layout; the test
    /// process has no `CODEX_HOME`, `KIMI_CODE_HOME` or `CLAUDE_CONFIG_DIR` of its own).
    pub fn product_paths(&self) -> companion_platform::paths::Paths {
        let fabric_dir = self.fabric_dir();
        companion_platform::paths::Paths {
            home: self.home.clone(),
            services_dir: fabric_dir.join("services"),
            fabric_dir,
            cache_dir: self.cache_dir(),
            data_dir: self.xdg_data().join("fabric-companion"),
            config_dir: self.xdg_config().join("fabric-companion"),
        }
    }

    /// The environment every process in this HOME runs with (nothing inherited).
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("HOME".to_owned(), text(&self.home)),
            ("XDG_CACHE_HOME".to_owned(), text(&self.xdg_cache())),
            ("XDG_DATA_HOME".to_owned(), text(&self.xdg_data())),
            ("XDG_CONFIG_HOME".to_owned(), text(&self.xdg_config())),
            (
                "XDG_STATE_HOME".to_owned(),
                text(&self.home.join(".local/state")),
            ),
            ("PATH".to_owned(), self.program.path_var()),
            ("LANG".to_owned(), "C.UTF-8".to_owned()),
            ("TERM".to_owned(), "dumb".to_owned()),
            ("USER".to_owned(), "tester".to_owned()),
        ];
        env.extend(self.fake.env());
        match self.host() {
            Host::Claude => env.extend([
                ("ANTHROPIC_BASE_URL".to_owned(), self.model_url.clone()),
                ("ANTHROPIC_API_KEY".to_owned(), API_KEY.to_owned()),
                (
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_owned(),
                    "1".to_owned(),
                ),
                ("DISABLE_AUTOUPDATER".to_owned(), "1".to_owned()),
            ]),
            Host::Codex => env.push(("OPENAI_API_KEY".to_owned(), API_KEY.to_owned())),
            Host::Kimi => {}
        }
        env
    }

    /// `program` with this HOME's environment only, in the project.
    pub fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .envs(self.env())
            .current_dir(&self.project);
        command
    }

    /// The host's own config, pointing at the model stand-in (Claude Code takes it from the
    /// environment).
    fn write_model_config(&self) {
        match self.host() {
            Host::Claude => {}
            Host::Codex => write(
                &self.codex_home().join("config.toml"),
                &format!(
                    "model = \"gpt-stand-in\"\nmodel_provider = \"standin\"\n\n\
                     [model_providers.standin]\nname = \"model stand-in\"\n\
                     base_url = \"{}/v1\"\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n",
                    self.model_url
                ),
            ),
            Host::Kimi => write(
                &self.kimi_home().join("config.toml"),
                &format!(
                    "default_model = \"standin\"\ntelemetry = false\n\n\
                     [providers.standin]\ntype = \"anthropic\"\nbase_url = \"{}\"\napi_key = \"{API_KEY}\"\n\n\
                     [models.standin]\nprovider = \"standin\"\nmodel = \"claude-stand-in\"\nmax_context_size = 200000\n",
                    self.model_url
                ),
            ),
        }
    }

    /// Registers `fabric` in the host's own MCP config, played by `fabric-fake`, as the
    /// person's Fabric setup would (user scope).
    pub fn register_fabric(&self) {
        let fake = text(&binaries::fabric_fake());
        let state = text(self.fake.state_dir());
        let runner = self.host().runner();
        match self.host() {
            Host::Claude => write(
                &self.home.join(".claude.json"),
                &json!({"mcpServers": {"fabric": {
                    "type": "stdio", "command": fake, "args": ["--runner", runner],
                    "env": {"FABRIC_FAKE_STATE": state}}}})
                .to_string(),
            ),
            Host::Codex => {
                let config = self.codex_home().join("config.toml");
                let mut text = std::fs::read_to_string(&config).unwrap_or_default();
                text.push_str(&self.codex_registration());
                write(&config, &text);
            }
            Host::Kimi => write(
                &self.kimi_home().join("mcp.json"),
                &json!({"mcpServers": {"fabric": {
                    "command": fake, "args": ["--runner", runner],
                    "env": {"FABRIC_FAKE_STATE": state}}}})
                .to_string(),
            ),
        }
    }

    /// The `[mcp_servers.fabric]` tables [`TestHome::register_fabric`] appends for Codex.
    fn codex_registration(&self) -> String {
        format!(
            "\n[mcp_servers.fabric]\ncommand = {}\nargs = [\"--runner\", \"{}\"]\n\n\
             [mcp_servers.fabric.env]\nFABRIC_FAKE_STATE = {}\n",
            toml_string(&text(&binaries::fabric_fake())),
            self.host().runner(),
            toml_string(&text(self.fake.state_dir()))
        )
    }

    /// Takes `fabric` out of the host's MCP config again.
    pub fn unregister_fabric(&self) {
        match self.host() {
            Host::Claude => write(&self.home.join(".claude.json"), "{}"),
            Host::Codex => {
                let config = self.codex_home().join("config.toml");
                let text = std::fs::read_to_string(&config).unwrap_or_default();
                write(&config, &text.replace(&self.codex_registration(), ""));
            }
            Host::Kimi => write(&self.kimi_home().join("mcp.json"), "{\"mcpServers\": {}}"),
        }
    }

    /// Fabric running: `hub.json` names this test process (alive) and lists session hooks.
    pub fn fabric_running(&self) {
        fabric_fake::write_hub(
            &self.fabric_dir(),
            &[SESSION_HOOKS_FEATURE],
            std::process::id(),
        )
        .expect("hub.json is written");
    }

    /// Fabric down: no `hub.json`.
    pub fn fabric_stopped(&self) {
        fabric_fake::remove_hub(&self.fabric_dir()).expect("hub.json is removed");
    }

    /// Fabric down the other way: a `hub.json` left behind by a process that is gone.
    pub fn fabric_dead_pid(&self) {
        let mut child = Command::new("true").spawn().expect("`true` runs");
        let pid = child.id();
        child.wait().expect("`true` ends");
        fabric_fake::write_hub(&self.fabric_dir(), &[SESSION_HOOKS_FEATURE], pid)
            .expect("hub.json is written");
    }

    /// Our hook log, empty when there is none.
    pub fn hook_log_text(&self) -> String {
        std::fs::read_to_string(self.hook_log()).unwrap_or_default()
    }

    /// The log lines of `event` (`stop`, `session-end`, …) for `session`.
    pub fn hook_log_lines(&self, event: &str, session: &str) -> Vec<String> {
        self.hook_log_text()
            .lines()
            .filter(|line| {
                let fields: Vec<&str> = line.split(' ').collect();
                fields.get(1) == Some(&event) && fields.get(3) == Some(&session)
            })
            .map(str::to_owned)
            .collect()
    }

    /// The unread count our spool holds for `session` (`board.json`), when there is one.
    pub fn board_unread(&self, session: &str) -> Option<u64> {
        let text = std::fs::read_to_string(self.spool(session).join("board.json")).ok()?;
        serde_json::from_str::<serde_json::Value>(&text)
            .ok()?
            .get("unread")?
            .as_u64()
    }
}

/// A TOML basic string.
pub fn toml_string(value: &str) -> String {
    toml::Value::String(value.to_owned()).to_string()
}
