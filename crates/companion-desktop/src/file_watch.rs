//! File events, no polling: the `notify` crate watches the folders of [`crate::watched`]
//! and turns each burst of changes into one call of `on_change`, once the folders have been
//! quiet for [`DEBOUNCE`] (the tray: [`PROMPT_DEBOUNCE`]; at most [`MAX_DELAY`] after the
//! first event). The tray and the
//! dashboard both use it; the hook binary never links it (the `watch` feature).
//!
//! A folder that does not exist yet (Fabric never ran, a host not installed) is waited for by
//! watching its nearest existing ancestor without recursion; each burst re-checks, and the
//! real folder is watched as soon as it appears. Our own reads open files too, so
//! open/close-without-write events are ignored (otherwise every refresh would trigger the
//! next), and so are changes to files no watched folder cares about.
//!
//! When the system may have lost events (Linux's inotify queue overflowed: a rescan notice;
//! Windows' `ReadDirectoryChangesW` failed, as on a full buffer, after which `notify` stops
//! watching that folder for good) the burst says "anything may have changed" and every folder
//! is watched anew.
//!
//! It never reads or writes the files it watches.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::watched::{self, WatchedFolder};

/// Quiet time that ends a burst.
pub const DEBOUNCE: Duration = Duration::from_millis(100);
/// The tray's shorter quiet time: the count on its icon follows a board change at once
/// (its reader coalesces whatever follows in the same burst into one more read).
pub const PROMPT_DEBOUNCE: Duration = Duration::from_millis(40);
/// The longest a busy burst delays its call.
pub const MAX_DELAY: Duration = Duration::from_millis(500);

/// One burst of changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// The paths that changed.
    pub paths: BTreeSet<PathBuf>,
    /// The watcher reported an error: anything may have changed.
    pub unknown: bool,
}

/// Why watching could not start.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("cannot start the file watcher: {0}")]
    Start(#[from] notify::Error),
    #[error("cannot start the watcher thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// Whether an event can change what is shown (our own reads cannot).
pub fn relevant(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Other => false,
        EventKind::Any | EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) => true,
    }
}

/// The nearest existing folder at or above `dir`.
fn nearest_existing(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|a| a.is_dir()).map(Path::to_path_buf)
}

struct Watches {
    watcher: RecommendedWatcher,
    folders: Vec<WatchedFolder>,
    /// What is watched now: folder → recursive.
    active: BTreeMap<PathBuf, bool>,
    /// Events may have been lost: every folder is watched anew at the next [`Watches::ensure`].
    rewatch: bool,
}

