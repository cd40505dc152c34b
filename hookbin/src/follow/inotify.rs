//! (Linux) The folders `status --json --follow` watches, through inotify itself (the hook
//! binary never links `notify`): the one list of `companion_desktop::watched`, each folder
//! watched alone; below a recursive one (our cache folder) its sub-folders to two levels (the
//! sessions folder, each session's folder), added as they appear, at most
//! [`MAX_SUB_FOLDERS`]; a folder that does not exist yet is waited for through its nearest
//! existing ancestor, where only the one name on the way counts. A lost event (the queue
//! overflowed) or a watched folder gone means everything is watched anew. It only says that
//! something counted changed; the caller reads the status again.

use std::collections::HashMap;
use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use companion_desktop::watched::WatchedFolder;

/// The most sub-folders (sessions) watched below the recursive folders; beyond it the watch is
/// incomplete and the caller reads the status again on a timer.
pub const MAX_SUB_FOLDERS: usize = 512;
/// How deep below a recursive folder: `<cache>/sessions/<id>`.
const TREE_DEPTH: usize = 2;
/// What a watched folder reports: its entries made, removed, renamed or written, and its own end.
const FOLDER_MASK: u32 = libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_CLOSE_WRITE
    | libc::IN_MODIFY
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR;
/// What an ancestor of a missing folder reports: a name appearing, and its own end.
const WAIT_MASK: u32 = libc::IN_CREATE
    | libc::IN_MOVED_TO
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR;
/// The fixed part of `struct inotify_event`: wd, mask, cookie, len.
const EVENT_HEADER: usize = 16;

/// One inotify watch: a folder, in every role it has (one inode gives one watch).
#[derive(Debug, Default)]
struct Watch {
    path: PathBuf,
    /// The watched folders it is, or is below (their filters say which names count).
    folders: Vec<usize>,
    /// Below a recursive folder: how many levels of sub-folders are still watched under it.
    tree_depth: Option<usize>,
    /// A sub-folder (counted against [`MAX_SUB_FOLDERS`]).
    sub: bool,
    /// Names on the way to a folder that does not exist yet.
    waiting_for: Vec<OsString>,
}

/// The inotify instance and its watches.
pub struct Watcher {
    fd: OwnedFd,
    folders: Vec<WatchedFolder>,
    watches: HashMap<i32, Watch>,
    sub_folders: usize,
    /// A sub-folder was left unwatched (the cap, or the kernel's limit on watches).
    incomplete: bool,
}

impl Watcher {
    /// Watches `folders` (and what is below the recursive ones). Fails only when inotify
    /// itself is refused (the limit on instances).
    pub fn new(folders: Vec<WatchedFolder>) -> io::Result<Watcher> {
        let mut watcher = Watcher {
            fd: new_instance()?,
            folders,
            watches: HashMap::new(),
            sub_folders: 0,
            incomplete: false,
        };
        watcher.add_all();
        Ok(watcher)
    }

    /// The descriptor to poll for input.
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Some folder could not be watched: changes there are seen only on a timer.
    pub fn incomplete(&self) -> bool {
        self.incomplete
    }

