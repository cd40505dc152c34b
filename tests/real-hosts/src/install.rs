//! Our hooks wired into a host exactly as a person does it: the desktop app's stable copy of
//! `fabric-session` in place (the tray's own `stable_binary::ensure_copy`, as at its first
//! start), then
//! `fabric-session install-host-hooks --host <h>` (a dry run), then the exact apply command
//! the dry run printed, run through the shell as pasted.

use std::path::Path;
use std::process::Output;

use companion_hosts::stable_binary::{self, CopyOutcome};

use crate::binaries;
use crate::home::TestHome;

/// What the person saw and did.
#[derive(Clone, Debug)]
pub struct Installed {
    /// The dry run's output.
    pub dry_run: String,
    /// The command the dry run printed under "To apply, run:".
    pub apply_command: String,
    /// The apply's output.
    pub applied: String,
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Puts the stable copy of `fabric-session` where the desktop app keeps it, with the very
/// function the tray runs at its first start and after every upgrade.
pub fn place_stable_copy(home: &TestHome) -> CopyOutcome {
    update_stable_copy(home, &binaries::fabric_session())
}

/// What the tray does when the app is upgraded: the stable copy takes `source`'s content, in
/// place (only when it differs).
pub fn update_stable_copy(home: &TestHome, source: &Path) -> CopyOutcome {
    let stable = home.stable_binary();
    assert_eq!(
        stable,
        home.product_paths().stable_binary(),
        "the suite's stable path is the product's"
    );
    stable_binary::ensure_copy(source, &stable)
        .unwrap_or_else(|e| panic!("cannot copy fabric-session to {}: {e}", stable.display()))
}

/// The dry run, then the printed apply command. Panics (with both outputs) when either fails
/// or the dry run prints no apply command.
pub fn install_hooks(home: &TestHome) -> Installed {
    place_stable_copy(home);
    let host = home.host().cli_name();
    let output = home
        .command(&home.stable_binary())
        .args(["install-host-hooks", "--host", host])
        .output()
        .expect("fabric-session runs");
    let dry_run = text(&output);
    assert!(output.status.success(), "the dry run failed:\n{dry_run}");
    let apply_command = dry_run
        .lines()
        .skip_while(|line| !line.starts_with("To apply, run:"))
        .nth(1)
        .map(|line| line.trim().to_owned())
        .unwrap_or_else(|| panic!("the dry run printed no apply command:\n{dry_run}"));
    let output = home
        .command(std::path::Path::new("/bin/sh"))
        .args(["-c", &apply_command])
        .output()
        .expect("the shell runs");
    let applied = text(&output);
    assert!(
        output.status.success(),
        "`{apply_command}` failed:\n{applied}\n(dry run:\n{dry_run})"
    );
    Installed {
        dry_run,
        apply_command,
        applied,
    }
}

/// `fabric-session status` in this HOME (text), with its exit status.
pub fn status_text(home: &TestHome) -> String {
    let output = home
        .command(&home.stable_binary())
        .arg("status")
        .output()
        .expect("fabric-session runs");
    text(&output)
}

/// `fabric-session status --json` in this HOME.
pub fn status_json(home: &TestHome) -> serde_json::Value {
    let output = home
        .command(&home.stable_binary())
        .args(["status", "--json"])
        .output()
        .expect("fabric-session runs");
    assert!(output.status.success(), "status --json failed: {output:?}");
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("status --json is not JSON ({e}): {output:?}"))
}

/// The dry run `install-host-hooks --host <h>` prints now.
pub fn dry_run(home: &TestHome) -> String {
    let output = home
        .command(&home.stable_binary())
        .args(["install-host-hooks", "--host", home.host().cli_name()])
        .output()
        .expect("fabric-session runs");
    text(&output)
}
