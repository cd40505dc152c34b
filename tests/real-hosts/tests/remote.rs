//! Claude Code on another machine (`real_hosts::remote`): a real sshd as another Unix user,
//! set up with `fabric-session remote add`, Claude Code's TUI in that user's tmux, the real
//! tray here following it over ssh. Says the time from the prompt on the remote's screen to
//! the icon's mark and to the notification here (`MEASURED`).
#![cfg(unix)] // sshd, tmux, Xvfb, D-Bus

use real_hosts::hosts::{self, Host};
use real_hosts::{desktop, remote};
use test_support::ssh_remote::SshRemote;

#[test]
fn claude_code_on_a_remote_needs_you_here() {
    let test = "claude_code_on_a_remote_needs_you_here";
    let Some(program) = hosts::require(Host::Claude, test) else {
        return;
    };
    let mut missing = desktop::missing_programs();
    let path = std::env::var_os("PATH").unwrap_or_default();
    for (program, package) in [
        ("openbox", "openbox"),
        ("xterm", "xterm"),
        ("xdotool", "xdotool"),
        ("tmux", "tmux"),
    ] {
        if !std::env::split_paths(&path).any(|dir| dir.join(program).is_file()) {
            missing.push(format!("{program} (package {package})"));
        }
    }
    if !missing.is_empty() {
        let why = format!("no desktop here: {} missing", missing.join(", "));
        if hosts::required() || std::env::var_os("FABRIC_REQUIRE_DESKTOP_TESTS").is_some() {
            panic!("{test}: {why}");
        }
        hosts::say(&format!("{test}: not run: {why}"));
        return;
    }
    // The remote needs root (a Unix user, sshd): without it SshRemote says why, and fails
    // where desktop tests are required (FABRIC_REQUIRE_DESKTOP_TESTS=1, as run.sh sets).
    let Some(ssh) = SshRemote::start(test) else {
        return;
    };
    real_hosts::scenario::set_base(env!("CARGO_TARGET_TMPDIR"));
    let base = real_hosts::scenario::base_dir();
    let shot = std::env::var_os("FABRIC_E2E_SHOTS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/e2e-shots")
        })
        .join("real-hosts/remote-claude-needs-you.png");
    match remote::prove(&program, &base, &ssh, &shot) {
        Ok(m) => hosts::say(&format!(
            "MEASURED Claude Code on a remote: prompt on its screen -> the icon's mark here {} ms, -> the notification here {} ms",
            m.to_mark.as_millis(),
            m.to_notification.as_millis()
        )),
        Err(why) => panic!("{test}: {why}\nsshd: {}", ssh.sshd_log()),
    }
}
