//! The host process a session is recorded with, when the host runs our hook through a shell
//! that stays between it and us: real shells (bash, dash, zsh, fish; pwsh when installed) in
//! each form the hosts use (`$SHELL -lc` as Codex spawns hooks, `/bin/sh -c`, `bash -l -c`,
//! `fish -c`, …), running a compound command or a trap so the shell does not replace itself
//! with our binary. This test process plays the host: it starts the shell, and it lives.

mod common;

use std::io::Write;
use std::process::Stdio;

use common::{BIN, Home, stdout};

const SESSION_HOOKS: &[&str] = &["session-hooks/1"];

/// A shell form: the program, its arguments before the command, and how the command is built.
struct Wrapper {
    program: &'static str,
    args: &'static [&'static str],
    /// `{hook}` is replaced by the quoted hook command.
    command: &'static str,
}

const WRAPPERS: &[Wrapper] = &[
    // Codex: `$SHELL -lc <command>` (codex-rs hooks, command_runner.rs).
    Wrapper {
        program: "bash",
        args: &["-lc"],
        command: "{hook}; true",
    },
    Wrapper {
        program: "bash",
        args: &["-l", "-c"],
        command: "{hook}; true",
    },
    Wrapper {
        program: "bash",
        args: &["--login", "-c"],
        command: "{hook}; true",
    },
    Wrapper {
        program: "bash",
        args: &["-xc"],
        command: "{hook}; true",
    },
    Wrapper {
        program: "bash",
        args: &["-c"],
        command: "trap 'true' EXIT; {hook}",
    },
    Wrapper {
        program: "bash",
        args: &["-o", "pipefail", "-c"],
        command: "{hook} | cat",
    },
    // Claude Code and Kimi Code: `/bin/sh -c` (dash here).
    Wrapper {
        program: "sh",
        args: &["-c"],
        command: "{hook}; true",
    },
    Wrapper {
        program: "dash",
        args: &["-ec"],
        command: "{hook}; true",
    },
    Wrapper {
        program: "zsh",
        args: &["-lc"],
        command: "{hook}; true",
    },
    Wrapper {
        program: "zsh",
        args: &["-c"],
        command: "{hook}; true",
    },
    // fish as `$SHELL`: it never replaces itself.
    Wrapper {
        program: "fish",
        args: &["-c"],
        command: "{hook}",
    },
    Wrapper {
        program: "fish",
        args: &["-l", "-c"],
        command: "{hook}",
    },
    Wrapper {
        program: "fish",
        args: &["--login", "--command"],
        command: "{hook}",
    },
    Wrapper {
        program: "pwsh",
        args: &["-NoProfile", "-Command"],
        command: "& {hook}; $null",
    },
];

fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Runs `session-start --host codex` for `session` through `wrapper`, this process its host.
fn session_start_through(home: &Home, wrapper: &Wrapper, session: &str) {
    let hook = format!("'{BIN}' hook session-start --host codex");
    let command = wrapper.command.replace("{hook}", &hook);
    let mut child = home
        .program(wrapper.program)
        .args(wrapper.args)
        .arg(&command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let payload = home.payload(session, "SessionStart");
    child.stdin.take().unwrap().write_all(&payload).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{} {:?}: {out:?}",
        wrapper.program,
        wrapper.args
    );
    assert!(
        stdout(&out).contains("Fabric"),
        "{} {:?}: the preamble came through: {out:?}",
        wrapper.program,
        wrapper.args
    );
}

#[test]
fn a_session_started_through_each_hosts_shell_records_the_host_and_stays_listed() {
    let home = Home::new();
    home.register("codex");
    home.fabric_running(SESSION_HOOKS);
    let mut ran = Vec::new();
    for (n, wrapper) in WRAPPERS.iter().enumerate() {
        if !installed(wrapper.program) {
            println!(
                "skipped: {} {:?}: {} is not installed here (scripts/test.sh installs bash, dash, zsh and fish)",
                wrapper.program, wrapper.args, wrapper.program
            );
            continue;
        }
        let session = format!("wrapped-{n}");
        session_start_through(&home, wrapper, &session);
        let record: serde_json::Value = serde_json::from_slice(
            &std::fs::read(home.spool(&session).join("session.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            record["hostPid"],
            std::process::id(),
            "{} {:?}: the recorded host is the process that ran the shell, not the shell",
            wrapper.program,
            wrapper.args
        );
        ran.push(session);
    }
    assert!(ran.len() >= 7, "bash and dash are always here: {ran:?}");
    // Another session starts (it prunes spools of dead hosts): every wrapped one stays.
    let out = home.hook(
        "session-start",
        "codex",
        &home.payload("direct", "SessionStart"),
    );
    assert!(out.status.success());
    for session in &ran {
        assert!(
            home.spool(session).join("session.json").is_file(),
            "{session} pruned"
        );
    }
    // `status` lists them all while their host (this process) lives.
    let status = home.command(&["status", "--json"]).output().unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let listed: Vec<&str> = status["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    for session in &ran {
        assert!(
            listed.contains(&session.as_str()),
            "{session} not in {listed:?}"
        );
    }
}
