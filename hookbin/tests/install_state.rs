//! The installer's library API as the tray calls it: `plan`, `apply_with_stamp` and
//! `hook_state`, over a temporary home.
//!
//! `Paths` is built by hand; the hosts' folder variables (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`,
//! `KIMI_CODE_HOME`) are read from this process's environment, so a host whose variable is
//! set here is skipped rather than pointed at a real config.
#![cfg(unix)] // file modes and a temporary HOME given by HOME and XDG variables (Windows reads neither)

mod install_support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use companion_core::host::Host;
use companion_core::install::{self, HookState, Operation};
use companion_core::paths::Paths;
use install_support::backups_of;

fn paths_in(home: &Path) -> Paths {
    let data = home.join(".local/share");
    Paths {
        home: home.to_path_buf(),
        fabric_dir: data.join("passioncode-fabric"),
        services_dir: data.join("passioncode-fabric/services"),
        cache_dir: home.join(".cache/fabric-companion"),
        data_dir: data.join("fabric-companion"),
        config_dir: home.join(".config/fabric-companion"),
    }
}

/// The hosts whose config folder variable is not set in this process.
fn testable_hosts() -> Vec<Host> {
    Host::ALL
        .into_iter()
        .filter(|host| {
            let var = match host {
                Host::Claude => "CLAUDE_CONFIG_DIR",
                Host::Codex => "CODEX_HOME",
                Host::Kimi => "KIMI_CODE_HOME",
            };
            std::env::var_os(var).is_none_or(|v| v.is_empty())
        })
        .collect()
}

fn fake_program(dir: &Path) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let program = dir.join("fabric-session");
    fs::write(&program, "").unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
    program
}

#[test]
fn hook_state_follows_the_file() {
    for host in testable_hosts() {
        let temp = tempfile::tempdir().unwrap();
        let paths = paths_in(temp.path());
        let program = fake_program(&temp.path().join("opt"));
        let file = install::config_file(host, &paths);

        assert_eq!(
            install::hook_state(host, &paths),
            HookState::NotInstalled,
            "{host}"
        );

        let plan = install::plan(host, Operation::Install, Some(&program), &paths).unwrap();
        let applied = install::apply(
            host,
            Operation::Install,
            Some(&program),
            &paths,
            &plan.digest,
        )
        .unwrap();
        assert!(applied.changed && applied.backup.is_none(), "{host}");
        assert_eq!(
            install::hook_state(host, &paths),
            HookState::Installed {
                command_path: program.clone()
            },
            "{host}"
        );

        fs::remove_file(&program).unwrap();
        let state = install::hook_state(host, &paths);
        assert_eq!(
            state,
            HookState::Stale {
                command_path: program.clone()
            },
            "{host}"
        );
        assert_eq!(state.word(), "stale");

        fs::write(&file, "{ not a config").unwrap();
        let state = install::hook_state(host, &paths);
        assert!(
            matches!(state, HookState::Unreadable { .. }),
            "{host}: {state:?}"
        );
    }
}

#[test]
fn a_partial_install_is_incomplete() {
    let host = Host::Kimi;
    if !testable_hosts().contains(&host) {
        return;
    }
    let temp = tempfile::tempdir().unwrap();
    let paths = paths_in(temp.path());
    let program = fake_program(&temp.path().join("opt"));
    let file = install::config_file(host, &paths);
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let command = install::hook_command(&program, host, "session-start");
    fs::write(
        &file,
        format!("[[hooks]]\nevent = \"SessionStart\"\nmatcher = \"\"\ncommand = \"{command}\"\ntimeout = 5\n"),
    )
    .unwrap();
    assert_eq!(
        install::hook_state(host, &paths),
        HookState::Incomplete {
            command_path: program.clone(),
            missing: vec![
                "UserPromptSubmit".into(),
                "Stop".into(),
                "SessionEnd".into()
            ],
        }
    );
    // An install adds only what is missing.
    let plan = install::plan(host, Operation::Install, Some(&program), &paths).unwrap();
    let added: Vec<&str> = plan.add.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(added, ["UserPromptSubmit", "Stop", "SessionEnd"]);
    assert!(plan.remove.is_empty());
}

