//! `hooks.log` and `hooks.log.1` for the Log view: parses lines into fields and follows the
//! live file by byte offset, so each change sends only the new lines. Never writes either file.
//!
//! Lines are read by the core's one parser (`companion_sessions::hook_log::parse_line`); a line
//! that does not fit is kept whole in `raw` with outcome `unparsed`.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use companion_sessions::hook_log::{self, Outcome};
use serde::Serialize;

/// We read at most this much of one file (the log rotates at 1 MB; leave slack).
const READ_LIMIT: u64 = 4 * 1024 * 1024;

/// Which file a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub enum LogFile {
    #[serde(rename = "hooks.log")]
    Live,
    #[serde(rename = "hooks.log.1")]
    Rotated,
}

/// A line's outcome as the page shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum LogOutcome {
    Ok,
    Refused,
    Unknown,
    Unparsed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LogLine {
    pub file: LogFile,
    pub time: String,
    pub event: String,
    pub host: String,
    pub session: Option<String>,
    pub outcome: LogOutcome,
    /// The refusal code, for `refused`.
    pub code: Option<String>,
    pub detail: String,
    pub raw: String,
}

/// Parses one line (without its newline).
pub fn parse_line(file: LogFile, raw: &str) -> LogLine {
    match hook_log::parse_line(raw) {
        Some(line) => {
            let (outcome, code) = match line.outcome {
                Outcome::Ok => (LogOutcome::Ok, None),
                Outcome::Refused(code) => (LogOutcome::Refused, Some(code)),
                Outcome::Unknown => (LogOutcome::Unknown, None),
            };
            LogLine {
                file,
                time: line.time,
                event: line.event,
                host: line.host,
                session: line.session,
                outcome,
                code,
                detail: line.detail,
                raw: raw.to_string(),
            }
        }
        None => LogLine {
            file,
            time: String::new(),
            event: String::new(),
            host: String::new(),
            session: None,
            outcome: LogOutcome::Unparsed,
            code: None,
            detail: String::new(),
            raw: raw.to_string(),
        },
    }
}

fn parse_text(file: LogFile, text: &str) -> Vec<LogLine> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| parse_line(file, l))
        .collect()
}

/// Follows `hooks.log` (and reads `hooks.log.1` on a fresh start).
#[derive(Debug)]
pub struct LogTail {
    live: PathBuf,
    rotated: PathBuf,
    /// Bytes of `live` already sent (always at a line boundary).
    offset: u64,
    /// The live file's inode, to notice a rotation.
    ino: Option<u64>,
}

/// What changed since the last look.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LogUpdate {
    /// The page must drop what it has and take `lines` as the whole log.
    pub reset: bool,
    pub lines: Vec<LogLine>,
}

impl LogTail {
    pub fn new(live: &Path) -> Self {
        LogTail {
            live: live.to_path_buf(),
            rotated: hook_log::rotated_path(live),
            offset: 0,
            ino: None,
        }
    }

    /// Both files, whole, and the offset set to the live file's end.
    pub fn snapshot(&mut self) -> Vec<LogLine> {
        let mut lines = read_whole(&self.rotated)
            .map(|t| parse_text(LogFile::Rotated, &t))
            .unwrap_or_default();
        self.offset = 0;
        self.ino = inode(&self.live);
        if let Some((text, end)) = read_from(&self.live, 0) {
            lines.extend(parse_text(LogFile::Live, &text));
            self.offset = end;
        }
        lines
    }

    /// New complete lines since the last call; a rotation or truncation gives a reset.
    pub fn poll(&mut self) -> Option<LogUpdate> {
        let ino = inode(&self.live);
        let len = std::fs::metadata(&self.live).map(|m| m.len()).unwrap_or(0);
        if ino != self.ino || len < self.offset {
            let lines = self.snapshot();
            return Some(LogUpdate { reset: true, lines });
        }
        if len == self.offset {
            return None;
        }
        let (text, end) = read_from(&self.live, self.offset)?;
        if end == self.offset {
            return None;
        }
        self.offset = end;
        Some(LogUpdate {
            reset: false,
            lines: parse_text(LogFile::Live, &text),
        })
    }
}

/// The live file's identity: its inode on Unix; elsewhere (Windows) its creation time, which
/// a rotation (rename aside, then a new file) changes too.
#[cfg(unix)]
fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| m.ino())
}

#[cfg(not(unix))]
fn inode(path: &Path) -> Option<u64> {
    let created = std::fs::metadata(path).ok()?.created().ok()?;
    let since = created.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(since.as_nanos()).ok()
}

fn read_whole(path: &Path) -> Option<String> {
    read_from(path, 0).map(|(t, _)| t)
}

/// Reads complete lines from `offset`; returns the text and the offset after the last newline.
fn read_from(path: &Path, offset: u64) -> Option<(String, u64)> {
    // The core's one careful read: never blocks on a FIFO or a device at the log's place.
    let (mut file, meta) = companion_platform::fsutil::open_regular(path).ok()??;
    let len = meta.len();
    let start = if len.saturating_sub(offset) > READ_LIMIT {
        len - READ_LIMIT
    } else {
        offset
    };
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.take(READ_LIMIT).read_to_end(&mut bytes).ok()?;
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(complete);
    let end = start + complete as u64;
    Some((String::from_utf8_lossy(&bytes).into_owned(), end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn parses_every_outcome() {
        let ok = parse_line(
            LogFile::Live,
            "2026-10-01T09:00:00Z session-start codex abc ok services=2",
        );
        assert_eq!(ok.event, "session-start");
        assert_eq!(ok.session.as_deref(), Some("abc"));
        assert_eq!(ok.outcome, LogOutcome::Ok);
        assert_eq!(ok.detail, "services=2");
        let refused = parse_line(
            LogFile::Live,
            "2026-10-01T09:00:00Z stop claude - refused fabric-down x=1",
        );
        assert_eq!(refused.outcome, LogOutcome::Refused);
        assert_eq!(refused.code.as_deref(), Some("fabric-down"));
        assert_eq!(refused.session, None);
        assert_eq!(refused.detail, "x=1");
        let unknown = parse_line(LogFile::Live, "t stop kimi s outcome=unknown");
        assert_eq!(unknown.outcome, LogOutcome::Unknown);
        assert_eq!(
            parse_line(LogFile::Live, "garbage").outcome,
            LogOutcome::Unparsed
        );
    }

    #[test]
    fn follows_appends_and_rotation() {
        let dir = std::env::temp_dir().join(format!("fc-logtail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let live = dir.join("hooks.log");
        std::fs::write(dir.join("hooks.log.1"), "t1 a codex - ok\n").unwrap();
        std::fs::write(&live, "t2 b codex - ok\npartial").unwrap();
        let mut tail = LogTail::new(&live);
        let first = tail.snapshot();
        assert_eq!(first.len(), 2);
        assert_eq!(first[0].file, LogFile::Rotated);
        assert!(tail.poll().is_none());
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&live)
            .unwrap();
        f.write_all(b" line ok\nt3 c codex - ok\n").unwrap();
        let update = tail.poll().unwrap();
        assert!(!update.reset);
        assert_eq!(update.lines.len(), 2);
        assert_eq!(update.lines[1].event, "c");
        std::fs::rename(&live, dir.join("hooks.log.1")).unwrap();
        std::fs::write(&live, "t4 d codex - ok\n").unwrap();
        let update = tail.poll().unwrap();
        assert!(update.reset);
        assert_eq!(update.lines.len(), 4);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
