//! The checks of Codex's own record of its hooks: the approval a person gives in /hooks, that
//! the product agrees with Codex, what status says is left, and that an upgrade keeps the
//! approval.

use super::*;

/// Codex: the record of approval is what Codex's source says (key, hash, checked against
/// Codex's own `hooks/list`); a hook of ours Codex has not approved does not run; approved
/// through Codex's app-server as `/hooks` does, it runs and the preamble reaches the model.
pub fn codex_approval(program: &HostProgram) {
    use crate::codex_trust::{AppServer, expected_hooks};
    use crate::sessions::run_with_deadline;
    use std::time::Duration;

    assert_eq!(program.host, Host::Codex);
    let stand_in = model_stand_in::StandIn::start(model_stand_in::Options {
        reply: scenario::REPLY.to_owned(),
        log_file: None,
    })
    .expect("the model stand-in starts");
    let home = crate::home::TestHome::new(&scenario::base_dir(), program, &stand_in.url());
    home.register_fabric();
    home.fabric_running();
    crate::install::install_hooks(&home);
    let hooks_json = home.codex_home().join("hooks.json");
    let ours = expected_hooks(&hooks_json, |c| {
        c.contains("fabric-session") && c.contains(" hook ")
    });
    assert!(
        !ours.is_empty(),
        "no hook of ours in {}",
        hooks_json.display()
    );

    let listed = |home: &crate::home::TestHome| {
        let mut server = AppServer::start(home).expect("codex app-server starts");
        let hooks = server.hooks(&home.project).expect("hooks/list answers");
        server.stop().expect("codex app-server stops");
        hooks
    };
    for entry in listed(&home) {
        let Some(hook) = ours.iter().find(|h| entry["key"] == h.key.as_str()) else {
            continue;
        };
        assert_eq!(
            entry["currentHash"],
            hook.hash.as_str(),
            "Codex's hash of {}",
            hook.key
        );
        assert_eq!(entry["trustStatus"], "untrusted", "{}", hook.key);
    }
    for hook in &ours {
        assert!(
            listed(&home).iter().any(|e| e["key"] == hook.key.as_str()),
            "Codex does not list {}",
            hook.key
        );
    }
    // The product's own reading of Codex's record (keys, hashes, verdicts) is Codex's.
    product_agrees_with_codex(&home, &listed(&home), "waiting");

    let exec = |tag: &str| {
        let mut command = home.command(&home.program.path);
        command.args([
            "exec",
            "--json",
            "--skip-git-repo-check",
            &format!("Please reply. Reference: {tag}."),
        ]);
        let ran = run_with_deadline(command, Duration::from_secs(180), "codex exec")
            .expect("codex exec runs");
        assert_eq!(
            ran.status,
            Some(0),
            "codex exec failed:\n{}\n{}",
            ran.stdout,
            ran.stderr
        );
        let thread = ran
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find_map(|v| {
                (v["type"] == "thread.started")
                    .then(|| v["thread_id"].as_str().map(str::to_owned))
                    .flatten()
            })
            .expect("codex exec says its thread id");
        let request = findings::turn_request(&stand_in.requests(), 0, "/v1/responses", tag)
            .expect("the turn reached the model");
        (thread, request)
    };

    let (thread, request) = exec("zqunapproved");
    assert_eq!(
        request.count(&texts().preamble),
        0,
        "an unapproved hook of ours ran: the preamble reached the model"
    );
    assert!(
        !home.hook_log_text().contains(&thread),
        "an unapproved hook of ours ran:\n{}",
        home.hook_log_text()
    );

    let granted = crate::codex_trust::grant_ours(&home, |c| {
        c.contains("fabric-session") && c.contains(" hook ")
    })
    .expect("approval through codex app-server");
    assert_eq!(granted, ours);
    let config: toml::Table = std::fs::read_to_string(home.codex_home().join("config.toml"))
        .expect("config.toml")
        .parse()
        .expect("config.toml parses");
    for hook in &ours {
        assert_eq!(
            config["hooks"]["state"][&hook.key]["trusted_hash"].as_str(),
            Some(hook.hash.as_str()),
            "Codex's record of approval for {}",
            hook.key
        );
    }
    for entry in listed(&home) {
        if ours.iter().any(|h| entry["key"] == h.key.as_str()) {
            assert_eq!(entry["trustStatus"], "trusted", "{}", entry["key"]);
        }
    }
    product_agrees_with_codex(&home, &listed(&home), "approved");

    let (thread, request) = exec("zqapproved");
    assert_eq!(
        request.count(&texts().preamble),
        1,
        "the approved SessionStart hook's preamble"
    );
    assert!(
        !home.hook_log_lines("session-start", &thread).is_empty(),
        "our SessionStart hook did not act:\n{}",
        home.hook_log_text()
    );
}

