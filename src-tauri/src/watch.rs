//! Pushes live changes to the page: a `notify` watch on our cache folder (sessions, hooks.log),
//! our config folder (settings), Fabric's folder (hub.json), the services folder and the hosts'
//! config folders. Events are debounced; a change to `hooks.log` sends `log-appended` with only
//! the new lines, anything else sends `state-changed` naming what to re-read. Folders that do
//! not exist yet are added once they appear. Reads nothing but the log; never writes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use companion_core::paths::Paths;
use notify::{RecursiveMode, Watcher};
use serde::Serialize;
use tauri::{AppHandle, Emitter, Runtime};

use crate::log_tail::LogTail;

/// Quiet time gathered before one burst of events is sent.
const DEBOUNCE: Duration = Duration::from_millis(200);
/// How often folders that did not exist are looked for again.
const REARM: Duration = Duration::from_secs(2);

pub const STATE_CHANGED: &str = "state-changed";
pub const LOG_APPENDED: &str = "log-appended";

#[derive(Debug, Clone, Serialize)]
pub struct StateChanged {
    /// Any of `status`, `services`, `settings`.
    pub kinds: Vec<&'static str>,
}

/// What a changed path means for the page.
pub fn classify(paths: &Paths, settings: &Path, path: &Path) -> Option<&'static str> {
    let log = paths.hook_log();
    if path == log || path == companion_core::hook_log::rotated_path(&log) {
        return Some("log");
    }
    if path == settings {
        return Some("settings");
    }
    if path.starts_with(&paths.services_dir) {
        return Some("services");
    }
    if path.starts_with(paths.cache_dir.join("requests")) || path.starts_with(&paths.config_dir) {
        return None;
    }
    Some("status")
}

struct Target {
    path: PathBuf,
    mode: RecursiveMode,
    armed: bool,
}

/// Starts the watch thread. It lives as long as the app.
pub fn start<R: Runtime>(app: AppHandle<R>, paths: Paths, tail: Arc<Mutex<LogTail>>) {
    let _ = companion_core::fsutil::create_private_dir(&paths.cache_dir);
    let _ = companion_core::fsutil::create_private_dir(&paths.config_dir);
    let settings = companion_core::settings::settings_path(&paths);
    let (tx, rx) = mpsc::channel::<notify::Result<notify::Event>>();
    let watcher = notify::recommended_watcher(move |event| {
        let _ = tx.send(event);
    });
    let mut watcher = match watcher {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!(error = %e, "file watch unavailable; the dashboard will not update live");
            return;
        }
    };
    let mut targets: Vec<Target> = [
        (paths.cache_dir.clone(), RecursiveMode::Recursive),
        (paths.config_dir.clone(), RecursiveMode::NonRecursive),
        (paths.fabric_dir.clone(), RecursiveMode::NonRecursive),
        (paths.services_dir.clone(), RecursiveMode::NonRecursive),
        (paths.claude_dir(), RecursiveMode::NonRecursive),
        (paths.codex_home(), RecursiveMode::NonRecursive),
        (paths.kimi_home(), RecursiveMode::NonRecursive),
    ]
    .into_iter()
    .map(|(path, mode)| Target {
        path,
        mode,
        armed: false,
    })
    .collect();
    std::thread::Builder::new()
        .name("dashboard-watch".into())
        .spawn(move || {
            arm(&mut watcher, &mut targets);
            loop {
                let first = match rx.recv_timeout(REARM) {
                    Ok(event) => event,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if arm(&mut watcher, &mut targets) {
                            emit_state(&app, BTreeSet::from(["status", "services"]));
                        }
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                };
                let mut batch = vec![first];
                while let Ok(event) = rx.recv_timeout(DEBOUNCE) {
                    batch.push(event);
                }
                let mut kinds = BTreeSet::new();
                let mut log = false;
                for event in batch.into_iter().flatten() {
                    if matches!(event.kind, notify::EventKind::Access(_)) {
                        continue;
                    }
                    for path in &event.paths {
                        match classify(&paths, &settings, path) {
                            Some("log") => log = true,
                            Some(kind) => {
                                kinds.insert(kind);
                            }
                            None => {}
                        }
                    }
                }
                if arm(&mut watcher, &mut targets) {
                    kinds.insert("status");
                    kinds.insert("services");
                }
                if log {
                    let update = tail.lock().ok().and_then(|mut t| t.poll());
                    if let Some(update) = update {
                        let _ = app.emit(LOG_APPENDED, update);
                    }
                }
                if !kinds.is_empty() {
                    emit_state(&app, kinds);
                }
            }
        })
        .map(|_| ())
        .unwrap_or_else(|e| tracing::warn!(error = %e, "cannot start the watch thread"));
}

fn emit_state<R: Runtime>(app: &AppHandle<R>, kinds: BTreeSet<&'static str>) {
    let _ = app.emit(
        STATE_CHANGED,
        StateChanged {
            kinds: kinds.into_iter().collect(),
        },
    );
}

/// Adds the watches for folders that now exist; true when one was added after the start.
fn arm(watcher: &mut notify::RecommendedWatcher, targets: &mut [Target]) -> bool {
    let mut added = false;
    for target in targets.iter_mut().filter(|t| !t.armed) {
        if target.path.is_dir() && watcher.watch(&target.path, target.mode).is_ok() {
            target.armed = true;
            added = true;
        }
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(c("cache/hooks.log"), Some("log"));
        assert_eq!(c("cache/hooks.log.1"), Some("log"));
        assert_eq!(c("config/settings.json"), Some("settings"));
        assert_eq!(c("config/settings.json.tmp"), None);
        assert_eq!(c("fabric/services/a.b.json"), Some("services"));
        assert_eq!(c("fabric/hub.json"), Some("status"));
        assert_eq!(c("cache/sessions/x/board.json"), Some("status"));
        assert_eq!(c("cache/requests/test-notification.json"), None);
    }
}
