//! A real (virtual) X11 desktop for the jump's tests: Xvfb on a display it picks, Debian's
//! `openbox` (EWMH), the programs started on it killed and reaped on drop, and sessions
//! recorded in their spool as the session-start hook records them. Used by `focus.rs` and
//! `looked_at.rs`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use companion_hosts::host::Host;
use companion_platform::process;
use companion_sessions::spool::{SessionId, SessionRecord, Spool};
use companion_sessions::terminal_ids::TerminalIds;

use super::{BIN, Home, wait_until};

pub const PROGRAMS: [&str; 6] = ["Xvfb", "xprop", "xdotool", "openbox", "xterm", "tmux"];
pub const WAIT: Duration = Duration::from_secs(30);

pub fn available(test: &str) -> bool {
    require(
        test,
        &PROGRAMS,
        "xvfb, x11-utils, xdotool, openbox, xterm, tmux",
    )
}

/// Whether `programs` are all on `PATH` (test-support's rule: skipped and said, or a
/// failure under `$FABRIC_REQUIRE_DESKTOP_TESTS=1`).
pub fn require(test: &str, programs: &[&str], packages: &str) -> bool {
    test_support::desktop::require(test, programs, packages)
}

/// Every process the test started, killed and reaped on drop; the tmux server too.
pub struct Procs {
    pub children: Vec<Child>,
    pub tmux_socket: Option<PathBuf>,
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

/// Fields drop in order: the processes (and the tmux server, through its socket) go before
/// the home folder that holds the socket.
pub struct Desk {
    pub procs: Procs,
    pub home: Home,
    pub display: String,
    pub socket: PathBuf,
}

impl Desk {
    pub fn program(&self, program: &str) -> Command {
        let mut command = self.home.program(program);
        command.env("DISPLAY", &self.display);
        command
    }

    pub fn spawn(&mut self, program: &str, args: &[&str]) -> u32 {
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

    /// Starts openbox and waits for its EWMH check window. On this machine an openbox now and
    /// then exited at once, silently, before it managed anything (seen under load, on both
    /// tests' displays): that start is said on stderr and openbox is started again, twice at
    /// most. Its pid.
    pub fn start_openbox(&mut self) -> u32 {
        for attempt in 1..=3 {
            let pid = self.spawn("openbox", &["--sm-disable"]);
            let started = std::time::Instant::now();
            while started.elapsed() < WAIT {
                if self
                    .out("xprop", &["-root", "_NET_SUPPORTING_WM_CHECK"])
                    .contains("window id")
                {
                    return pid;
                }
                let child = self.procs.children.iter_mut().find(|c| c.id() == pid);
                if let Some(status) = child.and_then(|c| c.try_wait().ok().flatten()) {
                    eprintln!("openbox exited at start ({status}), attempt {attempt} of 3");
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        panic!(
            "openbox never put up its EWMH check window on {}",
            self.display
        );
    }

    pub fn out(&self, program: &str, args: &[&str]) -> String {
        let out = self.program(program).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn tmux(&self, args: &[&str]) -> String {
        let mut all = vec!["-S", self.socket.to_str().unwrap()];
        all.extend_from_slice(args);
        self.out("tmux", &all)
    }

    /// `_NET_ACTIVE_WINDOW`, as xprop reads it.
    pub fn active_window(&self) -> Option<u64> {
        let text = self.out("xprop", &["-root", "_NET_ACTIVE_WINDOW"]);
        let hex = text.rsplit("# ").next()?.trim().trim_start_matches("0x");
        u64::from_str_radix(hex, 16).ok().filter(|&w| w != 0)
    }

    /// The top-level window of a process (xdotool reads `_NET_WM_PID`).
    pub fn window_of(&self, pid: u32) -> Option<u64> {
        let text = self.out("xdotool", &["search", "--pid", &pid.to_string()]);
        text.lines().last()?.trim().parse().ok()
    }

    /// A session whose host is `pid`, recorded as the session-start hook records one.
    pub fn record(&self, id: &str, pid: u32) {
        record(&self.home, id, pid, Host::Claude);
    }

    pub fn focus(&self, id: &str) -> (Option<i32>, String, String) {
        let out = self.program(BIN).args(["focus", id]).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// A session of `host` whose host process is `pid`, recorded in `home` as the session-start
/// hook records one.
pub fn record(home: &Home, id: &str, pid: u32, host: Host) {
    record_in_terminal(home, id, pid, host, TerminalIds::default());
}

/// [`record`], with the terminal ids the hook found in the host's environment.
pub fn record_in_terminal(home: &Home, id: &str, pid: u32, host: Host, terminal: TerminalIds) {
    let info = process::process_info(pid).expect("the host process");
    Spool::new(
        &home.cache_dir().join("sessions"),
        &SessionId::new(id).unwrap(),
    )
    .write_session(&SessionRecord {
        host,
        project: "my-project".into(),
        started_at: "2026-12-03T11:00:00Z".into(),
        host_pid: pid,
        host_start_ticks: info.start_ticks,
        cwd: Some(home.project()),
        terminal,
    })
    .unwrap();
}

/// Xvfb on a display it picks itself (`-displayfd`): tests running in parallel never clash.
pub fn start_xvfb(procs: &mut Procs) -> String {
    let (xvfb, display) = test_support::desktop::start_xvfb();
    procs.children.push(xvfb);
    display
}

/// The only child of `parent` (waited for).
pub fn child_of(parent: u32) -> u32 {
    let mut found = None;
    wait_until("a child process", WAIT, || {
        let text = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        found = text.split_whitespace().next().and_then(|p| p.parse().ok());
        found.is_some()
    });
    found.unwrap()
}
