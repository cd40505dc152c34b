//! `fabric-session focus <session id>` on a real (virtual) X11 desktop: Xvfb, Debian's
//! `openbox` (a window manager implementing EWMH), two real `xterm`s and a real tmux server.
//!
//! Sessions are real processes (a `sleep` under a `bash`, in a tmux pane or straight in an
//! xterm) recorded in their spool as the session-start hook records them (pid and start
//! ticks). What is checked is read back from the desktop and tmux themselves, not from our
//! code: `_NET_ACTIVE_WINDOW` (xprop), the window of each xterm (`xdotool search --pid`), the
//! pane tmux's client shows (`list-clients`). Needs xvfb, x11-utils, xdotool, openbox, xterm,
//! tmux; without them the test says it is skipped, unless `$FABRIC_REQUIRE_DESKTOP_TESTS=1`
//! (scripts/test.sh), where it fails.
#![cfg(unix)] // Xvfb, openbox, xterm, tmux

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::x11_desk::{Desk, Procs, WAIT, available, child_of, record, start_xvfb};
use common::{Home, wait_until};
use companion_hosts::host::Host;

fn pane_pid(desk: &Desk, target: &str) -> u32 {
    desk.tmux(&["display-message", "-p", "-t", target, "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap()
}

fn client_pane(desk: &Desk) -> String {
    desk.tmux(&[
        "list-clients",
        "-F",
        "#{session_name}:#{window_index}.#{pane_index}",
    ])
    .trim()
    .to_string()
}

#[test]
fn focus_raises_the_right_window_and_pane_on_a_real_desktop() {
    if !available("focus_raises_the_right_window_and_pane_on_a_real_desktop") {
        return;
    }
    let home = Home::new();
    let mut procs = Procs {
        children: Vec::new(),
        tmux_socket: None,
    };
    let display = start_xvfb(&mut procs);
    let socket = home.path().join("tmux.sock");
    let mut desk = Desk {
        home,
        display,
        procs,
        socket: socket.clone(),
    };
    let openbox = desk.start_openbox();

    // A tmux server: session alpha, window 0 (one pane), window 1 (two panes, the host in
    // pane 1); session beta (a host, no client attached). Window 0 is the one shown.
    let host_cmd = "sleep 1000; :";
    let sock = socket.to_str().unwrap();
    let tmux_new = |args: &[&str]| {
        let mut all = vec!["-S", sock, "-f", "/dev/null"];
        all.extend_from_slice(args);
        let out = desk.program("tmux").args(&all).output().unwrap();
        assert!(out.status.success(), "tmux {args:?}: {out:?}");
    };
    tmux_new(&[
        "new-session",
        "-d",
        "-s",
        "alpha",
        "-x",
        "80",
        "-y",
        "24",
        "bash",
        "--norc",
        "-c",
        host_cmd,
    ]);
    tmux_new(&[
        "new-window",
        "-t",
        "alpha:1",
        "bash",
        "--norc",
        "-c",
        host_cmd,
    ]);
    tmux_new(&[
        "split-window",
        "-t",
        "alpha:1",
        "bash",
        "--norc",
        "-c",
        host_cmd,
    ]);
    tmux_new(&[
        "new-session",
        "-d",
        "-s",
        "beta",
        "bash",
        "--norc",
        "-c",
        host_cmd,
    ]);
    desk.procs.tmux_socket = Some(socket.clone());
    desk.tmux(&["select-window", "-t", "alpha:0"]);
    desk.tmux(&["select-pane", "-t", "alpha:1.0"]);
    let tmux_host = child_of(pane_pid(&desk, "alpha:1.1"));
    let beta_host = child_of(pane_pid(&desk, "beta:0.0"));

    // Two real terminals: one attached to alpha, one running a host straight in its shell.
    let xterm_tmux = desk.spawn(
        "xterm",
        &["-e", "tmux", "-S", sock, "attach", "-t", "alpha"],
    );
    wait_until("tmux's client", WAIT, || client_pane(&desk) == "alpha:0.0");
    let xterm_plain = desk.spawn("xterm", &["-e", "bash", "--norc", "-c", host_cmd]);
    let plain_host = child_of(child_of(xterm_plain));
    let mut windows = (None, None);
    wait_until("both xterm windows", WAIT, || {
        windows = (desk.window_of(xterm_tmux), desk.window_of(xterm_plain));
        windows.0.is_some() && windows.1.is_some()
    });
    let (Some(tmux_window), Some(plain_window)) = windows else {
        unreachable!()
    };
    wait_until("the last xterm active", WAIT, || {
        desk.active_window() == Some(plain_window)
    });

    desk.record("in-tmux", tmux_host);
    desk.record("in-xterm", plain_host);
    desk.record("in-beta", beta_host);

    // The tmux session: its terminal becomes active, its window and pane are selected.
    let (code, stdout, stderr) = desk.focus("in-tmux");
    assert_eq!(code, Some(0), "stdout {stdout} stderr {stderr}");
    assert_eq!(desk.active_window(), Some(tmux_window));
    assert_eq!(client_pane(&desk), "alpha:1.1");
    assert_eq!(
        stdout.trim(),
        format!("raised xterm (pid {xterm_tmux}, window 0x{tmux_window:x}), tmux pane alpha:1.1")
    );

    // The session straight in the other xterm.
    let (code, stdout, _) = desk.focus("in-xterm");
    assert_eq!(code, Some(0));
    assert_eq!(desk.active_window(), Some(plain_window));
    assert!(
        stdout.starts_with(&format!("raised xterm (pid {xterm_plain},")),
        "{stdout}"
    );

    // A session whose process is gone says so and raises nothing.
    let mut gone = Command::new("sleep").arg("1000").spawn().unwrap();
    desk.record("gone", gone.id());
    gone.kill().unwrap();
    gone.wait().unwrap();
    let (code, stdout, stderr) = desk.focus("gone");
    assert_eq!(code, Some(3), "{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr.trim(),
        "fabric-session: the session's process is gone"
    );
    assert_eq!(desk.active_window(), Some(plain_window), "nothing raised");

    // An unknown session: exit 2, nothing raised.
    let (code, stdout, _) = desk.focus("no-such-session");
    assert_eq!(code, Some(2));
    assert_eq!(stdout, "");
    assert_eq!(desk.active_window(), Some(plain_window));

    // A tmux session no client shows: the latest client is switched to it and raised.
    let (code, stdout, stderr) = desk.focus("in-beta");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("tmux pane beta:0.0"), "{stdout}");
    assert_eq!(client_pane(&desk), "beta:0.0");
    assert_eq!(desk.active_window(), Some(tmux_window));

    // Without a window manager nothing can be raised: exit 4, and where the session is.
    let check = desk.out("xprop", &["-root", "_NET_SUPPORTING_WM_CHECK"]);
    let check = check.rsplit("# ").next().unwrap().trim().to_string();
    let openbox_child = desk
        .procs
        .children
        .iter_mut()
        .find(|c| c.id() == openbox)
        .unwrap();
    openbox_child.kill().unwrap();
    openbox_child.wait().unwrap();
    // The X server destroys the window manager's windows once its connection is closed.
    wait_until("openbox's check window gone", WAIT, || {
        !desk
            .program("xprop")
            .args(["-id", &check, "_NET_SUPPORTING_WM_CHECK"])
            .output()
            .unwrap()
            .status
            .success()
    });
    let (code, stdout, stderr) = desk.focus("in-tmux");
    assert_eq!(code, Some(4), "{stdout} {stderr}");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr.trim(),
        format!(
            "fabric-session: this desktop's window manager does not support raising windows (EWMH); the session is my-project (Claude Code) in {}, tmux alpha:1.1, terminal xterm",
            desk.home.project().display()
        )
    );
}

