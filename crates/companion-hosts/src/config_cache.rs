//! What we concluded from a large config file we do not own, kept under our cache folder and
//! keyed by the file's identity (device, inode, size, modification and change times in
//! nanoseconds), so a hook answers from a few bytes instead of re-reading megabytes.
//!
//! A verdict is served only while the file is provably the one it came from:
//! - any edit changes the change time (which nobody can set back), a replace changes the
//!   inode, a file that goes or appears has no identity or a new one;
//! - a file modified within [`RACY_WINDOW`] of the moment it was read is never trusted:
//!   timestamps tick coarsely (a jiffy on Linux, two seconds on FAT), so a second edit in
//!   the same tick would keep every field; such a verdict is recomputed until the file has
//!   been quiet for the window (git calls this the racy-clean problem);
//! - a cache written "in the future" (the clock went back since) is not trusted either.
//!
//! It stores digests of paths, never a path or a value from the file. It never decides what
//! a verdict is: callers pass the computation in.

use std::collections::BTreeMap;
use std::fs::{File, Metadata};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use sha2::{Digest, Sha256};

use companion_platform::fsutil;

/// A file modified this close to when it was read is not trusted from the cache.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);
/// The cache file's name in our cache folder.
const CACHE_FILE: &str = "config-verdicts.json";
/// The cache file is small; anything larger is not ours.
const CACHE_LIMIT: u64 = 256 * 1024;
/// Verdicts kept (one per config file; a handful of files exist).
const MAX_ENTRIES: usize = 32;
const FORMAT: u32 = 1;

/// Who a file is, as far as its metadata can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileIdentity {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
}

impl FileIdentity {
    /// The identity of an opened (or stat-ed) file.
    pub fn of(meta: &Metadata) -> Self {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ns =
                |secs: i64, nanos: i64| secs.saturating_mul(1_000_000_000).saturating_add(nanos);
            FileIdentity {
                dev: meta.dev(),
                ino: meta.ino(),
                size: meta.size(),
                mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
                ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            }
        }
        #[cfg(not(unix))]
        {
            // No inode or change time in std here: size, write and creation times.
            FileIdentity {
                dev: 0,
                ino: 0,
                size: meta.len(),
                mtime_ns: meta.modified().map(unix_ns).unwrap_or(0),
                ctime_ns: meta.created().map(unix_ns).unwrap_or(0),
            }
        }
    }
}

fn unix_ns(at: SystemTime) -> i64 {
    match at.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

/// A short hex digest of a path: how the cache names files and projects without naming them.
pub fn path_digest(path: &Path) -> String {
    let digest = Sha256::digest(path.as_os_str().as_encoded_bytes());
    digest.iter().take(16).map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    identity: FileIdentity,
    read_at_ns: i64,
    verdict: serde_json::Value,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    format: u32,
    #[serde(default)]
    files: BTreeMap<String, Entry>,
}

/// Where a verdict came from (tests check the cache is really used).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Cache,
    File,
}

/// The verdict cache in one cache folder.
#[derive(Debug, Clone)]
pub struct ConfigCache {
    file: PathBuf,
}

impl ConfigCache {
    pub fn new(cache_dir: &Path) -> Self {
        ConfigCache {
            file: cache_dir.join(CACHE_FILE),
        }
    }

    /// The verdict for the opened `file` at `path`: from the cache when `meta` still names
    /// the file it was computed from, else `compute(&file)`, stored for next time when the
    /// file has been quiet long enough to be trusted.
    pub fn verdict<V: Serialize + DeserializeOwned>(
        &self,
        path: &Path,
        file: &mut File,
        meta: &Metadata,
        compute: impl FnOnce(&mut File) -> V,
    ) -> (V, Source) {
        self.verdict_at(path, file, meta, compute, unix_ns(SystemTime::now()))
    }

