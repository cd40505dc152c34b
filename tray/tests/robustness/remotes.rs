//! Sessions on another machine (issue 29), for real: a real OpenSSH server on a loopback port
//! as a second Unix user (test-support's `ssh_remote`), our `fabric-session` copied there over
//! ssh, a session run by the real hooks in tmux there, and the real tray here (Xvfb, openbox,
//! a StatusNotifierWatcher, dunst) following the remote over `ssh -F <the bench's config>`.
//!
//! `the_remote_s_session_reaches_the_tray_and_the_jump_finds_it`: the remote session in the
//! menu with its count; a permission prompt there marks the icon and notifies here; the jump
//! selects the remote tmux pane and raises the local xterm whose ssh reaches the remote; sshd
//! killed: "unreachable" in the menu, back once it returns.
//! `hostile_remotes_cost_a_reconnect_and_never_freeze_the_tray`: a remote whose program sends
//! garbage, a flood, a huge line, nothing at all, or hostile text: each ends in one line of
//! the menu and a reconnect; the tray answers throughout and keeps one ssh per remote.

use test_support::ssh_remote::{PROGRAM as REMOTE_PROGRAM, SshRemote, write_as_remote};

use super::*;

/// "Fabric" at the other end: a process of the remote user that `hub.json` names, with the
/// session hooks on, and `fabric` registered in Claude Code there.
fn remote_fabric(remote: &SshRemote) {
    write_as_remote(
        remote,
        ".claude.json",
        r#"{"mcpServers": {"fabric": {"command": "fabric-mcp", "args": ["--runner", "claude-code"]}}}"#,
    );
    remote.fabric_running(|pid, fabric_dir| {
        fabric_fake::files::hub_text(fabric_dir, &["session-hooks/1"], pid)
    });
}

/// A hook's input file at the other end, and the line the pane's shell runs for it.
fn hook_line(remote: &SshRemote, event: &str, cli_event: &str, extra: &str) -> String {
    let file = format!("payload-{cli_event}.json");
    let proj = remote.home().join("proj");
    write_as_remote(
        remote,
        &file,
        &format!(
            r#"{{"session_id":"remote-s1","cwd":"{}","hook_event_name":"{event}","transcript_path":"{}/t.jsonl","source":"startup"{extra}}}"#,
            proj.display(),
            remote.home().display()
        ),
    );
    format!("~/{REMOTE_PROGRAM} hook {cli_event} < ~/{file}")
}

/// Types `line` into the remote tmux pane's shell (the session's host process).
fn in_pane(remote: &SshRemote, line: &str) {
    let out = remote.run_as_remote(&format!(
        "tmux send-keys -t agents:0.0 '{}' Enter",
        line.replace('\'', "'\\''")
    ));
    assert!(out.status.success(), "{out:?}");
}

/// The tray's menu labels now.
fn labels(client: &Client, item: &str) -> Vec<String> {
    client
        .menu(item)
        .unwrap_or_default()
        .into_iter()
        .map(|(_, l)| l)
        .collect()
}

