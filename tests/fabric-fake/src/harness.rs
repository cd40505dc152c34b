//! What Rust tests in other packages use: [`fake_binary`] (the built `fabric-fake`
//! executable, built on demand) and [`FakeFabric`] (one stand-in's state folder).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::answers::{Mode, REFUSAL_CODES};
use crate::state;

/// The file name of the binary on this platform.
fn binary_name() -> String {
    format!("fabric-fake{}", std::env::consts::EXE_SUFFIX)
}

/// The path of the `fabric-fake` executable next to the running test's target folder.
///
/// A test executable lives at `target/<profile>/deps/<test>-<hash>`; the binary is
/// `target/<profile>/fabric-fake`. When it is missing, or older than one of this package's
/// sources (`Cargo.toml`, `src/`), it is built once per process with
/// `$CARGO build -p fabric-fake` for that profile and target folder (Cargo's own lock
/// serializes builds started by parallel test processes). Panics when the build fails.
pub fn fake_binary() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(find_or_build).clone()
}

fn find_or_build() -> PathBuf {
    let exe = std::env::current_exe().expect("the running test knows its own path");
    let deps = exe.parent().expect("the test executable has a folder");
    let profile_dir = if deps.file_name().is_some_and(|n| n == "deps") {
        deps.parent().expect("deps/ has a parent")
    } else {
        deps
    };
    let binary = profile_dir.join(binary_name());
    if is_fresh(&binary) {
        return binary;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .arg("build")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .args(["-p", "fabric-fake", "--bin", "fabric-fake"]);
    match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => {}
        Some("release") => {
            command.arg("--release");
        }
        Some(other) => {
            command.args(["--profile", other]);
        }
    }
    if let Some(target_dir) = profile_dir.parent() {
        command.arg("--target-dir").arg(target_dir);
    }
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("fabric-fake: cannot run {command:?}: {e}"));
    assert!(
        status.success(),
        "fabric-fake: {command:?} failed: {status}"
    );
    assert!(
        binary.is_file(),
        "fabric-fake: the build did not produce {}",
        binary.display()
    );
    binary
}

/// Whether `binary` exists and is not older than any source of this package.
fn is_fresh(binary: &Path) -> bool {
    let Ok(built) = binary.metadata().and_then(|m| m.modified()) else {
        return false;
    };
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = vec![package.join("Cargo.toml")];
    if let Ok(entries) = std::fs::read_dir(package.join("src")) {
        sources.extend(entries.flatten().map(|entry| entry.path()));
    }
    sources.iter().all(|source| {
        source
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|changed| changed <= built)
    })
}

/// One stand-in's state folder, `<root>/fabric-state`. Every method panics on an I/O error:
/// this is for tests.
#[derive(Clone, Debug)]
pub struct FakeFabric {
    state_dir: PathBuf,
}

impl FakeFabric {
    /// Creates `<root>/fabric-state` (and `root` when needed).
    pub fn new(root: &Path) -> Self {
        let state_dir = root.join("fabric-state");
        std::fs::create_dir_all(&state_dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", state_dir.display()));
        FakeFabric { state_dir }
    }

    /// The state folder (the value of `FABRIC_FAKE_STATE`).
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    fn set(&self, name: &str, value: &str) {
        state::write_setting(&self.state_dir, name, value)
            .unwrap_or_else(|e| panic!("cannot write {name} in the stand-in's state: {e}"));
    }

    /// Sets the mode stand-ins started from now on use: `ready`, `degraded`, `unavailable`,
    /// `refusal`, `crash`, `hang`, `hang-start`, `garbage`, `close-stdout`, `fork-holder` or
    /// `hub-silent`.
    /// Panics on any other word.
    pub fn set_mode(&self, mode: &str) {
        let mode: Mode = mode.parse().unwrap_or_else(|e| panic!("{e}"));
        self.set(state::MODE_FILE, mode.as_str());
    }

    /// Sets the unread count; running stand-ins see it at their next `com.status`.
    pub fn set_unread(&self, unread: u64) {
        self.set(state::UNREAD_FILE, &unread.to_string());
    }

    /// Sets the refusal code of `refusal` mode. Panics when `code` is not a contract code.
    pub fn set_refusal_code(&self, code: &str) {
        assert!(
            REFUSAL_CODES.contains(&code),
            "{code:?} is not a contract refusal code"
        );
        self.set(state::REFUSAL_CODE_FILE, code);
    }

    /// Makes every tool call wait `ms` milliseconds before its answer (a slow Fabric).
    pub fn set_delay_ms(&self, ms: u64) {
        self.set(state::DELAY_FILE, &ms.to_string());
    }

    /// Makes stand-ins started from now on leave a `sleep` running behind them, in their
    /// process group (its pid is in a `child` record, see [`FakeFabric::children`]).
    pub fn set_leave_child(&self) {
        self.set(state::LEAVE_CHILD_FILE, "1");
    }

    /// The records of stand-ins in `hub-silent` mode asking the hub: `{"event":"hub",
    /// "pid":N,"origin":..,"connected":bool}`.
    pub fn hub_asks(&self) -> Vec<Value> {
        self.calls()
            .into_iter()
            .filter(|record| record["event"] == "hub")
            .collect()
    }

    /// The pids of the children stand-ins left behind.
    pub fn children(&self) -> Vec<u32> {
        self.calls()
            .into_iter()
            .filter(|record| record["event"] == "child")
            .filter_map(|record| record["pid"].as_u64())
            .map(|pid| pid as u32)
            .collect()
    }

    /// Every record in `calls.jsonl` (starts and calls), in order; empty when none.
    pub fn calls(&self) -> Vec<Value> {
        state::read_records(&self.state_dir)
            .unwrap_or_else(|e| panic!("cannot read the stand-in's calls: {e}"))
    }

    /// The start records only.
    pub fn starts(&self) -> Vec<Value> {
        self.calls()
            .into_iter()
            .filter(|record| record["event"] == "start")
            .collect()
    }

    /// The call records of tool `name` only.
    pub fn tool_calls(&self, name: &str) -> Vec<Value> {
        self.calls()
            .into_iter()
            .filter(|record| record["event"] == "call" && record["tool"] == name)
            .collect()
    }

    /// The environment a process under test needs to start this stand-in as `fabric-mcp`:
    /// `FABRIC_MCP=<fake_binary()>` and `FABRIC_FAKE_STATE=<state folder>`.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            (
                "FABRIC_MCP".to_owned(),
                fake_binary().to_string_lossy().into_owned(),
            ),
            (
                state::STATE_ENV.to_owned(),
                self.state_dir.to_string_lossy().into_owned(),
            ),
        ]
    }
}
