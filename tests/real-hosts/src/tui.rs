//! A host's interactive TUI as a person uses it: in a tmux pane of a private tmux server (its
//! own socket, killed with everything in it when dropped), or of another Unix user's own tmux
//! (a remote's, [`Tui::start_as`]), read as the screen shows it (`capture-pane`) and typed
//! into (`send-keys`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How often the screen is read while waiting for something on it.
const POLL: Duration = Duration::from_millis(40);

/// How this test reaches the tmux server: a `tmux` command ready for its arguments.
type TmuxCommand = Box<dyn Fn() -> Command + Send + Sync>;

/// What the program in the pane runs with.
enum EnvOf {
    /// Exactly the given variables (`env -i`).
    Only,
    /// The given ones over the tmux server's, and tmux's own (`new-session -e`).
    Added,
}

/// One TUI in a tmux pane.
pub struct Tui {
    tmux: TmuxCommand,
    /// The pane, as tmux's `-t` names it.
    target: String,
    /// What the program is, for messages.
    what: String,
    /// The program's pid (the pane's process; it leads its own process group).
    pid: Option<u32>,
}

impl Tui {
    /// Starts `program args…` in `cwd` with exactly `env` (nothing inherited), in a 200×50
    /// pane of a tmux server on `socket`. The pane stays after the program exits, so its last
    /// screen can be read.
    pub fn start(
        socket: &Path,
        what: &str,
        program: &Path,
        args: &[&str],
        env: &[(String, String)],
        cwd: &Path,
    ) -> Result<Tui, String> {
        let socket: PathBuf = socket.to_path_buf();
        let tmux: TmuxCommand = Box::new(move || {
            let mut command = Command::new("tmux");
            command.arg("-S").arg(&socket);
            command
        });
        Tui::start_on(
            tmux,
            "main",
            "0",
            EnvOf::Only,
            what,
            program,
            args,
            env,
            cwd,
        )
    }

    /// As [`Tui::start`], in the tmux server of another user: `tmux` gives a `tmux` command
    /// run as that user (its default socket), the program goes into window 0 of a new tmux
    /// session `session`, which then has `windows` more windows (a person's other work
    /// there). The program gets `env` on top of the server's and tmux's own (`TMUX_PANE`).
    #[allow(clippy::too_many_arguments)]
    pub fn start_as(
        tmux: TmuxCommand,
        session: &str,
        windows: usize,
        what: &str,
        program: &Path,
        args: &[&str],
        env: &[(String, String)],
        cwd: &Path,
    ) -> Result<Tui, String> {
        let target = format!("{session}:0.0");
        let tui = Tui::start_on(
            tmux,
            session,
            &target,
            EnvOf::Added,
            what,
            program,
            args,
            env,
            cwd,
        )?;
        for _ in 0..windows {
            tui.tmux(&["new-window", "-d", "-t", session]);
        }
        Ok(tui)
    }

    #[allow(clippy::too_many_arguments)]
    fn start_on(
        tmux: TmuxCommand,
        session: &str,
        target: &str,
        env_of: EnvOf,
        what: &str,
        program: &Path,
        args: &[&str],
        env: &[(String, String)],
        cwd: &Path,
    ) -> Result<Tui, String> {
        let mut command = tmux();
        command
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                session,
                "-x",
                "200",
                "-y",
                "50",
            ])
            .arg("-c")
            .arg(cwd);
        match env_of {
            EnvOf::Only => {
                command.args(["env", "-i"]);
                for (key, value) in env {
                    command.arg(format!("{key}={value}"));
                }
            }
            EnvOf::Added => {
                for (key, value) in env {
                    command.arg("-e").arg(format!("{key}={value}"));
                }
            }
        }
        command.arg(program).args(args);
        let output = command
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run tmux (package tmux): {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "tmux new-session for {what} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        let mut tui = Tui {
            tmux,
            target: target.to_owned(),
            what: what.to_owned(),
            pid: None,
        };
        tui.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
        tui.pid = tui.pane_pid();
        Ok(tui)
    }

    /// Runs `tmux args…` on this TUI's server, to its end.
    pub fn tmux(&self, args: &[&str]) -> std::process::Output {
        (self.tmux)()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run tmux: {e}"))
    }

    /// The screen as it is now (its visible lines).
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(
            &self
                .tmux(&["capture-pane", "-p", "-t", &self.target])
                .stdout,
        )
        .into_owned()
    }

    /// Types keys as tmux names them (`Enter`, `Escape`, `C-c`, `y`, …), one `send-keys` each.
    pub fn keys(&self, keys: &[&str]) {
        for key in keys {
            self.tmux(&["send-keys", "-t", &self.target, key]);
        }
    }

    /// Types `text` literally, then Enter a second later, as a person does (Codex takes keys
    /// that come in a burst for a paste, and an Enter inside the burst for a new line).
    pub fn type_line(&self, text: &str) {
        self.tmux(&["send-keys", "-t", &self.target, "-l", text]);
        std::thread::sleep(Duration::from_millis(1000));
        self.keys(&["Enter"]);
    }

    /// Waits until `check` holds for the screen; returns when it was first seen. Fails with
    /// the last screen after `limit`.
    pub fn wait_for(
        &self,
        what: &str,
        limit: Duration,
        check: impl Fn(&str) -> bool,
    ) -> Result<Instant, String> {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if check(&screen) {
                return Ok(Instant::now());
            }
            if start.elapsed() > limit {
                return Err(format!(
                    "{}: gave up after {} s waiting for {what}; the screen:\n{screen}",
                    self.what,
                    limit.as_secs()
                ));
            }
            std::thread::sleep(POLL);
        }
    }

    /// The pid of the program in the pane.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    fn pane_pid(&self) -> Option<u32> {
        String::from_utf8_lossy(
            &self
                .tmux(&["display-message", "-p", "-t", &self.target, "#{pane_pid}"])
                .stdout,
        )
        .trim()
        .parse()
        .ok()
    }
}

impl Drop for Tui {
    /// Ends the program and everything in its process group, then the tmux server.
    fn drop(&mut self) {
        if let Some(pid) = self.pid {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .stderr(Stdio::null())
                .status();
        }
        self.tmux(&["kill-server"]);
    }
}
