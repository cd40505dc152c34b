//! Which hosts' config files our install created, so that removing our entries from one of
//! them gives back what was there before: no file (not `{}`, not a backup of our own
//! entries).
//!
//! The record is `<data dir>/created-configs.json`, `{"files": ["<path as named>", …]}`: an
//! install that creates a file adds it, a removal that deletes it takes it out. A file a
//! person had before our install is never in it, so a removal leaves their file (an empty
//! `{}` of theirs included) as it was. Reading or writing the record never stops an install
//! or a removal: without it, a removal writes the emptied file as before.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use companion_platform::fsutil;
use companion_platform::paths::Paths;

/// The record's file name in our data folder.
const RECORD_FILE: &str = "created-configs.json";
/// The record never comes near this.
const RECORD_LIMIT: u64 = 256 * 1024;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    files: Vec<PathBuf>,
}

fn record_path(paths: &Paths) -> PathBuf {
    paths.data_dir.join(RECORD_FILE)
}

fn read(paths: &Paths) -> Record {
    fsutil::read_bounded(&record_path(paths), RECORD_LIMIT)
        .ok()
        .flatten()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

fn write(paths: &Paths, record: &Record) -> std::io::Result<()> {
    let path = record_path(paths);
    if record.files.is_empty() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    fsutil::create_private_dir(&paths.data_dir)?;
    let text = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
    fsutil::write_atomic(&path, &text, fsutil::PRIVATE_FILE_MODE)
}

/// Whether our install created `file` (and no removal has deleted it since).
pub(crate) fn was_created(paths: &Paths, file: &Path) -> bool {
    read(paths).files.iter().any(|f| f == file)
}

/// Notes that our install created `file`. Best effort: a record we cannot write only means a
/// later removal leaves the emptied file.
pub(crate) fn remember(paths: &Paths, file: &Path) {
    let mut record = read(paths);
    if !record.files.iter().any(|f| f == file) {
        record.files.push(file.to_path_buf());
        let _ = write(paths, &record);
    }
}

/// Takes `file` out of the record (a removal deleted it).
pub(crate) fn forget(paths: &Paths, file: &Path) {
    let mut record = read(paths);
    let before = record.files.len();
    record.files.retain(|f| f != file);
    if record.files.len() != before {
        let _ = write(paths, &record);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use companion_platform::paths::BaseFolders;
    use companion_platform::platform::Os;

    #[test]
    fn remembers_and_forgets_files() {
        let dir = tempfile::tempdir().unwrap();
        let base = BaseFolders {
            home: dir.path().to_path_buf(),
            data: dir.path().join("data"),
            data_local: dir.path().join("data"),
            cache: dir.path().join("cache"),
            config: dir.path().join("config"),
        };
        let paths = Paths::layout(Os::Linux, &base);
        let a = dir.path().join(".codex/hooks.json");
        let b = dir.path().join(".claude/settings.json");
        assert!(!was_created(&paths, &a));
        remember(&paths, &a);
        remember(&paths, &a);
        remember(&paths, &b);
        assert!(was_created(&paths, &a) && was_created(&paths, &b));
        forget(&paths, &a);
        assert!(!was_created(&paths, &a) && was_created(&paths, &b));
        forget(&paths, &b);
        assert!(!record_path(&paths).exists(), "an empty record is no file");
        // A record that does not parse counts as empty and is replaced.
        std::fs::write(record_path(&paths), b"not json").unwrap();
        assert!(!was_created(&paths, &a));
        remember(&paths, &a);
        assert!(was_created(&paths, &a));
    }
}
