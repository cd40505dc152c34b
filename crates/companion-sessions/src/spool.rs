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
//! | `board.json` | worker, watch-mail, the tray | `{"unread", "state", "observedAt"}`: the newest reading ([`Spool::record_board`]) |
//! | `board.shown` | user-prompt-submit, watch-mail | the last count a line was said for ([`Spool::claim_rise`]) |
//! | `prompt.at` | user-prompt-submit (removed by stop) | when the current turn started; present = the tray's "in a turn" |
//! | `preamble.shown` | user-prompt-submit (Kimi Code) | that the preamble rode on a prompt once |
//! | `state.json` | every hook of a recorded session | the session's state ([`crate::session_state`]): state, since when, why it needs you, the tool's name ([`Spool::apply_signal`]) |
//!
//! Every write is atomic or an append under the spool's lock file; nothing here holds content.
//! Board readings come from three writers (the worker, `watch-mail`, the tray) and are ordered
//! by their observation time under the lock: an older reading never replaces a newer one, and
//! a reading never recreates a spool that ended or was removed. Removing a spool takes the lock
//! and renames the folder away first, so a writer waiting on the lock finds it gone.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::board::BoardState;
use crate::session_state::{self, Signal, StateRecord};
use crate::terminal_ids::TerminalIds;
use companion_hosts::host::Host;
use companion_platform::clock;
use companion_platform::fsutil::{self, PRIVATE_FILE_MODE};
use companion_platform::process;

/// Turn entries kept per session.
pub const MAX_TURNS: usize = 50;
/// What a removed spool's folder is renamed with before it is deleted.
const REMOVED_MARK: &str = ".removed.";
/// A spool without `session.json` (a Kimi Code marker only) is pruned after this long.
const ORPHAN_SPOOL_SECS: u64 = 2 * 24 * 3600;
const SMALL_FILE_LIMIT: u64 = 64 * 1024;
/// A stored time this far ahead of the clock means the clock went back since.
const FUTURE_SKEW_SECS: i64 = 60;
/// At most this much of `turns.jsonl` is read (50 entries are a few kilobytes).
const TURNS_READ_LIMIT: u64 = 1024 * 1024;

/// Whether a stored time is ahead of the clock by more than a little skew: the clock went
/// back since it was written.
fn is_future(stamp: &str) -> bool {
    clock::parse_rfc3339(stamp).is_some_and(|at| {
        at > time::OffsetDateTime::now_utc() + time::Duration::seconds(FUTURE_SKEW_SECS)
    })
}

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
    /// The terminal's own ids (tab, pane, window) from the host's environment, for the jump.
    #[serde(default, skip_serializing_if = "TerminalIds::is_empty")]
    pub terminal: TerminalIds,
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BoardRecord {
    pub unread: u64,
    pub state: BoardState,
    /// When the reading was taken (RFC 3339; to the millisecond since readings are ordered).
    pub observed_at: String,
}

impl BoardRecord {
    /// A reading taken now.
    pub fn observed_now(unread: u64, state: BoardState) -> Self {
        BoardRecord {
            unread,
            state,
            observed_at: clock::now_rfc3339_millis(),
        }
    }

    /// Whether this reading's time is ahead of the clock (by more than a little skew): the
    /// clock went back since it was taken.
    pub fn is_from_the_future(&self) -> bool {
        is_future(&self.observed_at)
    }

    /// Whether this reading was taken after `other` (a time that does not parse is older than
    /// any that does).
    pub fn is_newer_than(&self, other: &BoardRecord) -> bool {
        match (
            clock::parse_rfc3339(&self.observed_at),
            clock::parse_rfc3339(&other.observed_at),
        ) {
            (Some(mine), Some(theirs)) => mine > theirs,
            (Some(_), None) => true,
            _ => false,
        }
    }
}

/// What [`Spool::record_board`] did with a reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoardWrite {
    /// It is the spool's reading now.
    Written,
    /// The spool holds a newer reading; this one was dropped.
    KeptNewer,
    /// The session ended or its spool is gone; nothing was written or created.
    Ended,
}

