//! "Looked at" is the session's own tab in front, never just its terminal's window: asked with
//! `session_focus::looked_at_on` (what the tray asks before it silences a "needs you") on a
//! real (virtual) X11 desktop: Xvfb, openbox, a real kitty holding two sessions in two tabs of
//! one OS window and a third in a second OS window of the same process, a real Konsole holding
//! two sessions in two tabs of one window (on a private session bus), and an xterm.
//!
//! Each session is a real process in its tab; its terminal ids are read from its own
//! environment the way the session-start hook reads them, and recorded in its spool. Which
//! tab is in front is changed the way a person changes it (the window activated through the
//! window manager, the tab picked in the terminal) and read back from the terminal itself.
//! Needs xvfb, x11-utils, xdotool, openbox, kitty, konsole, xterm, dbus, libglib2.0-bin.
#![cfg(target_os = "linux")]

mod common;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::x11_desk::{Desk, Procs, WAIT, available, record_in_terminal, start_xvfb};
use common::{Home, wait_until};
use companion_hosts::host::Host;
use companion_sessions::terminal_ids::TerminalIds;

const PROGRAMS: [&str; 5] = ["kitty", "konsole", "dbus-daemon", "gdbus", "xterm"];

/// A script for a tab: writes its own environment and pid, then stays (as the host).
fn tab_script(dir: &Path) -> PathBuf {
    let script = dir.join("tab.sh");
    std::fs::write(
        &script,
        "env > \"$1.env.tmp\" && mv \"$1.env.tmp\" \"$1.env\"\n\
         echo $$ > \"$1.pid.tmp\" && mv \"$1.pid.tmp\" \"$1.pid\"\n\
         exec sleep 100000\n",
    )
    .unwrap();
    script
}

/// The session of the tab `name` (its script wrote `<dir>/<name>.{env,pid}`), recorded as
/// the session-start hook records it: its pid and the terminal ids of its environment.
fn record_tab(desk: &Desk, dir: &Path, name: &str) -> (u32, TerminalIds) {
    let pid_file = dir.join(format!("{name}.pid"));
    wait_until(&format!("tab {name} to start"), WAIT, || pid_file.is_file());
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let env = std::fs::read_to_string(dir.join(format!("{name}.env"))).unwrap();
    let ids = TerminalIds::from_lookup(|var| {
        env.lines()
            .find_map(|l| l.strip_prefix(var)?.strip_prefix('=').map(str::to_string))
    });
    record_in_terminal(&desk.home, name, pid, Host::Claude, ids.clone());
    (pid, ids)
}

