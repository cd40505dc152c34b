//! Pushes live changes to the page. The core's one file watcher
//! (`companion_desktop::file_watch`, over the one folder list of `companion_desktop::watched`)
//! gives each burst of changed paths; a change to `hooks.log` sends `log-appended` with only
//! the new lines, anything else sends `state-changed` naming what to re-read. Reads nothing
//! but the log; never writes.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

use companion_desktop::file_watch::{self, Changes};
use companion_desktop::watched;
use companion_platform::paths::Paths;
use serde::Serialize;
use tauri::{AppHandle, Emitter, Runtime};

use crate::log_tail::LogTail;

pub const STATE_CHANGED: &str = "state-changed";
pub const LOG_APPENDED: &str = "log-appended";

/// What the page should re-read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum StateKind {
    Status,
    Services,
    Settings,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StateChanged {
    pub kinds: Vec<StateKind>,
}

/// What a changed path means for the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meaning {
    /// `hooks.log` or `hooks.log.1`.
    Log,
    State(StateKind),
    /// Nothing the page shows (a request to the tray, a temporary file).
    Nothing,
}

/// What a changed path means for the page.
pub fn classify(paths: &Paths, settings: &Path, path: &Path) -> Meaning {
    let log = paths.hook_log();
    if path == log || path == companion_sessions::hook_log::rotated_path(&log) {
        return Meaning::Log;
    }
    if path == settings {
        return Meaning::State(StateKind::Settings);
    }
    if path.starts_with(&paths.services_dir) {
        return Meaning::State(StateKind::Services);
    }
    if path.starts_with(paths.cache_dir.join("requests")) || path.starts_with(&paths.config_dir) {
        return Meaning::Nothing;
    }
    Meaning::State(StateKind::Status)
}

/// The kinds to re-read and whether the log grew, for one burst.
pub fn sort(paths: &Paths, settings: &Path, changes: &Changes) -> (BTreeSet<StateKind>, bool) {
    let mut kinds = BTreeSet::new();
    let mut log = false;
    if changes.unknown {
        kinds.extend([StateKind::Status, StateKind::Services, StateKind::Settings]);
        log = true;
    }
    for path in &changes.paths {
        // A folder appearing on the way to the services folder: its descriptors may have come
        // before the watch on it did.
        if paths.services_dir.starts_with(path) {
            kinds.insert(StateKind::Services);
        }
        match classify(paths, settings, path) {
            Meaning::Log => log = true,
            Meaning::State(kind) => {
                kinds.insert(kind);
            }
            Meaning::Nothing => {}
        }
    }
    (kinds, log)
}

/// Starts watching. The watch lives as long as the app.
pub fn start<R: Runtime>(app: AppHandle<R>, paths: Paths, tail: Arc<Mutex<LogTail>>) {
    let _ = companion_platform::fsutil::create_private_dir(&paths.cache_dir);
    let _ = companion_platform::fsutil::create_private_dir(&paths.config_dir);
    let settings = companion_sessions::settings::settings_path(&paths);
    let folders = watched::watched_folders(&paths);
    let started = file_watch::spawn(folders, move |changes| {
        let (kinds, log) = sort(&paths, &settings, &changes);
        if log {
            let update = tail.lock().ok().and_then(|mut t| t.poll());
            if let Some(update) = update {
                let _ = app.emit(LOG_APPENDED, update);
            }
        }
        if !kinds.is_empty() {
            let _ = app.emit(
                STATE_CHANGED,
                StateChanged {
                    kinds: kinds.into_iter().collect(),
                },
            );
        }
    });
    if let Err(error) = started {
        tracing::warn!(%error, "file watch unavailable; the dashboard will not update live");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn classifies_paths() {
        let root = PathBuf::from("/h");
        let paths = Paths {
            home: root.clone(),
            fabric_dir: root.join("fabric"),
            services_dir: root.join("fabric/services"),
            cache_dir: root.join("cache"),
            data_dir: root.join("data"),
            config_dir: root.join("config"),
        };
        let settings = root.join("config/settings.json");
        let c = |p: &str| classify(&paths, &settings, &root.join(p));
        use Meaning::{Log, Nothing, State};
        assert_eq!(c("cache/hooks.log"), Log);
        assert_eq!(c("cache/hooks.log.1"), Log);
        assert_eq!(c("config/settings.json"), State(StateKind::Settings));
        assert_eq!(c("config/settings.json.tmp"), Nothing);
        assert_eq!(c("fabric/services/a.b.json"), State(StateKind::Services));
        assert_eq!(c("fabric/hub.json"), State(StateKind::Status));
        assert_eq!(c("cache/sessions/x/board.json"), State(StateKind::Status));
        assert_eq!(c("cache/requests/test-notification.json"), Nothing);
        // A host's hook config changes the status (its hook state).
        assert_eq!(c(".codex/hooks.json"), State(StateKind::Status));
        let (kinds, log) = sort(
            &paths,
            &settings,
            &Changes {
                paths: [root.join("cache/hooks.log"), root.join(".codex/hooks.json")].into(),
                unknown: false,
            },
        );
        assert!(log);
        assert_eq!(kinds.into_iter().collect::<Vec<_>>(), [StateKind::Status]);
        // Fabric's folder appearing may bring descriptors with it.
        let (kinds, log) = sort(
            &paths,
            &settings,
            &Changes {
                paths: [root.join("fabric")].into(),
                unknown: false,
            },
        );
        assert!(!log);
        assert_eq!(
            kinds.into_iter().collect::<Vec<_>>(),
            [StateKind::Status, StateKind::Services]
        );
    }
}
