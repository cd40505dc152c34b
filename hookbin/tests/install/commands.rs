//! The installer's command line beyond the table: backups never overwritten, the stable copy
//! and the running binary, --script, an old path replaced in place, usage errors, plan digests,
//! a changed program refused, host-specific warnings, a dangling symlink refused, and what a
//! dry run shows.

use super::table::{CLAUDE_SETTINGS, CODEX_HOOKS, KIMI_CONFIG, SECRET, Setup, set_up};
use super::*;

#[test]
fn backups_are_never_overwritten_even_within_one_second() {
    for host in HOSTS {
        let sandbox = Sandbox::new();
        sandbox.install_stable_binary();
        let original = match host {
            "claude" => CLAUDE_SETTINGS,
            "codex" => CODEX_HOOKS,
            _ => KIMI_CONFIG,
        };
        set_up(&sandbox, host, Setup::Text(original));
        // Four applies in a row, most within the same second.
        let mut contents = Vec::new();
        for remove in [false, true, false, true] {
            contents.push(fs::read(sandbox.config(host)).unwrap());
            let extra: &[&str] = if remove { &["--remove"] } else { &[] };
            sandbox.apply(host, extra).ok();
        }
        let backups = sandbox.backups(host);
        assert_eq!(backups.len(), 4, "{host}: {backups:?}");
        for (backup, expected) in backups.iter().zip(&contents) {
            assert_eq!(
                &fs::read(backup).unwrap(),
                expected,
                "{host}: {}",
                backup.display()
            );
        }
        assert_eq!(
            fs::read(sandbox.config(host)).unwrap(),
            original.as_bytes(),
            "{host}"
        );
    }
}

