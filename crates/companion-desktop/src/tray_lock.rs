//! One tray per person: the tray's lock file, `fabric-tray.lock`, in the runtime folder
//! (`$XDG_RUNTIME_DIR` when set, absolute and present), else in our cache folder. The tray
//! holds an exclusive lock on it for as long as it runs ([`acquire`]; the operating system
//! drops it when the process ends, however it ends), and the dashboard asks [`tray_running`]
//! with the same code, so both always agree on where the lock is and what holding it means.
//!
//! It never writes anything into the lock file and never removes it. The lock is opened the
//! careful way ([`fsutil`]): never blocking (`O_NONBLOCK | O_NOCTTY`), and anything at its
//! path that is not a regular file (a FIFO, a device, a folder) is refused and left as it is.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use companion_platform::env_vars;
use companion_platform::fsutil;
use companion_platform::paths::Paths;

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
    // Created 0600 if missing, never truncated; a special file is an error naming what it is.
    let file = fsutil::open_private(path, false).map_err(io)?;
    match file.try_lock() {
        Ok(()) => Ok(TrayLock {
            _file: file,
            path: path.to_path_buf(),
        }),
        Err(TryLockError::WouldBlock) => Err(LockError::Held(path.to_path_buf())),
        Err(TryLockError::Error(source)) => Err(io(source)),
    }
}

/// Whether another process holds the lock at `path` (a missing file, or anything but a
/// regular file, is not held). Testing takes the lock for an instant and gives it back at
/// once; the file is only ever opened for reading, without blocking.
pub fn is_held(path: &Path) -> bool {
    let Ok(Some((file, _))) = fsutil::open_regular(path) else {
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

    /// A FIFO (a blocking open would wait for a reader forever), `/dev/zero` through a
    /// symlink, a folder and a symlink loop at the lock: taking it fails at once with an
    /// error naming the lock, testing it says "not held" at once, and the file stays as it was.
    #[cfg(unix)]
    #[test]
    fn a_special_file_at_the_lock_is_refused_at_once_and_left_as_it_is() {
        use std::sync::mpsc;
        use std::time::Duration;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).unwrap();
        let looped = dir.path().join("loop");
        std::os::unix::fs::symlink(&looped, &looped).unwrap();
        for path in [fifo, zero, folder, looped] {
            let kind = std::fs::symlink_metadata(&path).unwrap().file_type();
            let (tx, rx) = mpsc::channel();
            let probe = path.clone();
            std::thread::spawn(move || {
                let _ = tx.send((acquire(&probe).map(drop), is_held(&probe)));
            });
            let (taken, held) = rx
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("{path:?}: the lock hung"));
            let err = taken.expect_err("a special file was taken as the lock");
            assert!(
                err.to_string().contains(&path.display().to_string()),
                "{path:?}: {err}"
            );
            assert!(!held, "{path:?}");
            assert_eq!(
                std::fs::symlink_metadata(&path).unwrap().file_type(),
                kind,
                "{path:?} was replaced"
            );
        }
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
