//! File events, no polling: the `notify` crate watches our cache folder (spools, `board.json`,
//! `hooks.log`; recursively), Fabric's folder (`hub.json`), its `services/` folder, the
//! settings folder and the hosts' config folders (hooks installed, Codex's approvals). A burst of events becomes one call of `on_change` once the folder has been
//! quiet for [`DEBOUNCE`] (at most [`MAX_DELAY`] after the first event).
//!
//! A folder that does not exist yet (Fabric never ran) is waited for by watching its nearest
//! existing ancestor without recursion; each burst re-checks, and the real folder is watched
//! as soon as it appears. Our own reads open files too, so open/close-without-write events
//! are ignored (otherwise every refresh would trigger the next).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

/// Quiet time that ends a burst.
pub const DEBOUNCE: Duration = Duration::from_millis(100);
/// The longest a busy burst delays its refresh.
pub const MAX_DELAY: Duration = Duration::from_millis(500);

/// One folder to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub dir: PathBuf,
    pub recursive: bool,
}

/// Why watching could not start.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("cannot start the file watcher: {0}")]
    Start(#[from] notify::Error),
    #[error("cannot start the watcher thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// Whether an event can change what the tray shows (our own reads cannot).
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
    targets: Vec<Target>,
    /// What is watched now: folder → recursive.
    active: BTreeMap<PathBuf, bool>,
}

impl Watches {
    /// Watches each target, or its nearest existing ancestor (not recursively) while missing.
    fn ensure(&mut self) {
        let mut wanted: BTreeMap<PathBuf, bool> = BTreeMap::new();
        for target in &self.targets {
            if target.dir.is_dir() {
                let entry = wanted.entry(target.dir.clone()).or_insert(false);
                *entry |= target.recursive;
            } else if let Some(ancestor) = nearest_existing(&target.dir) {
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
}

/// Starts watching `targets` on a thread of its own; `on_change` is called once per burst.
/// The watcher lives as long as the process.
pub fn spawn(
    targets: Vec<Target>,
    on_change: impl Fn() + Send + 'static,
) -> Result<(), WatchError> {
    let (tx, rx) = mpsc::channel::<notify::Result<Event>>();
    let watcher = notify::recommended_watcher(move |event| {
        let _ = tx.send(event);
    })?;
    let mut watches = Watches {
        watcher,
        targets,
        active: BTreeMap::new(),
    };
    watches.ensure();
    std::thread::Builder::new()
        .name("file-watch".into())
        .spawn(move || debounce_loop(watches, rx, on_change))?;
    Ok(())
}

fn debounce_loop(
    mut watches: Watches,
    rx: mpsc::Receiver<notify::Result<Event>>,
    on_change: impl Fn(),
) {
    let is_relevant = |event: &notify::Result<Event>| match event {
        Ok(event) => relevant(&event.kind),
        Err(_) => true,
    };
    // Blocks with no timeout between bursts: an idle tray does not wake here.
    while let Ok(event) = rx.recv() {
        if !is_relevant(&event) {
            continue;
        }
        let first = Instant::now();
        loop {
            let left = MAX_DELAY.saturating_sub(first.elapsed());
            if left.is_zero() {
                break;
            }
            match rx.recv_timeout(DEBOUNCE.min(left)) {
                Ok(_) => continue,
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
        watches.ensure();
        on_change();
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

    fn wait_for(count: &Arc<Mutex<usize>>, at_least: usize) -> usize {
        let start = Instant::now();
        while *count.lock().unwrap() < at_least && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        *count.lock().unwrap()
    }

    #[test]
    fn a_burst_is_one_change_and_a_missing_folder_is_picked_up_when_created() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        std::fs::create_dir_all(&cache).unwrap();
        let fabric = dir.path().join("share/fabric");
        let count = Arc::new(Mutex::new(0));
        let seen = Arc::clone(&count);
        spawn(
            vec![
                Target {
                    dir: cache.clone(),
                    recursive: true,
                },
                Target {
                    dir: fabric.clone(),
                    recursive: false,
                },
            ],
            move || *seen.lock().unwrap() += 1,
        )
        .unwrap();
        for i in 0..20 {
            std::fs::write(cache.join(format!("f{i}")), b"x").unwrap();
        }
        assert_eq!(wait_for(&count, 1), 1);
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(*count.lock().unwrap(), 1, "one burst, one change");
        // Reading does not count.
        let _ = std::fs::read(cache.join("f1")).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(*count.lock().unwrap(), 1);
        // The missing folder's ancestor is watched; once it exists, files in it count.
        std::fs::create_dir_all(&fabric).unwrap();
        let after_create = wait_for(&count, 2);
        assert!(after_create >= 2);
        std::fs::write(fabric.join("hub.json"), b"{}").unwrap();
        assert!(wait_for(&count, after_create + 1) > after_create);
    }
}
