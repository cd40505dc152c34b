//! One tray per person: the tray's lock file, `fabric-tray.lock`, in the runtime folder
//! (`$XDG_RUNTIME_DIR` when set, absolute and present), else in our cache folder. The tray
//! holds an exclusive lock on it for as long as it runs ([`acquire`]; the operating system
//! drops it when the process ends, however it ends), and the dashboard asks [`tray_running`]
//! with the same code, so both always agree on where the lock is and what holding it means.
//!
//! It never writes anything into the lock file and never removes it.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use crate::env_vars;
use crate::paths::Paths;

/// The lock file's name.
pub const LOCK_NAME: &str = "fabric-tray.lock";

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("another fabric-tray is already running (lock {0})")]
    Held(PathBuf),
    #[error("cannot open the lock file {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The held lock; dropping it releases the lock.
#[derive(Debug)]
pub struct TrayLock {
    _file: File,
    path: PathBuf,
}

impl TrayLock {
    /// Where the lock is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The runtime folder, when `$XDG_RUNTIME_DIR` names an existing absolute folder.
fn runtime_dir() -> Option<PathBuf> {
    env_vars::path_var(env_vars::XDG_RUNTIME_DIR).filter(|dir| dir.is_absolute() && dir.is_dir())
}

/// Where the tray takes its lock: the runtime folder, else `paths.cache_dir`.
pub fn lock_path(paths: &Paths) -> PathBuf {
    runtime_dir()
        .unwrap_or_else(|| paths.cache_dir.clone())
        .join(LOCK_NAME)
}

/// Every place a running tray's lock can be: [`lock_path`] first, then the cache folder (a
/// tray started from another environment, say without `$XDG_RUNTIME_DIR`, locked that one).
pub fn lock_candidates(paths: &Paths) -> Vec<PathBuf> {
    let mut out = vec![lock_path(paths)];
    let cache = paths.cache_dir.join(LOCK_NAME);
    if !out.contains(&cache) {
        out.push(cache);
    }
    out
}

/// Takes the lock at `path`, without waiting (the folder is created if needed).
pub fn acquire(path: &Path) -> Result<TrayLock, LockError> {
    let io = |source| LockError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => Ok(TrayLock {
            _file: file,
            path: path.to_path_buf(),
        }),
        Err(TryLockError::WouldBlock) => Err(LockError::Held(path.to_path_buf())),
        Err(TryLockError::Error(source)) => Err(io(source)),
    }
}

/// Whether another process holds the lock at `path` (a missing file is not held). Testing
/// takes the lock for an instant and gives it back at once.
pub fn is_held(path: &Path) -> bool {
    let Ok(file) = OpenOptions::new().write(true).open(path) else {
        return false;
    };
    matches!(file.try_lock(), Err(TryLockError::WouldBlock))
}

/// Whether a tray runs for this person: one of [`lock_candidates`] is held.
pub fn tray_running(paths: &Paths) -> bool {
    lock_candidates(paths).iter().any(|path| is_held(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run").join(LOCK_NAME);
        let first = acquire(&path).unwrap();
        assert!(matches!(acquire(&path), Err(LockError::Held(_))));
        drop(first);
        assert!(acquire(&path).is_ok());
    }

    #[test]
    fn an_unlocked_or_missing_lock_file_is_not_locked() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join(LOCK_NAME);
        assert!(!is_held(&lock));
        std::fs::write(&lock, "").unwrap();
        assert!(!is_held(&lock));
        let held = acquire(&lock).unwrap();
        assert!(is_held(&lock));
        drop(held);
        assert!(!is_held(&lock));
    }

    #[test]
    fn the_cache_folder_is_always_a_candidate() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths {
            home: dir.path().into(),
            fabric_dir: dir.path().join("fabric"),
            services_dir: dir.path().join("fabric/services"),
            cache_dir: dir.path().join("cache"),
            data_dir: dir.path().join("data"),
            config_dir: dir.path().join("config"),
        };
        let candidates = lock_candidates(&paths);
        assert_eq!(candidates.first(), Some(&lock_path(&paths)));
        assert_eq!(candidates.last(), Some(&paths.cache_dir.join(LOCK_NAME)));
        assert!(!tray_running(&paths));
        let held = acquire(&paths.cache_dir.join(LOCK_NAME)).unwrap();
        assert!(tray_running(&paths));
        drop(held);
        assert!(!tray_running(&paths));
    }
}
