//! The assertions, one function per test, the same for every host; [`host_tests!`] makes the
//! `#[test]` functions of a host's test binary from them.
//!
//! They hold the product to the specification (issue 9 and the seed), not to what it does
//! today: a host the product does not serve fully yet fails here, with what is missing.

use crate::findings::{self, UNREAD_FRAGMENT, word_counts};
use crate::hosts::Host;
use crate::scenario::{
    self, MAIN_TURNS, QUIET_TURNS, Quiet, RAISED_UNREAD, describe, expect, report, texts,
};

/// The `#[test]` functions every host's test binary has.
#[macro_export]
macro_rules! host_tests {
    ($host:expr) => {
        fn program(test: &str) -> Option<$crate::HostProgram> {
            $crate::scenario::set_base(env!("CARGO_TARGET_TMPDIR"));
            $crate::scenario::require($host, test)
        }

        #[test]
        fn hooks_are_wired_by_our_installer_at_the_stable_path() {
            if let Some(p) = program("hooks_are_wired_by_our_installer_at_the_stable_path") {
                $crate::checks::hooks_are_wired_at_the_stable_path(&p);
            }
        }

        #[test]
        fn preamble_reaches_the_model_once() {
            if let Some(p) = program("preamble_reaches_the_model_once") {
                $crate::checks::preamble_reaches_the_model_once(&p);
            }
        }

        #[test]
        fn unread_line_comes_after_a_rise_and_only_then() {
            if let Some(p) = program("unread_line_comes_after_a_rise_and_only_then") {
                $crate::checks::unread_line_comes_after_a_rise_and_only_then(&p);
            }
        }

        #[test]
        fn a_resumed_session_gets_the_preamble_once() {
            if let Some(p) = program("a_resumed_session_gets_the_preamble_once") {
                $crate::checks::a_resumed_session_gets_the_preamble_once(&p);
            }
        }

        #[test]
        fn worker_calls_carry_the_host_session_id() {
            if let Some(p) = program("worker_calls_carry_the_host_session_id") {
                $crate::checks::worker_calls_carry_the_host_session_id(&p);
            }
        }

        #[test]
        fn session_end_releases_and_the_spool_goes() {
            if let Some(p) = program("session_end_releases_and_the_spool_goes") {
                $crate::checks::session_end_releases_and_the_spool_goes(&p);
            }
        }

        #[test]
        fn nothing_of_any_prompt_is_written() {
            if let Some(p) = program("nothing_of_any_prompt_is_written") {
                $crate::checks::nothing_of_any_prompt_is_written(&p);
            }
        }

        #[test]
        fn exit_status_and_answers_are_unchanged() {
            if let Some(p) = program("exit_status_and_answers_are_unchanged") {
                $crate::checks::exit_status_and_answers_are_unchanged(&p);
            }
        }

        #[test]
        fn wall_time_with_and_without_hooks() {
            if let Some(p) = program("wall_time_with_and_without_hooks") {
                $crate::checks::wall_time_with_and_without_hooks(&p);
            }
        }

        #[test]
        fn status_tells_the_host_version() {
            if let Some(p) = program("status_tells_the_host_version") {
                $crate::checks::status_tells_the_host_version(&p);
            }
        }

        #[test]
        fn fabric_down_says_one_line() {
            if let Some(p) = program("fabric_down_says_one_line") {
                $crate::checks::quiet(&p, $crate::scenario::Quiet::FabricDown);
            }
        }

        #[test]
        fn fabric_with_a_dead_pid_says_one_line() {
            if let Some(p) = program("fabric_with_a_dead_pid_says_one_line") {
                $crate::checks::quiet(&p, $crate::scenario::Quiet::FabricDeadPid);
            }
        }

        #[test]
        fn fabric_not_registered_says_nothing() {
            if let Some(p) = program("fabric_not_registered_says_nothing") {
                $crate::checks::quiet(&p, $crate::scenario::Quiet::NotRegistered);
            }
        }
    };
}

use crate::HostProgram;

fn main(program: &HostProgram) -> scenario::MainFacts {
    expect(scenario::main_run(program), "the main session")
}