impl Watches {
    /// Watches each folder, or its nearest existing ancestor (not recursively) while missing.
    fn ensure(&mut self) {
        if std::mem::take(&mut self.rewatch) {
            for dir in std::mem::take(&mut self.active).into_keys() {
                let _ = self.watcher.unwatch(&dir);
            }
        }
        let mut wanted: BTreeMap<PathBuf, bool> = BTreeMap::new();
        for folder in &self.folders {
            if folder.dir.is_dir() {
                let entry = wanted.entry(folder.dir.clone()).or_insert(false);
                *entry |= folder.recursive;
            } else if let Some(ancestor) = nearest_existing(&folder.dir) {
                wanted.entry(ancestor).or_insert(false);
            }
        }
        let stale: Vec<PathBuf> = self
            .active
            .iter()
            .filter(|(dir, rec)| wanted.get(*dir) != Some(rec))
            .map(|(dir, _)| dir.clone())
            .collect();
        for dir in stale {
            let _ = self.watcher.unwatch(&dir);
            self.active.remove(&dir);
        }
        for (dir, recursive) in wanted {
            if self.active.contains_key(&dir) {
                continue;
            }
            let mode = if recursive {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            match self.watcher.watch(&dir, mode) {
                Ok(()) => {
                    tracing::debug!(dir = %dir.display(), recursive, "watching");
                    self.active.insert(dir, recursive);
                }
                Err(error) => tracing::warn!(dir = %dir.display(), %error, "cannot watch"),
            }
        }
    }

    /// What of `event` counts, added to `changes`; false when nothing does.
    fn take(&mut self, event: notify::Result<Event>, changes: &mut Changes) -> bool {
        match event {
            // The error's text may name a folder: only that there was one is logged.
            Err(_) => {
                tracing::warn!("the file watcher reported an error: reading again, watching anew");
                changes.unknown = true;
                self.rewatch = true;
                true
            }
            Ok(event) if event.need_rescan() => {
                tracing::info!("the system may have lost file events: reading again");
                changes.unknown = true;
                self.rewatch = true;
                true
            }
            Ok(event) if relevant(&event.kind) => {
                let before = changes.paths.len();
                changes.paths.extend(
                    event
                        .paths
                        .into_iter()
                        .filter(|path| watched::counts(&self.folders, path)),
                );
                changes.paths.len() > before
            }
            Ok(_) => false,
        }
    }
}

/// Starts watching `folders` on a thread of its own; `on_change` is called once per burst
/// ([`DEBOUNCE`] of quiet ends one). The watcher lives as long as the process.
pub fn spawn(
    folders: Vec<WatchedFolder>,
    on_change: impl FnMut(Changes) + Send + 'static,
) -> Result<(), WatchError> {
    spawn_with(folders, DEBOUNCE, on_change)
}

/// [`spawn`] with another quiet time ending a burst (still at most [`MAX_DELAY`]).
pub fn spawn_with(
    folders: Vec<WatchedFolder>,
    quiet: Duration,
    on_change: impl FnMut(Changes) + Send + 'static,
) -> Result<(), WatchError> {
    let (tx, rx) = mpsc::channel::<notify::Result<Event>>();
    let watcher = notify::recommended_watcher(move |event| {
        let _ = tx.send(event);
    })?;
    let mut watches = Watches {
        watcher,
        folders,
        active: BTreeMap::new(),
        rewatch: false,
    };
    watches.ensure();
    std::thread::Builder::new()
        .name("file-watch".into())
        .spawn(move || debounce_loop(watches, rx, quiet, on_change))?;
    Ok(())
}

fn debounce_loop(
    mut watches: Watches,
    rx: mpsc::Receiver<notify::Result<Event>>,
    quiet: Duration,
    mut on_change: impl FnMut(Changes),
) {
    // Blocks with no timeout between bursts: an idle program does not wake here.
    while let Ok(event) = rx.recv() {
        let mut changes = Changes::default();
        if !watches.take(event, &mut changes) {
            continue;
        }
        let first = Instant::now();
        loop {
            let left = MAX_DELAY.saturating_sub(first.elapsed());
            if left.is_zero() {
                break;
            }
            match rx.recv_timeout(quiet.min(left)) {
                Ok(event) => {
                    watches.take(event, &mut changes);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
        watches.ensure();
        on_change(changes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn reads_are_not_relevant_but_writes_are() {
        assert!(!relevant(&EventKind::Access(AccessKind::Open(
            AccessMode::Any
        ))));
        assert!(!relevant(&EventKind::Access(AccessKind::Close(
            AccessMode::Read
        ))));
        assert!(relevant(&EventKind::Access(AccessKind::Close(
            AccessMode::Write
        ))));
        assert!(relevant(&EventKind::Create(
            notify::event::CreateKind::File
        )));
    }

    #[test]
    fn lost_events_and_errors_mean_anything_changed_and_every_folder_is_watched_anew() {
        let dir = tempfile::tempdir().unwrap();
        let mut watches = Watches {
            watcher: notify::recommended_watcher(|_| {}).unwrap(),
            folders: vec![folder(dir.path(), false)],
            active: BTreeMap::new(),
            rewatch: false,
        };
        watches.ensure();
        assert!(watches.active.contains_key(dir.path()));
        let lost = Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        let mut changes = Changes::default();
        assert!(
            watches.take(Ok(lost), &mut changes),
            "a rescan notice counts"
        );
        assert!(changes.unknown && watches.rewatch);
        watches.ensure();
        assert!(!watches.rewatch);
        assert!(watches.active.contains_key(dir.path()), "watched anew");
        let mut changes = Changes::default();
        assert!(watches.take(Err(notify::Error::generic("overflow")), &mut changes));
        assert!(changes.unknown && watches.rewatch);
        // An ordinary event of no interest changes nothing.
        let mut changes = Changes::default();
        watches.rewatch = false;
        assert!(!watches.take(Ok(Event::new(EventKind::Other)), &mut changes));
        assert!(!changes.unknown && !watches.rewatch);
    }

    fn wait_for(seen: &Arc<Mutex<Vec<Changes>>>, at_least: usize) -> usize {
        let start = Instant::now();
        while seen.lock().unwrap().len() < at_least && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        seen.lock().unwrap().len()
    }

    fn folder(dir: &Path, recursive: bool) -> WatchedFolder {
        WatchedFolder {
            dir: dir.to_path_buf(),
            recursive,
            only: None,
            suffix: None,
        }
    }

    #[test]
    fn a_burst_is_one_change_and_a_missing_folder_is_picked_up_when_created() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        std::fs::create_dir_all(&cache).unwrap();
        let fabric = dir.path().join("share/fabric");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        spawn(
            vec![folder(&cache, true), folder(&fabric, false)],
            move |changes| sink.lock().unwrap().push(changes),
        )
        .unwrap();
        for i in 0..20 {
            std::fs::write(cache.join(format!("f{i}")), b"x").unwrap();
        }
        assert_eq!(wait_for(&seen, 1), 1);
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(seen.lock().unwrap().len(), 1, "one burst, one change");
        assert!(seen.lock().unwrap()[0].paths.contains(&cache.join("f19")));
        // Reading does not count.
        let _ = std::fs::read(cache.join("f1")).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(seen.lock().unwrap().len(), 1);
        // A file beside the missing folder's ancestor is not on the way to it.
        std::fs::write(dir.path().join("unrelated"), b"x").unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            seen.lock().unwrap().len(),
            1,
            "unrelated files do not count"
        );
        // The missing folder's ancestor is watched; once it exists, files in it count.
        std::fs::create_dir_all(&fabric).unwrap();
        let after_create = wait_for(&seen, 2);
        assert!(after_create >= 2);
        std::fs::write(fabric.join("hub.json"), b"{}").unwrap();
        assert!(wait_for(&seen, after_create + 1) > after_create);
        let last = seen.lock().unwrap().last().cloned().unwrap();
        assert!(last.paths.contains(&fabric.join("hub.json")), "{last:?}");
    }
}
