//! The exact tab, on GNOME Shell's Wayland session with our extension, another window (foot)
//! in front; the session-start hook recorded each tab's ids from its own environment:
//!
//! - real kitty (Debian's 0.26.5, its remote control on a socket, as a person turns it on:
//!   `--listen-on unix:…` with `allow_remote_control socket-only`) holding two sessions in two
//!   tabs of one window: `fabric-session focus` makes kitty show the session's tab and brings
//!   kitty's window to the front, read back from kitty (`kitty @ ls`) and the shell;
//! - real GNOME Terminal (its server and client), two sessions in two tabs of one window:
//!   the jump asks the server's search provider for the session's screen, read back from
//!   the window's `active-tab` action and the shell;
//! - GNOME Console and Ptyxis, two sessions in two tabs of one window: they give a tab's
//!   programs no id of it, so the jump raises their window and says which tab and why it was
//!   not chosen (Ptyxis: not run where its tabs cannot start, said on one line);
//! - Alacritty, two windows (no tabs): each jump raises the session's own window.
#![cfg(target_os = "linux")]

use desktop_shells::gnome::{self, FOCUS, GnomeShell};
use desktop_shells::{WAIT, cannot_run, require, terminal, wait_until};

#[test]
fn the_jump_selects_the_sessions_own_kitty_tab() {
    let test = "the_jump_selects_the_sessions_own_kitty_tab";
    if !gnome::available(test) || !require(test, &["kitty", "foot"], "kitty, foot") {
        return;
    }
    let mut shell = GnomeShell::start("terminal-tabs", "kitty-two-tabs", &[FOCUS]);
    shell.wire_claude_and_fabric();
    let one = shell.host_script("tab-one", "one");
    let two = shell.host_script("tab-two", "two");
    let (kitty, socket) = terminal::kitty_tabs(&mut shell, "kitty", &[("one", one), ("two", two)]);
    shell.wait_for_window(kitty);
    let record_one = shell.recorded_host("tab-one");
    let record_two = shell.recorded_host("tab-two");

    // What the hook recorded is kitty's own id of each tab's window, and its socket.
    let ls = terminal::kitty_ls(&shell, &socket);
    let id_of = |title: &str| -> u64 {
        ls[0]["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["title"] == title)
            .and_then(|t| t["windows"][0]["id"].as_u64())
            .unwrap_or_else(|| panic!("tab {title} in {ls}"))
    };
    let kitty_one = record_one
        .terminal
        .kitty
        .clone()
        .expect("kitty ids recorded");
    let kitty_two = record_two
        .terminal
        .kitty
        .clone()
        .expect("kitty ids recorded");
    assert_eq!(kitty_one.window_id, id_of("one"));
    assert_eq!(kitty_two.window_id, id_of("two"));
    assert_eq!(kitty_one.listen_on.as_deref(), Some(socket.as_str()));

    // Another window in front; kitty shows tab two.
    let foot_script = shell.home().join("idle.sh");
    std::fs::write(&foot_script, "exec sleep 100000\n").unwrap();
    let foot = terminal::foot(&mut shell, "foot", &foot_script);
    shell.wait_for_window(foot);
    shell.activate_window_of(foot);
    let out = shell
        .command("kitty")
        .args(["@", "--to", &socket, "focus-tab", "--match", "title:two"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    shell.activate_window_of(foot);
    assert_eq!(
        terminal::kitty_active_tab(&shell, &socket).as_deref(),
        Some("two"),
        "kitty @ ls: {}",
        terminal::kitty_ls(&shell, &socket)
    );
    assert_eq!(shell.focused().map(|f| f.0), Some(foot));

    // 1. Tab one's session: kitty shows tab one, and its window is in front.
    let (code, out, err) = shell.focus("tab-one");
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains(&format!("kitty window {} selected", kitty_one.window_id)),
        "{out}"
    );
    wait_until("kitty to show tab one", WAIT, || {
        (terminal::kitty_active_tab(&shell, &socket).as_deref() == Some("one")).then_some(())
    });
    assert_eq!(shell.focused().map(|f| f.0), Some(kitty));
    let _ = shell.screenshot("tab-one", 0, 0, 1280, 800);

    // 2. Back to foot, then tab two's session: tab two, kitty in front.
    shell.activate_window_of(foot);
    let (code, out, err) = shell.focus("tab-two");
    assert_eq!(code, Some(0), "{out}{err}");
    wait_until("kitty to show tab two", WAIT, || {
        (terminal::kitty_active_tab(&shell, &socket).as_deref() == Some("two")).then_some(())
    });
    assert_eq!(shell.focused().map(|f| f.0), Some(kitty));
    let _ = shell.screenshot("tab-two", 0, 0, 1280, 800);
}

#[test]
fn the_jump_selects_the_sessions_own_gnome_terminal_tab() {
    let test = "the_jump_selects_the_sessions_own_gnome_terminal_tab";
    if !gnome::available(test)
        || !require(test, &["gnome-terminal", "foot"], "gnome-terminal, foot")
    {
        return;
    }
    if !std::path::Path::new(terminal::GNOME_TERMINAL_SERVER).is_file() {
        cannot_run(
            test,
            &format!(
                "{} is missing (package gnome-terminal)",
                terminal::GNOME_TERMINAL_SERVER
            ),
        );
        return;
    }
    let mut shell = GnomeShell::start("terminal-tabs", "gnome-terminal-two-tabs", &[FOCUS]);
    shell.wire_claude_and_fabric();
    let one = shell.host_script("gt-one", "one");
    let two = shell.host_script("gt-two", "two");
    let (server, service) = terminal::gnome_terminal_server(&mut shell);
    // Tab one in a new window, then tab two beside it (its position 1).
    terminal::gnome_terminal_open(&shell, "--window", &one, None);
    let record_one = shell.recorded_host("gt-one");
    let screen_one = record_one
        .terminal
        .gnome_terminal
        .clone()
        .expect("GNOME Terminal ids recorded");
    terminal::gnome_terminal_open(&shell, "--tab", &two, Some((&service, &screen_one.screen)));
    let record_two = shell.recorded_host("gt-two");
    shell.wait_for_window(server);

    // What the hook recorded: the server's unique name and each tab's own screen.
    let screen_two = record_two
        .terminal
        .gnome_terminal
        .clone()
        .expect("GNOME Terminal ids recorded");
    assert_eq!(screen_one.service, service);
    assert_eq!(screen_two.service, service);
    assert_ne!(screen_one.screen, screen_two.screen);

    // Another window in front; GNOME Terminal shows tab two (the one opened last).
    let foot_script = shell.home().join("idle.sh");
    std::fs::write(&foot_script, "exec sleep 100000\n").unwrap();
    let foot = terminal::foot(&mut shell, "foot", &foot_script);
    shell.wait_for_window(foot);
    shell.activate_window_of(foot);
    wait_until("GNOME Terminal to show tab two", WAIT, || {
        (terminal::gnome_terminal_active_tab(&shell, 1) == Some(1)).then_some(())
    });

    // 1. Tab one's session: GNOME Terminal shows tab one, and its window is in front.
    let (code, out, err) = shell.focus("gt-one");
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains(&format!(
            "GNOME Terminal tab (screen {}) selected",
            screen_one.screen
        )),
        "{out}{err}"
    );
    wait_until("GNOME Terminal to show tab one", WAIT, || {
        (terminal::gnome_terminal_active_tab(&shell, 1) == Some(0)).then_some(())
    });
    assert_eq!(shell.focused().map(|f| f.0), Some(server));
    let _ = shell.screenshot("gnome-terminal-tab-one", 0, 0, 1280, 800);

    // 2. Back to foot, then tab two's session: tab two, GNOME Terminal in front.
    shell.activate_window_of(foot);
    let (code, out, err) = shell.focus("gt-two");
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("selected"), "{out}");
    wait_until("GNOME Terminal to show tab two", WAIT, || {
        (terminal::gnome_terminal_active_tab(&shell, 1) == Some(1)).then_some(())
    });
    assert_eq!(shell.focused().map(|f| f.0), Some(server));
    let _ = shell.screenshot("gnome-terminal-tab-two", 0, 0, 1280, 800);
}

