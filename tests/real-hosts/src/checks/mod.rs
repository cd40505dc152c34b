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

mod codex;
pub use codex::{
    an_upgrade_keeps_codex_s_approval, codex_approval, codex_status_tells_what_is_left,
};

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
