//! The ssh bench itself: a real sshd for a fresh user reached through the bench's configs;
//! the configs that must fail fail as ssh says they do; sshd killed and started again.

#![cfg(unix)]

use std::time::Instant;

use test_support::ssh_remote::SshRemote;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_bench_reaches_a_fresh_user_and_drops_off_on_demand() {
    let Some(mut remote) = SshRemote::start("ssh_bench::reaches") else {
        return;
    };
    let started = Instant::now();
    let out = remote.ssh(remote.config(), "id -un; echo \"$HOME\"");
    assert!(
        out.status.success(),
        "ssh failed: {} / sshd: {}",
        text(&out.stderr),
        remote.sshd_log()
    );
    assert_eq!(
        text(&out.stdout),
        format!("{}\n{}\n", remote.user(), remote.home().display())
    );
    let local = remote.run_as_remote("id -un");
    assert_eq!(text(&local.stdout).trim(), remote.user());

    let unknown = remote.ssh(remote.config_unknown_host(), "true");
    assert_eq!(unknown.status.code(), Some(255));
    assert!(
        text(&unknown.stderr).contains("Host key verification failed"),
        "{}",
        text(&unknown.stderr)
    );
    let no_key = remote.ssh(remote.config_no_key(), "true");
    assert_eq!(no_key.status.code(), Some(255));
    assert!(
        text(&no_key.stderr).contains("Permission denied"),
        "{}",
        text(&no_key.stderr)
    );

    // A session in progress is cut when sshd is killed, and the port refuses until restart.
    let mut long = std::process::Command::new("ssh")
        .arg("-F")
        .arg(remote.config())
        .args([
            "-T",
            "-o",
            "BatchMode=yes",
            "--",
            remote.alias(),
            "sleep 60",
        ])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    test_support::wait::wait_for(
        "the remote's sleep",
        std::time::Duration::from_secs(10),
        || {
            text(&remote.run_as_remote("ps -u \"$USER\" -o comm=").stdout)
                .lines()
                .any(|l| l == "sleep")
        },
    );
    remote.kill_sshd();
    let status = test_support::wait::wait_until(
        "ssh to end once sshd is killed",
        std::time::Duration::from_secs(10),
        || long.try_wait().unwrap(),
    );
    assert!(!status.success());
    let refused = remote.ssh(remote.config(), "true");
    assert_eq!(refused.status.code(), Some(255));
    assert!(
        text(&refused.stderr).contains("Connection refused"),
        "{}",
        text(&refused.stderr)
    );
    remote.restart_sshd();
    assert!(remote.ssh(remote.config(), "true").status.success());
    eprintln!("ssh bench checks took {:?}", started.elapsed());
}
