//! The exact tab, on GNOME Shell's Wayland session with our extension, another window (foot)
//! in front; the session-start hook recorded each tab's ids from its own environment:
//!
//! - real kitty (Debian's 0.26.5, its remote control on a socket, as a person turns it on:
//!   `--listen-on unix:…` with `allow_remote_control socket-only`) holding two sessions in two
//!   tabs of one window: `fabric-session focus` makes kitty show the session's tab and brings
//!   kitty's window to the front, read back from kitty (`kitty @ ls`) and the shell;
//! - real GNOME Terminal (its server and client), two sessions in two tabs of one window:
//!   the jump asks the server's search provider for the session's screen, read back from
//!   the window's `active-tab` action and the shell.
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