/// Waits for a menu label for which `check` holds; returns it.
pub(super) fn menu_shows(
    client: &Client,
    item: &str,
    what: &str,
    check: impl Fn(&str) -> bool,
) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let now = labels(client, item);
        if let Some(found) = now.iter().find(|l| check(l)) {
            return found.clone();
        }
        assert!(
            Instant::now() < deadline,
            "gave up waiting for {what}; the menu: {now:#?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The tray's ssh children (its links).
fn ssh_children(tray: u32) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let after = stat.rsplit_once(") ").map(|(_, rest)| rest).unwrap_or("");
            let ppid = after.split_whitespace().nth(1).and_then(|p| p.parse().ok());
            stat.contains("(ssh)") && ppid == Some(tray)
        })
        .count()
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn the_remote_s_session_reaches_the_tray_and_the_jump_finds_it() {
    let test = "the_remote_s_session_reaches_the_tray_and_the_jump_finds_it";
    if !available(test)
        || !programs_available(
            test,
            &["tmux", "dunst", "xdotool"],
            "no tmux",
            "tmux, dunst, xdotool",
        )
    {
        return;
    }
    let Some(mut remote) = SshRemote::start(test) else {
        return;
    };
    remote.put_program(&std::fs::read(session_binary()).unwrap());
    remote_fabric(&remote);
    let out = remote.run_as_remote(
        "mkdir -p ~/proj && tmux new-session -d -s agents -x 120 -y 30 && tmux new-window -d -t agents:1",
    );
    assert!(out.status.success(), "{out:?}");
    in_pane(
        &remote,
        &hook_line(&remote, "SessionStart", "session-start", ""),
    );
    in_pane(
        &remote,
        &hook_line(
            &remote,
            "UserPromptSubmit",
            "user-prompt-submit",
            r#","prompt":"go""#,
        ),
    );

    let mut desktop = Desktop::start("remote-ssh", false);
    start_watcher(&mut desktop);
    let wm = desktop.command("openbox");
    desktop.spawn_logged("openbox", wm);
    let config = remote.config().to_str().unwrap().to_string();
    let tray = start_tray_with(
        &mut desktop,
        r#"{"watchIntervalSecs": 10, "needsYouGraceSecs": 0, "remotes": ["fabric-remote"]}"#,
        // The default silence deadline (45 s) outlasts the remote's heartbeat (30 s).
        &[("FABRIC_SSH_CONFIG", &config)],
    );
    let client = Client::new(&desktop.bus);
    let item = item_name(&client, tray);
    let line = menu_shows(&client, &item, "the remote session in the menu", |l| {
        l.starts_with("proj · Claude Code on fabric-remote · ")
    });
    assert!(line.ends_with("working"), "{line}");
    menu_shows(&client, &item, "the remote's link", |l| {
        l == "fabric-remote: connected, 1 session"
    });
    assert_eq!(ssh_children(tray), 1, "one ssh per remote");

    // A permission prompt there: the mark and a notification here.
    let asked = Instant::now();
    in_pane(
        &remote,
        &hook_line(
            &remote,
            "PermissionRequest",
            "permission-request",
            r#","tool_name":"Bash""#,
        ),
    );
    menu_shows(&client, &item, "needs you in the menu", |l| {
        l.starts_with("proj · Claude Code on fabric-remote · needs you (permission")
    });
    let notified = wait_until("the needs-you notification", WAIT, || {
        notify_calls(&desktop.notify_text())
            .into_iter()
            .find(|c| c.summary == "proj on fabric-remote needs you")
    });
    let took = asked.elapsed();
    eprintln!("MEASURED remote permission prompt to a notification here: {took:?}");
    assert!(took < Duration::from_secs(2), "took {took:?}: {notified:?}");

    // The jump: a local xterm runs the person's ssh to the remote; another window is in front.
    let mut ssh_term = desktop.command("xterm");
    ssh_term.args([
        "-T",
        "ssh-to-remote",
        "-e",
        "ssh",
        "-F",
        &config,
        "-t",
        "fabric-remote",
        "tmux",
        "attach",
        "-t",
        "agents",
    ]);
    let term_pid = desktop.spawn_logged("xterm-ssh", ssh_term);
    wait_until("the xterm's window", WAIT, || {
        let out = desktop.run("xdotool", &["search", "--pid", &term_pid.to_string()]);
        (!out.stdout.is_empty()).then_some(())
    });
    let mut other = desktop.command("xterm");
    other.args(["-T", "other"]);
    let other_pid = desktop.spawn_logged("xterm-other", other);
    let active_pid = || {
        let out = desktop.run("xdotool", &["getactivewindow", "getwindowpid"]);
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse::<u32>()
            .ok()
    };
    wait_until("the other xterm in front", WAIT, || {
        (active_pid() == Some(other_pid)).then_some(())
    });
    let out = remote.run_as_remote("tmux select-window -t agents:1");
    assert!(out.status.success());
    let session_item = client
        .id_of(&item, "proj · Claude Code on fabric-remote")
        .expect("the session's line");
    client.click(&item, session_item).unwrap();
    wait_until("the ssh's xterm in front", WAIT, || {
        (active_pid() == Some(term_pid)).then_some(())
    });
    let window = remote.run_as_remote("tmux display-message -p -t agents '#{window_index}'");
    assert_eq!(
        String::from_utf8_lossy(&window.stdout).trim(),
        "0",
        "the session's tmux window selected there"
    );

    // sshd gone: unreachable in the menu (the remote's sessions with it); back once it returns.
    remote.kill_sshd();
    let down = menu_shows(&client, &item, "the remote unreachable", |l| {
        l.starts_with("fabric-remote: unreachable since ")
    });
    eprintln!("menu: {down}");
    assert!(
        !labels(&client, &item)
            .iter()
            .any(|l| l.contains("on fabric-remote")),
        "an unreachable remote's sessions are not counted"
    );
    remote.restart_sshd();
    menu_shows(&client, &item, "the remote back", |l| {
        l == "fabric-remote: connected, 1 session"
    });
    assert_eq!(
        ssh_children(tray),
        1,
        "one ssh per remote after the reconnect"
    );
    quit_and_wait(&client, &item, tray, &desktop);
    assert!(
        !desktop.cache_dir().join("remotes.json").exists(),
        "the saved board goes with the tray"
    );
}