/// A rise of the unread count over the last count a line was said for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnreadRise {
    pub from: u64,
    pub to: u64,
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

    /// Takes the spool's lock (a blocking exclusive lock on `spool.lock`), creating the spool
    /// when needed (also when it was removed while we waited).
    pub fn lock(&self) -> io::Result<File> {
        let path = self.file("spool.lock");
        let mut attempts = 0;
        loop {
            self.ensure()?;
            let file = fsutil::open_private(&path, false)?;
            file.lock()?;
            attempts += 1;
            if same_file(&file, &path) == Some(true) || attempts == 3 {
                return Ok(file);
            }
        }
    }

    /// Takes the spool's lock inside an existing spool folder (the lock file is created when
    /// missing, the folder never). `None` when there is no folder, or it was removed while we
    /// waited for the lock.
    fn lock_in_place(&self) -> io::Result<Option<File>> {
        let path = self.file("spool.lock");
        for _ in 0..3 {
            let file = match fsutil::open_private(&path, false) {
                Ok(file) => file,
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(err) => return Err(err),
            };
            file.lock()?;
            match same_file(&file, &path) {
                Some(true) => return Ok(Some(file)),
                _ if !self.dir.is_dir() => return Ok(None),
                _ => continue,
            }
        }
        Ok(None)
    }

    /// Takes the spool's lock only if the spool exists, never creating its folder. `None` when
    /// there is no spool, or it was removed while we waited for the lock.
    fn lock_existing(&self) -> io::Result<Option<File>> {
        let path = self.file("spool.lock");
        for _ in 0..3 {
            let file = match fsutil::open_private(&path, false) {
                Ok(file) => file,
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(err) => return Err(err),
            };
            file.lock()?;
            match same_file(&file, &path) {
                Some(true) => return Ok(Some(file)),
                // Removed while we waited: gone for good, unless a new one took its place.
                _ if !self.dir.is_dir() => return Ok(None),
                _ => continue,
            }
        }
        Ok(None)
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
        let mut record: SessionRecord = self.read_json("session.json")?;
        // The terminal's ids are checked again: the file may have changed since the hook.
        record.terminal = std::mem::take(&mut record.terminal).checked();
        Some(record)
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
            let file = fsutil::open_private(&self.file("turns.jsonl"), true)?;
            fsutil::append_whole(&file, line.as_bytes())?;
        }
        // The turn is over: "in a turn" follows the order of events, not the clock (a prompt
        // stamped before the clock went back would otherwise look later than this turn).
        let _ = fs::remove_file(self.file("prompt.at"));
        Ok(entry)
    }

    /// The turn entries, oldest first (unparseable lines skipped).
    pub fn read_turns(&self) -> Vec<TurnEntry> {
        let Ok(Some((file, _))) = fsutil::open_regular(&self.file("turns.jsonl")) else {
            return Vec::new();
        };
        BufReader::new(file.take(TURNS_READ_LIMIT))
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

    /// Writes `board.json` as given, creating the spool: no ordering, for tests and tools.
    /// Readings go through [`Spool::record_board`].
    pub fn write_board(&self, record: &BoardRecord) -> io::Result<()> {
        self.write_json("board.json", record)
    }

    /// Records a board reading under the spool's lock, unless the spool already holds a newer
    /// one (by `observed_at`) or the session ended (`end.json`) or its spool is gone. `create`
    /// lets a watcher that never saw this spool make it (`watch-mail` started before any hook);
    /// a writer that knew the spool never recreates it.
    pub fn record_board(&self, record: &BoardRecord, create: bool) -> io::Result<BoardWrite> {
        let lock = if create {
            Some(self.lock()?)
        } else {
            self.lock_existing()?
        };
        let Some(_lock) = lock else {
            return Ok(BoardWrite::Ended);
        };
        if self.file("end.json").exists() {
            return Ok(BoardWrite::Ended);
        }
        // A reading stamped in the future was taken before the clock went back: it is not
        // newer than anything, or the count would freeze until the clock caught up.
        if let Some(current) = self.read_board()
            && current.is_newer_than(record)
            && !current.is_from_the_future()
        {
            return Ok(BoardWrite::KeptNewer);
        }
        self.write_json("board.json", record)?;
        Ok(BoardWrite::Written)
    }

    /// The `board.shown` rule, the one place it lives (the UserPromptSubmit hook and
    /// `watch-mail` both say lines to the agent through it). Under the spool's lock: the count
    /// in `board.json` (the newest reading) is compared with `board.shown`, the last count a
    /// line was said for (missing counts as 0), and recorded as said — on a fall too, so a
    /// later rise from there is said. Returns the rise to say, if any; a rise is claimed once.
    /// Never creates a spool: without one, or without a count, `Ok(None)`.
    pub fn claim_rise(&self) -> io::Result<Option<UnreadRise>> {
        let Some(_lock) = self.lock_existing()? else {
            return Ok(None);
        };
        let Some(board) = self.read_board() else {
            return Ok(None);
        };
        let shown = self.read_shown();
        if shown != Some(board.unread) {
            self.write_shown(board.unread)?;
        }
        let from = shown.unwrap_or(0);
        Ok((board.unread > from).then_some(UnreadRise {
            from,
            to: board.unread,
        }))
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

    /// The session's state (`state.json`), when one was recorded.
    pub fn read_state(&self) -> Option<StateRecord> {
        self.read_json("state.json")
    }

    /// Applies a hook's signal at `at_ms` to the session's state under the spool's lock
    /// ([`session_state::apply`]). Only a recorded session that has not ended has a state:
    /// without `session.json`, or once `end.json` is there, nothing is written and no spool is
    /// made. Returns the new record when the state changed.
    pub fn apply_signal(&self, signal: &Signal, at_ms: i64) -> io::Result<Option<StateRecord>> {
        let Some(_lock) = self.lock_in_place()? else {
            return Ok(None);
        };
        if !self.has_session() || self.file("end.json").exists() {
            return Ok(None);
        }
        let current = self.read_state();
        let Some(next) = session_state::apply(current.as_ref(), signal, at_ms) else {
            return Ok(None);
        };
        self.write_json("state.json", &next)?;
        Ok(Some(next))
    }

    /// Writes `state.json` as given (tests and tools; hooks go through [`Spool::apply_signal`]).
    pub fn write_state(&self, record: &StateRecord) -> io::Result<()> {
        self.write_json("state.json", record)
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

    /// Whether the preamble already rode on a prompt (a stat, no read).
    pub fn preamble_shown(&self) -> bool {
        self.file("preamble.shown").exists()
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

    /// Removes the whole spool: under its lock the folder is renamed to a hidden name (no
    /// session id starts with a dot), so it is gone at once for every reader and for any
    /// writer waiting on the lock, then deleted.
    pub fn remove(&self) -> io::Result<()> {
        let lock = self.lock_existing()?;
        let gone = match (&lock, self.dir.file_name(), self.dir.parent()) {
            (Some(_), Some(name), Some(parent)) => {
                let hidden = parent.join(format!(
                    ".{}{REMOVED_MARK}{}.{}",
                    name.to_string_lossy(),
                    std::process::id(),
                    fsutil::unique_suffix()
                ));
                fs::rename(&self.dir, &hidden).ok().map(|()| hidden)
            }
            _ => None,
        };
        drop(lock);
        let target = gone.as_deref().unwrap_or(&self.dir);
        match fs::remove_dir_all(target) {
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
    /// The session's state as its hooks recorded it (`None`: none recorded yet).
    pub state: Option<StateRecord>,
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
            // Stop removes prompt.at, so a prompt time is a turn going on, whatever the clock
            // did since; a turn stamped in the future (the clock went back) is no later than
            // the prompt. The comparison stays for spools from before stop removed it.
            let in_turn = match (&prompt_at, &last_turn) {
                (Some(prompt), Some(turn)) => {
                    prompt.as_str() >= turn.at.as_str() || is_future(&turn.at)
                }
                (Some(_), None) => true,
                _ => false,
            };
            Some(LiveSession {
                state: spool.read_state(),
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
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(SessionId::new) else {
            // A removal that was cut short leaves its renamed folder behind.
            if name
                .to_str()
                .is_some_and(|n| n.starts_with('.') && n.contains(REMOVED_MARK))
            {
                let _ = fs::remove_dir_all(entry.path());
            }
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

/// Whether an open file is still the file at `path` (it was not removed or replaced).
fn same_file(file: &File, path: &Path) -> Option<bool> {
    let open = file.metadata().ok()?;
    let named = fs::metadata(path).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(open.dev() == named.dev() && open.ino() == named.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = (open, named);
        Some(true)
    }
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

    fn reading(unread: u64, at: &str) -> BoardRecord {
        BoardRecord {
            unread,
            state: BoardState::Ready,
            observed_at: at.into(),
        }
    }

    #[test]
    fn board_readings_are_ordered_by_observation_time() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::new(dir.path(), &SessionId::new("s3").unwrap());
        let newer = reading(4, "2026-12-02T10:00:00.500Z");
        assert_eq!(
            spool.record_board(&newer, true).unwrap(),
            BoardWrite::Written
        );
        // Older, also by a fraction of a second, and a whole-second time from before.
        for older in [
            "2026-12-02T10:00:00.499Z",
            "2026-12-02T10:00:00Z",
            "garbage",
        ] {
            let write = spool.record_board(&reading(1, older), false).unwrap();
            assert_eq!(write, BoardWrite::KeptNewer, "{older}");
        }
        assert_eq!(spool.read_board().unwrap(), newer);
        let later = reading(2, "2026-12-02T10:00:01Z");
        assert_eq!(
            spool.record_board(&later, false).unwrap(),
            BoardWrite::Written
        );
        assert_eq!(spool.read_board().unwrap(), later);
    }

    #[test]
    fn a_removed_or_ended_spool_takes_no_reading() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::new(dir.path(), &SessionId::new("s4").unwrap());
        let now = BoardRecord::observed_now(3, BoardState::Ready);
        assert_eq!(spool.record_board(&now, false).unwrap(), BoardWrite::Ended);
        assert!(!spool.exists(), "a reading made a spool");
        spool.record_board(&now, true).unwrap();
        spool.remove().unwrap();
        assert_eq!(spool.record_board(&now, false).unwrap(), BoardWrite::Ended);
        assert!(!spool.exists());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "nothing left"
        );
        spool
            .write_end(&EndRecord {
                reason: "other".into(),
                at: "2026-12-02T10:00:00Z".into(),
                host: Host::Claude,
            })
            .unwrap();
        assert_eq!(spool.record_board(&now, true).unwrap(), BoardWrite::Ended);
        assert!(spool.read_board().is_none());
    }

    #[test]
    fn a_rise_is_claimed_once_and_a_fall_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::new(dir.path(), &SessionId::new("s5").unwrap());
        assert_eq!(spool.claim_rise().unwrap(), None);
        assert!(!spool.exists(), "claiming made a spool");
        spool
            .record_board(&reading(3, "2026-12-02T10:00:00Z"), true)
            .unwrap();
        assert_eq!(
            spool.claim_rise().unwrap(),
            Some(UnreadRise { from: 0, to: 3 })
        );
        assert_eq!(spool.claim_rise().unwrap(), None);
        spool
            .record_board(&reading(1, "2026-12-02T10:00:01Z"), false)
            .unwrap();
        assert_eq!(spool.claim_rise().unwrap(), None);
        assert_eq!(spool.read_shown(), Some(1));
        spool
            .record_board(&reading(2, "2026-12-02T10:00:02Z"), false)
            .unwrap();
        assert_eq!(
            spool.claim_rise().unwrap(),
            Some(UnreadRise { from: 1, to: 2 })
        );
    }

    #[test]
    fn a_state_is_kept_only_for_a_recorded_session_that_has_not_ended() {
        use crate::session_state::{SessionState, ToolName, WaitReason};
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::new(dir.path(), &SessionId::new("s6").unwrap());
        let ask = Signal::Ask {
            reason: WaitReason::Permission,
            tool: ToolName::new("Bash"),
            agent: crate::session_state::Agent::Main,
        };
        let at = 1_796_000_000_000;
        assert_eq!(spool.apply_signal(&ask, at).unwrap(), None);
        assert!(!spool.exists(), "a signal made a spool");
        spool
            .write_session(&SessionRecord {
                host: Host::Claude,
                project: "p".into(),
                started_at: "2026-12-02T10:00:00Z".into(),
                host_pid: 1,
                host_start_ticks: 0,
                cwd: None,
                terminal: TerminalIds::default(),
            })
            .unwrap();
        let record = spool.apply_signal(&ask, at).unwrap().unwrap();
        assert_eq!(record.state, SessionState::NeedsYou);
        assert_eq!(spool.read_state(), Some(record));
        assert_eq!(spool.apply_signal(&ask, at + 1).unwrap(), None, "no change");
        let text = std::fs::read_to_string(spool.dir().join("state.json")).unwrap();
        assert!(text.contains("\"tool\":\"Bash\""), "{text}");
        spool
            .write_end(&EndRecord {
                reason: "other".into(),
                at: "2026-12-02T10:00:00Z".into(),
                host: Host::Claude,
            })
            .unwrap();
        assert_eq!(
            spool
                .apply_signal(
                    &Signal::Prompt {
                        agent: crate::session_state::Agent::Main
                    },
                    at + 2
                )
                .unwrap(),
            None,
            "an ended session keeps no state"
        );
        spool.remove().unwrap();
        assert_eq!(spool.apply_signal(&ask, at + 3).unwrap(), None);
        assert!(!spool.exists(), "a signal recreated a removed spool");
    }

    #[test]
    fn preamble_claim_happens_once() {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::new(dir.path(), &SessionId::new("s2").unwrap());
        assert!(spool.claim_preamble_once());
        assert!(!spool.claim_preamble_once());
    }
}