pub fn hooks_are_wired_at_the_stable_path(program: &HostProgram) {
    let facts = main(program);
    let stable = facts.stable_binary.display().to_string();
    assert!(
        facts.installed.applied.contains("Added"),
        "the apply did not add our entries:\n{}",
        facts.installed.applied
    );
    assert!(
        facts
            .installed
            .apply_command
            .contains("--apply --expect-sha256 "),
        "the dry run printed {:?}",
        facts.installed.apply_command
    );
    assert!(
        facts.hook_config.contains(&format!("{stable} hook ")),
        "{}'s hook commands do not run the stable copy {stable}:\n{}",
        program.host,
        facts.hook_config
    );
    let build = crate::binaries::fabric_session().display().to_string();
    assert!(
        !facts.hook_config.contains(&build),
        "a hook command points at the build output {build}:\n{}",
        facts.hook_config
    );
}

pub fn preamble_reaches_the_model_once(program: &HostProgram) {
    let facts = main(program);
    let preamble = &texts().preamble;
    for (n, turn) in facts.session.turns.iter().enumerate() {
        let request = turn.request.as_ref().unwrap_or_else(|| {
            panic!(
                "turn {}: no model request held its prompt ({})",
                n + 1,
                describe(&facts.session)
            )
        });
        assert_eq!(
            request.count(preamble),
            1,
            "turn {}: the preamble should be in the model's request exactly once ({})\nhook log:\n{}",
            n + 1,
            describe(&facts.session),
            facts.hook_log
        );
    }
    if program.host == Host::Kimi {
        // Kimi Code shows SessionStart output to no one: the preamble rides on the first prompt.
        let first = &facts.session.turns[0];
        let message =
            findings::message_holding(first.request.as_ref().expect("checked"), &first.tag)
                .expect("the first prompt is in a message");
        assert!(
            message.contains(preamble.as_str()),
            "the preamble is not in the message of the first prompt:\n{message}"
        );
    }
}

/// A session continued in a new process by its id (`claude -p --resume`, `codex exec resume`,
/// `kimi -S`): the model still sees the preamble once, not once per process.
pub fn a_resumed_session_gets_the_preamble_once(program: &HostProgram) {
    // Kimi Code's usual route already resumes by id for every turn after the first.
    let facts = match program.host {
        Host::Kimi => main(program),
        _ => expect(
            scenario::hooked_run(program, crate::sessions::Route::Resume, QUIET_TURNS),
            "the resumed session",
        ),
    };
    let preamble = &texts().preamble;
    let counts: Vec<usize> = facts
        .session
        .turns
        .iter()
        .map(|t| t.request.as_ref().map_or(0, |r| r.count(preamble)))
        .collect();
    assert_eq!(
        counts,
        vec![1; facts.session.turns.len()],
        "times the preamble is in the model's request, first process then the resumed one \
         ({})\nhook log:\n{}",
        describe(&facts.session),
        facts.hook_log
    );
    assert!(
        facts
            .session
            .turns
            .iter()
            .all(|t| t.answer == scenario::REPLY),
        "answers {:?}",
        facts
            .session
            .turns
            .iter()
            .map(|t| &t.answer)
            .collect::<Vec<_>>()
    );
}

pub fn unread_line_comes_after_a_rise_and_only_then(program: &HostProgram) {
    let facts = main(program);
    // Turn 1 ends with 0 unread; the count rises to 2 before turn 2's Stop; turn 3's prompt
    // is the first after the rise; turn 4's count is the same.
    let expected = [0, 0, 1, 1];
    let counts: Vec<usize> = facts
        .session
        .turns
        .iter()
        .map(|t| t.request.as_ref().map_or(0, |r| r.count(UNREAD_FRAGMENT)))
        .collect();
    assert_eq!(
        counts,
        expected[..MAIN_TURNS],
        "times \"{UNREAD_FRAGMENT}\" is in each turn's request (new lines add up over the history); \
         board after each turn {:?}; {}\nhook log:\n{}",
        facts.session.board_after_turn,
        describe(&facts.session),
        facts.hook_log
    );
    let third = facts.session.turns[2].request.as_ref().expect("counted");
    let line = format!("{RAISED_UNREAD} {UNREAD_FRAGMENT}");
    assert_eq!(third.count(&line), 1, "turn 3 should carry {line:?}");
}

