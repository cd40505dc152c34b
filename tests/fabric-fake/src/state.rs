//! The state folder (`FABRIC_FAKE_STATE`): what a test writes to steer the stand-in, and the
//! `calls.jsonl` log the stand-in appends to.
//!
//! Files: `mode` (a [`Mode`] word, default `ready`), `unread` (an integer, default 0),
//! `refusal-code` (a contract refusal code, default `not_available`), `leave-child` (present:
//! at start, the stand-in starts a `sleep` in its own process group and leaves it running, as
//! a `fabric-mcp` whose own child outlives it), `delay-ms` (an integer: every tool call is
//! answered that much later, a slow Fabric), `calls.jsonl` (one JSON object per line, see
//! [`start_record`], [`child_record`], [`hub_record`] and [`call_record`]).

use std::fs::{self, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::answers::{DEFAULT_REFUSAL_CODE, Mode, REFUSAL_CODES};
use crate::files::write_atomic;

/// The environment variable naming the state folder.
pub const STATE_ENV: &str = "FABRIC_FAKE_STATE";
/// File holding the [`Mode`].
pub const MODE_FILE: &str = "mode";
/// File holding the unread count `com.status` reports.
pub const UNREAD_FILE: &str = "unread";
/// File holding the refusal code of [`Mode::Refusal`].
pub const REFUSAL_CODE_FILE: &str = "refusal-code";
/// Present: the stand-in leaves a `sleep` running behind it (see [`crate::server`]).
pub const LEAVE_CHILD_FILE: &str = "leave-child";
/// How long the child it leaves behind sleeps, in seconds.
pub const LEFT_CHILD_SECS: u64 = 120;
/// File holding how many milliseconds each tool call waits before its answer.
pub const DELAY_FILE: &str = "delay-ms";
/// The log of starts and tool calls.
pub const CALLS_FILE: &str = "calls.jsonl";

/// Reads a small text file, trimmed; `None` when it does not exist.
fn read_setting(dir: &Path, name: &str) -> io::Result<Option<String>> {
    match fs::read_to_string(dir.join(name)) {
        Ok(text) => Ok(Some(text.trim().to_owned())),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn invalid(name: &str, message: String) -> io::Error {
    io::Error::new(ErrorKind::InvalidData, format!("{name}: {message}"))
}

/// The mode written in `<dir>/mode`; [`Mode::Ready`] when the file is missing.
pub fn read_mode(dir: &Path) -> io::Result<Mode> {
    match read_setting(dir, MODE_FILE)? {
        None => Ok(Mode::Ready),
        Some(text) => text.parse().map_err(|e| invalid(MODE_FILE, e)),
    }
}

/// The count written in `<dir>/unread`; 0 when the file is missing.
pub fn read_unread(dir: &Path) -> io::Result<u64> {
    match read_setting(dir, UNREAD_FILE)? {
        None => Ok(0),
        Some(text) => text
            .parse()
            .map_err(|e| invalid(UNREAD_FILE, format!("{text:?} is not a count: {e}"))),
    }
}

/// The delay written in `<dir>/delay-ms`; none when the file is missing.
pub fn read_delay(dir: &Path) -> io::Result<Option<std::time::Duration>> {
    match read_setting(dir, DELAY_FILE)? {
        None => Ok(None),
        Some(text) => text
            .parse()
            .map(|ms| Some(std::time::Duration::from_millis(ms)))
            .map_err(|e| invalid(DELAY_FILE, format!("{text:?} is not milliseconds: {e}"))),
    }
}

/// The code written in `<dir>/refusal-code`; `not_available` when the file is missing.
/// Anything that is not a contract refusal code is an error.
pub fn read_refusal_code(dir: &Path) -> io::Result<String> {
    let code = read_setting(dir, REFUSAL_CODE_FILE)?.unwrap_or(DEFAULT_REFUSAL_CODE.to_owned());
    if REFUSAL_CODES.contains(&code.as_str()) {
        Ok(code)
    } else {
        Err(invalid(
            REFUSAL_CODE_FILE,
            format!("{code:?} is not a contract refusal code"),
        ))
    }
}

/// Writes one setting file atomically, so a running stand-in never reads half of it.
pub fn write_setting(dir: &Path, name: &str, value: &str) -> io::Result<()> {
    write_atomic(&dir.join(name), format!("{value}\n").as_bytes(), 0o644)
}

/// The record of a start: `{"event":"start","argv":[...],"pid":N}`.
pub fn start_record(argv: &[String], pid: u32) -> Value {
    json!({"event": "start", "argv": argv, "pid": pid})
}

/// Whether `<dir>/leave-child` exists.
pub fn read_leave_child(dir: &Path) -> bool {
    dir.join(LEAVE_CHILD_FILE).exists()
}

/// The record of a child left behind: `{"event":"child","pid":N,"parent":N}`.
pub fn child_record(pid: u32, parent: u32) -> Value {
    json!({"event": "child", "pid": pid, "parent": parent})
}

/// The record of a `hub-silent` stand-in asking the hub:
/// `{"event":"hub","pid":N,"origin":..,"connected":bool}`.
pub fn hub_record(pid: u32, origin: &str, connected: bool) -> Value {
    json!({"event": "hub", "pid": pid, "origin": origin, "connected": connected})
}

/// The record of a tool call: `{"event":"call","argv":[...],"pid":N,"tool":..,"arguments":{..}}`.
pub fn call_record(argv: &[String], pid: u32, tool: &str, arguments: Value) -> Value {
    json!({"event": "call", "argv": argv, "pid": pid, "tool": tool, "arguments": arguments})
}

/// Appends one record to `<dir>/calls.jsonl`: opened with `O_APPEND` and written with one
/// `write` call, so records of concurrent stand-ins never tear each other's lines.
pub fn append_record(dir: &Path, record: &Value) -> io::Result<()> {
    let mut line = serde_json::to_vec(record)?;
    line.push(b'\n');
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(CALLS_FILE))?;
    let written = file.write(&line)?;
    if written == line.len() {
        Ok(())
    } else {
        Err(io::Error::new(
            ErrorKind::WriteZero,
            format!(
                "short append to {CALLS_FILE}: {written} of {} bytes",
                line.len()
            ),
        ))
    }
}

/// Every record in `<dir>/calls.jsonl`, in order; empty when the file is missing.
pub fn read_records(dir: &Path) -> io::Result<Vec<Value>> {
    let path: PathBuf = dir.join(CALLS_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            serde_json::from_str(line)
                .map_err(|e| invalid(CALLS_FILE, format!("bad line {line:?}: {e}")))
        })
        .collect()
}