/// [`GnomeShell::host_script`], run with the test's `HOME` put back first: Alacritty sets
/// `HOME` (and `USER`, `SHELL`) from the password database for its shell
/// (`alacritty_terminal/src/tty/unix.rs`), and so does Ptyxis's agent for a tab on the host.
fn host_script_in_home(shell: &GnomeShell, session: &str, project: &str) -> std::path::PathBuf {
    let script = shell.host_script(session, project);
    let wrapper = shell.home().join(format!("{session}-in-home.sh"));
    std::fs::write(
        &wrapper,
        format!(
            "export HOME='{}'\nexec sh '{}'\n",
            shell.home().display(),
            script.display()
        ),
    )
    .unwrap();
    wrapper
}

/// A terminal whose tabs give their programs no id of the tab (GNOME Console, Ptyxis): two
/// sessions in two tabs of one window, another window (foot) in front. The jump raises the
/// terminal's window and says, in its answer, that the tab could not be chosen and why.
fn tab_without_id(test: &str, program: &str, tab_words: &str, name: &str) {
    if !gnome::available(test) || !require(test, &[program, "foot"], &format!("{program}, foot")) {
        return;
    }
    let mut shell = GnomeShell::start("terminal-tabs", name, &[FOCUS]);
    shell.wire_claude_and_fabric();
    let one = host_script_in_home(&shell, &format!("{name}-one"), "one");
    let two = host_script_in_home(&shell, &format!("{name}-two"), "two");
    // The first instance owns every window and tab (a GApplication); `--tab` asks it for a
    // tab in its window, as a person typing it in that window does. GTK 4 draws with cairo:
    // a headless shell has no GL for it.
    let mut first = shell.command(program);
    first
        .env("GSK_RENDERER", "cairo")
        .args(["--", "sh"])
        .arg(&one);
    let terminal = shell.spawn(program, first);
    let record_one = shell.recorded_host(&format!("{name}-one"));
    shell.wait_for_window(terminal);
    let out = shell
        .command(program)
        .env("GSK_RENDERER", "cairo")
        .args(["--tab", "--", "sh"])
        .arg(&two)
        .output()
        .unwrap();
    assert!(out.status.success(), "{program} --tab: {out:?}");
    let record_two = shell.recorded_host(&format!("{name}-two"));
    assert_ne!(record_one.host_pid, record_two.host_pid);

    let foot_script = shell.home().join("idle.sh");
    std::fs::write(&foot_script, "exec sleep 100000\n").unwrap();
    let foot = terminal::foot(&mut shell, "foot", &foot_script);
    shell.wait_for_window(foot);
    shell.activate_window_of(foot);
    assert_eq!(shell.focused().map(|f| f.0), Some(foot));

    for session in ["one", "two"] {
        shell.activate_window_of(foot);
        let (code, out, err) = shell.focus(&format!("{name}-{session}"));
        assert_eq!(code, Some(0), "{out}{err}");
        assert!(
            out.contains(&format!("{tab_words} (not selected: ")),
            "the answer names the tab and why it was not chosen: {out}{err}"
        );
        wait_until(&format!("{program}'s window in front"), WAIT, || {
            (shell.focused().map(|f| f.0) == Some(terminal)).then_some(())
        });
    }
    let _ = shell.screenshot(name, 0, 0, 1280, 800);
}