    /// Reads every pending event (never blocks); whether any counts.
    pub fn read(&mut self) -> bool {
        let mut changed = false;
        let mut rebuild = false;
        let mut to_add: Vec<(PathBuf, Vec<usize>, usize)> = Vec::new();
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            // SAFETY: the buffer is valid for its length; the descriptor is ours.
            let n = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    buffer.as_mut_ptr().cast(),
                    buffer.len(),
                )
            };
            if n < 0 {
                match io::Error::last_os_error().raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EAGAIN) => break,
                    // Anything else: start over.
                    _ => {
                        rebuild = true;
                        changed = true;
                        break;
                    }
                }
            }
            let n = usize::try_from(n).unwrap_or(0);
            if n == 0 {
                break;
            }
            let mut at = 0;
            while at + EVENT_HEADER <= n {
                let word = |i: usize| {
                    let b = &buffer[at + i * 4..at + i * 4 + 4];
                    u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
                };
                let wd = word(0) as i32;
                let mask = word(1);
                let len = word(3) as usize;
                let name_bytes =
                    &buffer[(at + EVENT_HEADER).min(n)..(at + EVENT_HEADER + len).min(n)];
                let end = name_bytes
                    .iter()
                    .position(|&b| b == 0)
                    .unwrap_or(name_bytes.len());
                let name = OsStr::from_bytes(&name_bytes[..end]);
                at += EVENT_HEADER + len;
                let outcome = self.event(wd, mask, name);
                changed |= outcome.changed;
                rebuild |= outcome.rebuild;
                if let Some(add) = outcome.add {
                    to_add.push(add);
                }
            }
        }
        if rebuild {
            self.rebuild();
        } else {
            for (path, folders, depth) in to_add {
                self.add_sub(&path, &folders, depth);
            }
        }
        changed
    }

    /// What one event means.
    fn event(&mut self, wd: i32, mask: u32, name: &OsStr) -> Outcome {
        let mut outcome = Outcome::default();
        if mask & libc::IN_Q_OVERFLOW != 0 {
            outcome.changed = true;
            outcome.rebuild = true;
            return outcome;
        }
        if mask & libc::IN_IGNORED != 0 {
            // The watch is gone (its folder removed): a sub-folder is simply dropped, anything
            // else is watched anew (or waited for).
            if let Some(watch) = self.watches.remove(&wd) {
                outcome.changed = true;
                if watch.sub {
                    self.sub_folders = self.sub_folders.saturating_sub(1);
                    outcome.rebuild = self.incomplete;
                } else {
                    outcome.rebuild = true;
                }
            }
            return outcome;
        }
        let Some(watch) = self.watches.get(&wd) else {
            return outcome;
        };
        if mask & (libc::IN_DELETE_SELF | libc::IN_MOVE_SELF) != 0 {
            outcome.changed = true;
            outcome.rebuild = !watch.sub;
            return outcome;
        }
        if name.is_empty() {
            outcome.changed = !watch.folders.is_empty();
            return outcome;
        }
        if watch.waiting_for.iter().any(|n| n == name) {
            outcome.changed = true;
            outcome.rebuild = true;
        }
        let path = watch.path.join(name);
        if watch.folders.iter().any(|&i| self.folders[i].covers(&path)) {
            outcome.changed = true;
        }
        let appeared =
            mask & libc::IN_ISDIR != 0 && mask & (libc::IN_CREATE | libc::IN_MOVED_TO) != 0;
        if let Some(depth) = watch
            .tree_depth
            .filter(|&d| d > 0 && appeared && visible(name))
        {
            outcome.add = Some((path, watch.folders.clone(), depth - 1));
        }
        outcome
    }

    /// Everything watched anew on a new instance (the old one's watches go with it).
    fn rebuild(&mut self) {
        match new_instance() {
            Ok(fd) => self.fd = fd,
            // Keep the old instance: its watches still hold where the folders remain.
            Err(_) => {
                self.incomplete = true;
                return;
            }
        }
        self.watches.clear();
        self.sub_folders = 0;
        self.incomplete = false;
        self.add_all();
    }

    fn add_all(&mut self) {
        for index in 0..self.folders.len() {
            let dir = self.folders[index].dir.clone();
            match self.add(&dir, FOLDER_MASK) {
                Ok(wd) => {
                    let watch = self.watches.get_mut(&wd).expect("just added");
                    watch.folders.push(index);
                    if self.folders[index].recursive {
                        watch.tree_depth = Some(TREE_DEPTH);
                        self.add_children(&dir, &[index], TREE_DEPTH);
                    }
                }
                Err(err) if err.raw_os_error() == Some(libc::ENOSPC) => self.incomplete = true,
                Err(_) => self.wait_for(&dir),
            }
        }
    }

    /// Watches the nearest existing ancestor of a missing folder for the name on the way.
    fn wait_for(&mut self, dir: &Path) {
        let mut child = dir;
        while let Some(parent) = child.parent() {
            let Some(name) = child.file_name() else {
                return;
            };
            match self.add(parent, WAIT_MASK) {
                Ok(wd) => {
                    let watch = self.watches.get_mut(&wd).expect("just added");
                    watch.waiting_for.push(name.to_os_string());
                    return;
                }
                Err(err) if err.raw_os_error() == Some(libc::ENOSPC) => {
                    self.incomplete = true;
                    return;
                }
                Err(_) => child = parent,
            }
        }
    }

    /// A sub-folder that appeared, and what is already below it.
    fn add_sub(&mut self, dir: &Path, folders: &[usize], depth: usize) {
        if self.sub_folders >= MAX_SUB_FOLDERS {
            self.incomplete = true;
            return;
        }
        match self.add(dir, FOLDER_MASK) {
            Ok(wd) => {
                let watch = self.watches.get_mut(&wd).expect("just added");
                // Already watched (in this role or as a listed folder): nothing more to do.
                if watch.sub || !watch.folders.is_empty() {
                    return;
                }
                self.sub_folders += 1;
                watch.sub = true;
                watch.folders = folders.to_vec();
                watch.tree_depth = Some(depth);
                self.add_children(dir, folders, depth);
            }
            Err(err) if err.raw_os_error() == Some(libc::ENOSPC) => self.incomplete = true,
            // Gone again already, or not a folder.
            Err(_) => {}
        }
    }

    fn add_children(&mut self, dir: &Path, folders: &[usize], depth: usize) {
        if depth == 0 {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && visible(&entry.file_name()) {
                self.add_sub(&entry.path(), folders, depth - 1);
            }
        }
    }

    /// One `inotify_add_watch` (masks of one inode added together).
    fn add(&mut self, dir: &Path, mask: u32) -> io::Result<i32> {
        let c_path = CString::new(dir.as_os_str().as_bytes()).map_err(io::Error::other)?;
        // SAFETY: a valid descriptor and a NUL-terminated path.
        let wd = unsafe {
            libc::inotify_add_watch(
                self.fd.as_raw_fd(),
                c_path.as_ptr(),
                mask | libc::IN_MASK_ADD,
            )
        };
        if wd < 0 {
            return Err(io::Error::last_os_error());
        }
        self.watches.entry(wd).or_insert_with(|| Watch {
            path: dir.to_path_buf(),
            ..Watch::default()
        });
        Ok(wd)
    }
}

/// What one event asks for.
#[derive(Debug, Default)]
struct Outcome {
    changed: bool,
    rebuild: bool,
    add: Option<(PathBuf, Vec<usize>, usize)>,
}

/// Not a hidden name (a spool being removed is renamed to one).
fn visible(name: &OsStr) -> bool {
    !name.as_bytes().starts_with(b".")
}

fn new_instance() -> io::Result<OwnedFd> {
    // SAFETY: no pointers; the result is checked.
    let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
