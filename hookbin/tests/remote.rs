//! `fabric-session remote add / remove / list` against a real OpenSSH remote (test-support's
//! `ssh_remote`: Debian's sshd on a loopback port, a fresh Unix user): the program copied and
//! checked, the host's hook plan shown and applied only with its digest, everything taken off
//! again; a remote that needs a person (a host key, a password) says what to run, in one line.
//! Linux, as root (a user is made for the remote).
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Output, Stdio};

use common::*;
use test_support::ssh_remote::SshRemote;

fn remote_cmd(home: &Home, config: &Path, args: &[&str]) -> Output {
    home.command(&["remote"])
        .args(args)
        .env("FABRIC_SSH_CONFIG", config)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn followed(home: &Home) -> Vec<String> {
    let path = home.path().join(".config/fabric-companion/settings.json");
    let Ok(bytes) = std::fs::read(&path) else {
        return Vec::new();
    };
    let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    value["remotes"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|r| r.as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The refusal's one line on stderr.
fn one_line(out: &Output) -> String {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stdout {}", text(&out.stdout));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("fabric-session: "), "{err}");
    err.trim_end().to_string()
}

#[test]
fn remote_add_sets_a_fresh_remote_up_on_consent_and_remove_takes_it_off() {
    let Some(remote) = SshRemote::start("remote::add_and_remove") else {
        return;
    };
    let home = Home::new();
    let program = remote
        .home()
        .join(".local/share/fabric-companion/bin/fabric-session");
    let claude_settings = remote.home().join(".claude/settings.json");

    // Without consent: our program is copied and checked, the plan shown, nothing applied.
    let out = remote_cmd(&home, remote.config(), &["add", "fabric-remote"]);
    let said = text(&out.stdout);
    assert!(
        out.status.success(),
        "{said}\n{}\nsshd: {}",
        text(&out.stderr),
        remote.sshd_log()
    );
    let ours = std::fs::read(BIN).unwrap();
    let sha = {
        use sha2::Digest;
        sha2::Sha256::digest(&ours)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    assert!(
        said.contains(&format!(
            "Copied fabric-session to fabric-remote (Linux x86_64, sha256 {sha})"
        )),
        "{said}"
    );
    assert_eq!(std::fs::read(&program).unwrap(), ours, "the copy differs");
    let meta = std::fs::metadata(&program).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o755);
    let uid: u32 = text(&remote.run_as_remote("id -u").stdout)
        .trim()
        .parse()
        .unwrap();
    assert_eq!(meta.uid(), uid, "not the remote user's");
    assert!(
        said.contains(&format!(
            "Claude Code on fabric-remote: {}",
            claude_settings.display()
        )),
        "{said}"
    );
    assert!(said.contains("Would add"), "{said}");
    let digest = said
        .lines()
        .find_map(|l| l.trim().strip_prefix("Plan digest: "))
        .expect("the plan's digest")
        .to_string();
    assert!(
        said.contains(&format!(
            "fabric-session remote add fabric-remote --host claude --apply --expect-sha256 {digest}"
        )),
        "{said}"
    );
    assert!(!claude_settings.exists(), "applied without consent");
    assert_eq!(followed(&home), ["fabric-remote"]);

    // A digest that is not the plan's is refused there, in one line; nothing is written.
    let wrong = format!("sha256:{}", "0".repeat(64));
    let out = remote_cmd(
        &home,
        remote.config(),
        &["add", "fabric-remote", "--apply", "--expect-sha256", &wrong],
    );
    let line = one_line(&out);
    assert!(
        line.starts_with("fabric-session: fabric-remote: "),
        "{line}"
    );
    assert!(!claude_settings.exists(), "applied with a wrong digest");

    // With the plan's digest: applied, pointing at the remote's stable copy.
    let out = remote_cmd(
        &home,
        remote.config(),
        &[
            "add",
            "fabric-remote",
            "--apply",
            "--expect-sha256",
            &digest,
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let settings = std::fs::read_to_string(&claude_settings).unwrap();
    assert!(
        settings.contains(&format!("{} hook session-start", program.display())),
        "{settings}"
    );
    assert_eq!(followed(&home), ["fabric-remote"], "followed twice");

    // The stream the tray reads now runs there.
    let status = remote.ssh(
        remote.config(),
        &format!("{} status --json", program.display()),
    );
    assert!(status.status.success(), "{}", text(&status.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(doc["schema"], "fabric-session-status/1");

    let out = remote_cmd(&home, remote.config(), &["list"]);
    assert_eq!(
        text(&out.stdout),
        "fabric-remote: not followed now (the tray is not running)\n"
    );

    // Remove: shown first, done only with --apply.
    let out = remote_cmd(&home, remote.config(), &["remove", "fabric-remote"]);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(said.contains("Would take out"), "{said}");
    assert!(
        said.contains("fabric-session remote remove fabric-remote --apply"),
        "{said}"
    );
    assert!(program.exists() && claude_settings.exists());

    let out = remote_cmd(
        &home,
        remote.config(),
        &["remove", "fabric-remote", "--apply"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!program.exists(), "the program stayed");
    let left = std::fs::read_to_string(&claude_settings).unwrap_or_default();
    assert!(!left.contains("fabric-session"), "{left}");
    assert!(followed(&home).is_empty());
}

#[test]
fn a_remote_that_needs_a_person_says_what_to_run_in_one_line() {
    let Some(remote) = SshRemote::start("remote::needs_a_person") else {
        return;
    };
    let home = Home::new();

    let out = remote_cmd(
        &home,
        remote.config_unknown_host(),
        &["add", "fabric-remote"],
    );
    let line = one_line(&out);
    assert_eq!(
        line,
        format!(
            "fabric-session: fabric-remote: its host key is not known yet: run `ssh -F {} fabric-remote` once",
            remote.config_unknown_host().display()
        )
    );

    let out = remote_cmd(&home, remote.config_no_key(), &["add", "fabric-remote"]);
    let line = one_line(&out);
    assert!(
        line.starts_with("fabric-session: fabric-remote: ssh needs a password or a key"),
        "{line}"
    );

    let planted = home.path().join("planted");
    let option = format!("-oProxyCommand=touch {}", planted.display());
    let out = remote_cmd(&home, remote.config(), &["add", "--", &option]);
    let line = one_line(&out);
    assert!(line.contains("is not a remote we take"), "{line}");
    assert!(!planted.exists(), "ran what a destination said");

    assert!(
        !remote
            .home()
            .join(".local/share/fabric-companion/bin")
            .exists(),
        "something was copied"
    );
    assert!(followed(&home).is_empty(), "followed a remote never set up");
}