/// The product's verdict per hook of ours, from Codex's own record, against Codex's own
/// listing (`hooks/list`): the same keys, the same hashes, the same standing; and `status
/// --json` says `overall` for the host.
fn product_agrees_with_codex(
    home: &crate::home::TestHome,
    listed: &[serde_json::Value],
    overall: &str,
) {
    use companion_hosts::approval::{self, HookVerdict};
    let codex_ours: Vec<&serde_json::Value> = listed
        .iter()
        .filter(|e| {
            e["command"]
                .as_str()
                .is_some_and(companion_hosts::hook_command::is_ours)
        })
        .collect();
    let product = approval::read(companion_hosts::host::Host::Codex, &home.product_paths())
        .expect("the product finds hooks of ours in hooks.json");
    assert_eq!(
        product.hooks.len(),
        codex_ours.len(),
        "hooks of ours: the product's {:?}, Codex's {:?}",
        product.hooks,
        codex_ours
    );
    for hook in &product.hooks {
        let entry = codex_ours
            .iter()
            .find(|e| e["key"] == hook.key.as_str())
            .unwrap_or_else(|| {
                panic!(
                    "Codex lists no hook under the product's key {}; it lists {:?}",
                    hook.key,
                    codex_ours.iter().map(|e| &e["key"]).collect::<Vec<_>>()
                )
            });
        assert_eq!(
            entry["currentHash"],
            hook.hash.as_str(),
            "Codex's hash of {} against the product's",
            hook.key
        );
        let codex_says = if entry["enabled"] == false {
            HookVerdict::TurnedOff
        } else {
            match entry["trustStatus"].as_str() {
                Some("trusted") => HookVerdict::Approved,
                Some("untrusted") => HookVerdict::Waiting,
                Some("modified") => HookVerdict::Changed,
                other => panic!("Codex's trust status {other:?} for {}", hook.key),
            }
        };
        assert_eq!(hook.verdict, codex_says, "{} ({entry})", hook.key);
    }
    let status = crate::install::status_json(home);
    let codex = status["hosts"]
        .as_array()
        .and_then(|hosts| hosts.iter().find(|h| h["host"] == "codex"))
        .expect("status lists Codex");
    assert_eq!(
        codex["approval"]["state"], overall,
        "status --json's approval: {}",
        codex["approval"]
    );
}