#[test]
fn hostile_remotes_cost_a_reconnect_and_never_freeze_the_tray() {
    let test = "hostile_remotes_cost_a_reconnect_and_never_freeze_the_tray";
    if !available(test) {
        return;
    }
    let Some(remote) = SshRemote::start(test) else {
        return;
    };
    let mut desktop = Desktop::start_bare("remote-hostile");
    start_watcher(&mut desktop);
    remote.put_program(b"#!/bin/sh\necho 'hello, I am not JSON'\nexec sleep 900\n");
    let config = remote.config().to_str().unwrap().to_string();
    let tray = start_tray_with(
        &mut desktop,
        r#"{"watchIntervalSecs": 10, "remotes": ["fabric-remote"]}"#,
        &[
            ("FABRIC_SSH_CONFIG", &config),
            ("FABRIC_REMOTE_SILENCE_SECS", "4"),
        ],
    );
    let client = Client::new(&desktop.bus);
    let item = item_name(&client, tray);
    let baseline = rss_kib(tray);
    let heartbeat = r#"{"schema":"fabric-session-status/1","heartbeat":"2026-12-06T10:00:00Z"}"#;
    let hostile_doc = serde_json::json!({
        "schema": "fabric-session-status/1",
        "fabric": {"state": "running"},
        "sessions": [
            {"id": "ok-1", "host": "claude", "project": "a\u{0}b\u{1b}[31mc\u{202e}d", "state": "needs-you",
             "reason": "permission", "tmuxPane": "%1; reboot", "board": {"unread": 3}},
            {"id": "../../etc", "host": "claude", "project": "x", "state": "idle"},
        ],
        "extra": {"ignored": true},
    })
    .to_string();
    let cases: [(&str, String, &str); 5] = [
        ("garbage", String::new(), "sent something that is not JSON"),
        (
            "a flood",
            format!("#!/bin/sh\nyes '{heartbeat}'\n"),
            "sent more than 200 lines in 10 s",
        ),
        (
            "a huge line",
            "#!/bin/sh\nhead -c 3000000 /dev/zero | tr '\\000' a\nexec sleep 900\n".into(),
            "sent a line over 256 KiB",
        ),
        (
            "silence",
            "#!/bin/sh\nexec sleep 900\n".into(),
            "sent nothing for 4 s",
        ),
        (
            "hostile text",
            format!(
                "#!/bin/sh\nprintf '%s\\n' '{hostile_doc}'\nwhile sleep 1; do printf '%s\\n' '{heartbeat}'; done\n"
            ),
            "",
        ),
    ];
    for (what, program, said) in cases {
        if !program.is_empty() {
            remote.put_program(program.as_bytes());
        }
        if said.is_empty() {
            let line = menu_shows(
                &client,
                &item,
                "the hostile remote's one good session",
                |l| l.contains(" on fabric-remote · needs you"),
            );
            assert_eq!(
                line.split(" · ").next(),
                Some("ab[31mcd"),
                "cleaned: {line:?}"
            );
            menu_shows(&client, &item, "one session kept", |l| {
                l == "fabric-remote: connected, 1 session"
            });
        } else {
            let line = menu_shows(&client, &item, what, |l| {
                l.starts_with("fabric-remote: unreachable since ") && l.ends_with(said)
            });
            eprintln!("{what}: {line}");
        }
        assert!(
            item_answers(&client, tray).is_some(),
            "the tray answers after {what}"
        );
        assert!(ssh_children(tray) <= 1, "one ssh per remote after {what}");
    }
    let grown = rss_kib(tray).saturating_sub(baseline);
    eprintln!("MEASURED the tray's memory after the hostile remotes: +{grown} KiB");
    assert!(grown < 16 * 1024, "grew by {grown} KiB");
    quit_and_wait(&client, &item, tray, &desktop);
}
