//! The typed commands the page calls. Every fact comes from the `fabric-session` library (the
//! same files and code paths as the command line); hook installs go through the library's
//! plan → confirm → apply-with-digest path, which backs the file up before writing.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use companion_hosts::host::Host;
use companion_hosts::install::{self, Action, Entry, Operation};
use companion_platform::paths::Paths;
use companion_sessions::settings::{self, QuietHours, Settings};
use companion_sessions::status::{self, Status};
use serde::{Deserialize, Serialize};
use tauri::State;

use crate::desktop;
use crate::error::{CommandError, CommandResult};
use crate::log_tail::{LogLine, LogTail};
use crate::services::{self, ServiceView};

/// What every command shares.
pub struct AppState {
    pub paths: Paths,
    pub tail: Arc<Mutex<LogTail>>,
    /// What the command line asked to show at start, until the page takes it.
    pub open: Mutex<Option<crate::open_request::OpenRequest>>,
}

/// The numbers of what a session's last turn left changed (against HEAD, as the worker
/// measured them when it observed the turn).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TurnChanges {
    pub files_changed: Option<u64>,
    pub lines_added: Option<u64>,
    pub lines_removed: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HostFile {
    pub host: Host,
    pub file: PathBuf,
}

/// `fabric-session-status/1` plus what the dashboard adds.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StatusView {
    pub status: Status,
    /// Session id → the changes its last turn left (only sessions that had a turn).
    pub turn_changes: BTreeMap<String, TurnChanges>,
    /// Each host's hook config file.
    pub hook_files: Vec<HostFile>,
    pub tray_running: bool,
    /// The remotes the tray follows, as it last saved them (none while it is not running).
    pub remotes: Vec<crate::remotes::RemoteView>,
}

/// Runs `work` (files read, processes run) off the page's thread; its result is the command's.
pub(crate) async fn off_thread<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> CommandResult<T> {
    tauri::async_runtime::spawn_blocking(work)
        .await
        .map_err(|e| CommandError::Invalid(e.to_string()))
}

#[tauri::command]
pub async fn get_status(state: State<'_, AppState>) -> CommandResult<StatusView> {
    let paths = state.paths.clone();
    let (status, tray_running, remotes) = off_thread(move || {
        let status = status::collect(&paths, None);
        let tray_running = desktop::tray_running(&paths);
        let remotes = crate::remotes::remotes_view(&paths, tray_running);
        (status, tray_running, remotes)
    })
    .await?;
    // The numbers the worker measured when it observed each session's last turn.
    let turn_changes = status
        .sessions
        .iter()
        .filter_map(|session| {
            let turn = session.last_turn.as_ref()?;
            Some((
                session.id.clone(),
                TurnChanges {
                    files_changed: turn.files_changed.flatten(),
                    lines_added: turn.lines_added.flatten(),
                    lines_removed: turn.lines_removed.flatten(),
                },
            ))
        })
        .collect();
    let hook_files = Host::ALL
        .into_iter()
        .map(|host| HostFile {
            host,
            file: install::config_file(host, &state.paths),
        })
        .collect();
    Ok(StatusView {
        status,
        turn_changes,
        hook_files,
        tray_running,
        remotes,
    })
}

/// The program hooks should run: `None` lets the library take the package's program (this
/// dashboard is the package's) or the app's stable copy when it is installed; otherwise the
/// bundled or configured `fabric-session`.
fn script_for(paths: &Paths, op: Operation) -> CommandResult<Option<PathBuf>> {
    if op == Operation::Remove
        || companion_hosts::stable_binary::packaged_program().is_some()
        || paths.stable_binary().is_file()
    {
        return Ok(None);
    }
    found_session_binary().map(Some)
}

/// The bundled or configured `fabric-session` ([`desktop::find_session_binary`]), its absence
/// said in one line.
pub(crate) fn found_session_binary() -> CommandResult<PathBuf> {
    desktop::find_session_binary().map_err(|error| {
        CommandError::Invalid(format!(
            "cannot find the fabric-session program: {error} (set FABRIC_SESSION_BIN or install the app)"
        ))
    })
}

