//! `fabric-session status` and `status --json`, run as the real binary in a temporary HOME.
#![cfg(unix)] // a temporary HOME given by HOME and XDG variables, which Windows does not read

mod common;

use common::{Home, stdout, write};

/// `status` with a PATH holding no agent host (whatever this machine has installed).
fn status(home: &Home, args: &[&str]) -> std::process::Output {
    let mut all = vec!["status"];
    all.extend(args);
    home.command(&all)
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap()
}

fn status_json(home: &Home) -> serde_json::Value {
    let out = status(home, &["--json"]);
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn fabric_down_and_nothing_wired() {
    let home = Home::new();
    let out = status(&home, &[]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("Fabric: down (no hub.json)"), "{text}");
    assert!(text.contains("Session hooks: inert"), "{text}");
    assert!(
        text.contains("Claude Code: fabric not registered; hooks not installed"),
        "{text}"
    );
    assert!(text.contains("Live sessions: none"), "{text}");
    let json = status_json(&home);
    assert_eq!(json["schema"], "fabric-session-status/1");
    assert_eq!(json["fabric"]["state"], "down");
    assert_eq!(json["fabric"]["downReason"], "no hub.json");
    assert_eq!(json["sessionHooks"], "inert");
    assert_eq!(json["hosts"].as_array().unwrap().len(), 3);
    assert_eq!(json["services"]["descriptors"], 0);
}

#[test]
fn running_with_features_registrations_hooks_and_live_sessions_only() {
    let home = Home::new();
    home.fabric_running(&["session-hooks/1"]);
    home.register("codex");
    fabric_fake::write_service(&home.services_dir(), "a", "one", "http://127.0.0.1:5").unwrap();
    // Install the Codex hook through the real installer.
    let plan = home
        .command(&[
            "install-host-hooks",
            "--host",
            "codex",
            "--json",
            "--script",
            "/opt/fabric/fabric-session",
        ])
        .output()
        .unwrap();
    assert!(
        plan.status.success(),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    let digest = plan["digest"].as_str().unwrap();
    let apply = home
        .command(&[
            "install-host-hooks",
            "--host",
            "codex",
            "--script",
            "/opt/fabric/fabric-session",
            "--apply",
            "--expect-sha256",
            digest,
        ])
        .output()
        .unwrap();
    assert!(
        apply.status.success(),
        "{}",
        String::from_utf8_lossy(&apply.stderr)
    );
    // One live session (this test process is its host) and one whose host is gone.
    home.hook(
        "session-start",
        "codex",
        &home.payload("live-1", "SessionStart"),
    );
    write(
        &home.spool("gone-1").join("session.json"),
        r#"{"host":"claude","project":"old","startedAt":"2026-01-01T00:00:00Z","hostPid":4194304}"#,
    );
    let json = status_json(&home);
    assert_eq!(json["fabric"]["state"], "running");
    assert_eq!(json["fabric"]["features"][0], "session-hooks/1");
    assert_eq!(json["sessionHooks"], "active");
    let codex = &json["hosts"][1];
    assert_eq!(codex["host"], "codex");
    assert_eq!(codex["fabricRegistered"], true);
    assert_eq!(codex["scopes"][0], "user");
    // The program does not exist: installed with a stale path.
    assert_eq!(codex["hooks"]["state"], "stale");
    assert_eq!(codex["hooks"]["commandPath"], "/opt/fabric/fabric-session");
    assert_eq!(json["services"]["descriptors"], 1);
    assert_eq!(json["services"]["local"], 1);
    let sessions = json["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["id"], "live-1");
    assert_eq!(sessions[0]["host"], "codex");
    assert!(sessions[0]["board"].is_null());
    let text = stdout(&status(&home, &[]));
    assert!(
        text.contains("Codex: fabric registered (user); hooks installed with a stale path"),
        "{text}"
    );
    assert!(
        text.contains("my-project · codex · unread unknown · idle (live-1)"),
        "{text}"
    );
}

/// Installs Codex's hooks with the stable copy in place, as a person does: the dry run, then
/// the apply with the digest it printed.
fn install_codex(home: &Home) {
    let stable = home
        .path()
        .join(".local/share/fabric-companion/bin/fabric-session");
    std::fs::create_dir_all(stable.parent().unwrap()).unwrap();
    std::fs::copy(common::BIN, &stable).unwrap();
    apply_codex_plan(home);
}

/// `install-host-hooks --host codex`: the dry run's plan digest, then `--apply` with it.
fn apply_codex_plan(home: &Home) {
    let plan = home
        .command(&["install-host-hooks", "--host", "codex", "--json"])
        .output()
        .unwrap();
    assert!(plan.status.success(), "{plan:?}");
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    let digest = plan["digest"].as_str().unwrap().to_string();
    let apply = home
        .command(&[
            "install-host-hooks",
            "--host",
            "codex",
            "--apply",
            "--expect-sha256",
            &digest,
        ])
        .output()
        .unwrap();
    assert!(apply.status.success(), "{apply:?}");
}

#[test]
fn codex_approval_is_read_from_codex_s_own_record() {
    let home = Home::new();
    home.register("codex");
    let secret = "sk-live-never-print-me";
    let config = home.path().join(".codex/config.toml");
    let base = std::fs::read_to_string(&config).unwrap()
        + &format!("\n[mcp_servers.other]\nbearer = \"{secret}\"\n");
    write(&config, &base);
    install_codex(&home);

    let json = status_json(&home);
    let approval = &json["hosts"][1]["approval"];
    assert_eq!(approval["state"], "waiting", "{approval}");
    // The four turn events and the four state events (PermissionRequest, PostToolUse,
    // Interrupt, SubagentStop).
    assert_eq!(approval["hooks"].as_array().unwrap().len(), 8, "{approval}");
    assert!(
        json["hosts"][0]
            .get("approval")
            .is_none_or(|a| a["state"] == "not-needed")
    );
    let text = stdout(&status(&home, &[]));
    assert!(
        text.contains("hooks installed (")
            && text.contains("), waiting for your approval in Codex: run /hooks"),
        "{text}"
    );
    let dry = stdout(
        &home
            .command(&["install-host-hooks", "--host", "codex"])
            .output()
            .unwrap(),
    );
    assert!(
        dry.contains("Note: Installed, waiting for your approval in Codex: run /hooks."),
        "{dry}"
    );

    // The record Codex's /hooks writes, for every hook of ours: approved.
    let hooks = approval["hooks"].as_array().unwrap();
    let record: String = hooks
        .iter()
        .map(|h| {
            format!(
                "[hooks.state.{}]\ntrusted_hash = {}\n\n",
                h["key"], h["hash"]
            )
        })
        .collect();
    write(&config, &format!("{base}\n{record}"));
    let json = status_json(&home);
    assert_eq!(json["hosts"][1]["approval"]["state"], "approved");
    let text = stdout(&status(&home, &[]));
    assert!(!text.contains("waiting"), "{text}");
    assert!(text.contains("approved in Codex"), "{text}");
    assert!(!text.contains(secret) && !json.to_string().contains(secret));

    // A group put before ours in hooks.json: the approvals no longer match its place.
    let hooks_json = home.path().join(".codex/hooks.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&hooks_json).unwrap()).unwrap();
    doc["hooks"]["Stop"].as_array_mut().unwrap().insert(
        0,
        serde_json::json!({"hooks": [{"type": "command", "command": "true"}]}),
    );
    write(&hooks_json, &doc.to_string());
    let json = status_json(&home);
    let approval = &json["hosts"][1]["approval"];
    assert_eq!(approval["state"], "waiting", "{approval}");
    assert_eq!(approval["events"], serde_json::json!(["Stop"]));
    assert_eq!(approval["approvedElsewhere"], true);
    assert!(
        approval["description"]
            .as_str()
            .unwrap()
            .contains("an entry was added before ours in hooks.json"),
        "{approval}"
    );
}

#[test]
fn our_codex_groups_go_after_the_ones_already_there() {
    let home = Home::new();
    let hooks_json = home.path().join(".codex/hooks.json");
    write(
        &hooks_json,
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
            "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "true"}]}]}}"#,
    );
    let stable = home
        .path()
        .join(".local/share/fabric-companion/bin/fabric-session");
    std::fs::create_dir_all(stable.parent().unwrap()).unwrap();
    std::fs::copy(common::BIN, &stable).unwrap();
    apply_codex_plan(&home);
    let json = status_json(&home);
    let keys: Vec<String> = json["hosts"][1]["approval"]["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["key"].as_str().unwrap().to_string())
        .collect();
    let file = hooks_json.display().to_string();
    assert_eq!(
        keys,
        [
            format!("{file}:stop:1:0"),
            format!("{file}:session_start:1:0"),
            format!("{file}:user_prompt_submit:0:0"),
            format!("{file}:session_end:0:0"),
            format!("{file}:permission_request:0:0"),
            format!("{file}:post_tool_use:0:0"),
            format!("{file}:interrupt:0:0"),
            format!("{file}:subagent_stop:0:0"),
        ]
    );
}

#[test]
fn a_host_s_version_is_read_beside_its_program_and_an_old_one_is_flagged() {
    let home = Home::new();
    let package = home.path().join("npm/lib/node_modules/@openai/codex");
    let program = package.join("bin/codex.js");
    std::fs::create_dir_all(program.parent().unwrap()).unwrap();
    std::fs::write(&program, "#!/usr/bin/env node\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = home.path().join("npm/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&program, bin.join("codex")).unwrap();
    let versioned = |version: &str| {
        write(
            &package.join("package.json"),
            &format!(r#"{{"name": "@openai/codex", "version": "{version}"}}"#),
        );
        let out = home
            .command(&["status", "--json"])
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let text = home
            .command(&["status"])
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .output()
            .unwrap();
        (json["hosts"][1]["hostVersion"].clone(), stdout(&text))
    };
    let (version, text) = versioned("0.169.0");
    assert_eq!(version["installed"], "0.169.0", "{version}");
    assert_eq!(version["tested"], "0.169.0");
    assert_eq!(version["olderThanTested"], false);
    assert!(
        text.contains("Codex 0.169.0: fabric not registered"),
        "{text}"
    );
    assert!(!text.contains("Warning"), "{text}");
    let (version, text) = versioned("0.150.1");
    assert_eq!(version["olderThanTested"], true);
    assert!(
        text.contains(
            "Warning: Codex 0.150.1 is older than 0.169.0, the version these hooks were tested with"
        ),
        "{text}"
    );
    // Not on PATH: unknown, never guessed.
    let json = status_json(&home);
    assert!(json["hosts"][1]["hostVersion"]["installed"].is_null());
}