#[test]
fn the_jump_raises_gnome_console_and_says_it_cannot_pick_the_tab() {
    tab_without_id(
        "the_jump_raises_gnome_console_and_says_it_cannot_pick_the_tab",
        "kgx",
        "a Console tab",
        "kgx",
    );
}

#[test]
fn the_jump_raises_ptyxis_and_says_it_cannot_pick_the_tab() {
    let test = "the_jump_raises_ptyxis_and_says_it_cannot_pick_the_tab";
    // Ptyxis came to Debian with 13: on 12 it runs only in the roots (tests/desktop-roots).
    let release = std::fs::read_to_string("/etc/debian_version").unwrap_or_default();
    if release.starts_with("12.")
        && test_support::desktop::missing_programs(&["ptyxis"]) == ["ptyxis"]
    {
        eprintln!(
            "NOT RUN {test}: Ptyxis is not packaged for Debian 12 (the Debian 13 and forky roots have it)"
        );
        return;
    }
    // Ptyxis's agent starts each tab's shell through `systemd-run --user --scope` whenever
    // `systemd-run` is there (strings of Debian 13's `ptyxis-agent`: `systemd-run --version`,
    // then `--user --scope --unit=ptyxis-spawn-%s.scope`). A test session has no systemd user
    // manager (none can start in a chroot): the tab shows "Failed to connect to user scope
    // bus" and no shell runs, so the session never starts.
    if test_support::desktop::missing_programs(&["systemd-run"]).is_empty() {
        eprintln!(
            "NOT RUN {test}: Ptyxis starts every tab's shell through `systemd-run --user --scope`, \
             and a test session has no systemd user manager for it"
        );
        return;
    }
    tab_without_id(test, "ptyxis", "a Ptyxis tab", "ptyxis");
}

/// Alacritty has windows and no tabs: two sessions in two Alacritty windows (two processes,
/// as a person opens them from the dock), another window in front; each jump raises its own.
#[test]
fn the_jump_raises_the_sessions_own_alacritty_window() {
    let test = "the_jump_raises_the_sessions_own_alacritty_window";
    if !gnome::available(test) || !require(test, &["alacritty", "foot"], "alacritty, foot") {
        return;
    }
    let mut shell = GnomeShell::start("terminal-tabs", "alacritty-two-windows", &[FOCUS]);
    shell.wire_claude_and_fabric();
    let mut windows = Vec::new();
    for session in ["one", "two"] {
        let wrapper = host_script_in_home(&shell, &format!("alacritty-{session}"), session);
        let mut alacritty = shell.command("alacritty");
        // Software GL where the headless shell has no GPU.
        alacritty
            .env("LIBGL_ALWAYS_SOFTWARE", "1")
            .args(["--title", session, "-e", "sh"])
            .arg(&wrapper);
        let pid = shell.spawn(&format!("alacritty-{session}"), alacritty);
        shell.recorded_host(&format!("alacritty-{session}"));
        shell.wait_for_window(pid);
        windows.push(pid);
    }
    let foot_script = shell.home().join("idle.sh");
    std::fs::write(&foot_script, "exec sleep 100000\n").unwrap();
    let foot = terminal::foot(&mut shell, "foot", &foot_script);
    shell.wait_for_window(foot);
    for (session, pid) in ["one", "two"].into_iter().zip(windows) {
        shell.activate_window_of(foot);
        let (code, out, err) = shell.focus(&format!("alacritty-{session}"));
        assert_eq!(code, Some(0), "{out}{err}");
        assert!(out.contains(&format!("(pid {pid}")), "{out}{err}");
        wait_until(
            &format!("Alacritty window {session} in front"),
            WAIT,
            || (shell.focused().map(|f| f.0) == Some(pid)).then_some(()),
        );
    }
    let _ = shell.screenshot("alacritty", 0, 0, 1280, 800);
}
