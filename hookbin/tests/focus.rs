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

mod common;

use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{Home, wait_until};
use companion_core::host::Host;
use companion_core::process;
use companion_core::spool::{SessionId, SessionRecord, Spool};

const REQUIRE: &str = "FABRIC_REQUIRE_DESKTOP_TESTS";
const PROGRAMS: [&str; 6] = ["Xvfb", "xprop", "xdotool", "openbox", "xterm", "tmux"];
const WAIT: Duration = Duration::from_secs(30);

fn available(test: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<&str> = PROGRAMS
        .into_iter()
        .filter(|p| !std::env::split_paths(&path).any(|dir| dir.join(p).is_file()))
        .collect();
    if missing.is_empty() {
        return true;
    }
    let why = format!(
        "{} not found on PATH (packages xvfb, x11-utils, xdotool, openbox, xterm, tmux)",
        missing.join(", ")
    );
    if std::env::var_os(REQUIRE).is_some_and(|v| v == "1") {
        panic!("{test}: {why}; ${REQUIRE}=1 says this test must run");
    }
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED {test}: {why}. scripts/test.sh installs them and runs it."
    );
    false
}

/// Every process the test started, killed and reaped on drop; the tmux server too.
struct Procs {
    children: Vec<Child>,
    tmux_socket: Option<PathBuf>,
}

impl Drop for Procs {
    fn drop(&mut self) {
        if let Some(socket) = &self.tmux_socket {
            let _ = Command::new("tmux")
                .arg("-S")
                .arg(socket)
                .arg("kill-server")
                .output();
        }
        for child in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

struct Desk {
    home: Home,
    display: String,
    procs: Procs,
    socket: PathBuf,
}

impl Desk {
    fn program(&self, program: &str) -> Command {
        let mut command = self.home.program(program);
        command.env("DISPLAY", &self.display);
        command
    }

    fn spawn(&mut self, program: &str, args: &[&str]) -> u32 {
        let child = self
            .program(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program}: {e}"));
        let pid = child.id();
        self.procs.children.push(child);
        pid
    }

    fn out(&self, program: &str, args: &[&str]) -> String {
        let out = self.program(program).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn tmux(&self, args: &[&str]) -> String {
        let mut all = vec!["-S", self.socket.to_str().unwrap()];
        all.extend_from_slice(args);
        self.out("tmux", &all)
    }

    /// `_NET_ACTIVE_WINDOW`, as xprop reads it.
    fn active_window(&self) -> Option<u64> {
        let text = self.out("xprop", &["-root", "_NET_ACTIVE_WINDOW"]);
        let hex = text.rsplit("# ").next()?.trim().trim_start_matches("0x");
        u64::from_str_radix(hex, 16).ok().filter(|&w| w != 0)
    }

    /// The top-level window of a process (xdotool reads `_NET_WM_PID`).
    fn window_of(&self, pid: u32) -> Option<u64> {
        let text = self.out("xdotool", &["search", "--pid", &pid.to_string()]);
        text.lines().last()?.trim().parse().ok()
    }

    /// A session whose host is `pid`, recorded as the session-start hook records one.
    fn record(&self, id: &str, pid: u32) {
        let info = process::process_info(pid).expect("the host process");
        let spool = Spool::new(
            &self.home.cache_dir().join("sessions"),
            &SessionId::new(id).unwrap(),
        );
        spool
            .write_session(&SessionRecord {
                host: Host::Claude,
                project: "my-project".into(),
                started_at: "2026-12-03T11:00:00Z".into(),
                host_pid: pid,
                host_start_ticks: info.start_ticks,
                cwd: Some(self.home.project()),
                terminal: Default::default(),
            })
            .unwrap();
    }

    fn focus(&self, id: &str) -> (Option<i32>, String, String) {
        let out = self
            .program(common::BIN)
            .args(["focus", id])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// Xvfb on a display it picks itself (`-displayfd`): tests running in parallel never clash.
fn start_xvfb(procs: &mut Procs) -> String {
    let mut xvfb = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1024x768x24",
            "-nolisten",
            "tcp",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb");
    let stdout = xvfb.stdout.take().unwrap();
    procs.children.push(xvfb);
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    format!(":{}", line.trim())
}

/// The only child of `parent` (waited for).
fn child_of(parent: u32) -> u32 {
    let mut found = None;
    wait_until("a child process", WAIT, || {
        let text = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        found = text.split_whitespace().next().and_then(|p| p.parse().ok());
        found.is_some()
    });
    found.unwrap()
}

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
    let openbox = desk.spawn("openbox", &["--sm-disable"]);
    wait_until("openbox's EWMH check window", WAIT, || {
        desk.out("xprop", &["-root", "_NET_SUPPORTING_WM_CHECK"])
            .contains("window id")
    });

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
    let pid = host.id();
    let info = process::process_info(pid).unwrap();
    Spool::new(
        &home.cache_dir().join("sessions"),
        &SessionId::new("s1").unwrap(),
    )
    .write_session(&SessionRecord {
        host: Host::Codex,
        project: "my-project".into(),
        started_at: "2026-12-03T11:00:00Z".into(),
        host_pid: pid,
        host_start_ticks: info.start_ticks,
        cwd: Some(home.project()),
        terminal: Default::default(),
    })
    .unwrap();
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
