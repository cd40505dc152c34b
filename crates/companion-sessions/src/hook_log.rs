//! `hooks.log`: one line per event that did something, never content.
//!
//! A line is `<UTC time> <event> <host> <session id or -> <outcome> [detail…]`, where outcome
//! is `ok`, `refused <code>` or `outcome=unknown`, and details are short words or counts (never
//! a message, a path of the person's files, a branch name or a prompt). The file is created
//! mode 0600, appended under an exclusive lock so concurrent hooks never tear a line, and
//! rotated to `hooks.log.1` when it reaches 1 MB.
//!
//! [`parse_line`] is the one reader of a line, for the tray (a failure in the last hour) and
//! the dashboard's Log view.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use companion_platform::clock;
use companion_platform::fsutil;

/// The log rotates when it would grow past this.
pub const ROTATE_AT_BYTES: u64 = 1024 * 1024;

/// The outcome column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Refused(String),
    Unknown,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Ok => f.write_str("ok"),
            Outcome::Refused(code) => write!(f, "refused {code}"),
            Outcome::Unknown => f.write_str("outcome=unknown"),
        }
    }
}

/// One log line, before it gets its time.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    pub event: &'a str,
    pub host: &'a str,
    pub session: Option<&'a str>,
    pub outcome: Outcome,
    pub detail: &'a str,
}

impl Entry<'_> {
    /// The line as written (without the newline).
    pub fn render(&self, time: &str) -> String {
        let mut line = format!(
            "{time} {} {} {} {}",
            word(self.event),
            word(self.host),
            self.session.map(word).unwrap_or_else(|| "-".into()),
            self.outcome
        );
        if !self.detail.is_empty() {
            line.push(' ');
            line.push_str(&self.detail.replace(['\n', '\r'], " "));
        }
        line
    }
}

fn word(text: &str) -> String {
    if text.is_empty() {
        "-".into()
    } else {
        text.replace(char::is_whitespace, "_")
    }
}

/// The rotated log beside `log`.
pub fn rotated_path(log: &Path) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(".1");
    PathBuf::from(name)
}

/// Appends one line; errors are returned for the caller to ignore (a hook never fails on its log).
pub fn append(log: &Path, entry: &Entry<'_>) -> io::Result<()> {
    let mut line = entry.render(&clock::now_rfc3339());
    line.push('\n');
    append_line(log, &line)
}

/// Appends a pre-rendered line (with its newline) under the lock, rotating first if needed.
pub fn append_line(log: &Path, line: &str) -> io::Result<()> {
    if let Some(dir) = log.parent() {
        fsutil::create_private_dir(dir)?;
    }
    for _ in 0..4 {
        let file = fsutil::open_private(log, true)?;
        file.lock()?;
        // Another writer may have rotated the file between our open and our lock.
        if !same_file(&file, log) {
            continue;
        }
        let len = file.metadata()?.len();
        if len > 0 && len + line.len() as u64 > ROTATE_AT_BYTES {
            fs::rename(log, rotated_path(log))?;
            continue;
        }
        // Whole or not at all: a full disk never leaves half a line.
        fsutil::append_whole(&file, line.as_bytes())?;
        return Ok(());
    }
    Err(io::Error::other("the hook log kept moving"))
}

/// Where [`report_skipped`] writes: set once per process by [`log_skipped_files`].
struct SkipContext {
    log: PathBuf,
    event: &'static str,
    host: &'static str,
}

static SKIP_CONTEXT: std::sync::OnceLock<SkipContext> = std::sync::OnceLock::new();

/// From now on, a special file met where a regular one was expected (a FIFO at `hub.json`,
/// a folder at `board.json`, …) gets one line in this log: `<event> <host> - ok
/// skipped=<kind> file=<name>`, the file's name only, never its content or folder.
pub fn log_skipped_files(log: &Path, event: &'static str, host: &'static str) {
    let context = SkipContext {
        log: log.to_path_buf(),
        event,
        host,
    };
    if SKIP_CONTEXT.set(context).is_ok() {
        fsutil::report_skipped_with(report_skipped);
    }
}

