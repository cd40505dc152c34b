//! The one table of hostile file kinds (issue 15) a test plants where a config or spool file
//! is expected: a FIFO (an open for reading blocks), `/dev/zero` through a symlink (a read
//! never ends), a folder, a symlink loop, and a regular file of mode 000. [`Kind::plant`]
//! puts one at a path (replacing a file there); [`Kind::still_there`] says whether it was
//! left as planted (nothing replaced it or wrote through it).

use std::os::unix::fs::FileTypeExt;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Fifo,
    DevZero,
    Directory,
    SymlinkLoop,
    /// A regular file of mode 000 (readable all the same when running as root).
    Unreadable,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 5] = [
        Kind::Fifo,
        Kind::DevZero,
        Kind::Directory,
        Kind::SymlinkLoop,
        Kind::Unreadable,
    ];

    /// The kinds that are not a regular file (what a file-type check must catch).
    pub const NOT_REGULAR: [Kind; 4] = [
        Kind::Fifo,
        Kind::DevZero,
        Kind::Directory,
        Kind::SymlinkLoop,
    ];

    /// Puts this kind of file at `path` (its folder made; a file there removed first). The
    /// unreadable file holds a Fabric registration, so reading it would matter.
    pub fn plant(self, path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(path);
        match self {
            Kind::Fifo => {
                let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
                // SAFETY: a NUL-terminated path; mkfifo only creates the file.
                let made = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
                assert_eq!(made, 0, "mkfifo {}", path.display());
            }
            Kind::DevZero => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
            Kind::Directory => std::fs::create_dir(path).unwrap(),
            Kind::SymlinkLoop => std::os::unix::fs::symlink(path, path).unwrap(),
            Kind::Unreadable => {
                use std::os::unix::fs::PermissionsExt;
                std::fs::write(path, "{\"mcpServers\": {\"fabric\": {}}}").unwrap();
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o000)).unwrap();
            }
        }
    }

    /// Whether `path` is still what was planted there.
    pub fn still_there(self, path: &Path) -> bool {
        let Some(file_type) = file_type(path) else {
            return false;
        };
        match self {
            Kind::Fifo => file_type.is_fifo(),
            Kind::DevZero | Kind::SymlinkLoop => file_type.is_symlink(),
            Kind::Directory => file_type.is_dir(),
            Kind::Unreadable => file_type.is_file(),
        }
    }
}

/// The type of the file at `path` itself (a link not followed); `None` when there is none.
pub fn file_type(path: &Path) -> Option<std::fs::FileType> {
    std::fs::symlink_metadata(path).ok().map(|m| m.file_type())
}

/// `/dev/zero` is still a device (once a write followed a link to it and renamed over it).
pub fn dev_zero_is_a_device() -> bool {
    file_type(Path::new("/dev/zero")).is_some_and(|t| t.is_char_device())
}

/// Whether this process runs as root (to whom mode 000 is readable: [`Kind::Unreadable`]
/// then proves nothing).
pub fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
