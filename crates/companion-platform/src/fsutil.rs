//! Small, careful file operations shared by the hooks, the spool and the installer:
//! atomic replacement that keeps a file's mode (and writes through a symlink to its target),
//! never-overwritten backups, private folders, and size-bounded reads.
//!
//! It owns the one way to read a file we do not own ([`open_regular`], [`read_bounded`]):
//! never block on it (a FIFO, a device), never read more than a stated bound, and treat
//! anything but a regular file as absent, reported once by name and kind (never content).
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

/// What a path we meant to read turned out to be when it is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Fifo,
    Socket,
    Device,
    Directory,
    Other,
    /// It could not be opened at all: a symlink loop, no permission.
    Unreadable,
}

impl Special {
    fn of(file_type: fs::FileType) -> Special {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if file_type.is_fifo() {
                return Special::Fifo;
            }
            if file_type.is_socket() {
                return Special::Socket;
            }
            if file_type.is_char_device() || file_type.is_block_device() {
                return Special::Device;
            }
        }
        if file_type.is_dir() {
            Special::Directory
        } else {
            Special::Other
        }
    }

    /// One word for the log.
    pub fn word(self) -> &'static str {
        match self {
            Special::Fifo => "fifo",
            Special::Socket => "socket",
            Special::Device => "device",
            Special::Directory => "directory",
            Special::Other => "special",
            Special::Unreadable => "unreadable",
        }
    }
}

impl std::fmt::Display for Special {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Special::Fifo => "a named pipe",
            Special::Socket => "a socket",
            Special::Device => "a device",
            Special::Directory => "a folder",
            Special::Other => "not a regular file",
            Special::Unreadable => "unreadable",
        })
    }
}

/// A file we do not own, opened without blocking.
pub enum Opened {
    File(File, fs::Metadata),
    Missing,
    Special(Special),
}

/// Who hears about a special file met where a regular one was expected (the hook binary
/// logs one line to `hooks.log`); set once per process. Only the file's name and kind are
/// passed on: never its content.
static SKIP_REPORTER: std::sync::OnceLock<fn(&str, Special)> = std::sync::OnceLock::new();
static REPORTED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Sets the process's [`SKIP_REPORTER`]; later calls are ignored.
pub fn report_skipped_with(reporter: fn(&str, Special)) {
    let _ = SKIP_REPORTER.set(reporter);
}

fn report_skipped(path: &Path, special: Special) {
    let Some(reporter) = SKIP_REPORTER.get() else {
        return;
    };
    {
        let Ok(mut seen) = REPORTED.lock() else {
            return;
        };
        if seen.iter().any(|p| p == path) || seen.len() >= 64 {
            return;
        }
        seen.push(path.to_path_buf());
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    reporter(&name, special);
}

/// Opens a file we do not own for reading without ever blocking on it. A path that already
/// names anything but a regular file (after symlinks) is not opened at all, so a device is
/// never opened; otherwise the open is `O_NONBLOCK | O_NOCTTY` (a FIFO swapped in meanwhile
/// answers at once instead of waiting for a writer) and the open descriptor is checked to be
/// a regular file. On Windows there is no FIFO in the file system; the same two checks keep
/// devices (`NUL`, `CON`) and pipe handles out.
pub fn open_checked(path: &Path) -> io::Result<Opened> {
    match fs::metadata(path) {
        Ok(meta) if !meta.is_file() => return Ok(Opened::Special(Special::of(meta.file_type()))),
        Ok(_) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Opened::Missing),
        Err(err) => return Err(err),
    }
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    let file = match options.open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Opened::Missing),
        Err(err) => return Err(err),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(Opened::Special(Special::of(meta.file_type())));
    }
    Ok(Opened::File(file, meta))
}

/// [`open_checked`] for readers that treat a special file as absent: `Ok(None)` when it does
/// not exist or is anything but a regular file (reported once, see [`report_skipped_with`]).
pub fn open_regular(path: &Path) -> io::Result<Option<(File, fs::Metadata)>> {
    let opened = open_checked(path).inspect_err(|_| report_skipped(path, Special::Unreadable))?;
    match opened {
        Opened::File(file, meta) => Ok(Some((file, meta))),
        Opened::Missing => Ok(None),
        Opened::Special(special) => {
            report_skipped(path, special);
            Ok(None)
        }
    }
}

/// Reads at most `limit` bytes of a file we do not own, never blocking ([`open_regular`]);
/// `Ok(None)` when it does not exist or is not a regular file.
pub fn read_bounded(path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let Some((file, _)) = open_regular(path)? else {
        return Ok(None);
    };
    read_all(file, limit).map(Some)
}

/// [`read_bounded`] for a file we are about to replace (a host's config): a special file is
/// an error (`InvalidInput`, naming what it is), never "absent", so nothing is written over it.
pub fn read_bounded_strict(path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
    match open_checked(path)? {
        Opened::File(file, _) => read_all(file, limit).map(Some),
        Opened::Missing => Ok(None),
        Opened::Special(special) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {special}, not a regular file"),
        )),
    }
}