fn report_skipped(name: &str, special: fsutil::Special) {
    let Some(context) = SKIP_CONTEXT.get() else {
        return;
    };
    let name: String = word(name).chars().take(64).collect();
    let detail = format!("skipped={} file={name}", special.word());
    let _ = append(
        &context.log,
        &Entry {
            event: context.event,
            host: context.host,
            session: None,
            outcome: Outcome::Ok,
            detail: &detail,
        },
    );
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

/// One line of the log, read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The UTC time as written (RFC 3339).
    pub time: String,
    pub event: String,
    pub host: String,
    /// `None` for `-`.
    pub session: Option<String>,
    pub outcome: Outcome,
    /// Whatever follows the outcome (may be empty).
    pub detail: String,
}

impl Line {
    /// Whether the hook failed: a refusal or an unknown outcome.
    pub fn is_failure(&self) -> bool {
        matches!(self.outcome, Outcome::Refused(_) | Outcome::Unknown)
    }
}

/// Reads one line (without its newline): `<time> <event> <host> <session or -> <outcome>
/// [detail…]`, outcome `ok`, `refused <code>` or `outcome=unknown`. `None` when the line does
/// not have that shape.
pub fn parse_line(raw: &str) -> Option<Line> {
    let mut parts = raw.splitn(5, ' ');
    let (Some(time), Some(event), Some(host), Some(session), Some(rest)) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    let (outcome, detail) = if let Some(after) = rest.strip_prefix("refused ") {
        let (code, detail) = after.split_once(' ').unwrap_or((after, ""));
        (Outcome::Refused(code.to_string()), detail)
    } else if rest == "ok" || rest.starts_with("ok ") {
        (Outcome::Ok, rest.get(3..).unwrap_or(""))
    } else if rest == "outcome=unknown" || rest.starts_with("outcome=unknown ") {
        (Outcome::Unknown, rest.get(16..).unwrap_or(""))
    } else {
        return None;
    };
    Some(Line {
        time: time.to_string(),
        event: event.to_string(),
        host: host.to_string(),
        session: (session != "-").then(|| session.to_string()),
        outcome,
        detail: detail.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_back_as_written() {
        let written = Entry {
            detail: "unread=3 board=ready",
            ..entry("s1")
        }
        .render("2026-12-02T10:00:00Z");
        let line = parse_line(&written).unwrap();
        assert_eq!(line.time, "2026-12-02T10:00:00Z");
        assert_eq!(
            (line.event.as_str(), line.host.as_str()),
            ("stop", "claude")
        );
        assert_eq!(line.session.as_deref(), Some("s1"));
        assert_eq!(line.outcome, Outcome::Refused("fenced".into()));
        assert_eq!(line.detail, "unread=3 board=ready");
        assert!(line.is_failure());
        let ok = parse_line("t session-start codex - ok").unwrap();
        assert_eq!(
            (ok.outcome, ok.session, ok.detail.as_str()),
            (Outcome::Ok, None, "")
        );
        let unknown = parse_line("t worker kimi s outcome=unknown deadline").unwrap();
        assert_eq!(unknown.outcome, Outcome::Unknown);
        assert_eq!(unknown.detail, "deadline");
        assert!(parse_line("garbage").is_none());
        assert!(parse_line("t a b c maybe").is_none());
    }

    fn entry(session: &str) -> Entry<'_> {
        Entry {
            event: "stop",
            host: "claude",
            session: Some(session),
            outcome: Outcome::Refused("fenced".into()),
            detail: "",
        }
    }

    #[test]
    fn line_shape() {
        assert_eq!(
            entry("s1").render("2026-12-02T10:00:00Z"),
            "2026-12-02T10:00:00Z stop claude s1 refused fenced"
        );
    }

    #[test]
    fn rotates_at_one_megabyte_with_private_mode() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("cache/hooks.log");
        let long = "x".repeat(1000);
        for _ in 0..1100 {
            append(
                &log,
                &Entry {
                    detail: &long,
                    ..entry("s")
                },
            )
            .unwrap();
        }
        let rotated = rotated_path(&log);
        assert!(rotated.exists());
        assert!(fs::metadata(&rotated).unwrap().len() <= ROTATE_AT_BYTES);
        assert!(fs::metadata(&log).unwrap().len() < ROTATE_AT_BYTES);
        assert_eq!(fsutil::mode_of(&fs::metadata(&log).unwrap()), 0o600);
    }
}
