//! One tray per person: an exclusive lock on `fabric-tray.lock` in the runtime folder
//! (`$XDG_RUNTIME_DIR`), else in our cache folder. The lock lives as long as the returned file;
//! the operating system drops it when the process ends, however it ends.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

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

/// Where the lock file goes: `$XDG_RUNTIME_DIR` when set and present, else `cache_dir`.
pub fn lock_path(cache_dir: &Path) -> PathBuf {
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute() && dir.is_dir())
        .unwrap_or_else(|| cache_dir.to_path_buf())
        .join(LOCK_NAME)
}

/// Takes the lock at `path`, without waiting.
pub fn acquire(path: &Path) -> Result<File, LockError> {
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
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(LockError::Held(path.to_path_buf())),
        Err(TryLockError::Error(source)) => Err(io(source)),
    }
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
}