/// The whole lines among the last `limit` bytes (at most) of a log we do not own, never
/// blocking; `None` when it is missing, special or unreadable. A line cut by the start of the
/// window is left out, and so is a last line without its newline: a writer may be part way
/// through it (readers take no lock, and a concurrent read can see half an append).
pub fn read_tail(path: &Path, limit: u64) -> Option<Vec<u8>> {
    use std::io::{Seek, SeekFrom};
    let (mut file, meta) = open_regular(path).ok()??;
    let len = meta.len();
    let cut = len > limit;
    if cut {
        file.seek(SeekFrom::Start(len - limit)).ok()?;
    }
    let mut bytes = read_all(file, limit).ok()?;
    let Some(last) = bytes.iter().rposition(|&b| b == b'\n') else {
        return Some(Vec::new());
    };
    bytes.truncate(last + 1);
    if cut {
        let first = bytes.iter().position(|&b| b == b'\n').unwrap_or(0);
        bytes.drain(..=first);
    }
    Some(bytes)
}

fn read_all(file: File, limit: u64) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    file.take(limit).read_to_end(&mut buf)?;
    Ok(buf)
}

/// Reads a small JSON file; `None` when it is missing, unreadable, too large or not `T`.
pub fn read_json<T: for<'de> serde::Deserialize<'de>>(path: &Path, limit: u64) -> Option<T> {
    let bytes = read_bounded(path, limit).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// Opens (creating it with mode 0600 if needed) a file of ours for appending, or for writing
/// in place (lock files). Never blocks: the open is `O_NONBLOCK | O_NOCTTY` (a FIFO planted
/// there fails at once instead of waiting for a reader), and anything but a regular file is
/// refused (`InvalidInput`) before a byte is written.
pub fn open_private(path: &Path, append: bool) -> io::Result<File> {
    // A device is refused before it is ever opened.
    if let Ok(meta) = fs::metadata(path)
        && !meta.is_file()
    {
        let special = Special::of(meta.file_type());
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {special}, not a regular file"),
        ));
    }
    let mut options = OpenOptions::new();
    if append {
        options.append(true);
    } else {
        options.write(true);
    }
    options.create(true);
    #[cfg(unix)]
    options
        .mode(PRIVATE_FILE_MODE)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    let file = options.open(path).map_err(named_pipe_without_reader)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        let special = Special::of(meta.file_type());
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {special}, not a regular file"),
        ));
    }
    Ok(file)
}

/// Appends `bytes` to a file opened for appending, whole or not at all: when the write fails
/// part way (a full disk), the file is cut back to its length before, so no torn line is left
/// for the next append to run into. The caller holds whatever lock keeps other writers out.
pub fn append_whole(file: &File, bytes: &[u8]) -> io::Result<()> {
    let before = file.metadata()?.len();
    let mut writer = file;
    match writer.write_all(bytes) {
        Ok(()) => Ok(()),
        Err(err) => {
            let _ = file.set_len(before);
            Err(err)
        }
    }
}

/// A FIFO with no reader answers ENXIO to a non-blocking open for writing: say what it is.
fn named_pipe_without_reader(err: io::Error) -> io::Error {
    #[cfg(unix)]
    if err.raw_os_error() == Some(libc::ENXIO) {
        return io::Error::new(io::ErrorKind::InvalidInput, "it is a named pipe");
    }
    err
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
    // A person's file is replaced through its symlink (the link stays); our own cache file is
    // replaced where it is, so a symlink planted in a spool never sends a write elsewhere.
    let target = match durability {
        Durability::Synced => resolve_write_target(path)?,
        Durability::Cache => path.to_path_buf(),
    };
    // Only a regular file is ever replaced: a rename over a device, a FIFO or a socket (say a
    // link to `/dev/zero`) would destroy it.
    let replaceable = |meta: &fs::Metadata| {
        meta.is_file() || (durability == Durability::Cache && meta.is_symlink())
    };
    match fs::symlink_metadata(&target) {
        Ok(meta) if !replaceable(&meta) => {
            let special = Special::of(meta.file_type());
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("it is {special}, not a regular file"),
            ));
        }
        _ => {}
    }
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mode = match fs::symlink_metadata(&target) {
        Ok(meta) if meta.is_file() => mode_of(&meta),
        Ok(_) => new_mode,
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

/// Deletes the regular file `path` unless it changed: it is first renamed aside (atomically,
/// in its folder), then `unchanged` reads the moved file; when that says it changed, it is
/// put back and `Ok(false)` comes back. A symlink, a folder or a special file at `path` is an
/// error and stays.
pub fn remove_unless_changed(
    path: &Path,
    unchanged: impl FnOnce(&Path) -> io::Result<bool>,
) -> io::Result<bool> {
    let meta = fs::symlink_metadata(path)?;
    if !meta.is_file() {
        let special = Special::of(meta.file_type());
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {special}, not a regular file"),
        ));
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let aside = dir.join(format!(
        ".{file_name}.{}.{}.removing",
        std::process::id(),
        unique_suffix()
    ));
    fs::rename(path, &aside)?;
    match unchanged(&aside) {
        Ok(true) => {
            fs::remove_file(&aside)?;
            sync_dir(dir);
            Ok(true)
        }
        other => {
            // Back where it was, unless someone has put a new file there meanwhile: then the
            // moved one stays beside it, named in the error.
            if fs::symlink_metadata(path).is_err() {
                fs::rename(&aside, path)?;
            } else {
                return Err(io::Error::other(format!(
                    "the file changed while it was being removed; the earlier one is {}",
                    aside.display()
                )));
            }
            other.map(|_| false)
        }
    }
}

