//! A session's spool: the small files our hooks, the worker, `watch-mail` and the tray share
//! under `<cache>/sessions/<session id>/`.
//!
//! | file | written by | holds |
//! |---|---|---|
//! | `session.json` | session-start | host, project folder name, start time, host pid (+ start ticks), folder |
//! | `turns.jsonl` | stop | one line per turn: sequence number and time (last 50 kept) |
//! | `observed.seq` | worker | the last turn sequence sent to Fabric |
//! | `turn-stats.json` | worker | files changed, lines added and removed at that turn (numbers only) |
//! | `end.json` | session-end | the end's reason and time |
//! | `board.json` | worker, watch-mail | `{"unread", "state", "observedAt"}` |
//! | `board.shown` | user-prompt-submit, watch-mail | the last count a line was said for |
//! | `prompt.at` | user-prompt-submit | when the current turn started (the tray's "in a turn") |
//! | `preamble.shown` | user-prompt-submit (Kimi Code) | that the preamble rode on a prompt once |
//!
//! Every write is atomic or an append under the spool's lock file; nothing here holds content.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::board::BoardState;
use crate::clock;
use crate::fsutil::{self, PRIVATE_FILE_MODE};
use crate::host::Host;
use crate::process;

/// Turn entries kept per session.
pub const MAX_TURNS: usize = 50;
/// A spool without `session.json` (a Kimi Code marker only) is pruned after this long.
const ORPHAN_SPOOL_SECS: u64 = 2 * 24 * 3600;
const SMALL_FILE_LIMIT: u64 = 64 * 1024;

/// A session id that is safe as a single folder name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SessionId(String);

impl SessionId {
    /// Accepts 1–128 of `[A-Za-z0-9._-]`, not starting with a dot.
    pub fn new(id: &str) -> Option<Self> {
        let ok = !id.is_empty()
            && id.len() <= 128
            && !id.starts_with('.')
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        ok.then(|| SessionId(id.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `session.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    pub host: Host,
    /// The project folder's name (not its path).
    pub project: String,
    pub started_at: String,
    pub host_pid: u32,
    #[serde(default)]
    pub host_start_ticks: u64,
    /// The session's folder, for the worker's `git` (never logged).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
}

impl SessionRecord {
    /// Whether the host process that started this session is still alive.
    pub fn host_alive(&self) -> bool {
        process::same_process_alive(self.host_pid, self.host_start_ticks)
    }
}

/// One line of `turns.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnEntry {
    pub seq: u64,
    pub at: String,
    /// Which host ran the Stop hook (the worker's `--runner`).
    pub host: Host,
    /// The session's folder (the worker's `git`; never logged).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
}

/// `turn-stats.json`: what the worker measured for the last turn it observed (numbers only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnStatsRecord {
    pub seq: u64,
    pub files_changed: Option<u64>,
    pub lines_added: Option<u64>,
    pub lines_removed: Option<u64>,
}

/// `end.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndRecord {
    pub reason: String,
    pub at: String,
    pub host: Host,
}

/// `board.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BoardRecord {
    pub unread: u64,
    pub state: BoardState,
    pub observed_at: String,
}

/// One session's spool folder.
#[derive(Debug, Clone)]
pub struct Spool {
    dir: PathBuf,
}

impl Spool {
    pub fn new(sessions_dir: &Path, id: &SessionId) -> Self {
        Spool {
            dir: sessions_dir.join(id.as_str()),
        }
    }

