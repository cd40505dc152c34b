//! Every hook event of every host, through the host's own shell, with the host's real input:
//! the answers, the session's state as each event moves it (needs you on a permission prompt,
//! working again once answered, failed, interrupted), the session recorded with the host's pid
//! (not `cmd`'s), the detached worker outliving the hook and the host's job and observing
//! through the stand-in, the board and the unread line, the deadline against a hanging
//! Fabric, no console window on screen, a log that names no content, and the session pruned
//! once its host is gone.

use std::time::{Duration, Instant};

use serde_json::Value;
use wine_bench::display::Display;
use wine_bench::host::{Host, Job, Shell};
use wine_bench::payload::{self, PROMPT};
use wine_bench::wait_until;

use crate::common::{HOSTS, Person};

/// Long enough for a worker under Wine on a busy machine (a failure, not a measurement).
const WORKER_WAIT: Duration = Duration::from_secs(40);
/// The stand-in answers each tool call this much later: the worker is still talking to Fabric
/// well after the hook has returned and the host's job has been ended.
const FABRIC_DELAY_MS: u64 = 1500;

/// The session as `status --json` lists it.
fn listed(person: &Person, session: &str) -> Value {
    let status = person.status_json();
    status["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == session)
        .unwrap_or_else(|| panic!("{session} not listed: {status}"))
        .clone()
}

fn board_unread(person: &Person, session: &str) -> Option<u64> {
    let text = wine_bench::read_text(&person.prefix.spool(session).join("board.json"));
    serde_json::from_str::<Value>(&text).ok()?["unread"].as_u64()
}

/// A person with every host registered, Fabric running with session hooks, our stable copy and
/// the hooks installed in every host.
fn wired(test: &str) -> Option<Person> {
    let mut person = Person::new(test)?;
    for host in HOSTS {
        person.register(host);
    }
    person.fabric_running(&["session-hooks/1"]);
    let stable = person.install_stable_copy();
    for host in HOSTS {
        person.install_hooks(host, &["--script", &person.prefix.win(&stable)]);
    }
    Some(person)
}

#[test]
fn every_hook_of_every_host_runs_through_its_shell_and_its_worker_outlives_the_hook() {
    let Some(person) = wired("every_hook_of_every_host") else {
        return;
    };
    person.fake.set_unread(3);
    person.fake.set_delay_ms(FABRIC_DELAY_MS);
    let cwd = person.project_win();
    for host in HOSTS {
        let session = format!("wine-{host}-1");
        let commands = person.commands(host);
        assert_eq!(
            commands.keys().map(String::as_str).collect::<Vec<_>>(),
            payload::host_events(host),
            "{host}: {commands:?}"
        );
        // The host, as a person runs it: its hooks' shell in a job that ends with each hook.
        let mut agent = Host::start(
            &person.prefix,
            Shell::of(host),
            Job::BreakawayOk,
            &person.env(),
        );
        let run = |agent: &mut Host, event: &str| {
            let command = &commands[event];
            let ran = agent.run(command, &payload::input(host, event, &session, &cwd));
            assert_eq!(ran.code, Some(0), "{host} {event}: {ran:?}");
            assert!(!ran.timed_out, "{host} {event}: {ran:?}");
            assert_eq!(ran.stderr, "", "{host} {event}: {ran:?}");
            ran
        };

        // SessionStart: the preamble as each host takes it; the session recorded with the
        // host's pid, not that of the cmd.exe between them.
        let start = run(&mut agent, "SessionStart");
        match host {
            "claude" => {
                let answer: Value = serde_json::from_str(&start.stdout).expect("JSON");
                assert_eq!(
                    answer["hookSpecificOutput"]["hookEventName"],
                    "SessionStart"
                );
                let context = answer["hookSpecificOutput"]["additionalContext"]
                    .as_str()
                    .unwrap();
                assert!(context.starts_with("Fabric is running"), "{context}");
            }
            "codex" => assert!(start.stdout.starts_with("Fabric is running"), "{start:?}"),
            _ => assert_eq!(
                start.stdout, "",
                "Kimi Code shows SessionStart output to no one"
            ),
        }
        let record: Value = serde_json::from_str(&wine_bench::read_text(
            &person.prefix.spool(&session).join("session.json"),
        ))
        .expect("session.json");
        assert_eq!(
            record["hostPid"].as_u64(),
            Some(u64::from(agent.pid)),
            "{host}: the session names the host, not its shell: {record}"
        );

        // A first prompt: no count yet (Kimi Code gets the preamble here, once).
        let prompt = run(&mut agent, "UserPromptSubmit");
        if host == "kimi" {
            assert!(prompt.stdout.starts_with("Fabric is running"), "{prompt:?}");
        } else {
            assert_eq!(prompt.stdout, "", "{host}");
        }

        // A permission prompt: the session needs you (the tool named, nothing of its input),
        // and the answer gives the turn back. A state event answers nothing: the host shows
        // its own prompt.
        let state = |event: &str| -> Value {
            let listed = listed(&person, &session);
            assert!(listed["stateSince"].is_string(), "{host} {event}: {listed}");
            listed
        };
        let quiet = |agent: &mut Host, event: &str| {
            let ran = run(agent, event);
            assert_eq!(ran.stdout, "", "{host} {event}: a state event says nothing");
        };
        quiet(&mut agent, "PermissionRequest");
        let waiting = state("PermissionRequest");
        assert_eq!(waiting["state"], "needs-you", "{host}: {waiting}");
        assert_eq!(waiting["reason"], "permission", "{host}: {waiting}");
        assert_eq!(waiting["tool"], "Bash", "{host}: {waiting}");
        if host == "claude" {
            // Its Notification comes 6 s after the prompt: the same wait.
            quiet(&mut agent, "Notification");
            assert_eq!(state("Notification")["state"], "needs-you", "{host}");
        }
        if host == "kimi" {
            quiet(&mut agent, "PermissionResult");
            assert_eq!(state("PermissionResult")["state"], "working", "{host}");
        }
        quiet(&mut agent, "PostToolUse");
        assert_eq!(state("PostToolUse")["state"], "working", "{host}");

        // Stop: the hook returns and its job is ended at once; the worker, out of the job,
        // still observes the turn through the slow stand-in and records the board.
        let stop = run(&mut agent, "Stop");
        assert_eq!(stop.stdout, "", "{host}: Stop says nothing");
        assert_eq!(
            board_unread(&person, &session),
            None,
            "{host}: the board was read before the hook returned ({} ms): the hook waited for its worker",
            stop.elapsed_ms
        );
        wait_until(&format!("{host}: the worker's board"), WORKER_WAIT, || {
            board_unread(&person, &session) == Some(3)
        });
        let observed: Vec<Value> = person
            .fake
            .tool_calls("fabric_session_observe")
            .into_iter()
            .filter(|call| call["arguments"]["runtimeSessionId"] == session.as_str())
            .collect();
        assert_eq!(observed.len(), 1, "{host}: {observed:?}");
        assert_eq!(observed[0]["arguments"]["event"], "turn");

        // The next prompt carries the unread line, once.
        let prompt = run(&mut agent, "UserPromptSubmit");
        let line = "3 unread on the project board — com.list";
        match host {
            "claude" => {
                let answer: Value = serde_json::from_str(&prompt.stdout).expect("JSON");
                assert_eq!(answer["hookSpecificOutput"]["additionalContext"], line);
            }
            _ => assert_eq!(prompt.stdout.trim_end(), line, "{host}"),
        }
        assert_eq!(
            run(&mut agent, "UserPromptSubmit").stdout,
            "",
            "{host}: said once"
        );

        // status lists the live session with the host's pid and its count.
        let listed = listed(&person, &session);
        assert_eq!(listed["board"]["unread"], 3, "{listed}");
        assert_eq!(listed["project"], "my-project", "{listed}");

        // The rest of the host's state events, in a turn of their own: Kimi Code's question
        // (its PreToolUse for AskUserQuestion), a tool that failed, a subagent's end (nothing
        // changes), an error ending the turn, an interrupt. None starts a worker.
        let _ = run(&mut agent, "UserPromptSubmit");
        assert_eq!(state("UserPromptSubmit")["state"], "working", "{host}");
        if host == "kimi" {
            quiet(&mut agent, "PreToolUse");
            let asked = state("PreToolUse");
            assert_eq!(asked["state"], "needs-you", "{host}: {asked}");
            assert_eq!(asked["reason"], "question", "{host}: {asked}");
        }
        if commands.contains_key("PostToolUseFailure") {
            quiet(&mut agent, "PostToolUseFailure");
            assert_eq!(state("PostToolUseFailure")["state"], "working", "{host}");
        }
        quiet(&mut agent, "SubagentStop");
        assert_eq!(state("SubagentStop")["state"], "working", "{host}");
        if commands.contains_key("StopFailure") {
            quiet(&mut agent, "StopFailure");
            assert_eq!(state("StopFailure")["state"], "failed", "{host}");
            let _ = run(&mut agent, "UserPromptSubmit");
        }
        if commands.contains_key("Interrupt") {
            quiet(&mut agent, "Interrupt");
            let interrupted = state("Interrupt");
            assert_eq!(interrupted["state"], "finished", "{host}: {interrupted}");
            assert_eq!(interrupted["interrupted"], true, "{host}: {interrupted}");
        }

        // SessionEnd: released and observed by the worker after the hook, spool removed.
        let end = run(&mut agent, "SessionEnd");
        assert_eq!(end.stdout, "", "{host}");
        wait_until(
            &format!("{host}: the session's spool removed"),
            WORKER_WAIT,
            || !person.prefix.spool(&session).exists(),
        );
        let released = person
            .fake
            .tool_calls("fabric_work_release")
            .into_iter()
            .filter(|call| call["argv"].to_string().contains(&session))
            .count();
        assert_eq!(released, 1, "{host}");
        agent.end();
    }
    // Every worker ended, and no stand-in is left.
    wait_until("no fabric-fake left", WORKER_WAIT, || {
        person
            .prefix
            .processes_of("fabric-fake.exe --runner")
            .is_empty()
    });
    let log = person.log();
    for host in HOSTS {
        for needle in [
            format!(" stop {host} wine-{host}-1 ok turn=1"),
            format!(" status {host} wine-{host}-1 ok unread=3 board=ready"),
        ] {
            assert!(log.contains(&needle), "no `{needle}` in the log:\n{log}");
        }
    }
    // The log names no content: no prompt, no message, no project path.
    for secret in [PROMPT, "my-project", "Done."] {
        assert!(!log.contains(secret), "the log names {secret:?}:\n{log}");
    }
}

#[test]
fn a_session_run_through_cmd_is_listed_with_its_hosts_pid_and_pruned_once_the_host_is_gone() {
    let Some(person) = wired("a_session_run_through_cmd") else {
        return;
    };
    let cwd = person.project_win();
    for host in ["codex", "kimi"] {
        let session = format!("gone-{host}");
        let command = &person.commands(host)["SessionStart"];
        let mut agent = Host::start(&person.prefix, Shell::of(host), Job::None, &person.env());
        let ran = agent.run(
            command,
            &payload::input(host, "SessionStart", &session, &cwd),
        );
        assert_eq!(ran.code, Some(0), "{ran:?}");
        let status = person.status_json();
        let listed: Vec<&Value> = status["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["id"] == session.as_str())
            .collect();
        assert_eq!(
            listed.len(),
            1,
            "{host}: listed while the host runs: {status}"
        );
        let record: Value = serde_json::from_str(&wine_bench::read_text(
            &person.prefix.spool(&session).join("session.json"),
        ))
        .unwrap();
        assert_eq!(
            record["hostPid"].as_u64(),
            Some(u64::from(agent.pid)),
            "{host}"
        );
        agent.end();
        // The host is gone: no longer listed, and the next session start prunes its spool.
        let status = person.status_json();
        assert!(
            !status["sessions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["id"] == session.as_str()),
            "{host}: still listed after its host ended: {status}"
        );
        let mut next = Host::start(&person.prefix, Shell::of(host), Job::None, &person.env());
        let ran = next.run(
            command,
            &payload::input(host, "SessionStart", &format!("next-{host}"), &cwd),
        );
        assert_eq!(ran.code, Some(0));
        assert!(
            !person.prefix.spool(&session).exists(),
            "{host}: the gone host's spool was not pruned"
        );
        next.end();
    }
}

#[test]
fn a_job_without_breakaway_ends_the_worker_but_never_the_hook() {
    // The control of the breakaway above: a host whose job allows no breakaway ends the
    // worker with the hook (the best a worker can do there is be started at all).
    let Some(person) = wired("a_job_without_breakaway") else {
        return;
    };
    person.fake.set_unread(5);
    person.fake.set_delay_ms(FABRIC_DELAY_MS);
    let cwd = person.project_win();
    let command = &person.commands("codex")["Stop"];
    let mut agent = Host::start(&person.prefix, Shell::Codex, Job::Strict, &person.env());
    let ran = agent.run(command, &payload::input("codex", "Stop", "strict-1", &cwd));
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert_eq!(ran.stdout, "");
    // Longer than the worker takes when it is left alone (two delayed calls).
    std::thread::sleep(Duration::from_millis(4 * FABRIC_DELAY_MS));
    assert_eq!(
        board_unread(&person, "strict-1"),
        None,
        "the worker survived a job that allows no breakaway: the control does not control"
    );
    let log = person.log();
    assert!(log.contains(" stop codex strict-1 ok turn=1"), "{log}");
    agent.end();
}

#[test]
fn a_hanging_fabric_is_ended_at_the_workers_deadline_and_no_hook_waits() {
    let Some(person) = wired("a_hanging_fabric") else {
        return;
    };
    person.fake.set_mode("hang");
    let cwd = person.project_win();
    let command = &person.commands("codex")["Stop"];
    let mut agent = Host::start(&person.prefix, Shell::Codex, Job::None, &person.env());
    let ran = agent.run(command, &payload::input("codex", "Stop", "hang-1", &cwd));
    assert_eq!(ran.code, Some(0), "{ran:?}");
    assert!(!ran.timed_out);
    wait_until("the stand-in to start", WORKER_WAIT, || {
        !person.fake.starts().is_empty()
    });
    // It is there, hung (what is waited for below is its end, not an absence from the start).
    wait_until("the hung stand-in seen running", WORKER_WAIT, || {
        !person
            .prefix
            .processes_of("fabric-fake.exe --runner")
            .is_empty()
    });
    wait_until("outcome=unknown at the deadline", WORKER_WAIT, || {
        person
            .log()
            .contains(" observe-turn codex hang-1 outcome=unknown")
    });
    wait_until("the hung stand-in ended", Duration::from_secs(15), || {
        person
            .prefix
            .processes_of("fabric-fake.exe --runner")
            .is_empty()
    });
    assert!(!person.prefix.spool("hang-1").join("board.json").exists());
    agent.end();
}

#[test]
fn no_console_window_flashes_when_hooks_start_their_worker() {
    let Some(mut display) = Display::start("no_console_window_flashes") else {
        return;
    };
    let Some(mut person) = wired("no_console_window_flashes") else {
        return;
    };
    let _ = &mut display;
    person.prefix.set_display(&display.name);
    person.fake.set_unread(2);
    let cwd = person.project_win();
    // Wine's own windows (its desktop process) come up with the first program: before the watch.
    let warm = person.session(&["--version"], b"");
    assert_eq!(warm.status.code(), Some(0));
    std::thread::sleep(Duration::from_secs(2));
    for host in ["codex", "kimi"] {
        let commands = person.commands(host);
        let mut agent = Host::start(&person.prefix, Shell::of(host), Job::None, &person.env());
        let watch = display.watch_windows();
        let session = format!("flash-{host}");
        for event in ["SessionStart", "UserPromptSubmit", "Stop"] {
            let ran = agent.run(
                &commands[event],
                &payload::input(host, event, &session, &cwd),
            );
            assert_eq!(ran.code, Some(0), "{host} {event}: {ran:?}");
        }
        // The worker starts fabric-mcp (and tries git): wait until it is done.
        wait_until("the worker's board", WORKER_WAIT, || {
            board_unread(&person, &session) == Some(2)
        });
        let started = Instant::now();
        while !person
            .prefix
            .processes_of("fabric-fake.exe --runner")
            .is_empty()
            && started.elapsed() < WORKER_WAIT
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        let mapped = watch.finish();
        assert!(
            mapped.is_empty(),
            "{host}: windows appeared on screen while the hooks and their worker ran: {mapped:?}"
        );
        agent.end();
    }
}