pub fn worker_calls_carry_the_host_session_id(program: &HostProgram) {
    let facts = main(program);
    let session = facts
        .session
        .session_id
        .clone()
        .expect("the host said its session id");
    let worker: Vec<&serde_json::Value> = facts
        .fabric_records
        .iter()
        .filter(|r| findings::from_worker(r))
        .collect();
    assert!(
        !worker.is_empty(),
        "the worker never started fabric-mcp ({})\nhook log:\n{}",
        describe(&facts.session),
        facts.hook_log
    );
    for record in &worker {
        assert!(
            findings::names_session(record, &session),
            "a worker call does not name the host's session {session}: {record}"
        );
        assert_eq!(
            findings::arg_value(record, "--runner").as_deref(),
            Some(program.host.runner()),
            "runner of {record}"
        );
    }
    let observed = worker
        .iter()
        .filter(|r| r["event"] == "call" && r["tool"] == "fabric_session_observe")
        .count();
    assert!(
        observed >= 1,
        "no fabric_session_observe call came from the worker"
    );
}

pub fn session_end_releases_and_the_spool_goes(program: &HostProgram) {
    // `kimi -p` never fires SessionEnd; Kimi Code's ACP server does on `session/close`, so
    // its end is checked there (as an editor drives it).
    let facts = match program.host {
        Host::Kimi => expect(
            scenario::hooked_run(program, crate::sessions::Route::KimiAcp, QUIET_TURNS),
            "the Kimi Code ACP session",
        ),
        _ => main(program),
    };
    let session = facts
        .session
        .session_id
        .clone()
        .expect("the host said its session id");
    assert!(
        facts.session_end_acted,
        "our SessionEnd hook did not act at the end of the session ({})\nhook log:\n{}",
        describe(&facts.session),
        facts.hook_log
    );
    let release = facts.fabric_records.iter().find(|r| {
        r["event"] == "call"
            && r["tool"] == "fabric_work_release"
            && findings::names_session(r, &session)
    });
    let release = release.unwrap_or_else(|| panic!("no fabric_work_release for {session}"));
    assert_eq!(release["arguments"]["claims"], "session", "{release}");
    assert!(
        facts.spool_gone_after_end,
        "the session's spool is still there after its end"
    );
}

pub fn nothing_of_any_prompt_is_written(program: &HostProgram) {
    let facts = main(program);
    assert!(
        facts.prompt_leaks.is_empty(),
        "prompt text found in files we write or send: {:?}",
        facts.prompt_leaks
    );
}

pub fn exit_status_and_answers_are_unchanged(program: &HostProgram) {
    let facts = main(program);
    let baseline = expect(
        scenario::baseline(program, true, MAIN_TURNS),
        "the session without hooks",
    );
    assert_eq!(
        facts.session.exit_codes, baseline.exit_codes,
        "exit codes with our hooks vs without"
    );
    let with: Vec<&str> = facts
        .session
        .turns
        .iter()
        .map(|t| t.answer.as_str())
        .collect();
    let without: Vec<&str> = baseline.turns.iter().map(|t| t.answer.as_str()).collect();
    assert_eq!(with, without, "answers with our hooks vs without");
    assert!(
        with.iter().all(|a| *a == scenario::REPLY),
        "the host's answers are not the model's reply: {with:?}"
    );
    assert!(
        facts.unanswered.is_empty(),
        "the host asked the model stand-in for something it does not serve: {:?}",
        facts.unanswered
    );
}

pub fn wall_time_with_and_without_hooks(program: &HostProgram) {
    let facts = main(program);
    let baseline = expect(
        scenario::baseline(program, true, MAIN_TURNS),
        "the session without hooks",
    );
    assert_eq!(facts.session.turns.len(), MAIN_TURNS);
    assert_eq!(baseline.turns.len(), MAIN_TURNS);
    let with = facts.session.wall.as_secs_f64();
    let without = baseline.wall.as_secs_f64();
    assert!(with > 0.0 && without > 0.0);
    report(&format!(
        "wall time, {} {} ({MAIN_TURNS} turns): without our hooks {without:.2} s, with them \
         {with:.2} s, ratio {:.2}\n  without: {}\n  with:    {}",
        program.host,
        program.version,
        with / without,
        scenario::time_parts(&baseline),
        scenario::time_parts(&facts.session),
    ));
}

