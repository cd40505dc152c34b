//! The workspace's own programs a test runs but Cargo does not build for it (a dependency's
//! binaries): `fabric-session`, built for the running test's profile into its target folder.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `fabric-session` in the running test's profile folder (`target/<profile>`), built from this
/// workspace's sources first (quick when it is current).
pub fn session_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    // A test runs from `target/<profile>/deps`.
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("a test under target/<profile>/deps");
    let path = profile_dir.join(format!("fabric-session{}", std::env::consts::EXE_SUFFIX));
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command
        .args([
            "build",
            "--quiet",
            "-p",
            "fabric-session",
            "--bin",
            "fabric-session",
        ])
        .arg("--manifest-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml"));
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        command.arg("--release");
    }
    if let Some(target) = profile_dir.parent() {
        command.arg("--target-dir").arg(target);
    }
    let status = command.status().expect("cargo");
    assert!(
        status.success() && path.is_file(),
        "cannot build fabric-session"
    );
    path
}