/// Copies `path` to a backup beside it, `<file>.<UTC stamp>.bak`, never overwriting an
/// earlier backup (a second one in the same second gets `.1`, `.2`, … before `.bak`).
/// Returns the backup's path. The backup keeps the file's mode.
pub fn backup_file(path: &Path, stamp: &str) -> io::Result<PathBuf> {
    let target = resolve_write_target(path)?;
    let (mut file, meta) = match open_checked(&target)? {
        Opened::File(file, meta) => (file, meta),
        Opened::Missing => return Err(io::Error::from(io::ErrorKind::NotFound)),
        Opened::Special(special) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("it is {special}, not a regular file"),
            ));
        }
    };
    let mut contents = Vec::new();
    file.read_to_end(&mut contents)?;
    let mode = mode_of(&meta);
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
                // A backup is whole or absent: a partial one (a full disk) is removed.
                let written = file.write_all(&contents).and_then(|()| file.sync_all());
                if let Err(err) = written {
                    drop(file);
                    let _ = fs::remove_file(&candidate);
                    return Err(err);
                }
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
pub fn unique_suffix() -> u64 {
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
    fn fifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    #[cfg(unix)]
    fn is_fifo(path: &Path) -> bool {
        use std::os::unix::fs::FileTypeExt;
        fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
    }

    /// A tail holds whole lines only: not the one its window cuts, not one still being written.
    #[test]
    fn a_tail_holds_whole_lines_only() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("hook.log");
        fs::write(&log, "first line\nsecond line\nthird, half writ").unwrap();
        assert_eq!(read_tail(&log, 1024).unwrap(), b"first line\nsecond line\n");
        assert_eq!(read_tail(&log, 30).unwrap(), b"second line\n");
        fs::write(&log, "no newline yet").unwrap();
        assert_eq!(read_tail(&log, 1024).unwrap(), b"");
    }

    /// Reads of a FIFO (no writer: a blocking open would wait forever), a folder and a device
    /// answer "absent" at once; the strict read names what the file is.
    #[cfg(unix)]
    #[test]
    fn special_files_read_as_absent_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("pipe.json");
        fifo(&pipe);
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        for path in [&pipe, &zero, &dir.path().to_path_buf()] {
            assert!(read_bounded(path, 1024).unwrap().is_none(), "{path:?}");
            assert!(read_tail(path, 1024).is_none());
            let err = read_bounded_strict(path, 1024).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        }
        assert!(matches!(
            open_checked(&pipe).unwrap(),
            Opened::Special(Special::Fifo)
        ));
        assert!(matches!(
            open_checked(&zero).unwrap(),
            Opened::Special(Special::Device)
        ));
        let looped = dir.path().join("loop.json");
        std::os::unix::fs::symlink(&looped, &looped).unwrap();
        assert!(read_bounded(&looped, 1024).is_err());
        // Appends never block on a FIFO either, and never write into one.
        let err = open_private(&pipe, true).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(open_private(&zero, true).is_err());
        assert!(is_fifo(&pipe));
    }

    /// The defect the special-file tests found: a spool file that was a symlink to
    /// `/dev/zero` made the worker's cache write rename over the device itself. A cache write
    /// now replaces the link, and a person's file is only ever replaced when it is regular.
    #[cfg(unix)]
    #[test]
    fn writes_never_replace_a_special_file_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("pipe");
        fifo(&pipe);
        let link = dir.path().join("board.json");
        std::os::unix::fs::symlink(&pipe, &link).unwrap();
        replace_cached(&link, b"{}", PRIVATE_FILE_MODE).unwrap();
        assert!(is_fifo(&pipe), "the FIFO was replaced");
        assert_eq!(fs::read(&link).unwrap(), b"{}");
        assert!(!fs::symlink_metadata(&link).unwrap().is_symlink());

        let config = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&pipe, &config).unwrap();
        let err = write_atomic(&config, b"{}", PRIVATE_FILE_MODE).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(is_fifo(&pipe));
        assert!(fs::symlink_metadata(&config).unwrap().is_symlink());
        assert!(backup_file(&config, "20260101T000000Z").is_err());
        let err = write_atomic(&pipe, b"{}", PRIVATE_FILE_MODE).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(is_fifo(&pipe));
        let leftovers = fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 3, "no temp file left behind");
    }

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