#[test]
fn without_a_display_focus_says_where_the_session_is() {
    let home = Home::new();
    let mut host = Command::new("sleep").arg("1000").spawn().unwrap();
    record(&home, "s1", host.id(), Host::Codex);
    // `program` clears the environment: no DISPLAY, no WAYLAND_DISPLAY.
    let out = home.command(&["focus", "s1"]).output().unwrap();
    let wayland = home
        .command(&["focus", "s1"])
        .env("WAYLAND_DISPLAY", "wayland-0")
        .output()
        .unwrap();
    let _ = host.kill();
    let _ = host.wait();
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!(
            "fabric-session: there is no display to raise a window on; the session is my-project (Codex) in {}",
            home.project().display()
        )
    );
    assert_eq!(wayland.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&wayland.stderr).starts_with(
            "fabric-session: this Wayland desktop does not let a program raise another's window; the session is my-project (Codex)"
        ),
        "{wayland:?}"
    );
    let gone = home.command(&["focus", "s1"]).output().unwrap();
    assert_eq!(gone.status.code(), Some(3), "the host is gone now");
}

#[cfg(unix)]
/// Runs `fabric-session focus <id>` in `home`, giving up on it (killed, then a failure) after
/// 20 seconds.
fn focus_watched(home: &Home, id: &str, what: &str) -> std::process::Output {
    focus_watched_with(home, id, &[], what)
}