    /// [`ConfigCache::verdict`] as if the clock read `now` (nanoseconds since the epoch).
    fn verdict_at<V: Serialize + DeserializeOwned>(
        &self,
        path: &Path,
        file: &mut File,
        meta: &Metadata,
        compute: impl FnOnce(&mut File) -> V,
        now: i64,
    ) -> (V, Source) {
        let identity = FileIdentity::of(meta);
        let key = path_digest(path);
        let mut cache = self.load();
        if let Some(entry) = cache.files.get(&key)
            && trusted(entry, &identity, now)
            && let Ok(verdict) = serde_json::from_value::<V>(entry.verdict.clone())
        {
            return (verdict, Source::Cache);
        }
        let verdict = compute(file);
        if quiet_long_enough(&identity, now)
            && let Ok(value) = serde_json::to_value(&verdict)
        {
            cache.format = FORMAT;
            cache.files.insert(
                key,
                Entry {
                    identity,
                    read_at_ns: now,
                    verdict: value,
                },
            );
            while cache.files.len() > MAX_ENTRIES {
                let oldest = cache
                    .files
                    .iter()
                    .min_by_key(|(_, e)| e.read_at_ns)
                    .map(|(k, _)| k.clone());
                if let Some(oldest) = oldest {
                    cache.files.remove(&oldest);
                }
            }
            self.save(&cache);
        }
        (verdict, Source::File)
    }

    fn load(&self) -> CacheFile {
        fsutil::read_json::<CacheFile>(&self.file, CACHE_LIMIT)
            .filter(|c| c.format == FORMAT)
            .unwrap_or_default()
    }

    /// Best effort: a cache that cannot be written only costs the next hook a read.
    fn save(&self, cache: &CacheFile) {
        let Some(dir) = self.file.parent() else {
            return;
        };
        if fsutil::create_private_dir(dir).is_err() {
            return;
        }
        if let Ok(mut text) = serde_json::to_vec(cache) {
            text.push(b'\n');
            let _ = fsutil::replace_cached(&self.file, &text, fsutil::PRIVATE_FILE_MODE);
        }
    }
}

fn window_ns() -> i64 {
    i64::try_from(RACY_WINDOW.as_nanos()).unwrap_or(i64::MAX)
}

/// The file had not been touched for the racy window when it was read.
fn quiet_long_enough(identity: &FileIdentity, now: i64) -> bool {
    identity
        .mtime_ns
        .max(identity.ctime_ns)
        .saturating_add(window_ns())
        < now
}