/// An install or removal plan as the page receives it: the library's plan
/// (`companion_hosts::install::Plan`, whose snake_case JSON is the command line's `--json`),
/// in the page's one casing.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub host: Host,
    pub operation: Operation,
    pub file: PathBuf,
    pub exists: bool,
    pub sha256: Option<String>,
    pub digest: String,
    pub action: Action,
    pub add: Vec<Entry>,
    pub remove: Vec<Entry>,
    pub add_text: String,
    pub remove_text: String,
    pub program: Option<PathBuf>,
    pub apply_command: Option<String>,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
}

impl From<install::Plan> for Plan {
    fn from(plan: install::Plan) -> Self {
        Plan {
            host: plan.host,
            operation: plan.operation,
            file: plan.file,
            exists: plan.exists,
            sha256: plan.sha256,
            digest: plan.digest,
            action: plan.action,
            add: plan.add,
            remove: plan.remove,
            add_text: plan.add_text,
            remove_text: plan.remove_text,
            program: plan.program,
            apply_command: plan.apply_command,
            warnings: plan.warnings,
            notes: plan.notes,
        }
    }
}

/// A plan, with the diff of our entries the library keeps out of its JSON.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PlanView {
    pub plan: Plan,
    pub diff: String,
    pub changes: bool,
}

impl From<install::Plan> for PlanView {
    fn from(plan: install::Plan) -> Self {
        PlanView {
            diff: plan.diff.clone(),
            changes: plan.new_text.is_some(),
            plan: plan.into(),
        }
    }
}

/// What applying did, as the page receives it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    pub file: PathBuf,
    pub backup: Option<PathBuf>,
    pub changed: bool,
    pub sha256: String,
    pub plan: Plan,
}

impl From<install::Applied> for Applied {
    fn from(applied: install::Applied) -> Self {
        Applied {
            file: applied.file,
            backup: applied.backup,
            changed: applied.changed,
            sha256: applied.sha256,
            plan: applied.plan.into(),
        }
    }
}

/// The plan of `operation` for `host`'s config, as the page shows it (writes nothing).
pub fn plan_view(paths: &Paths, host: Host, op: Operation) -> CommandResult<PlanView> {
    let script = script_for(paths, op)?;
    Ok(install::plan(host, op, script.as_deref(), paths)?.into())
}

#[tauri::command]
pub async fn plan_hooks(
    state: State<'_, AppState>,
    host: Host,
    operation: Operation,
) -> CommandResult<PlanView> {
    let paths = state.paths.clone();
    off_thread(move || plan_view(&paths, host, operation)).await?
}