/// Codex: `status` and the dry run say what is left to do while Codex waits for the person's
/// approval, read from Codex's own record, and stop saying it once Codex has it; a group the
/// person puts before ours voids the approval (Codex keys it by place), and `status` says so.
pub fn codex_status_tells_what_is_left(program: &HostProgram) {
    use crate::codex_trust::AppServer;
    assert_eq!(program.host, Host::Codex);
    let home = crate::home::TestHome::new(&scenario::base_dir(), program, "http://127.0.0.1:9");
    home.register_fabric();
    home.fabric_running();
    crate::install::install_hooks(&home);
    let listed = |home: &crate::home::TestHome| {
        let mut server = AppServer::start(home).expect("codex app-server starts");
        let hooks = server.hooks(&home.project).expect("hooks/list answers");
        server.stop().expect("codex app-server stops");
        hooks
    };
    const WAITING: &str = "waiting for your approval";
    let status = crate::install::status_text(&home);
    assert!(
        status.contains(&format!("{WAITING} in Codex: run /hooks")),
        "`status` should say Codex waits for the person's approval in /hooks:\n{status}"
    );
    let again = crate::install::dry_run(&home);
    assert!(
        again.contains(WAITING) && again.contains("/hooks"),
        "a dry run after the install should say what is left to do:\n{again}"
    );
    product_agrees_with_codex(&home, &listed(&home), "waiting");

    crate::codex_trust::grant_ours(&home, |c| {
        c.contains("fabric-session") && c.contains(" hook ")
    })
    .expect("approval through codex app-server");
    let status = crate::install::status_text(&home);
    assert!(
        !status.contains(WAITING) && status.contains("approved in Codex"),
        "`status` after Codex recorded the approval:\n{status}"
    );
    assert!(!crate::install::dry_run(&home).contains(WAITING));
    product_agrees_with_codex(&home, &listed(&home), "approved");

    // The person adds a hook of their own in front of ours (by hand, at the top of Stop).
    let hooks_json = home.codex_home().join("hooks.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&hooks_json).expect("hooks.json"))
            .expect("hooks.json is JSON");
    doc["hooks"]["Stop"]
        .as_array_mut()
        .expect("Stop holds our group")
        .insert(
            0,
            serde_json::json!({"hooks": [{"type": "command", "command": "true", "timeout": 5}]}),
        );
    std::fs::write(
        &hooks_json,
        serde_json::to_string_pretty(&doc).expect("JSON"),
    )
    .expect("hooks.json written");
    let status = crate::install::status_text(&home);
    assert!(
        status.contains(&format!("{WAITING} in Codex: run /hooks (Stop)"))
            && status.contains("added before ours in hooks.json"),
        "`status` should say the Stop hook waits again, and why:\n{status}"
    );
    product_agrees_with_codex(&home, &listed(&home), "waiting");
}

/// An upgrade of our binary (the tray replacing the stable copy's content) keeps the hook
/// commands byte for byte, so Codex's approval survives and the hooks go on running.
pub fn an_upgrade_keeps_codex_s_approval(program: &HostProgram) {
    use crate::codex_trust::AppServer;
    use crate::sessions::run_with_deadline;
    use std::time::Duration;

    assert_eq!(program.host, Host::Codex);
    let stand_in = model_stand_in::StandIn::start(model_stand_in::Options {
        reply: scenario::REPLY.to_owned(),
        log_file: None,
    })
    .expect("the model stand-in starts");
    let home = crate::home::TestHome::new(&scenario::base_dir(), program, &stand_in.url());
    home.register_fabric();
    home.fabric_running();
    crate::install::install_hooks(&home);
    crate::codex_trust::grant_ours(&home, |c| {
        c.contains("fabric-session") && c.contains(" hook ")
    })
    .expect("approval through codex app-server");
    let hooks_json = home.codex_home().join("hooks.json");
    let before = std::fs::read(&hooks_json).expect("hooks.json");

    // The new version: another binary (this one with bytes appended, still runnable).
    let upgraded = home.home.join("fabric-session-next");
    let mut bytes = std::fs::read(crate::binaries::fabric_session()).expect("the binary");
    bytes.extend_from_slice(b"\0next version\0");
    std::fs::write(&upgraded, bytes).expect("the new version");
    assert_eq!(
        crate::install::update_stable_copy(&home, &upgraded),
        companion_hosts::stable_binary::CopyOutcome::Updated
    );
    assert_eq!(
        std::fs::read(home.stable_binary()).expect("the stable copy"),
        std::fs::read(&upgraded).expect("the new version"),
    );
    assert_eq!(
        std::fs::read(&hooks_json).expect("hooks.json"),
        before,
        "the upgrade touched hooks.json"
    );
    let dry = crate::install::dry_run(&home);
    assert!(
        dry.contains("Already installed") && dry.contains("approved in Codex"),
        "the dry run after an upgrade:\n{dry}"
    );
    let mut server = AppServer::start(&home).expect("codex app-server starts");
    let listed = server.hooks(&home.project).expect("hooks/list answers");
    server.stop().expect("codex app-server stops");
    product_agrees_with_codex(&home, &listed, "approved");

    // And the upgraded hooks run: the preamble reaches the model.
    let mut command = home.command(&home.program.path);
    command.args([
        "exec",
        "--json",
        "--skip-git-repo-check",
        "Please reply. Reference: zqupgraded.",
    ]);
    let ran = run_with_deadline(command, Duration::from_secs(180), "codex exec")
        .expect("codex exec runs");
    assert_eq!(ran.status, Some(0), "{}\n{}", ran.stdout, ran.stderr);
    // Our hooks make Codex warn about nothing (a SessionEnd timeout over its 3 s cap would)
    // and none of them fails.
    for line in ran.stderr.lines().chain(ran.stdout.lines()) {
        assert!(
            !(line.contains("clamping") || line.contains("hook: ") && line.contains("Failed")),
            "Codex said {line:?}"
        );
    }
    let request = findings::turn_request(&stand_in.requests(), 0, "/v1/responses", "zqupgraded")
        .expect("the turn reached the model");
    assert_eq!(
        request.count(&texts().preamble),
        1,
        "the upgraded hook's preamble"
    );
}
