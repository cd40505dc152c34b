//! Running another program for an answer (tmux, a terminal's remote control), within a
//! deadline: its stdout when it succeeded, `None` when it failed, was not found or took too
//! long (then it is killed and reaped). Its stdin is empty and its stderr is dropped.

use std::ffi::OsStr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one program may take.
pub const DEADLINE: Duration = Duration::from_secs(2);

/// Runs `command` (its program and arguments set) within [`DEADLINE`].
pub fn output(mut command: Command) -> Option<String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + DEADLINE;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut()?, &mut out).ok()?;
    status.success().then_some(out)
}

/// `program args…` within [`DEADLINE`], with these variables set.
pub fn run<I, S>(program: impl AsRef<OsStr>, args: I, env: &[(&str, &str)]) -> Option<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(program);
    command.args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    output(command)
}
