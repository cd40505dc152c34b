//! Our programs as built in this workspace's target folder (beside the test's own
//! `deps/`): `scripts/test.sh` builds them (`cargo build --workspace`) before the tests run;
//! when one is missing it is built here, once.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The profile folder holding our programs (`target/debug`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    // target/debug/deps/<test> → target/debug
    exe.parent()
        .and_then(Path::parent)
        .expect("a test binary under target/<profile>/deps")
        .to_path_buf()
}

/// `program` of package `package`, built when missing.
fn program(package: &str, program: &str) -> PathBuf {
    static BUILDING: Mutex<()> = Mutex::new(());
    let path = profile_dir().join(program);
    if path.is_file() {
        return path;
    }
    let _one_at_a_time = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    if path.is_file() {
        return path;
    }
    let dir = profile_dir();
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo
        .args(["build", "--quiet", "-p", package, "--bin", program])
        .arg("--manifest-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml"));
    if dir.file_name().is_some_and(|n| n == "release") {
        cargo.arg("--release");
    }
    if let Some(target) = dir.parent() {
        cargo.arg("--target-dir").arg(target);
    }
    let status = cargo.status().expect("cargo");
    assert!(status.success() && path.is_file(), "cannot build {program}");
    path
}

pub fn fabric_session() -> PathBuf {
    program("fabric-session", "fabric-session")
}

pub fn fabric_tray() -> PathBuf {
    program("fabric-tray", "fabric-tray")
}

/// The source of our shipped GNOME Shell extension (`packaging/linux/gnome-shell-extension`).
pub fn focus_extension_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../packaging/linux/gnome-shell-extension")
        .join(companion_desktop::desktop::GNOME_FOCUS_EXTENSION)
}

/// The test-only probe extension.
pub fn probe_extension_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("gnome-extension")
        .join(crate::gnome::PROBE)
}