#[test]
fn two_backups_with_the_same_stamp_both_survive() {
    for host in testable_hosts() {
        let temp = tempfile::tempdir().unwrap();
        let paths = paths_in(temp.path());
        let program = fake_program(&temp.path().join("opt"));
        let file = install::config_file(host, &paths);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        let original = if host == Host::Kimi {
            "a = 1\n"
        } else {
            "{\n  \"a\": 1\n}\n"
        };
        fs::write(&file, original).unwrap();
        let stamp = "20261202T101010Z";

        let plan = install::plan(host, Operation::Install, Some(&program), &paths).unwrap();
        let first = install::apply_with_stamp(
            host,
            Operation::Install,
            Some(&program),
            &paths,
            &plan.digest,
            stamp,
        )
        .unwrap();
        let installed = fs::read_to_string(&file).unwrap();
        let plan = install::plan(host, Operation::Remove, None, &paths).unwrap();
        let second =
            install::apply_with_stamp(host, Operation::Remove, None, &paths, &plan.digest, stamp)
                .unwrap();

        let first = first.backup.unwrap();
        let second = second.backup.unwrap();
        assert!(
            first.to_string_lossy().ends_with(&format!(".{stamp}.bak")),
            "{host}"
        );
        assert!(
            second
                .to_string_lossy()
                .ends_with(&format!(".{stamp}.1.bak")),
            "{host}"
        );
        assert_eq!(fs::read_to_string(&first).unwrap(), original, "{host}");
        assert_eq!(fs::read_to_string(&second).unwrap(), installed, "{host}");
        assert_eq!(backups_of(&file), vec![first, second], "{host}");
        assert_eq!(fs::read_to_string(&file).unwrap(), original, "{host}");
    }
}

#[test]
fn the_plan_carries_the_new_text_and_a_diff_but_never_serialises_them() {
    for host in testable_hosts() {
        let temp = tempfile::tempdir().unwrap();
        let paths = paths_in(temp.path());
        let program = fake_program(&temp.path().join("opt"));
        let plan = install::plan(host, Operation::Install, Some(&program), &paths).unwrap();
        let new_text = plan.new_text.as_deref().unwrap();
        for entry in &plan.add {
            assert!(new_text.contains(&entry.command), "{host}");
            assert!(
                plan.diff
                    .lines()
                    .any(|line| line.starts_with('+') && line.contains(&entry.command)),
                "{host}: {}",
                plan.diff
            );
        }
        assert!(
            plan.apply_command
                .as_deref()
                .unwrap()
                .ends_with(&format!("--expect-sha256 {}", plan.digest))
        );
        assert_eq!(plan.sha256, None, "{host}");
        let json = serde_json::to_value(&plan).unwrap();
        assert!(
            json.get("new_text").is_none() && json.get("diff").is_none(),
            "{host}"
        );
        assert_eq!(json["action"]["kind"], "install");

        // A wrong digest is refused with both digests in the error.
        let err =
            install::apply(host, Operation::Install, Some(&program), &paths, "0000").unwrap_err();
        assert_eq!(err.code(), "digest-mismatch");
        assert!(
            err.to_string().contains(&format!(
                "expected plan digest 0000, it is now {}",
                plan.digest
            )),
            "{err}"
        );
        assert!(!install::config_file(host, &paths).exists());

        // The dashboard's path: a plan shown for one program never applies to another.
        let other = fake_program(&temp.path().join("elsewhere"));
        let err = install::apply(host, Operation::Install, Some(&other), &paths, &plan.digest)
            .unwrap_err();
        assert_eq!(err.code(), "digest-mismatch", "{host}");
        assert!(!install::config_file(host, &paths).exists(), "{host}");
    }
}