    /// A spool at an explicit folder (the worker's argument).
    pub fn at(dir: PathBuf) -> Self {
        Spool { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The session id (the folder's name).
    pub fn session_id(&self) -> Option<SessionId> {
        SessionId::new(self.dir.file_name()?.to_str()?)
    }

    pub fn exists(&self) -> bool {
        self.dir.is_dir()
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn ensure(&self) -> io::Result<()> {
        fsutil::create_private_dir(&self.dir)
    }

    fn write_json<T: Serialize>(&self, name: &str, value: &T) -> io::Result<()> {
        self.ensure()?;
        let mut text = serde_json::to_vec(value).map_err(io::Error::other)?;
        text.push(b'\n');
        fsutil::replace_cached(&self.file(name), &text, PRIVATE_FILE_MODE)
    }

    fn read_json<T: for<'de> Deserialize<'de>>(&self, name: &str) -> Option<T> {
        fsutil::read_json(&self.file(name), SMALL_FILE_LIMIT)
    }

    /// Takes the spool's lock (a blocking exclusive lock on `spool.lock`).
    pub fn lock(&self) -> io::Result<File> {
        self.ensure()?;
        let file = fsutil::open_private(&self.file("spool.lock"), false)?;
        file.lock()?;
        Ok(file)
    }

    /// Tries to take the worker's lock (`worker.lock`) without waiting.
    pub fn try_worker_lock(&self) -> io::Result<Option<File>> {
        self.ensure()?;
        let file = fsutil::open_private(&self.file("worker.lock"), false)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(file)),
            Err(fs::TryLockError::WouldBlock) => Ok(None),
            Err(fs::TryLockError::Error(err)) => Err(err),
        }
    }

    pub fn write_session(&self, record: &SessionRecord) -> io::Result<()> {
        self.write_json("session.json", record)
    }

    /// Whether `session.json` exists (a stat, no read).
    pub fn has_session(&self) -> bool {
        self.file("session.json").is_file()
    }

    pub fn read_session(&self) -> Option<SessionRecord> {
        self.read_json("session.json")
    }

    /// Appends a turn under the lock, numbering it after the last one and keeping the last 50.
    pub fn append_turn(&self, host: Host, cwd: Option<&Path>) -> io::Result<TurnEntry> {
        let _lock = self.lock()?;
        let mut turns = self.read_turns();
        let seq = turns
            .last()
            .map(|t| t.seq)
            .unwrap_or(0)
            .max(self.observed_seq())
            + 1;
        let entry = TurnEntry {
            seq,
            at: clock::now_rfc3339_millis(),
            host,
            cwd: cwd.map(Path::to_path_buf),
        };
        let mut line = serde_json::to_string(&entry).map_err(io::Error::other)?;
        line.push('\n');
        if turns.len() + 1 > MAX_TURNS {
            turns.push(entry.clone());
            let keep = &turns[turns.len() - MAX_TURNS..];
            let mut text = String::new();
            for turn in keep {
                text.push_str(&serde_json::to_string(turn).map_err(io::Error::other)?);
                text.push('\n');
            }
            fsutil::replace_cached(
                &self.file("turns.jsonl"),
                text.as_bytes(),
                PRIVATE_FILE_MODE,
            )?;
        } else {
            let mut file = fsutil::open_private(&self.file("turns.jsonl"), true)?;
            file.write_all(line.as_bytes())?;
        }
        Ok(entry)
    }

    /// The turn entries, oldest first (unparseable lines skipped).
    pub fn read_turns(&self) -> Vec<TurnEntry> {
        let Ok(file) = File::open(self.file("turns.jsonl")) else {
            return Vec::new();
        };
        BufReader::new(file)
            .lines()
            .map_while(Result::ok)
            .filter_map(|line| serde_json::from_str(&line).ok())
            .collect()
    }

    /// The last turn sequence the worker sent (0 when none).
    pub fn observed_seq(&self) -> u64 {
        read_number(&self.file("observed.seq")).unwrap_or(0)
    }

    pub fn set_observed_seq(&self, seq: u64) -> io::Result<()> {
        self.ensure()?;
        fsutil::replace_cached(
            &self.file("observed.seq"),
            format!("{seq}\n").as_bytes(),
            PRIVATE_FILE_MODE,
        )
    }

    pub fn write_turn_stats(&self, record: &TurnStatsRecord) -> io::Result<()> {
        self.write_json("turn-stats.json", record)
    }

    pub fn read_turn_stats(&self) -> Option<TurnStatsRecord> {
        self.read_json("turn-stats.json")
    }

    pub fn write_end(&self, record: &EndRecord) -> io::Result<()> {
        self.write_json("end.json", record)
    }

    pub fn read_end(&self) -> Option<EndRecord> {
        self.read_json("end.json")
    }

    pub fn write_board(&self, record: &BoardRecord) -> io::Result<()> {
        self.write_json("board.json", record)
    }

    pub fn read_board(&self) -> Option<BoardRecord> {
        self.read_json("board.json")
    }

    /// The last count a line was said for.
    pub fn read_shown(&self) -> Option<u64> {
        read_number(&self.file("board.shown"))
    }

    pub fn write_shown(&self, unread: u64) -> io::Result<()> {
        self.ensure()?;
        fsutil::replace_cached(
            &self.file("board.shown"),
            format!("{unread}\n").as_bytes(),
            PRIVATE_FILE_MODE,
        )
    }

    /// Marks that a prompt started a turn now.
    pub fn mark_prompt(&self) -> io::Result<()> {
        fsutil::replace_cached(
            &self.file("prompt.at"),
            format!("{}\n", clock::now_rfc3339_millis()).as_bytes(),
            PRIVATE_FILE_MODE,
        )
    }

    /// When the last prompt started a turn.
    pub fn read_prompt_at(&self) -> Option<String> {
        let bytes = fsutil::read_bounded(&self.file("prompt.at"), 128).ok()??;
        Some(String::from_utf8(bytes).ok()?.trim().to_string())
    }

    /// Claims the one-time preamble delivery on a prompt; true only for the first caller.
    pub fn claim_preamble_once(&self) -> bool {
        if self.ensure().is_err() {
            return false;
        }
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(PRIVATE_FILE_MODE);
        }
        options.open(self.file("preamble.shown")).is_ok()
    }

    /// Removes the whole spool.
    pub fn remove(&self) -> io::Result<()> {
        match fs::remove_dir_all(&self.dir) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => Err(err),
            _ => Ok(()),
        }
    }
}

/// A live session as the tray and `status` list it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveSession {
    pub id: SessionId,
    pub record: SessionRecord,
    pub board: Option<BoardRecord>,
    pub last_turn: Option<TurnEntry>,
    /// What the worker measured for the last turn it observed.
    pub turn_stats: Option<TurnStatsRecord>,
    /// A prompt started a turn after the last Stop.
    pub in_turn: bool,
}

