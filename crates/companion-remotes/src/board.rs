//! Every remote's link state and sessions, in one place: written by the links (one thread
//! each), read by the tray's snapshot, and saved by the tray as `remotes.json` in our cache
//! folder for the dashboard (which never runs a link itself: the two programs share files
//! only). A change that changes nothing wakes nobody.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use companion_platform::fsutil;
use companion_platform::paths::Paths;
use serde::{Deserialize, Serialize};

use crate::remote::Remote;
use crate::stream::{RemoteSession, RemoteState};

/// The schema of `remotes.json`.
pub const FILE_SCHEMA: &str = "fabric-companion-remotes/1";
const FILE_LIMIT: u64 = 4 * 1024 * 1024;

/// Where a remote's link stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum LinkState {
    /// The first connection is being made.
    Connecting { since: i64 },
    /// Its stream arrives.
    Up { since: i64 },
    /// Down since `since` (Unix seconds; kept across the reconnections that fail).
    Down { since: i64, why: Down },
}

/// Why a link is down.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Down {
    /// It cannot be reached (the transport's own words, cleaned).
    Unreachable { detail: String },
    /// `ssh` would have asked about the host's key: the person runs `by_hand` once.
    HostKey { by_hand: String },
    /// `ssh` would have asked for a password (no key it may use): the person sets one up.
    Auth { by_hand: String },
    /// No `fabric-session` there: `fabric-session remote add` sets it up.
    NotSetUp,
    /// It sent what it must not (garbage, a flood, a huge line) or went silent.
    Broken { what: String },
}

impl Down {
    /// What a person reads after the remote's name and "since …".
    pub fn describe(&self) -> String {
        match self {
            Down::Unreachable { detail } if detail.is_empty() => "unreachable".into(),
            Down::Unreachable { detail } => format!("unreachable ({detail})"),
            Down::HostKey { by_hand } => {
                format!("its host key is not known yet: run `{by_hand}` once")
            }
            Down::Auth { by_hand } => {
                format!("ssh needs a password or a key: set up a key, check with `{by_hand}`")
            }
            Down::NotSetUp => {
                "fabric-session is not set up there: run `fabric-session remote add`".into()
            }
            Down::Broken { what } => format!("unreachable: it {what}"),
        }
    }
}

/// One remote on the board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The remote as written.
    pub remote: String,
    /// The name a person reads.
    pub label: String,
    pub link: LinkState,
    /// Fabric runs there (as of the last document).
    pub fabric_running: bool,
    /// Its sessions as of the last document (kept while the link is down, marked stale by
    /// the link's state).
    pub sessions: Vec<RemoteSession>,
}

/// The board: cheap to clone, shared by the links and the tray.
#[derive(Clone)]
pub struct Board {
    entries: Arc<Mutex<BTreeMap<String, Entry>>>,
    on_change: Arc<dyn Fn() + Send + Sync>,
}

impl Board {
    /// An empty board; `on_change` is called (from a link's thread) after each real change.
    pub fn new(on_change: impl Fn() + Send + Sync + 'static) -> Board {
        Board {
            entries: Arc::default(),
            on_change: Arc::new(on_change),
        }
    }

    fn change(&self, remote: &Remote, edit: impl FnOnce(&mut Entry)) {
        let changed = {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            let new = !entries.contains_key(remote.spec());
            let entry = entries
                .entry(remote.spec().to_string())
                .or_insert_with(|| Entry {
                    remote: remote.spec().to_string(),
                    label: remote.label(),
                    link: LinkState::Connecting { since: now() },
                    fabric_running: false,
                    sessions: Vec::new(),
                });
            let before = entry.clone();
            edit(entry);
            new || *entry != before
        };
        if changed {
            (self.on_change)();
        }
    }

    /// A remote joins the board (connecting) unless it is on it.
    pub fn add(&self, remote: &Remote) {
        self.change(remote, |_| {});
    }

    /// The link is up (keeps the time it came up).
    pub fn up(&self, remote: &Remote) {
        self.change(remote, |entry| {
            if !matches!(entry.link, LinkState::Up { .. }) {
                entry.link = LinkState::Up { since: now() };
            }
        });
    }

    /// The link is down for `why` (keeps the time it went down while it stays down).
    pub fn down(&self, remote: &Remote, why: Down) {
        self.change(remote, |entry| {
            let since = match &entry.link {
                LinkState::Down { since, .. } => *since,
                _ => now(),
            };
            entry.link = LinkState::Down { since, why };
        });
    }

    /// The remote's state now.
    pub fn state(&self, remote: &Remote, state: RemoteState) {
        self.change(remote, |entry| {
            entry.fabric_running = state.fabric_running;
            entry.sessions = state.sessions;
        });
    }

    /// A remote leaves the board (removed from the settings).
    pub fn remove(&self, spec: &str) {
        let removed = self
            .entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(spec)
            .is_some();
        if removed {
            (self.on_change)();
        }
    }

    /// Every remote, in the order of their names as written.
    pub fn entries(&self) -> Vec<Entry> {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }
}

fn now() -> i64 {
    companion_platform::clock::now_millis().div_euclid(1000)
}

/// `remotes.json` in our cache folder.
pub fn file_path(paths: &Paths) -> PathBuf {
    paths.cache_dir.join("remotes.json")
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BoardFile {
    schema: String,
    remotes: Vec<Entry>,
}

/// Saves the board for the dashboard (atomically; our own cache file).
pub fn save(path: &Path, entries: &[Entry]) -> std::io::Result<()> {
    let file = BoardFile {
        schema: FILE_SCHEMA.into(),
        remotes: entries.to_vec(),
    };
    let bytes = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    fsutil::replace_cached(path, &bytes, 0o600)
}

/// The board as the tray last saved it (empty when there is none or it does not read).
pub fn load(path: &Path) -> Vec<Entry> {
    fsutil::read_json::<BoardFile>(path, FILE_LIMIT)
        .filter(|file| file.schema == FILE_SCHEMA)
        .map(|file| file.remotes)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn only_real_changes_wake_and_down_keeps_its_since() {
        let woken = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&woken);
        let board = Board::new(move || {
            count.fetch_add(1, Ordering::SeqCst);
        });
        let remote = Remote::parse("me@build-box").unwrap();
        board.add(&remote);
        board.add(&remote);
        assert_eq!(woken.load(Ordering::SeqCst), 1);
        board.down(&remote, Down::NotSetUp);
        let LinkState::Down { since, .. } = board.entries()[0].link else {
            panic!("not down");
        };
        board.down(&remote, Down::NotSetUp);
        assert_eq!(
            woken.load(Ordering::SeqCst),
            2,
            "the same down again changes nothing"
        );
        board.down(&remote, Down::Unreachable { detail: "x".into() });
        assert!(matches!(board.entries()[0].link, LinkState::Down { since: s, .. } if s == since));
        board.up(&remote);
        board.state(&remote, RemoteState::default());
        assert_eq!(woken.load(Ordering::SeqCst), 4);
        assert_eq!(board.entries()[0].label, "build-box");
        board.remove("me@build-box");
        assert!(board.entries().is_empty());
    }

    #[test]
    fn the_saved_board_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("remotes.json");
        assert!(load(&path).is_empty());
        let board = Board::new(|| {});
        board.down(
            &Remote::parse("docker:devc").unwrap(),
            Down::HostKey {
                by_hand: "ssh x".into(),
            },
        );
        save(&path, &board.entries()).unwrap();
        assert_eq!(load(&path), board.entries());
        std::fs::write(&path, "{not json").unwrap();
        assert!(load(&path).is_empty());
    }
}