#[tauri::command]
pub async fn apply_hooks(
    state: State<'_, AppState>,
    host: Host,
    operation: Operation,
    expected_sha256: String,
) -> CommandResult<Applied> {
    let op = operation;
    let paths = state.paths.clone();
    off_thread(move || {
        let script = script_for(&paths, op)?;
        let applied = install::apply(host, op, script.as_deref(), &paths, &expected_sha256)?;
        tracing::info!(
            host = host.cli_name(),
            changed = applied.changed,
            "hooks applied"
        );
        Ok(applied.into())
    })
    .await?
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LogSnapshot {
    pub path: PathBuf,
    pub rotated: PathBuf,
    pub lines: Vec<LogLine>,
}

#[tauri::command]
pub async fn read_log(state: State<'_, AppState>) -> CommandResult<LogSnapshot> {
    let tail = state.tail.clone();
    let path = state.paths.hook_log();
    let lines =
        off_thread(move || tail.lock().map(|mut t| t.snapshot()).unwrap_or_default()).await?;
    Ok(LogSnapshot {
        rotated: companion_sessions::hook_log::rotated_path(&path),
        path,
        lines,
    })
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServicesView {
    pub dir: PathBuf,
    pub services: Vec<ServiceView>,
}

#[tauri::command]
pub async fn list_services(state: State<'_, AppState>) -> CommandResult<ServicesView> {
    let dir = state.paths.services_dir.clone();
    let services = {
        let dir = dir.clone();
        off_thread(move || services::list(&dir)).await?
    };
    Ok(ServicesView { dir, services })
}

/// The settings as the page edits them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SettingsForm {
    pub watch_interval_secs: u64,
    pub notifications: bool,
    /// `HH:MM`, both or neither.
    pub quiet_start: Option<String>,
    pub quiet_end: Option<String>,
    pub launch_at_login: bool,
    /// Projects (folder names) whose sessions never notify.
    pub muted_projects: Vec<String>,
    /// Seconds a session must have needed you before it is notified.
    pub needs_you_grace_secs: u64,
    /// A turn longer than this many minutes says so when it finishes; `null`: never.
    pub long_turn_minutes: Option<u64>,
    /// Other machines the tray follows, as written (an `ssh` destination or `Host` alias,
    /// `docker:<container>`, `podman:<container>`, `wsl:<distribution>`).
    pub remotes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    pub path: PathBuf,
    pub form: SettingsForm,
    pub notifications_paused_until: Option<String>,
    pub min_interval_secs: u64,
    pub max_interval_secs: u64,
    /// The longest grace that can be set, in seconds.
    pub max_grace_secs: u64,
    pub autostart_file: PathBuf,
    pub autostart_present: bool,
    /// How notifications behave, one line per rule.
    pub rules: Vec<String>,
    /// Hosts whose "Set up hooks for …" offer the person turned off ("Don't offer again"):
    /// each can be offered again (`offer_hooks_again`).
    pub dismissed_hook_offers: Vec<Host>,
}

/// The settings as the page shows them (what `get_settings` answers).
pub fn settings_view(paths: &Paths) -> SettingsView {
    let path = settings::settings_path(paths);
    let s = settings::load(&path);
    let autostart_file = companion_desktop::autostart::location(paths);
    // The login item is the truth (the package's system entry starts the tray by default).
    let starts_at_login = companion_desktop::autostart::is_enabled(paths);
    SettingsView {
        form: SettingsForm {
            watch_interval_secs: s.watch_interval_secs,
            notifications: s.notifications,
            quiet_start: s.quiet_hours.as_ref().map(|q| q.start.clone()),
            quiet_end: s.quiet_hours.as_ref().map(|q| q.end.clone()),
            launch_at_login: starts_at_login,
            muted_projects: s.muted_projects.clone(),
            needs_you_grace_secs: s.needs_you_grace_secs,
            long_turn_minutes: s.long_turn(),
            remotes: s.remotes.clone(),
        },
        path,
        notifications_paused_until: s.notifications_paused_until,
        min_interval_secs: settings::MIN_WATCH_INTERVAL_SECS,
        max_interval_secs: settings::MAX_WATCH_INTERVAL_SECS,
        max_grace_secs: settings::MAX_NEEDS_YOU_GRACE_SECS,
        autostart_present: starts_at_login,
        autostart_file,
        rules: settings::NOTIFICATION_RULES
            .iter()
            .map(|r| r.to_string())
            .collect(),
        dismissed_hook_offers: s.dismissed_hook_offers,
    }
}

/// Checks the form and folds it into the current settings (unknown keys survive in `save`).
pub fn merge_form(current: Settings, form: &SettingsForm) -> CommandResult<Settings> {
    if form.watch_interval_secs < settings::MIN_WATCH_INTERVAL_SECS
        || form.watch_interval_secs > settings::MAX_WATCH_INTERVAL_SECS
    {
        return Err(CommandError::Invalid(format!(
            "the watch interval must be between {} seconds and 24 hours",
            settings::MIN_WATCH_INTERVAL_SECS
        )));
    }
    let blank = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let quiet_hours = match (blank(&form.quiet_start), blank(&form.quiet_end)) {
        (None, None) => None,
        (Some(start), Some(end)) => {
            if settings::parse_hh_mm(&start).is_none() || settings::parse_hh_mm(&end).is_none() {
                return Err(CommandError::Invalid(
                    "quiet hours must be times like 22:00 and 07:30".into(),
                ));
            }
            Some(QuietHours { start, end })
        }
        _ => {
            return Err(CommandError::Invalid(
                "quiet hours need both a start and an end, or neither".into(),
            ));
        }
    };
    let mut muted_projects: Vec<String> = Vec::new();
    for project in form.muted_projects.iter().map(|p| p.trim()) {
        if project.contains(['/', '\\']) {
            return Err(CommandError::Invalid(format!(
                "a muted project is a folder name, not a path: {project}"
            )));
        }
        if !project.is_empty() && !muted_projects.iter().any(|p| p == project) {
            muted_projects.push(project.to_string());
        }
    }
    if form.needs_you_grace_secs > settings::MAX_NEEDS_YOU_GRACE_SECS {
        return Err(CommandError::Invalid(format!(
            "the grace before a \"needs you\" notification must be at most {} seconds",
            settings::MAX_NEEDS_YOU_GRACE_SECS
        )));
    }
    if form
        .long_turn_minutes
        .is_some_and(|m| m == 0 || m > 24 * 60)
    {
        return Err(CommandError::Invalid(
            "a long turn is between 1 minute and 24 hours (leave it empty for never)".into(),
        ));
    }
    let remotes = crate::remotes::checked(&form.remotes).map_err(CommandError::Invalid)?;
    Ok(Settings {
        remotes,
        watch_interval_secs: form.watch_interval_secs,
        notifications: form.notifications,
        quiet_hours,
        launch_at_login: form.launch_at_login,
        muted_projects,
        needs_you_grace_secs: form.needs_you_grace_secs,
        long_turn_minutes: form.long_turn_minutes,
        ..current
    })
}

/// The view the command line asked for at start (`--view hooks --host <host>`), once.
#[tauri::command]
pub async fn take_open_request(
    state: State<'_, AppState>,
) -> CommandResult<Option<crate::open_request::OpenRequest>> {
    Ok(state.open.lock().ok().and_then(|mut open| open.take()))
}

#[tauri::command]
pub async fn get_settings(state: State<'_, AppState>) -> CommandResult<SettingsView> {
    Ok(settings_view(&state.paths))
}

#[tauri::command]
pub async fn save_settings(
    state: State<'_, AppState>,
    form: SettingsForm,
) -> CommandResult<SettingsView> {
    let paths = state.paths.clone();
    off_thread(move || {
        let path = settings::settings_path(&paths);
        let merged = merge_form(settings::load(&path), &form)?;
        settings::save(&path, &merged)?;
        companion_desktop::autostart::set_autostart(&paths, merged.launch_at_login).map_err(
            |source| CommandError::Io {
                what: "the settings were saved, but the login item could not be changed",
                source,
            },
        )?;
        Ok(settings_view(&paths))
    })
    .await?
}

/// Takes back a "Don't offer again" from the tray's hook setup offer for `host`: the tray
/// offers to set up its hooks again (while it still has `fabric` and none of our hooks).
#[tauri::command]
pub async fn offer_hooks_again(
    state: State<'_, AppState>,
    host: Host,
) -> CommandResult<SettingsView> {
    let paths = state.paths.clone();
    off_thread(move || offer_again(&paths, host)).await?
}

/// `offer_hooks_again`'s work: `host` out of the dismissed offers (the file written only
/// when it changes, atomically, every other setting kept).
pub fn offer_again(paths: &Paths, host: Host) -> CommandResult<SettingsView> {
    let path = settings::settings_path(paths);
    let mut current = settings::load(&path);
    if current.dismissed_hook_offers.contains(&host) {
        current.dismissed_hook_offers.retain(|h| *h != host);
        settings::save(&path, &current)?;
    }
    Ok(settings_view(paths))
}

/// What jumping to a session did (a session row's "Go to").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(
    tag = "outcome",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum FocusView {
    /// The window was raised: which (program, pid, window, tmux pane).
    Raised { what: String },
    /// The session's process is gone.
    Gone,
    /// No session with that id.
    Unknown,
    /// This desktop does not allow raising: why, and where the session is.
    NotAllowed { why: String, place: String },
}

impl From<Result<session_focus::Raised, session_focus::FocusError>> for FocusView {
    fn from(result: Result<session_focus::Raised, session_focus::FocusError>) -> Self {
        use session_focus::FocusError;
        match result {
            Ok(raised) => FocusView::Raised {
                what: raised.to_string(),
            },
            Err(FocusError::ProcessGone) => FocusView::Gone,
            Err(FocusError::UnknownSession) => FocusView::Unknown,
            Err(FocusError::NotAllowed { refusal, place }) => FocusView::NotAllowed {
                why: refusal.describe().to_string(),
                place: place.to_string(),
            },
        }
    }
}

/// What this desktop lacks for the tray icon and for the jump (the Overview's notice).
#[tauri::command]
pub async fn desktop_support(state: State<'_, AppState>) -> CommandResult<desktop::DesktopView> {
    let paths = state.paths.clone();
    off_thread(move || desktop::desktop_view(&paths)).await
}

/// Turns our GNOME Shell extension on: only ever on the person's click ("Turn it on");
/// what the jump's support is then, as the shell's state read back says (on, off, out of
/// date, failed with the shell's error).
#[tauri::command]
pub async fn enable_jump_extension() -> CommandResult<desktop::JumpView> {
    off_thread(|| desktop::jump_view(session_focus::enable_gnome_jump())).await
}

/// Raises the window a session runs in (the same code as `fabric-session focus` and the
/// tray's session lines).
#[tauri::command]
pub async fn focus_session(
    state: State<'_, AppState>,
    session: String,
) -> CommandResult<FocusView> {
    let paths = state.paths.clone();
    off_thread(move || {
        FocusView::from(
            crate::remotes::focus(&paths, &session)
                .unwrap_or_else(|| session_focus::focus(&paths.sessions_dir(), &session)),
        )
    })
    .await
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TestNotification {
    pub requested: bool,
    pub tray_running: bool,
}

#[tauri::command]
pub async fn send_test_notification(state: State<'_, AppState>) -> CommandResult<TestNotification> {
    desktop::request_test_notification(&state.paths).map_err(|source| CommandError::Io {
        what: "cannot ask the tray for a test notification",
        source,
    })?;
    Ok(TestNotification {
        requested: true,
        tray_running: desktop::tray_running(&state.paths),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> SettingsForm {
        SettingsForm {
            watch_interval_secs: 120,
            notifications: false,
            quiet_start: Some("22:00".into()),
            quiet_end: Some("07:30".into()),
            launch_at_login: true,
            muted_projects: vec![" noisy ".into(), "".into(), "noisy".into(), "web".into()],
            needs_you_grace_secs: 8,
            long_turn_minutes: Some(10),
            remotes: vec!["build-box".into(), " build-box".into()],
        }
    }

    #[test]
    fn form_merges_and_keeps_the_pause() {
        let current = Settings {
            notifications_paused_until: Some("2026-10-01T10:00:00Z".into()),
            ..Settings::default()
        };
        let merged = merge_form(current, &form()).unwrap();
        assert_eq!(merged.watch_interval_secs, 120);
        assert_eq!(merged.quiet_hours.unwrap().end, "07:30");
        assert_eq!(merged.muted_projects, ["noisy", "web"]);
        assert_eq!(merged.needs_you_grace_secs, 8);
        assert_eq!(merged.long_turn_minutes, Some(10));
        assert_eq!(
            merged.notifications_paused_until.as_deref(),
            Some("2026-10-01T10:00:00Z")
        );
    }

    #[test]
    fn form_refuses_bad_values() {
        let bad_interval = SettingsForm {
            watch_interval_secs: 3,
            ..form()
        };
        assert!(merge_form(Settings::default(), &bad_interval).is_err());
        let half = SettingsForm {
            quiet_end: None,
            ..form()
        };
        assert!(merge_form(Settings::default(), &half).is_err());
        let bad_time = SettingsForm {
            quiet_start: Some("25:00".into()),
            ..form()
        };
        assert!(merge_form(Settings::default(), &bad_time).is_err());
        let a_path = SettingsForm {
            muted_projects: vec!["/home/ada/web".into()],
            ..form()
        };
        assert!(merge_form(Settings::default(), &a_path).is_err());
        let long_grace = SettingsForm {
            needs_you_grace_secs: 601,
            ..form()
        };
        assert!(merge_form(Settings::default(), &long_grace).is_err());
        let zero_minutes = SettingsForm {
            long_turn_minutes: Some(0),
            ..form()
        };
        assert!(merge_form(Settings::default(), &zero_minutes).is_err());
        let none = SettingsForm {
            quiet_start: Some(" ".into()),
            quiet_end: None,
            ..form()
        };
        assert!(
            merge_form(Settings::default(), &none)
                .unwrap()
                .quiet_hours
                .is_none()
        );
    }

    /// "Don't offer again" is reversible: the dashboard lists the dismissed offers and takes
    /// one back, keeping every other setting (the tray's pause among them).
    #[test]
    fn a_dismissed_hook_offer_is_offered_again_and_nothing_else_changes() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        let paths = Paths {
            home: home.to_path_buf(),
            fabric_dir: home.join("fabric"),
            services_dir: home.join("fabric/services"),
            cache_dir: home.join("cache"),
            data_dir: home.join("data"),
            config_dir: home.join("config"),
        };
        let path = settings::settings_path(&paths);
        let before = Settings {
            dismissed_hook_offers: vec![Host::Codex, Host::Kimi],
            notifications_paused_until: Some("2026-12-05T08:00:00Z".into()),
            watch_interval_secs: 300,
            ..Settings::default()
        };
        settings::save(&path, &before).unwrap();
        assert_eq!(
            settings_view(&paths).dismissed_hook_offers,
            [Host::Codex, Host::Kimi]
        );
        let view = offer_again(&paths, Host::Codex).unwrap();
        assert_eq!(view.dismissed_hook_offers, [Host::Kimi]);
        let after = settings::load(&path);
        assert_eq!(
            after,
            Settings {
                dismissed_hook_offers: vec![Host::Kimi],
                ..before
            }
        );
        // A host not dismissed: nothing to change, nothing written.
        let written = std::fs::metadata(&path).unwrap().modified().unwrap();
        offer_again(&paths, Host::Claude).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().modified().unwrap(),
            written
        );
    }

    /// The plan the Hooks view receives holds our entries and where they go, never another
    /// value of the person's config (an `env` block's API key).
    #[test]
    fn a_plan_for_the_page_shows_no_other_value_from_the_config() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        let paths = Paths {
            home: home.to_path_buf(),
            fabric_dir: home.join("fabric"),
            services_dir: home.join("fabric/services"),
            cache_dir: home.join("cache"),
            data_dir: home.join("data"),
            config_dir: home.join("config"),
        };
        std::fs::create_dir_all(paths.stable_binary().parent().unwrap()).unwrap();
        std::fs::write(paths.stable_binary(), "").unwrap();
        let settings = install::config_file(Host::Claude, &paths);
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        std::fs::write(
            &settings,
            "{\n  \"env\": {\n    \"API_KEY\": \"secret-value-123\"\n  },\n  \"model\": \"opus\"\n}\n",
        )
        .unwrap();
        let view = plan_view(&paths, Host::Claude, Operation::Install).unwrap();
        let sent = serde_json::to_string(&view).unwrap();
        assert!(!sent.contains("secret-value-123"), "{sent}");
        assert!(!sent.contains("opus"), "{sent}");
        assert!(
            view.diff
                .starts_with("@@ in hooks.SessionStart, the first group @@\n+{"),
            "{}",
            view.diff
        );
        assert!(view.changes);
    }

    /// The docs' tray page says each notification rule in the same words as the Settings view.
    #[test]
    fn the_docs_state_every_notification_rule() {
        let page =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/desktops.md"))
                .unwrap();
        for rule in settings::NOTIFICATION_RULES {
            assert!(
                page.contains(rule),
                "docs/desktops.md lacks the rule: {rule}"
            );
        }
    }

    #[test]
    fn a_jump_reaches_the_page_typed() {
        let gone = FocusView::from(Err(session_focus::FocusError::ProcessGone));
        assert_eq!(
            serde_json::to_value(&gone).unwrap(),
            serde_json::json!({"outcome": "gone"})
        );
        let refused = FocusView::from(Err(session_focus::FocusError::NotAllowed {
            refusal: session_focus::Refusal::NoDisplay,
            place: Box::new(session_focus::Place {
                project: "p".into(),
                folder: None,
                host: Host::Claude,
                terminal: Some("xterm".into()),
                tmux: None,
                tab: None,
            }),
        }));
        assert_eq!(
            serde_json::to_value(&refused).unwrap(),
            serde_json::json!({
                "outcome": "notAllowed",
                "why": "there is no display to raise a window on",
                "place": "p (Claude Code), terminal xterm"
            })
        );
    }

    #[test]
    fn hosts_parse_by_cli_name() {
        // Commands take typed arguments: the page's strings are deserialized by serde.
        let host = |s: &str| serde_json::from_value::<Host>(serde_json::json!(s));
        let operation = |s: &str| serde_json::from_value::<Operation>(serde_json::json!(s));
        assert_eq!(host("codex").unwrap(), Host::Codex);
        assert!(host("vim").is_err());
        assert!(operation("explode").is_err());
        assert_eq!(operation("remove").unwrap(), Operation::Remove);
    }
}
