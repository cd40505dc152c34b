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

use companion_hosts::host::Host;
use companion_hosts::install::{self, HookState, Operation};
use install_support::backups_of;
use test_support::files::paths_in;

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

/// Kimi Code's events, in the installer's order.
const KIMI_EVENTS: [&str; 12] = [
    "SessionStart",
    "UserPromptSubmit",
    "Stop",
    "SessionEnd",
    "PermissionRequest",
    "PermissionResult",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "StopFailure",
    "Interrupt",
    "SubagentStop",
];

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
    let command = companion_hosts::hook_command::hook_command(&program, host, "session-start");
    fs::write(
        &file,
        format!("[[hooks]]\nevent = \"SessionStart\"\nmatcher = \"\"\ncommand = \"{command}\"\ntimeout = 5\n"),
    )
    .unwrap();
    assert_eq!(
        install::hook_state(host, &paths),
        HookState::Incomplete {
            command_path: program.clone(),
            missing: KIMI_EVENTS[1..].iter().map(|e| e.to_string()).collect(),
        }
    );
    // An install adds only what is missing.
    let plan = install::plan(host, Operation::Install, Some(&program), &paths).unwrap();
    let added: Vec<&str> = plan.add.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(added, KIMI_EVENTS[1..]);
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

/// The four events every install before the state events had.
const TURN_EVENTS: [&str; 4] = ["SessionStart", "Stop", "UserPromptSubmit", "SessionEnd"];

#[test]
fn an_install_from_before_the_state_events_is_offered_just_the_added_entries() {
    for host in testable_hosts() {
        let temp = tempfile::tempdir().unwrap();
        let paths = paths_in(temp.path());
        let program = fake_program(&temp.path().join("opt"));
        // Yesterday's install: the four turn events, written by the installer itself.
        let all = install::entries_for(host, &program);
        let old: Vec<install::Entry> = all
            .iter()
            .filter(|e| TURN_EVENTS.contains(&e.event.as_str()))
            .cloned()
            .collect();
        assert_eq!(old.len(), 4, "{host}");
        let full = install::plan(host, Operation::Install, Some(&program), &paths).unwrap();
        install::apply_with_stamp(
            host,
            Operation::Install,
            Some(&program),
            &paths,
            &full.digest,
            "20261202T101010Z",
        )
        .unwrap();
        let file = install::config_file(host, &paths);
        // Take the new entries out again by hand, as an older version would have left it.
        let text = fs::read_to_string(&file).unwrap();
        let kept = strip_state_entries(host, &text);
        fs::write(&file, &kept).unwrap();
        let state = install::hook_state(host, &paths);
        let HookState::Incomplete { missing, .. } = &state else {
            panic!("{host}: {state:?}");
        };
        let added_events: Vec<String> = all
            .iter()
            .filter(|e| !TURN_EVENTS.contains(&e.event.as_str()))
            .map(|e| e.event.clone())
            .collect();
        assert_eq!(missing, &added_events, "{host}");
        // The upgrade's plan: just the added entries, nothing taken out.
        let plan = install::plan(host, Operation::Install, Some(&program), &paths).unwrap();
        assert!(plan.remove.is_empty(), "{host}: {:?}", plan.remove);
        let added: Vec<&str> = plan.add.iter().map(|e| e.event.as_str()).collect();
        assert_eq!(added, added_events, "{host}");
        for old_entry in &old {
            assert!(
                !plan
                    .add_text
                    .contains(&format!("hook {} ", arg_of(old_entry)))
                    && !plan
                        .add_text
                        .ends_with(&format!("hook {}", arg_of(old_entry))),
                "{host}: the plan shows {} again:\n{}",
                old_entry.event,
                plan.add_text
            );
        }
        // Codex asks the person to approve the new hooks, as for any install.
        if host == Host::Codex {
            assert!(
                plan.notes.iter().any(|n| n.contains("/hooks")),
                "{:?}",
                plan.notes
            );
        }
        install::apply_with_stamp(
            host,
            Operation::Install,
            Some(&program),
            &paths,
            &plan.digest,
            "20261202T111111Z",
        )
        .unwrap();
        assert!(matches!(
            install::hook_state(host, &paths),
            HookState::Installed { .. }
        ));
    }
}

/// `hook <arg>` of an entry's command.
fn arg_of(entry: &install::Entry) -> String {
    entry
        .command
        .split(" hook ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .to_string()
}

/// The config with our state-event entries taken out (the shape an older install left).
fn strip_state_entries(host: Host, text: &str) -> String {
    if host == Host::Kimi {
        let mut out = String::new();
        for block in text.split("\n\n") {
            let turn = TURN_EVENTS
                .iter()
                .any(|e| block.contains(&format!("event = \"{e}\"")));
            if !block.contains("[[hooks]]") || turn {
                out.push_str(block);
                out.push_str("\n\n");
            }
        }
        return out.trim_end().to_string() + "\n";
    }
    let mut value: serde_json::Value = serde_json::from_str(text).unwrap();
    let hooks = value["hooks"].as_object_mut().unwrap();
    hooks.retain(|event, _| TURN_EVENTS.contains(&event.as_str()));
    serde_json::to_string_pretty(&value).unwrap()
}
