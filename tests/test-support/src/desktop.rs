//! The parts of a virtual desktop every desktop suite (the tray's, the hooks' `focus`, the
//! real shells') makes the same way: whether a test runs here at all (the skip-or-fail rule
//! of `$FABRIC_REQUIRE_DESKTOP_TESTS`), Xvfb on a display of its own, a `dbus-daemon`'s
//! address, the session's runtime folder, and the folder a test's logs and screenshots go
//! to. What one desktop has that others lack (dunst, trayer, GNOME Shell, KWin) stays with
//! its suite.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Set (to `1`) by `scripts/test.sh`: a missing desktop or program is then a failure, never a
/// skip.
pub const REQUIRE: &str = "FABRIC_REQUIRE_DESKTOP_TESTS";

/// Which of `programs` are not on `PATH`.
pub fn missing_programs<'a>(programs: &[&'a str]) -> Vec<&'a str> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    programs
        .iter()
        .copied()
        .filter(|p| !std::env::split_paths(&path).any(|dir| dir.join(p).is_file()))
        .collect()
}

/// Whether `programs` are all on `PATH`. If not: [`cannot_run`], naming the missing ones and
/// the `packages` that have them.
pub fn require(test: &str, programs: &[&str], packages: &str) -> bool {
    let missing = missing_programs(programs);
    missing.is_empty()
        || cannot_run(
            test,
            &format!(
                "{} not found on PATH (packages {packages})",
                missing.join(", ")
            ),
        )
}

/// Says why `test` cannot run here: a failure under `$FABRIC_REQUIRE_DESKTOP_TESTS=1`, else a
/// line on stderr (past the harness's capture, so a skip is seen) and `false`.
pub fn cannot_run(test: &str, why: &str) -> bool {
    if std::env::var_os(REQUIRE).is_some_and(|v| v == "1") {
        panic!("{test}: {why}; ${REQUIRE}=1 says this test must run");
    }
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED {test}: {why}. scripts/test.sh installs what it needs and runs it."
    );
    false
}

/// Xvfb (1024x768, 24 bits, no TCP) on a display it picks itself (`-displayfd`: tests running
/// in parallel never clash, stale lock files are passed over), once it accepts connections.
/// Gives the process (the caller ends it) and the display (`:N`).
pub fn start_xvfb() -> (Child, String) {
    let mut xvfb = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1024x768x24",
            "-nolisten",
            "tcp",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb (package xvfb)");
    let mut line = String::new();
    BufReader::new(xvfb.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let number = line.trim();
    assert!(!number.is_empty(), "Xvfb gave no display number");
    (xvfb, format!(":{number}"))
}

/// The address a `dbus-daemon` started with `--print-address` (its stdout piped) prints
/// first; fails naming `name` when it printed none.
pub fn bus_address(daemon: &mut Child, name: &str) -> String {
    let mut line = String::new();
    BufReader::new(daemon.stdout.take().expect("the bus's stdout piped"))
        .read_line(&mut line)
        .unwrap();
    let address = line.trim().to_string();
    assert!(
        !address.is_empty(),
        "{name}: dbus-daemon printed no address"
    );
    address
}

/// Makes `home`'s runtime folder (`$XDG_RUNTIME_DIR`: `run`, mode 0700, as logind makes it)
/// and gives it.
pub fn runtime_dir(home: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let run = home.join("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    run
}

/// Where test `test` of suite `suite` keeps its logs and screenshots (its artefacts):
/// `$FABRIC_E2E_SHOTS/<suite>/<test>`, by default `target/e2e-shots/<suite>/<test>` of this
/// checkout. Not made here.
pub fn artefacts_path(suite: &str, test: &str) -> PathBuf {
    std::env::var_os("FABRIC_E2E_SHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/e2e-shots"))
        .join(suite)
        .join(test)
}