#[test]
fn without_the_stable_copy_the_running_binary_is_used_with_a_warning() {
    let sandbox = Sandbox::new();
    let run = sandbox.install("codex", &[]);
    run.ok();
    let exe = fs::canonicalize(env!("CARGO_BIN_EXE_fabric-session")).unwrap();
    assert!(run.stdout.contains(&format!(
        "{} hook session-start --host codex",
        exe.display()
    )));
    assert!(
        run.stdout.contains("Warning: The app's stable copy"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("build-output path"), "{}", run.stdout);
    assert!(
        run.stdout.contains("trust the hook again"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "Note: Codex runs a new or changed hook only after you approve it: run /hooks"
        )
    );
}

#[test]
fn script_sets_the_command_and_must_be_named_fabric_session() {
    let sandbox = Sandbox::new();
    sandbox.install_stable_binary();
    let script_dir = sandbox.home.join("opt/Fabric Tools");
    fs::create_dir_all(&script_dir).unwrap();
    let script = script_dir.join("fabric-session");
    fs::write(&script, "").unwrap();
    let script_arg = script.display().to_string();

    let plan = sandbox.plan("kimi", &["--script", &script_arg]);
    let quoted = format!("'{script_arg}' hook user-prompt-submit --host kimi");
    assert_eq!(plan["add"][1]["command"], quoted.as_str());
    assert!(plan["apply_command"].as_str().unwrap().contains("--script"));
    assert_eq!(plan["warnings"], serde_json::json!([]));
    sandbox.apply("kimi", &["--script", &script_arg]).ok();
    let text = fs::read_to_string(sandbox.config("kimi")).unwrap();
    assert!(text.contains(&quoted), "{text}");

    // A relative --script is made absolute (hooks run in other folders).
    let relative = sandbox.plan("codex", &["--script", "opt/Fabric Tools/fabric-session"]);
    let command = relative["add"][0]["command"].as_str().unwrap();
    assert!(command.starts_with(&format!("'{script_arg}'")), "{command}");

    let bad = sandbox.install("codex", &["--script", "/usr/bin/env"]);
    bad.refused();
    assert!(
        bad.stderr.contains("must be named fabric-session"),
        "{}",
        bad.stderr
    );

    let missing = sandbox.plan("codex", &["--script", "/nowhere/fabric-session"]);
    assert!(
        missing["warnings"][0]
            .as_str()
            .unwrap()
            .contains("does not exist")
    );
}

#[test]
fn an_old_path_is_replaced_in_place_of_a_second_entry() {
    let sandbox = Sandbox::new();
    sandbox.install_stable_binary();
    set_up(&sandbox, "claude", Setup::Text(CLAUDE_SETTINGS));
    sandbox
        .apply("claude", &["--script", "/old/place/fabric-session"])
        .ok();
    let plan = sandbox.plan("claude", &[]);
    let ours = our_events("claude").len();
    assert_eq!(plan["action"]["kind"], "install");
    assert_eq!(plan["remove"].as_array().unwrap().len(), ours);
    assert_eq!(plan["add"].as_array().unwrap().len(), ours);
    let dry = sandbox.install("claude", &[]);
    assert!(
        dry.stdout.contains(&format!(
            "Would take out {ours} entries of ours (they point elsewhere)"
        )),
        "{}",
        dry.stdout
    );
    sandbox.apply("claude", &[]).ok();
    let text = fs::read_to_string(sandbox.config("claude")).unwrap();
    let commands = our_commands("claude", &text);
    assert_eq!(commands.len(), ours, "{text}");
    assert!(
        commands
            .iter()
            .all(|(_, c)| c.starts_with(&sandbox.stable_binary().display().to_string()))
    );
    sandbox.apply("claude", &["--remove"]).ok();
    assert_eq!(
        fs::read_to_string(sandbox.config("claude")).unwrap(),
        CLAUDE_SETTINGS
    );
}

#[test]
fn usage_errors_are_claps() {
    let sandbox = Sandbox::new();
    for args in [
        &["--apply"][..],
        &["--expect-sha256", "absent"][..],
        &["--remove", "--script", "/a/fabric-session"][..],
    ] {
        let run = sandbox.install("codex", args);
        assert_eq!(run.code, 2, "{args:?}: {run:#?}");
    }
    let run = sandbox.run(&["install-host-hooks", "--host", "vim"]);
    assert_eq!(run.code, 2);
    assert!(!sandbox.config("codex").exists());
}

#[test]
fn plan_digests_are_accepted_in_any_case_and_nothing_else_is() {
    let sandbox = Sandbox::new();
    sandbox.install_stable_binary();
    for wrong in [&"0".repeat(64)[..], "absent", "ABSENT"] {
        let run = sandbox.install("codex", &["--apply", "--expect-sha256", wrong]);
        run.refused();
        assert!(
            run.stderr.contains("changed since the dry run"),
            "{}",
            run.stderr
        );
        assert!(!sandbox.config("codex").exists());
    }
    let digest = sandbox.plan("codex", &[])["digest"]
        .as_str()
        .unwrap()
        .to_uppercase();
    sandbox
        .install("codex", &["--apply", "--expect-sha256", &digest])
        .ok();
    let removal = sandbox.plan("codex", &["--remove"])["digest"]
        .as_str()
        .unwrap()
        .to_uppercase();
    sandbox
        .install(
            "codex",
            &["--remove", "--apply", "--expect-sha256", &removal],
        )
        .ok();
    // Our install created the file: its removal gives back no file.
    assert!(!sandbox.config("codex").exists());
}

#[test]
fn an_apply_whose_program_differs_from_the_dry_run_is_refused() {
    for host in HOSTS {
        let sandbox = Sandbox::new();
        let stable = sandbox.install_stable_binary();
        // The dry run shows the app's stable copy.
        let plan = sandbox.plan(host, &[]);
        assert_eq!(plan["program"], stable.to_string_lossy().as_ref(), "{host}");
        let command = plan["apply_command"].as_str().unwrap().to_string();
        let digest = plan["digest"].as_str().unwrap().to_string();
        // Before the person runs the printed command, the stable copy goes: an apply now would
        // point the hooks at this binary instead, which the person never saw.
        fs::remove_file(&stable).unwrap();
        let run = sandbox.install(host, &["--apply", "--expect-sha256", &digest]);
        run.refused();
        assert!(
            run.stderr.contains("changed since the dry run"),
            "{host}: {}",
            run.stderr
        );
        assert!(!sandbox.config(host).exists(), "{host}: written anyway");
        assert!(command.ends_with(&digest), "{host}: {command}");
        // With --script the same: a plan for one program never applies to another.
        let first = sandbox.home.join("opt/a/fabric-session");
        let second = sandbox.home.join("opt/b/fabric-session");
        let script = first.to_str().unwrap();
        let plan = sandbox.plan(host, &["--script", script]);
        let digest = plan["digest"].as_str().unwrap();
        let other = second.to_str().unwrap();
        sandbox
            .install(
                host,
                &["--script", other, "--apply", "--expect-sha256", digest],
            )
            .refused();
        assert!(!sandbox.config(host).exists(), "{host}");
        sandbox
            .install(
                host,
                &["--script", script, "--apply", "--expect-sha256", digest],
            )
            .ok();
    }
}

#[test]
fn host_specific_warnings() {
    let sandbox = Sandbox::new();
    sandbox.install_stable_binary();
    // Codex: hooks turned off in config.toml (which also holds a token, never printed).
    fs::create_dir_all(sandbox.host_dir("codex")).unwrap();
    let codex_config = sandbox.host_dir("codex").join("config.toml");
    let codex_text =
        format!("[features]\nhooks = false\n\n[mcp_servers.x]\nbearer = \"{SECRET}\"\n");
    fs::write(&codex_config, &codex_text).unwrap();
    let run = sandbox.install("codex", &[]);
    run.ok();
    assert!(
        run.stdout.contains("turns Codex hooks off"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains(SECRET));
    sandbox.apply("codex", &[]).ok();
    assert_eq!(
        fs::read_to_string(&codex_config).unwrap(),
        codex_text,
        "config.toml untouched"
    );

    // Codex: taking ours out moves a hook of the person's that came after it.
    let hooks_json = sandbox.config("codex");
    let ours = fs::read_to_string(&hooks_json).unwrap();
    let mut doc: Value = serde_json::from_str(&ours).unwrap();
    doc["hooks"]["Stop"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"hooks": [{"type": "command", "command": "notify-send done"}]}));
    fs::write(&hooks_json, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let run = sandbox.install("codex", &["--remove"]);
    run.ok();
    assert!(
        run.stdout.contains(
            "Warning: taking our entry out moves 1 hook that is not ours to another place in hooks.json"
        ),
        "{}",
        run.stdout
    );

    // Claude Code: our plugin enabled too, and hooks turned off.
    set_up(
        &sandbox,
        "claude",
        Setup::Text(
            "{\n  \"disableAllHooks\": true,\n  \"enabledPlugins\": {\n    \"fabric-session@fabric-companion\": true\n  }\n}\n",
        ),
    );
    let run = sandbox.install("claude", &[]);
    run.ok();
    assert!(
        run.stdout.contains("every hook runs twice"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("disableAllHooks"), "{}", run.stdout);

    // JSON in another layout: the re-indent is announced.
    set_up(&sandbox, "claude", Setup::Text("{\"model\":\"opus\"}"));
    let run = sandbox.install("claude", &[]);
    assert!(
        run.stdout.contains("re-indents the whole file"),
        "{}",
        run.stdout
    );

    // Kimi Code: where the preamble shows up.
    let run = sandbox.install("kimi", &[]);
    assert!(
        run.stdout.contains("preamble comes with your first prompt"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_symlink_to_a_missing_file_is_refused() {
    for host in HOSTS {
        let sandbox = Sandbox::new();
        sandbox.install_stable_binary();
        fs::create_dir_all(sandbox.host_dir(host)).unwrap();
        let missing = sandbox.home.join("dotfiles/gone");
        symlink(&missing, sandbox.config(host)).unwrap();
        let run = sandbox.install(host, &[]);
        run.refused();
        assert!(
            run.stderr.contains("symlink to a missing file"),
            "{host}: {}",
            run.stderr
        );
        let run = sandbox.install(host, &["--apply", "--expect-sha256", "absent"]);
        run.refused();
        assert!(!missing.exists(), "{host}");
    }
}

/// The dry run names where each of our entries goes (the event, how many groups are before
/// it) and shows nothing else of the file: a settings `env` block's key stays unseen, in the
/// text and in `--json`.
#[test]
fn a_dry_run_says_where_our_entries_go_and_shows_no_other_value() {
    let sandbox = Sandbox::new();
    sandbox.install_stable_binary();
    let file = sandbox.config("claude");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    let secret = "API_KEY=sk-secret-from-env-block";
    let settings = serde_json::json!({
        "env": {"API_KEY": secret},
        "hooks": {"SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "~/bin/a.sh"}]},
            {"matcher": "resume", "hooks": [{"type": "command", "command": "~/bin/b.sh"}]}
        ]}
    });
    fs::write(&file, serde_json::to_string_pretty(&settings).unwrap()).unwrap();
    let dry = sandbox.install("claude", &[]);
    dry.ok();
    assert!(
        dry.stdout
            .contains("(in hooks.SessionStart, after 2 other groups)"),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout.contains("(in hooks.Stop, the first group)"),
        "{}",
        dry.stdout
    );
    assert!(!dry.stdout.contains("sk-secret"), "{}", dry.stdout);
    let plan = sandbox.plan("claude", &[]);
    assert_eq!(
        plan["add_at"][0],
        "in hooks.SessionStart, after 2 other groups"
    );
    assert!(!plan.to_string().contains("sk-secret"), "{plan}");
}