#[cfg(unix)]
/// [`focus_watched`] with these environment variables set.
fn focus_watched_with(
    home: &Home,
    id: &str,
    env: &[(&str, &str)],
    what: &str,
) -> std::process::Output {
    let mut command = home.command(&["focus", id]);
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: focus hung (gave up after 20 s)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[cfg(unix)]
fn pid_gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    })
}

/// Issue 21: tmux's output was read only after it exited, so a list bigger than a pipe holds
/// (64 KiB) was lost (the writer blocked until the deadline killed it), and a tmux that left
/// a process holding its output hung focus for good. Now tmux's output is read while it runs,
/// bounded in size (1 MiB) and time (2 s), and tmux with everything it started is killed and
/// reaped at either limit. A fake `tmux` first on PATH plays each case; the session's
/// process names its tmux server through `TMUX`, as tmux sets it.
#[cfg(unix)] // a fake tmux is a shell script
#[test]
fn tmux_is_read_while_it_runs_bounded_in_size_and_time() {
    let mut home = Home::new();
    let socket = home.path().join("fake-tmux.sock");
    let mut host = Command::new("sleep")
        .arg("1000")
        .env("TMUX", format!("{},4242,0", socket.display()))
        .env("TMUX_PANE", "%5")
        .spawn()
        .unwrap();
    let host_pid = host.id();
    record(&home, "s1", host_pid, Host::Claude);
    let bin = home.path().join("fake-tmux-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let pids = home.path().join("fake-tmux-pids");
    let path = std::env::join_paths(
        std::iter::once(bin.clone())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    home.extra_env
        .push(("PATH".into(), path.to_string_lossy().into_owned()));
    let host_line = format!("echo '{host_pid}:%5:$1:1.1:alpha'");
    let cases = [
        // 2,000 other panes (about 130 KiB) before the session's: more than a pipe holds.
        (
            "a list bigger than a pipe",
            format!(
                "i=0; while [ $i -lt 2000 ]; do echo \"0:%$i:\\$9:0.0:another-session-with-a-long-name-$i\"; i=$((i+1)); done; {host_line}"
            ),
            true,
        ),
        // Exits at once, leaving a process that holds its output open.
        (
            "a child left holding the output",
            format!("{host_line}; sleep 1000 & echo $! >> '{}'", pids.display()),
            true,
        ),
        // Never ends: killed at the deadline with what it started.
        (
            "a tmux that hangs",
            format!("sleep 1000 & echo $! >> '{}'; wait", pids.display()),
            false,
        ),
        // Endless output: killed at the size limit.
        ("endless output", "yes".to_string(), false),
    ];
    for (what, list_panes, found) in cases {
        common::write(
            &bin.join("tmux"),
            &format!(
                "#!/bin/sh\n# -S <socket> <command> …\ncase \"$3\" in\n  list-panes) {list_panes} ;;\n  *) exit 0 ;;\nesac\n"
            ),
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.join("tmux"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let out = focus_watched(&home, "s1", what);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // No display here: exit 4, saying where the session is.
        assert_eq!(out.status.code(), Some(4), "{what}: {stderr}");
        assert_eq!(
            stderr.contains("tmux alpha:1.1"),
            found,
            "{what}: the pane {}: {stderr}",
            if found {
                "was not found"
            } else {
                "was made up"
            }
        );
        let left: Vec<u32> = std::fs::read_to_string(&pids)
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        common::wait_until(
            &format!("{what}: what the fake tmux started to end"),
            Duration::from_secs(5),
            || left.iter().all(|&pid| pid_gone(pid)),
        );
    }
    let _ = host.kill();
    let _ = host.wait();
}

/// Issue 21: `_NET_WM_PID` was trusted whatever machine the window's client runs on, so a
/// remote client's window whose pid happened to be a local session's process was raised for
/// it. Only a window whose `WM_CLIENT_MACHINE` is this machine's name has its `_NET_WM_PID`
/// believed; others are asked of the X-Resource extension, which knows only local clients.
/// A real xterm plays the remote client: its `_NET_WM_PID` is set to a session's process
/// (which has no window) and its `WM_CLIENT_MACHINE` to another machine's name, with xprop.
#[test]
fn a_window_of_another_machine_is_never_taken_for_a_local_process() {
    let test = "a_window_of_another_machine_is_never_taken_for_a_local_process";
    if !available(test) {
        return;
    }
    let home = Home::new();
    let mut procs = Procs {
        children: Vec::new(),
        tmux_socket: None,
    };
    let display = start_xvfb(&mut procs);
    let mut desk = Desk {
        home,
        display,
        procs,
        socket: PathBuf::new(),
    };
    desk.start_openbox();
    let remote = desk.spawn("xterm", &["-e", "sleep", "1000"]);
    let mut remote_window = None;
    wait_until("the remote xterm's window", WAIT, || {
        remote_window = desk.window_of(remote);
        remote_window.is_some()
    });
    let remote_window = format!("0x{:x}", remote_window.unwrap());
    let other = desk.spawn("xterm", &["-e", "sleep", "1000"]);
    let mut other_window = None;
    wait_until("the other xterm's window", WAIT, || {
        other_window = desk.window_of(other);
        other_window.is_some()
    });
    // The other xterm is the active window (asked for, as a pager would).
    let other_id = other_window.unwrap().to_string();
    wait_until("the other xterm active", WAIT, || {
        desk.out("xdotool", &["windowactivate", &other_id]);
        desk.active_window() == other_window
    });
    // The session's process: no window of its own.
    let session = desk.spawn("sleep", &["1000"]);
    desk.record("s1", session);
    let set = |property: &str, format: &str, value: &str| {
        let out = desk
            .program("xprop")
            .args([
                "-id",
                &remote_window,
                "-f",
                property,
                format,
                "-set",
                property,
                value,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "xprop {property}: {out:?}");
    };
    set("_NET_WM_PID", "32c", &session.to_string());
    set("WM_CLIENT_MACHINE", "8s", "elsewhere.invalid");
    let (code, stdout, stderr) = desk.focus("s1");
    assert_eq!(
        code,
        Some(4),
        "a window of another machine was raised: {stdout} {stderr}"
    );
    assert_eq!(desk.active_window(), other_window, "nothing raised");

    // The same window saying it runs here: its pid is believed (the check is the machine).
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    set("WM_CLIENT_MACHINE", "8s", host.trim());
    let (code, stdout, stderr) = desk.focus("s1");
    assert_eq!(code, Some(0), "{stdout} {stderr}");
    assert_eq!(
        desk.active_window().map(|w| format!("0x{w:x}")),
        Some(remote_window)
    );
}

/// A display number whose X socket path is free and whose TCP port on 127.0.0.1 we could
/// take: the silent "X server" listens on both.
#[cfg(unix)]
struct SilentDisplay {
    number: u16,
    socket: PathBuf,
    _tcp: std::net::TcpListener,
    _unix: std::os::unix::net::UnixListener,
}

#[cfg(unix)]
impl SilentDisplay {
    /// Listens as display `:N` (a number from 150 on that nothing else holds) and never
    /// answers: connections are taken by the kernel (the listen backlog) and never read.
    fn start() -> SilentDisplay {
        let _ = std::fs::create_dir_all("/tmp/.X11-unix");
        for number in 150u16..250 {
            let socket = PathBuf::from(format!("/tmp/.X11-unix/X{number}"));
            if socket.exists() {
                continue;
            }
            let Ok(tcp) = std::net::TcpListener::bind(("127.0.0.1", 6000 + number)) else {
                continue;
            };
            let Ok(unix) = std::os::unix::net::UnixListener::bind(&socket) else {
                continue;
            };
            return SilentDisplay {
                number,
                socket,
                _tcp: tcp,
                _unix: unix,
            };
        }
        panic!("no free display number between 150 and 249");
    }
}

#[cfg(unix)]
impl Drop for SilentDisplay {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// Issue 22, item 1: an X display that takes the connection and never answers (a listener on
/// 127.0.0.1:60NN, or a stale `DISPLAY` whose socket another local user's program now holds)
/// kept `focus` waiting for good (x11rb's connect and every `.reply()` had no deadline). Now
/// every exchange with the server is bounded: the jump ends, saying the display did not
/// answer and where the session is.
#[cfg(unix)]
#[test]
fn a_display_that_never_answers_ends_the_jump() {
    let home = Home::new();
    let silent = SilentDisplay::start();
    let mut host = Command::new("sleep").arg("1000").spawn().unwrap();
    record(&home, "s1", host.id(), Host::Codex);
    let tcp = format!("127.0.0.1:{}", silent.number);
    let local = format!(":{}", silent.number);
    let outs: Vec<(String, std::process::Output)> = [tcp, local]
        .into_iter()
        .map(|display| {
            let what = format!("DISPLAY={display}");
            let out = focus_watched_with(&home, "s1", &[("DISPLAY", &display)], &what);
            (display, out)
        })
        .collect();
    let _ = host.kill();
    let _ = host.wait();
    for (display, out) in outs {
        assert_eq!(out.status.code(), Some(4), "DISPLAY={display}: {out:?}");
        assert!(out.stdout.is_empty());
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim(),
            format!(
                "fabric-session: the X display did not answer in time; the session is my-project (Codex) in {}",
                home.project().display()
            ),
            "DISPLAY={display}"
        );
    }
}
