//! Our programs as built in this workspace's target folder (beside the test's own
//! `deps/`): `scripts/test.sh` builds them (`cargo build --workspace`) before the tests run;
//! when one is missing it is built here, once. Or, when `FABRIC_DESKTOP_INSTALLED=1` (the
//! suite run inside a Debian root with our package installed, tests/desktop-roots), the
//! installed ones: `/usr/bin`'s programs and the GNOME Shell extension the package linked.

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

/// Whether the suite tests the installed package (`FABRIC_DESKTOP_INSTALLED=1`).
pub fn installed() -> bool {
    std::env::var_os("FABRIC_DESKTOP_INSTALLED").is_some_and(|v| v == "1")
}

/// `program` of package `package`: the installed one, or built when missing.
fn program(package: &str, program: &str) -> PathBuf {
    if installed() {
        return Path::new("/usr/bin").join(program);
    }
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

/// Which variant of an extension a GNOME Shell loads: 40–44 scripts, 45+ ES modules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtensionFormat {
    /// `imports`, `function init()` (GNOME Shell 40–44).
    Legacy,
    /// `import … from 'gi://…'`, `export default class … extends Extension` (45 and later).
    Module,
}

impl ExtensionFormat {
    /// The format GNOME Shell `major` loads.
    pub fn for_shell(major: u32) -> ExtensionFormat {
        if major >= 45 {
            ExtensionFormat::Module
        } else {
            ExtensionFormat::Legacy
        }
    }

    /// The other one (what this shell shows as out of date).
    pub fn other(self) -> ExtensionFormat {
        match self {
            ExtensionFormat::Legacy => ExtensionFormat::Module,
            ExtensionFormat::Module => ExtensionFormat::Legacy,
        }
    }

    fn folder(self) -> &'static str {
        match self {
            ExtensionFormat::Legacy => "legacy",
            ExtensionFormat::Module => "module",
        }
    }
}

/// The source of our shipped GNOME Shell extension in `format`
/// (`packaging/linux/gnome-shell-extension/{legacy,module}`).
pub fn focus_extension_dir(format: ExtensionFormat) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../packaging/linux/gnome-shell-extension")
        .join(format.folder())
        .join(companion_desktop::desktop::GNOME_FOCUS_EXTENSION)
}

/// The test-only probe extension in `format`.
pub fn probe_extension_dir(format: ExtensionFormat) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("gnome-extension")
        .join(format.folder())
        .join(crate::gnome::PROBE)
}
