//! The Claude Code plugin package in `hookbin/claude-plugin/`: its JSON files have the
//! documented shape, its hooks match what `install-host-hooks --host claude` installs, and
//! its build step is in place.
#![cfg(unix)] // file modes and a temporary HOME given by HOME and XDG variables (Windows reads neither)

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use companion_hosts::host::Host;
use companion_hosts::install;
use serde_json::Value;

const PLUGIN_PROGRAM: &str = "${CLAUDE_PLUGIN_ROOT}/bin/fabric-session";

fn plugin_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("claude-plugin")
}

fn read_json(relative: &str) -> Value {
    let path = plugin_dir().join(relative);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn manifest_names_the_plugin() {
    let manifest = read_json(".claude-plugin/plugin.json");
    assert_eq!(manifest["name"], install::CLAUDE_PLUGIN_NAME);
    assert_eq!(
        manifest["version"],
        env!("CARGO_PKG_VERSION"),
        "kept in step with the crate"
    );
    assert!(manifest["description"].is_string());
    // hooks/hooks.json is loaded by convention; naming it here too would load it twice.
    assert!(manifest.get("hooks").is_none());
}

#[test]
fn hooks_wire_every_event_to_the_plugins_binary() {
    let hooks = read_json("hooks/hooks.json");
    let events = hooks["hooks"].as_object().expect("a hooks object");
    let names: Vec<&str> = events.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "SessionStart",
            "Stop",
            "UserPromptSubmit",
            "SessionEnd",
            "PermissionRequest",
            "Notification",
            "PostToolUse",
            "PostToolUseFailure",
            "StopFailure",
            "SubagentStop"
        ]
    );

    // Exactly what the installer puts in settings.json, with the plugin's program.
    let installer = install::entries_for(Host::Claude, Path::new("/P/fabric-session"));
    for expected in installer {
        let groups = events[&expected.event]
            .as_array()
            .expect("a list of groups");
        assert_eq!(groups.len(), 1, "{}", expected.event);
        let group = &groups[0];
        assert_eq!(
            group.get("matcher").and_then(Value::as_str),
            expected.matcher.as_deref(),
            "{}",
            expected.event
        );
        let inner = group["hooks"].as_array().unwrap();
        assert_eq!(inner.len(), 1, "{}", expected.event);
        let hook = &inner[0];
        assert_eq!(hook["type"], "command");
        assert_eq!(hook["timeout"], 5);
        let command = hook["command"].as_str().unwrap();
        assert_eq!(
            companion_hosts::hook_command::our_program(command).as_deref(),
            Some(PLUGIN_PROGRAM),
            "{command}"
        );
        let args = expected.command.strip_prefix("/P/fabric-session ").unwrap();
        assert!(args.starts_with("hook "), "{args}");
        assert!(
            command.ends_with(&format!("/bin/fabric-session\" {args}")),
            "{command} should run `{args}`"
        );
    }
}

#[test]
fn marketplace_lists_the_plugin_with_its_source() {
    let marketplace = read_json(".claude-plugin/marketplace.json");
    assert!(marketplace["name"].is_string());
    assert!(marketplace["owner"]["name"].is_string());
    let plugins = marketplace["plugins"].as_array().expect("a plugins list");
    let entry = plugins
        .iter()
        .find(|p| p["name"] == install::CLAUDE_PLUGIN_NAME)
        .expect("the plugin is listed");
    let source = entry["source"].as_str().expect("a source path");
    assert!(source.starts_with("./"), "{source}");
    let root = plugin_dir().join(source);
    assert!(
        root.join(".claude-plugin/plugin.json").is_file(),
        "the source is the plugin's folder"
    );
}

#[test]
fn the_build_step_is_documented_and_bin_is_ignored() {
    let dir = plugin_dir();
    let script = dir.join("build.sh");
    let text = fs::read_to_string(&script).unwrap();
    assert!(text.starts_with("#!/usr/bin/env bash"));
    assert!(text.contains("cargo build --release -p fabric-session"));
    assert!(text.contains("$here/bin"));
    assert_ne!(
        fs::metadata(&script).unwrap().permissions().mode() & 0o111,
        0,
        "executable"
    );
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .status();
    if let Ok(status) = syntax {
        assert!(status.success(), "build.sh has a syntax error");
    }
    let ignore = fs::read_to_string(dir.join(".gitignore")).unwrap();
    assert!(ignore.lines().any(|line| line.trim() == "bin/"));
    let readme = fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(readme.contains("build.sh") && readme.contains("claude plugin install"));
}