/// Lists the sessions whose host process is alive (read-only: nothing is pruned).
pub fn live_sessions(sessions_dir: &Path) -> Vec<LiveSession> {
    let Ok(entries) = fs::read_dir(sessions_dir) else {
        return Vec::new();
    };
    let mut live: Vec<LiveSession> = entries
        .flatten()
        .filter_map(|entry| {
            let id = SessionId::new(entry.file_name().to_str()?)?;
            let spool = Spool::new(sessions_dir, &id);
            let record = spool.read_session()?;
            if !record.host_alive() || spool.read_end().is_some() {
                return None;
            }
            let last_turn = spool.read_turns().pop();
            let prompt_at = spool.read_prompt_at();
            let in_turn = match (&prompt_at, &last_turn) {
                (Some(prompt), Some(turn)) => prompt.as_str() >= turn.at.as_str(),
                (Some(_), None) => true,
                _ => false,
            };
            Some(LiveSession {
                turn_stats: spool.read_turn_stats(),
                board: spool.read_board(),
                id,
                record,
                last_turn,
                in_turn,
            })
        })
        .collect();
    live.sort_by(|a, b| a.record.started_at.cmp(&b.record.started_at));
    live
}

/// Removes spools whose host process is gone (hosts often skip SessionEnd), and marker-only
/// spools older than two days. `keep` is never removed. Returns how many were removed.
pub fn prune_stale(sessions_dir: &Path, keep: Option<&SessionId>) -> usize {
    let Ok(entries) = fs::read_dir(sessions_dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let Some(id) = entry.file_name().to_str().and_then(SessionId::new) else {
            continue;
        };
        if Some(&id) == keep {
            continue;
        }
        let spool = Spool::new(sessions_dir, &id);
        let stale = match spool.read_session() {
            Some(record) => !record.host_alive(),
            None => entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| m.elapsed().ok())
                .is_some_and(|age| age.as_secs() > ORPHAN_SPOOL_SECS),
        };
        // A running worker holds its lock; leave its spool to it.
        if stale && matches!(spool.try_worker_lock(), Ok(Some(_))) && spool.remove().is_ok() {
            removed += 1;
        }
    }
    removed
}

fn read_number(path: &Path) -> Option<u64> {
    let bytes = fsutil::read_bounded(path, 64).ok()??;
    std::str::from_utf8(&bytes).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_single_safe_names() {
        assert!(SessionId::new("0f9a6c1e-1234-4abc-9def-0123456789ab").is_some());
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "a/b",
            ".hidden",
            &"x".repeat(129),
            "a b",
        ] {
            assert!(SessionId::new(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn turns_are_numbered_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::new(dir.path(), &SessionId::new("s1").unwrap());
        for _ in 0..60 {
            spool.append_turn(Host::Claude, None).unwrap();
        }
        let turns = spool.read_turns();
        assert_eq!(turns.len(), MAX_TURNS);
        assert_eq!(turns.first().unwrap().seq, 11);
        assert_eq!(turns.last().unwrap().seq, 60);
    }

    #[test]
    fn preamble_claim_happens_once() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::new(dir.path(), &SessionId::new("s2").unwrap());
        assert!(spool.claim_preamble_once());
        assert!(!spool.claim_preamble_once());
    }
}
