//! Small, careful file operations shared by the hooks, the spool and the installer:
//! atomic replacement that keeps a file's mode (and writes through a symlink to its target),
//! never-overwritten backups, private folders, and size-bounded reads.
//!
//! Nothing here decides *what* to write; it only makes writing safe.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

#[cfg(unix)]
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};

/// Mode for files we create that may hold anything about a session.
pub const PRIVATE_FILE_MODE: u32 = 0o600;
/// Mode for folders we create.
pub const PRIVATE_DIR_MODE: u32 = 0o700;

/// Reads at most `limit` bytes of a file; `Ok(None)` when it does not exist.
pub fn read_bounded(path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
    match File::open(path) {
        Ok(file) => {
            let mut buf = Vec::new();
            file.take(limit).read_to_end(&mut buf)?;
            Ok(Some(buf))
        }
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// Opens a file we do not own for reading without ever blocking on it: `O_NONBLOCK` (a FIFO
/// or a device answers at once instead of waiting for a writer) and `O_NOCTTY`, then checks on
/// the open descriptor that it is a regular file. `Ok(None)` when it does not exist or is
/// anything but a regular file.
pub fn open_regular(path: &Path) -> io::Result<Option<(File, fs::Metadata)>> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    let file = match options.open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err),
    };
    let meta = file.metadata()?;
    Ok(meta.is_file().then_some((file, meta)))
}

/// Reads a small JSON file; `None` when it is missing, unreadable, too large or not `T`.
pub fn read_json<T: for<'de> serde::Deserialize<'de>>(path: &Path, limit: u64) -> Option<T> {
    let bytes = read_bounded(path, limit).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// Opens (creating it with mode 0600 if needed) a file of ours for appending, or for writing
/// in place (lock files).
pub fn open_private(path: &Path, append: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    if append {
        options.append(true);
    } else {
        options.write(true);
    }
    options.create(true);
    #[cfg(unix)]
    options.mode(PRIVATE_FILE_MODE);
    options.open(path)
}

/// Creates `dir` and its missing parents, new ones with mode 0700.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(PRIVATE_DIR_MODE);
    }
    builder.create(dir)
}

/// Resolves a symlink chain so a write replaces the target and the link stays a link.
pub fn resolve_write_target(path: &Path) -> io::Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path),
        _ => Ok(path.to_path_buf()),
    }
}

/// Replaces `path` with `contents` atomically and durably: a temp file in the same folder,
/// fsync, rename, fsync of the folder. For files people own (configs, settings).
///
/// An existing file keeps its mode; a new one gets `new_mode`. A symlink is followed, so the
/// link stays and its target changes.
pub fn write_atomic(path: &Path, contents: &[u8], new_mode: u32) -> io::Result<()> {
    replace(path, contents, new_mode, Durability::Synced, || Ok(true)).map(drop)
}

/// [`write_atomic`] for a file someone else may be editing: `unchanged` is asked once more
/// just before the rename (the new text is already written and synced), and when it says the
/// file changed, nothing is replaced and `Ok(false)` comes back. The window left is the
/// rename itself.
pub fn write_atomic_unless_changed(
    path: &Path,
    contents: &[u8],
    new_mode: u32,
    unchanged: impl FnOnce() -> io::Result<bool>,
) -> io::Result<bool> {
    replace(path, contents, new_mode, Durability::Synced, unchanged)
}