/// Fabric down, or `fabric` not registered: the session is unharmed and, beyond the one line
/// the seed gives (the "start Fabric" line when registered and down), nothing is said.
pub fn quiet(program: &HostProgram, quiet: Quiet) {
    let facts = expect(scenario::quiet_run(program, quiet), &format!("{quiet:?}"));
    let expected_line = match quiet {
        Quiet::FabricDown | Quiet::FabricDeadPid => texts().down_line.clone(),
        Quiet::NotRegistered => String::new(),
    };
    let session = &facts.with_hooks;
    let baseline = &facts.baseline;
    assert_eq!(session.turns.len(), QUIET_TURNS);
    assert_eq!(
        session.exit_codes,
        baseline.exit_codes,
        "exit codes ({})",
        describe(session)
    );
    for (n, (with, without)) in session.turns.iter().zip(&baseline.turns).enumerate() {
        assert_eq!(with.answer, without.answer, "turn {} answer", n + 1);
        let (Some(with_request), Some(without_request)) = (&with.request, &without.request) else {
            panic!(
                "turn {}: a model request is missing ({})",
                n + 1,
                describe(session)
            );
        };
        let got = word_counts(&with_request.body_text());
        let base = word_counts(&without_request.body_text());
        let line = word_counts(&expected_line);
        for (word, count) in &got {
            assert!(
                *count >= base[word],
                "turn {}: {word:?} is said less with our hooks ({count}) than without ({})",
                n + 1,
                base[word]
            );
            assert_eq!(
                count - base[word],
                line[word],
                "turn {}: {word:?} is said {count} times with our hooks, {} without; the line \
                 {expected_line:?} accounts for {} ({})",
                n + 1,
                base[word],
                line[word],
                describe(session)
            );
        }
        if !expected_line.is_empty() {
            assert_eq!(
                with_request.count(&expected_line),
                1,
                "turn {}: the line should be in the request once",
                n + 1
            );
        }
        assert_eq!(
            with_request.count(&texts().preamble),
            0,
            "turn {}: the preamble with Fabric {quiet:?}",
            n + 1
        );
    }
    assert!(
        facts.prompt_leaks.is_empty(),
        "prompt text found in files we write: {:?}",
        facts.prompt_leaks
    );
}

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

/// `status` reads the host's version from the files beside its program (never running it), and
/// it is the version this suite pins.
pub fn status_tells_the_host_version(program: &HostProgram) {
    let home = crate::home::TestHome::new(&scenario::base_dir(), program, "http://127.0.0.1:9");
    crate::install::place_stable_copy(&home);
    let status = crate::install::status_json(&home);
    let host = status["hosts"]
        .as_array()
        .and_then(|hosts| hosts.iter().find(|h| h["host"] == program.host.cli_name()))
        .expect("status lists the host");
    let version = &host["hostVersion"];
    let pinned = program.host.pinned_version();
    assert_eq!(version["installed"], pinned.as_str(), "{version}");
    assert!(
        program.version.contains(&pinned),
        "{} --version says {:?}",
        program.host,
        program.version
    );
    assert_eq!(version["tested"], pinned.as_str(), "{version}");
    assert_eq!(version["olderThanTested"], false, "{version}");
    let text = crate::install::status_text(&home);
    assert!(
        text.contains(&format!("{} {pinned}:", program.host.display_name())),
        "{text}"
    );
}

/// Claude Code: the session is recorded with Claude Code's own process (it names it in
/// `CLAUDE_PID`), the one the tray and `status` watch to tell a live session.
pub fn the_session_is_recorded_with_the_host_s_pid(program: &HostProgram) {
    let facts = main(program);
    let expected = facts
        .session
        .host_pid
        .expect("the session has a host process of its own");
    assert_eq!(
        facts.session.recorded_host_pid,
        Some(u64::from(expected)),
        "the host pid in our spool ({})",
        describe(&facts.session)
    );
}