/// Which of `ids` the person is looking at, asked as the tray asks; waited for until it is
/// `expected` (the window manager and the terminal take their time), then checked to stay.
fn looked_at(desk: &Desk, sessions: &[(&str, u32)], expected: Option<&str>, why: &str) {
    let dir = desk.home.cache_dir().join("sessions");
    let ask = || session_focus::looked_at_on(&desk.display, &dir, sessions);
    let mut last = None;
    let settled = (0..100).any(|_| {
        last = ask();
        if last.as_deref() == expected {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        false
    });
    assert!(settled, "{why}: looked at {last:?}, expected {expected:?}");
    assert_eq!(ask().as_deref(), expected, "{why}: again");
}

fn activate(desk: &Desk, window: u64) {
    let out = desk
        .program("xdotool")
        .args(["windowactivate", "--sync", &window.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "xdotool windowactivate: {out:?}");
}

fn kitty(desk: &Desk, socket: &str, args: &[&str]) -> String {
    let out = desk
        .program("kitty")
        .args(["@", "--to", socket])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "kitty @ {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A private session bus for Konsole (and for the test process, which asks Konsole on it).
fn session_bus(procs: &mut Procs) -> String {
    let mut bus = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("dbus-daemon");
    let stdout = bus.stdout.take().unwrap();
    procs.children.push(bus);
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    line.trim().to_string()
}

#[test]
fn looked_at_is_the_session_s_own_tab_in_front() {
    let test = "looked_at_is_the_session_s_own_tab_in_front";
    if !available(test)
        || !common::x11_desk::require(
            test,
            &PROGRAMS,
            "kitty, konsole, dbus, libglib2.0-bin, xterm",
        )
    {
        return;
    }
    let mut procs = Procs {
        children: Vec::new(),
        tmux_socket: None,
    };
    let display = start_xvfb(&mut procs);
    let bus = session_bus(&mut procs);
    // SAFETY: the only test of this program; set before any thread of ours reads the
    // environment. Konsole is asked on this bus, as the tray asks it on the person's.
    unsafe { std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &bus) };
    let home = Home::new();
    let socket = home.path().join("tmux.sock");
    let mut desk = Desk {
        procs,
        home,
        display,
        socket,
    };
    desk.home
        .extra_env
        .push(("DBUS_SESSION_BUS_ADDRESS".into(), bus.clone()));
    desk.start_openbox();
    let dir = desk.home.path().join("tabs");
    std::fs::create_dir_all(&dir).unwrap();
    let script = tab_script(&dir);
    let tab = |name: &str| format!("sh {} {}", script.display(), dir.join(name).display());

    // kitty: tabs one and two in one OS window, three in a second OS window (one process).
    let kitty_socket = format!("unix:{}", desk.home.path().join("kitty.sock").display());
    let layout = desk.home.path().join("layout.kitty");
    std::fs::write(
        &layout,
        format!(
            "new_tab one\nlaunch {}\nnew_tab two\nlaunch {}\nnew_os_window\nnew_tab three\nlaunch {}\n",
            tab("one"),
            tab("two"),
            tab("three")
        ),
    )
    .unwrap();
    let kitty_pid = desk.spawn(
        "kitty",
        &[
            "-o",
            "allow_remote_control=socket-only",
            "--listen-on",
            &kitty_socket,
            "--session",
            layout.to_str().unwrap(),
        ],
    );
    let (one, one_ids) = record_tab(&desk, &dir, "one");
    let (two, _) = record_tab(&desk, &dir, "two");
    let (three, three_ids) = record_tab(&desk, &dir, "three");
    let first_window = one_ids.x11_window.expect("kitty's WINDOWID");
    let second_window = three_ids.x11_window.expect("kitty's WINDOWID");
    assert_ne!(first_window, second_window, "two OS windows");
    assert!(
        one_ids
            .kitty
            .as_ref()
            .is_some_and(|k| k.listen_on.is_some())
    );
    let kitty_sessions = [("one", one), ("two", two), ("three", three)];

    // 1. Two windows of one process: the second is in front; only its session is looked at.
    activate(&desk, second_window);
    looked_at(
        &desk,
        &kitty_sessions,
        Some("three"),
        "kitty's second window in front",
    );
    looked_at(
        &desk,
        &kitty_sessions[..2],
        None,
        "kitty's first window behind the second (same process)",
    );

    // 2. The first window in front, tab one shown: session one, not two.
    activate(&desk, first_window);
    kitty(&desk, &kitty_socket, &["focus-tab", "--match", "title:one"]);
    activate(&desk, first_window);
    looked_at(
        &desk,
        &kitty_sessions,
        Some("one"),
        "kitty's tab one in front",
    );
    looked_at(&desk, &kitty_sessions[1..], None, "tab two behind tab one");

    // 3. Tab two shown: session two, not one.
    kitty(&desk, &kitty_socket, &["focus-tab", "--match", "title:two"]);
    looked_at(
        &desk,
        &kitty_sessions,
        Some("two"),
        "kitty's tab two in front",
    );
    looked_at(&desk, &[("one", one)], None, "tab one behind tab two");

    // 4. kitty without its remote control recorded: which tab, unknown; never looked at.
    let mut no_control = one_ids.clone();
    no_control.kitty.as_mut().unwrap().listen_on = None;
    record_in_terminal(&desk.home, "two-blind", two, Host::Claude, {
        let mut ids = no_control;
        ids.kitty.as_mut().unwrap().window_id = 2;
        ids
    });
    looked_at(
        &desk,
        &[("two-blind", two)],
        None,
        "kitty's tab in front but its remote control off",
    );

    // Konsole: tabs k1 and k2 of one window.
    let tabs = desk.home.path().join("konsole-tabs");
    std::fs::write(
        &tabs,
        format!(
            "title: k1;; command: {}\ntitle: k2;; command: {}\n",
            tab("k1"),
            tab("k2")
        ),
    )
    .unwrap();
    let mut konsole = desk.program("konsole");
    konsole
        .args(["--separate", "--nofork", "--tabs-from-file"])
        .arg(&tabs)
        .env("QT_QPA_PLATFORM", "xcb")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    desk.procs.children.push(konsole.spawn().expect("konsole"));
    let (k1, k1_ids) = record_tab(&desk, &dir, "k1");
    let (k2, k2_ids) = record_tab(&desk, &dir, "k2");
    let konsole_ids = k1_ids.konsole.clone().expect("Konsole's D-Bus ids");
    let k2_session = k2_ids.konsole.clone().expect("Konsole's D-Bus ids").session;
    let konsole_window = k1_ids.x11_window.expect("Konsole's WINDOWID");
    let konsole_sessions = [("k1", k1), ("k2", k2)];
    let show = |session: u32| {
        let out = desk
            .program("gdbus")
            .args([
                "call",
                "--session",
                "--dest",
                &konsole_ids.service,
                "--object-path",
                &konsole_ids.window,
                "--method",
                "org.kde.konsole.Window.setCurrentSession",
                &session.to_string(),
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "setCurrentSession: {out:?}");
    };

    // 5. Konsole in front showing k2: session k2, not k1; then k1.
    activate(&desk, konsole_window);
    show(k2_session);
    looked_at(
        &desk,
        &konsole_sessions,
        Some("k2"),
        "Konsole's tab k2 in front",
    );
    looked_at(
        &desk,
        &konsole_sessions[..1],
        None,
        "Konsole's tab k1 behind k2",
    );
    show(konsole_ids.session);
    looked_at(
        &desk,
        &konsole_sessions,
        Some("k1"),
        "Konsole's tab k1 in front",
    );
    // Konsole in front: no kitty session is looked at.
    looked_at(&desk, &kitty_sessions, None, "Konsole in front of kitty");

    // 6. An xterm (one window, no tabs): its session is looked at when its window is active.
    let xterm = desk.spawn(
        "xterm",
        &[
            "-e",
            "sh",
            script.to_str().unwrap(),
            dir.join("x1").to_str().unwrap(),
        ],
    );
    let (x1, x1_ids) = record_tab(&desk, &dir, "x1");
    activate(&desk, x1_ids.x11_window.expect("xterm's WINDOWID"));
    looked_at(
        &desk,
        &[("x1", x1), ("k1", k1)],
        Some("x1"),
        "xterm in front",
    );
    activate(&desk, konsole_window);
    looked_at(&desk, &[("x1", x1)], None, "xterm behind Konsole");
    let _ = (kitty_pid, xterm);
}