/// Replaces `path` with `contents` atomically but without fsync: readers see the old or the
/// new content, never a torn one, but a power cut may lose the change. For our own cache
/// files (spools), where a hook must not wait on the disk.
pub fn replace_cached(path: &Path, contents: &[u8], new_mode: u32) -> io::Result<()> {
    replace(path, contents, new_mode, Durability::Cache, || Ok(true)).map(drop)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Durability {
    Synced,
    Cache,
}

/// Writes a temp file, then renames it over `path` if `go_ahead` still agrees; `Ok(false)`
/// when it did not (the temp file is removed).
fn replace(
    path: &Path,
    contents: &[u8],
    new_mode: u32,
    durability: Durability,
    go_ahead: impl FnOnce() -> io::Result<bool>,
) -> io::Result<bool> {
    let target = resolve_write_target(path)?;
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mode = match fs::metadata(&target) {
        Ok(meta) => mode_of(&meta),
        Err(err) if err.kind() == io::ErrorKind::NotFound => new_mode,
        Err(err) => return Err(err),
    };
    #[cfg(unix)]
    let keep_mode = durability == Durability::Synced;
    // Windows: the new file takes its folder's ACL; there is no mode bit to carry over.
    #[cfg(not(unix))]
    let _ = mode;
    let file_name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let temp = dir.join(format!(
        ".{file_name}.{}.{}.tmp",
        std::process::id(),
        unique_suffix()
    ));
    let result = (|| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        options.mode(mode);
        let mut file = options.open(&temp)?;
        // The umask may have narrowed the mode; a person's file gets exactly its old mode back.
        #[cfg(unix)]
        if keep_mode {
            file.set_permissions(fs::Permissions::from_mode(mode))?;
        }
        file.write_all(contents)?;
        if durability == Durability::Synced {
            file.sync_all()?;
        }
        drop(file);
        if !go_ahead()? {
            let _ = fs::remove_file(&temp);
            return Ok(false);
        }
        fs::rename(&temp, &target)?;
        if durability == Durability::Synced {
            sync_dir(dir);
        }
        Ok(true)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Copies `path` to a backup beside it, `<file>.<UTC stamp>.bak`, never overwriting an
/// earlier backup (a second one in the same second gets `.1`, `.2`, … before `.bak`).
/// Returns the backup's path. The backup keeps the file's mode.
pub fn backup_file(path: &Path, stamp: &str) -> io::Result<PathBuf> {
    let target = resolve_write_target(path)?;
    let contents = fs::read(&target)?;
    let mode = mode_of(&fs::metadata(&target)?);
    #[cfg(not(unix))]
    let _ = mode;
    let base = target.as_os_str().to_string_lossy().into_owned();
    for n in 0..1000u32 {
        let candidate = if n == 0 {
            PathBuf::from(format!("{base}.{stamp}.bak"))
        } else {
            PathBuf::from(format!("{base}.{stamp}.{n}.bak"))
        };
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        options.mode(mode);
        match options.open(&candidate) {
            Ok(mut file) => {
                file.write_all(&contents)?;
                file.sync_all()?;
                return Ok(candidate);
            }
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(err),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "too many backups in the same second",
    ))
}

/// The permission bits of a file (0o600 where there are none to read).
pub fn mode_of(meta: &fs::Metadata) -> u32 {
    #[cfg(unix)]
    {
        meta.permissions().mode() & 0o7777
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        PRIVATE_FILE_MODE
    }
}

fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(handle) = File::open(dir) {
        let _ = handle.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// A number unlikely to repeat, for temporary names (nanoseconds mixed with a counter).
pub(crate) fn unique_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    nanos ^ (COUNTER.fetch_add(1, Ordering::Relaxed) << 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn atomic_write_keeps_mode_and_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        fs::write(&real, b"old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new", PRIVATE_FILE_MODE).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&real).unwrap(), b"new");
        assert_eq!(mode_of(&fs::metadata(&real).unwrap()), 0o640);
    }

    #[test]
    fn new_file_gets_private_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.json");
        write_atomic(&path, b"{}", PRIVATE_FILE_MODE).unwrap();
        assert_eq!(mode_of(&fs::metadata(&path).unwrap()), 0o600);
    }

    #[test]
    fn backups_in_the_same_second_never_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        fs::write(&path, b"one").unwrap();
        let first = backup_file(&path, "20261202T101010Z").unwrap();
        fs::write(&path, b"two").unwrap();
        let second = backup_file(&path, "20261202T101010Z").unwrap();
        assert_ne!(first, second);
        assert_eq!(fs::read(&first).unwrap(), b"one");
        assert_eq!(fs::read(&second).unwrap(), b"two");
    }
}
