//! The programs under test: `fabric-session` (built from this workspace, or the file named by
//! `FABRIC_SESSION_BIN`), `fabric-tray` (this workspace's) and `fabric-fake` (through its own
//! crate's helper).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Names another `fabric-session` to test instead of this workspace's build.
pub const FABRIC_SESSION_BIN_ENV: &str = "FABRIC_SESSION_BIN";

/// The `fabric-session` program: `$FABRIC_SESSION_BIN`, else this workspace's binary in the
/// running test's target folder, brought up to date once per process with `cargo build
/// --bin fabric-session` (a no-op when it already is). Panics when it cannot be had.
pub fn fabric_session() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY
        .get_or_init(|| match std::env::var_os(FABRIC_SESSION_BIN_ENV) {
            Some(path) if !path.is_empty() => PathBuf::from(path),
            _ => build("fabric-session"),
        })
        .clone()
}

/// The `fabric-tray` program, this workspace's, brought up to date once per process.
pub fn fabric_tray() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| build("fabric-tray")).clone()
}

/// The `fabric-fake` program (built on demand by its crate).
pub fn fabric_fake() -> PathBuf {
    fabric_fake::fake_binary()
}

/// The profile folder (`target/debug`) the running test executable belongs to.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the running test knows its own path");
    let dir = exe.parent().expect("the test executable has a folder");
    if dir.file_name().is_some_and(|n| n == "deps") {
        dir.parent().expect("deps/ has a parent").to_path_buf()
    } else {
        dir.to_path_buf()
    }
}

fn workspace_manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml")
}

fn build(bin: &str) -> PathBuf {
    let profile_dir = profile_dir();
    let binary = profile_dir.join(format!("{bin}{}", std::env::consts::EXE_SUFFIX));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args(["build", "--quiet", "--bin", bin, "--manifest-path"])
        .arg(workspace_manifest());
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
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(status.success(), "{command:?} failed: {status}");
    assert!(
        binary.is_file(),
        "the build did not produce {}",
        binary.display()
    );
    binary
}
