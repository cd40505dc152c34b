//! A host's interactive TUI as a person uses it: in a tmux pane of a private tmux server (its
//! own socket, killed with everything in it when dropped), read as the screen shows it
//! (`capture-pane`) and typed into (`send-keys`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How often the screen is read while waiting for something on it.
const POLL: Duration = Duration::from_millis(40);

/// One TUI in a tmux pane.
pub struct Tui {
    socket: PathBuf,
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
        let mut command = Command::new("tmux");
        command
            .arg("-S")
            .arg(socket)
            .args([
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "200",
                "-y",
                "50",
            ])
            .arg("-c")
            .arg(cwd)
            .args(["env", "-i"]);
        for (key, value) in env {
            command.arg(format!("{key}={value}"));
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
            socket: socket.to_path_buf(),
            what: what.to_owned(),
            pid: None,
        };
        tui.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
        tui.pid = tui.pane_pid();
        Ok(tui)
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run tmux: {e}"))
    }

    /// The screen as it is now (its visible lines).
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "0"]).stdout).into_owned()
    }

    /// Types keys as tmux names them (`Enter`, `Escape`, `C-c`, `y`, …), one `send-keys` each.
    pub fn keys(&self, keys: &[&str]) {
        for key in keys {
            self.tmux(&["send-keys", "-t", "0", key]);
        }
    }

    /// Types `text` literally, then Enter a second later, as a person does (Codex takes keys
    /// that come in a burst for a paste, and an Enter inside the burst for a new line).
    pub fn type_line(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "0", "-l", text]);
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
                .tmux(&["display-message", "-p", "-t", "0", "#{pane_pid}"])
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