fn trusted(entry: &Entry, identity: &FileIdentity, now: i64) -> bool {
    entry.identity == *identity
        && entry.read_at_ns <= now
        && entry
            .identity
            .mtime_ns
            .max(entry.identity.ctime_ns)
            .saturating_add(window_ns())
            < entry.read_at_ns
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn age(path: &Path, secs: u64) {
        let at = SystemTime::now() - Duration::from_secs(secs);
        File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(at)
            .unwrap();
    }

    fn count_fabric(file: &mut File) -> usize {
        let mut text = String::new();
        file.read_to_string(&mut text).unwrap();
        text.matches("fabric").count()
    }

    fn look(cache: &ConfigCache, path: &Path) -> (usize, Source) {
        let mut file = File::open(path).unwrap();
        let meta = file.metadata().unwrap();
        cache.verdict(path, &mut file, &meta, count_fabric)
    }

    /// A look as if made well after the racy window (a change time cannot be set back).
    fn look_later(cache: &ConfigCache, path: &Path) -> (usize, Source) {
        let mut file = File::open(path).unwrap();
        let meta = file.metadata().unwrap();
        let later = unix_ns(SystemTime::now() + RACY_WINDOW + Duration::from_secs(5));
        cache.verdict_at(path, &mut file, &meta, count_fabric, later)
    }

    #[test]
    fn a_fresh_file_is_read_each_time_until_it_has_been_quiet() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ConfigCache::new(&dir.path().join("cache"));
        let config = dir.path().join("config.json");
        std::fs::write(&config, "fabric").unwrap();
        assert_eq!(look(&cache, &config), (1, Source::File));
        assert_eq!(look(&cache, &config), (1, Source::File), "racy: not cached");
        // The file's last change (ctime) is now; only time makes it quiet. Simulate by
        // checking the rule directly rather than sleeping.
        let meta = std::fs::metadata(&config).unwrap();
        let identity = FileIdentity::of(&meta);
        assert!(!quiet_long_enough(&identity, unix_ns(SystemTime::now())));
        assert!(quiet_long_enough(
            &identity,
            unix_ns(SystemTime::now() + RACY_WINDOW + Duration::from_millis(10))
        ));
    }

    #[test]
    fn the_cache_never_outlives_an_edit_a_replace_or_a_file_that_goes() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ConfigCache::new(&dir.path().join("cache"));
        let config = dir.path().join("config.json");
        std::fs::write(&config, "fabric fabric").unwrap();
        // Make the file quiet: its change time is what counts, so write the entry by hand as
        // if it had been read long after the last change.
        let seed = |cache: &ConfigCache, path: &Path, verdict: usize| {
            let meta = std::fs::metadata(path).unwrap();
            let identity = FileIdentity::of(&meta);
            let mut file = CacheFile {
                format: FORMAT,
                ..Default::default()
            };
            file.files.insert(
                path_digest(path),
                Entry {
                    identity,
                    read_at_ns: identity.ctime_ns.max(identity.mtime_ns) + window_ns() + 1,
                    verdict: serde_json::json!(verdict),
                },
            );
            cache.save(&file);
        };
        seed(&cache, &config, 2);
        assert_eq!(look_later(&cache, &config), (2, Source::Cache));

        // An edit in place that keeps the size and even the modification time.
        let before = std::fs::metadata(&config).unwrap().modified().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let mut f = File::options().write(true).open(&config).unwrap();
        f.write_all(b"fabriX fabric").unwrap();
        f.set_modified(before).unwrap();
        drop(f);
        assert_eq!(look_later(&cache, &config), (1, Source::File), "edit seen");

        // A replace by rename, same size, the old times put back.
        seed(&cache, &config, 1);
        assert_eq!(look_later(&cache, &config).1, Source::Cache);
        let other = dir.path().join("new.json");
        std::fs::write(&other, "fabric fabriX").unwrap();
        File::options()
            .write(true)
            .open(&other)
            .unwrap()
            .set_modified(before)
            .unwrap();
        std::fs::rename(&other, &config).unwrap();
        assert_eq!(look_later(&cache, &config).1, Source::File, "replace seen");

        // Gone: nothing to open, so nothing is served; back again: read.
        seed(&cache, &config, 7);
        std::fs::remove_file(&config).unwrap();
        assert!(File::open(&config).is_err());
        std::fs::write(&config, "fabric").unwrap();
        age(&config, 60);
        assert_eq!(
            look_later(&cache, &config),
            (1, Source::File),
            "a new file is read"
        );
    }

    #[test]
    fn a_cache_from_the_future_is_not_trusted() {
        let identity = FileIdentity {
            dev: 1,
            ino: 2,
            size: 3,
            mtime_ns: 10,
            ctime_ns: 10,
        };
        let entry = Entry {
            identity,
            read_at_ns: 100 + window_ns(),
            verdict: serde_json::json!(1),
        };
        assert!(trusted(&entry, &identity, 200 + window_ns()));
        assert!(!trusted(&entry, &identity, 50), "written after now");
        let racy = Entry {
            read_at_ns: 11,
            ..entry
        };
        assert!(!trusted(&racy, &identity, 200 + window_ns()));
    }

    #[test]
    fn a_quiet_file_is_cached_under_a_digest_only() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ConfigCache::new(&dir.path().join("cache"));
        let config = dir.path().join("secret-project-name.json");
        std::fs::write(&config, "fabric").unwrap();
        let later = unix_ns(SystemTime::now() + RACY_WINDOW + Duration::from_secs(1));
        let at = |now| {
            let mut file = File::open(&config).unwrap();
            let meta = file.metadata().unwrap();
            cache.verdict_at(&config, &mut file, &meta, count_fabric, now)
        };
        assert_eq!(at(later), (1, Source::File));
        assert_eq!(at(later + 1), (1, Source::Cache));
        let text = std::fs::read_to_string(dir.path().join("cache").join(CACHE_FILE)).unwrap();
        assert!(!text.contains("secret-project-name"), "{text}");
        assert!(text.contains(&path_digest(&config)), "{text}");
    }
}
