//! The one list of folders whose files change what the tray and the dashboard show, and
//! which changes count. The file watcher ([`crate::file_watch`], behind the `watch` feature)
//! watches exactly these; this module only computes paths and answers questions about them,
//! so it costs the hook binary nothing.
//!
//! - our cache folder, recursively: spools (`session.json`, `board.json`, …) and `hooks.log`;
//! - our config folder: the desktop settings;
//! - Fabric's folder (`hub.json`) and its services folder (descriptors);
//! - each host's config folder, for the files our status reads there (hook entries and the
//!   `fabric` registration), so a command-line `install-host-hooks` shows at once;
//! - Claude Code's session records (`sessions/*.json`, [`companion_sessions::host_activity`]): an interrupt
//!   or a refused prompt there runs no hook, and shows only there.
//!
//! The person's home folder itself is never watched (Claude Code rewrites `~/.claude.json`
//! all the time); a registration made there shows at the next refresh.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use companion_platform::paths::Paths;

/// One folder to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchedFolder {
    pub dir: PathBuf,
    /// Its sub-folders too.
    pub recursive: bool,
    /// Only these file names count (`None`: every file). A host's folder holds much else.
    pub only: Option<Vec<OsString>>,
    /// Only names ending so count (`None`: any).
    pub suffix: Option<&'static str>,
}

impl WatchedFolder {
    fn all(dir: PathBuf, recursive: bool) -> Self {
        WatchedFolder {
            dir,
            recursive,
            only: None,
            suffix: None,
        }
    }

    fn ending(dir: PathBuf, suffix: &'static str) -> Self {
        WatchedFolder {
            dir,
            recursive: false,
            only: None,
            suffix: Some(suffix),
        }
    }

    fn files(dir: PathBuf, names: &[&str]) -> Self {
        WatchedFolder {
            dir,
            recursive: false,
            only: Some(names.iter().map(OsString::from).collect()),
            suffix: None,
        }
    }

    /// Whether a change at `path` (inside this folder) counts.
    pub fn covers(&self, path: &Path) -> bool {
        let inside = if self.recursive {
            path.starts_with(&self.dir)
        } else {
            path.parent() == Some(self.dir.as_path()) || path == self.dir
        };
        inside
            && match &self.only {
                None => true,
                Some(names) => {
                    path == self.dir
                        || path
                            .file_name()
                            .is_some_and(|n| names.iter().any(|x| x == n))
                }
            }
            && match self.suffix {
                None => true,
                Some(suffix) => {
                    path == self.dir
                        || path
                            .file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.ends_with(suffix))
                }
            }
    }
}

/// Every folder the tray and the dashboard watch.
pub fn watched_folders(paths: &Paths) -> Vec<WatchedFolder> {
    let claude_files: &[&str] = &["settings.json", ".claude.json"];
    vec![
        WatchedFolder::all(paths.cache_dir.clone(), true),
        WatchedFolder::all(paths.config_dir.clone(), false),
        WatchedFolder::all(paths.fabric_dir.clone(), false),
        WatchedFolder::all(paths.services_dir.clone(), false),
        WatchedFolder::files(paths.claude_dir(), claude_files),
        WatchedFolder::files(paths.codex_home(), &["hooks.json", "config.toml"]),
        WatchedFolder::files(paths.kimi_home(), &["config.toml", "mcp.json"]),
        WatchedFolder::ending(
            companion_sessions::host_activity::claude_sessions_dir(paths),
            ".json",
        ),
    ]
}

/// Whether a change at `path` counts for `folders`: inside one of them (and one of its
/// files), or on the way to one that does not exist yet (its creation).
pub fn counts(folders: &[WatchedFolder], path: &Path) -> bool {
    folders
        .iter()
        .any(|folder| folder.covers(path) || (folder.dir.starts_with(path) && path != folder.dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(root: &Path) -> Paths {
        Paths {
            home: root.to_path_buf(),
            fabric_dir: root.join("fabric"),
            services_dir: root.join("fabric/services"),
            cache_dir: root.join("cache"),
            data_dir: root.join("data"),
            config_dir: root.join("config"),
        }
    }

    #[test]
    fn host_folders_count_only_for_the_files_status_reads() {
        let root = Path::new("/h");
        let folders = watched_folders(&paths(root));
        let counted = |p: &str| counts(&folders, &root.join(p));
        assert!(counted("cache/sessions/s1/board.json"));
        assert!(counted("cache/hooks.log"));
        assert!(counted("config/settings.json"));
        assert!(counted("fabric/hub.json"));
        assert!(counted("fabric/services/a.default.json"));
        assert!(counted(".codex/hooks.json"));
        assert!(counted(".codex/config.toml"));
        assert!(counted(".kimi-code/config.toml"));
        assert!(counted(".claude/settings.json"));
        // A host folder appearing counts (it is on the way to a watched folder).
        assert!(counted(".codex"));
        assert!(counted("fabric"));
        // Other files in the hosts' folders and the home folder do not.
        assert!(!counted(".claude/history.jsonl"));
        assert!(!counted(".codex/sessions/x.jsonl"));
        assert!(!counted(".claude.json"));
        assert!(!counted(".bash_history"));
        assert!(!counted("config/sub/x"));
    }
}
