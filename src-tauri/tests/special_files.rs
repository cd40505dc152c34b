//! The dashboard's commands with a special file at every path they read (issue 15): a FIFO,
//! `/dev/zero` through a symlink, a folder and a symlink loop at `hub.json`,
//! `~/.claude.json`, a service descriptor, `hooks.log`, a session's `board.json`, our
//! settings, Claude Code's `settings.json`, Codex's `config.toml` and `hooks.json`, Kimi
//! Code's `mcp.json` and `config.toml`. What each command does off the page's thread
//! (`get_status`, `read_log`, `list_services`, `plan_hooks`, `get_settings`) finishes under a
//! watchdog (a hang fails; nothing is timed) and answers what the file's absence gives,
//! except where the truth differs and is said: a host's hook config that is not a regular
//! file makes its plan an error naming what it is (never a plan to write over it), and a
//! special descriptor is listed as one that cannot be read.
//!
//! Then the login item (the person's autostart entry and the package's system entry) and the
//! tray's lock file, which `get_settings` and the dashboard's start read: each kind answers
//! under the watchdog as the file's absence does, and changing the login item never replaces
//! or removes the special file.

#![cfg(unix)] // FIFOs, /dev/zero, symlink loops

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use companion_hosts::host::Host;
use companion_hosts::install::Operation;
use companion_platform::paths::Paths;
use companion_sessions::board::BoardState;
use companion_sessions::spool::{BoardRecord, SessionId, SessionRecord, Spool};
use companion_sessions::status;
use fabric_companion::{commands, desktop, log_tail::LogTail, services};
use serde_json::{Value, json};
use test_support::files::{paths_in, write};
use test_support::special_files::{Kind, file_type};
use test_support::watchdog::on_thread;

const WATCHDOG: Duration = Duration::from_secs(30);

/// The login item is found through the environment: the person's entry under each case's
/// home (`$XDG_CONFIG_HOME` unset), the system's in `$XDG_CONFIG_DIRS`, one folder for the
/// whole test binary. Set once, before a test reads anything; the tests take turns (the
/// system folder is shared).
fn desktop_env() -> MutexGuard<'static, ()> {
    static SYSTEM: OnceLock<PathBuf> = OnceLock::new();
    static SERIAL: Mutex<()> = Mutex::new(());
    let guard = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    SYSTEM.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        // SAFETY: set while holding SERIAL, before either test reads the environment; the
        // test harness's own threads do not read it.
        unsafe {
            std::env::remove_var("XDG_CONFIG_HOME");
            std::env::set_var("XDG_CONFIG_DIRS", &dir);
        }
        dir
    });
    guard
}

fn system_config_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("XDG_CONFIG_DIRS").unwrap())
}

fn populate(paths: &Paths) {
    let home = &paths.home;
    write(
        &paths.hub_json(),
        &format!(
            r#"{{"protocol":"fabric-hub/0.1","origin":"http://127.0.0.1:47070","pid":{},"features":["session-hooks/1"]}}"#,
            std::process::id()
        ),
    );
    write(
        &home.join(".claude.json"),
        r#"{"mcpServers": {"fabric": {"command": "fabric-mcp"}}}"#,
    );
    write(
        &home.join(".codex/config.toml"),
        "[mcp_servers.fabric]\ncommand = \"fabric-mcp\"\n",
    );
    write(
        &home.join(".kimi-code/mcp.json"),
        r#"{"mcpServers": {"fabric": {"command": "fabric-mcp"}}}"#,
    );
    write(&home.join(".claude/settings.json"), r#"{"theme": "dark"}"#);
    write(&home.join(".codex/hooks.json"), r#"{"hooks": {}}"#);
    write(
        &home.join(".kimi-code/config.toml"),
        "default_model = \"k2\"\n",
    );
    // A descriptor that is not valid (so nothing is probed): listed with its reason.
    write(
        &paths.services_dir.join("zz-planted.json"),
        r#"{"schema": "fabric-service/0.1"}"#,
    );
    write(
        &paths.hook_log(),
        "2026-01-01T00:00:00Z stop claude s-1 refused fenced\n",
    );
    let spool = Spool::new(&paths.sessions_dir(), &SessionId::new("s-1").unwrap());
    spool
        .write_session(&SessionRecord {
            host: Host::Claude,
            project: "alpha".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            host_pid: std::process::id(),
            host_start_ticks: 0,
            cwd: None,
            terminal: Default::default(),
        })
        .unwrap();
    spool
        .write_board(&BoardRecord {
            unread: 3,
            state: BoardState::Ready,
            observed_at: "2026-01-01T00:00:00Z".into(),
        })
        .unwrap();
    write(
        &paths.config_dir.join("settings.json"),
        r#"{"notifications": false}"#,
    );
}

/// (name, path, which host's hook config it is)
fn targets(paths: &Paths) -> Vec<(&'static str, PathBuf, Option<Host>)> {
    let home = &paths.home;
    vec![
        ("hub.json", paths.hub_json(), None),
        (".claude.json", home.join(".claude.json"), None),
        (
            "zz-planted.json",
            paths.services_dir.join("zz-planted.json"),
            None,
        ),
        ("hooks.log", paths.hook_log(), None),
        (
            "board.json",
            paths.spool_dir("s-1").join("board.json"),
            None,
        ),
        ("our settings", paths.config_dir.join("settings.json"), None),
        (
            "claude settings.json",
            home.join(".claude/settings.json"),
            Some(Host::Claude),
        ),
        ("codex config.toml", home.join(".codex/config.toml"), None),
        (
            "codex hooks.json",
            home.join(".codex/hooks.json"),
            Some(Host::Codex),
        ),
        ("kimi mcp.json", home.join(".kimi-code/mcp.json"), None),
        (
            "kimi config.toml",
            home.join(".kimi-code/config.toml"),
            Some(Host::Kimi),
        ),
    ]
}

/// What the commands answer, as the page receives it (JSON), on a thread the watchdog
/// gives up on.
fn answers_watched(paths: &Paths, what: &str) -> Value {
    let paths = paths.clone();
    let what = format!("{what}: a dashboard command");
    on_thread(&what, WATCHDOG, move || {
        let status = status::collect(&paths, None);
        let tray_running = desktop::tray_running(&paths);
        let mut tail = LogTail::new(&paths.hook_log());
        let log = tail.snapshot();
        let poll = tail.poll().is_some();
        let services = services::list(&paths.services_dir);
        let plans: Vec<Value> = Host::ALL
            .into_iter()
            .map(
                |host| match commands::plan_view(&paths, host, Operation::Remove) {
                    Ok(plan) => json!({"ok": plan}),
                    Err(err) => json!({"error": err.to_string()}),
                },
            )
            .collect();
        let settings = commands::settings_view(&paths);
        json!({
            "status": status,
            "trayRunning": tray_running,
            "log": log,
            "polledMore": poll,
            "services": services,
            "plans": plans,
            "settings": settings,
        })
    })
}

fn scrub(value: Value, home: &Path) -> Value {
    let text = value
        .to_string()
        .replace(&home.display().to_string(), "$HOME");
    let mut value: Value = serde_json::from_str(&text).unwrap();
    // A plan's digest covers the file's path, which differs between homes.
    for plan in value["plans"].as_array_mut().unwrap() {
        if plan["ok"]["plan"].is_object() {
            plan["ok"]["plan"]["digest"] = Value::Null;
        }
    }
    value
}

/// Where two JSON values differ, one line per place.
fn diff(at: &str, got: &Value, want: &Value, out: &mut Vec<String>) {
    match (got, want) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                let (x, y) = (
                    &a.get(key).cloned().unwrap_or(Value::Null),
                    &b.get(key).cloned().unwrap_or(Value::Null),
                );
                diff(&format!("{at}/{key}"), x, y, out);
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff(&format!("{at}/{i}"), x, y, out);
            }
        }
        _ if got != want => out.push(format!("{at}: got {got}, want {want}")),
        _ => {}
    }
}

#[test]
fn the_dashboards_commands_treat_a_special_file_anywhere_as_absent_and_never_hang() {
    let _env = desktop_env();
    let probe = tempfile::tempdir().unwrap();
    let n = targets(&paths_in(probe.path())).len();
    for index in 0..n {
        let baseline = {
            let dir = tempfile::tempdir().unwrap();
            let paths = paths_in(dir.path());
            populate(&paths);
            let (name, path, _) = targets(&paths).remove(index);
            std::fs::remove_file(&path).unwrap();
            scrub(
                answers_watched(&paths, &format!("{name} absent")),
                dir.path(),
            )
        };
        for kind in Kind::NOT_REGULAR {
            let dir = tempfile::tempdir().unwrap();
            let paths = paths_in(dir.path());
            populate(&paths);
            let (name, path, hook_config) = targets(&paths).remove(index);
            kind.plant(&path);
            let what = format!("{name} as {kind:?}");
            let mut got = scrub(answers_watched(&paths, &what), dir.path());
            let mut want = baseline.clone();
            if let Some(host) = hook_config {
                let i = Host::ALL.iter().position(|h| *h == host).unwrap();
                let error = got["plans"][i]["error"].as_str().unwrap_or_default();
                assert!(
                    error.contains("not a regular file") || error.contains("symbolic links"),
                    "{what}: the plan is not an error naming the file: {}",
                    got["plans"][i]
                );
                assert_eq!(got["status"]["hosts"][i]["hooks"]["state"], "unreadable");
                got["plans"][i] = Value::Null;
                want["plans"][i] = Value::Null;
                got["status"]["hosts"][i]["hooks"] = Value::Null;
                want["status"]["hosts"][i]["hooks"] = Value::Null;
            }
            // A folder is no descriptor (skipped, as when absent); anything else is listed.
            if name == "zz-planted.json" && !matches!(kind, Kind::Directory) {
                let services = got["services"].as_array_mut().unwrap();
                let at = services
                    .iter()
                    .position(|s| s["file"] == "zz-planted.json")
                    .unwrap_or_else(|| panic!("{what}: not listed"));
                let view = services.remove(at);
                assert_eq!(view["state"], "invalid", "{what}");
                assert!(
                    view["detail"]
                        .as_str()
                        .unwrap()
                        .starts_with("The descriptor cannot be read"),
                    "{what}: {view}"
                );
            }
            if name == "hub.json" {
                // A loop is told apart as unreadable; Fabric is down either way.
                got["status"]["fabric"]["downReason"] = Value::Null;
                want["status"]["fabric"]["downReason"] = Value::Null;
            }
            let mut differences = Vec::new();
            diff("", &got, &want, &mut differences);
            assert!(
                differences.is_empty(),
                "{what}: differs from the file being absent:\n{}",
                differences.join("\n")
            );
        }
    }
    // The set-up itself is seen whole when nothing is special.
    let dir = tempfile::tempdir().unwrap();
    let paths = paths_in(dir.path());
    populate(&paths);
    let full = answers_watched(&paths, "everything present");
    assert_eq!(full["status"]["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(full["status"]["sessions"][0]["board"]["unread"], 3);
    assert_eq!(full["log"].as_array().unwrap().len(), 1);
    assert_eq!(full["services"].as_array().unwrap().len(), 1);
    assert_eq!(full["settings"]["form"]["notifications"], false);
    assert!(
        full["plans"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["ok"].is_object())
    );
}

/// Runs `f` on a thread the watchdog gives up on.
fn watched<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    on_thread(what, WATCHDOG, f)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// `~/.config/autostart/fabric-tray.desktop`.
    OwnEntry,
    /// `<$XDG_CONFIG_DIRS>/autostart/fabric-tray.desktop`.
    SystemEntry,
    /// The tray's lock in our cache folder (one of the places the dashboard looks).
    TrayLock,
}

#[test]
fn the_login_item_and_the_trays_lock_as_special_files_never_hang_the_dashboard() {
    use companion_desktop::autostart;
    let _env = desktop_env();
    let system_entry = system_config_dir()
        .join("autostart")
        .join(autostart::AUTOSTART_FILE);
    for kind in Kind::NOT_REGULAR {
        for place in [Place::OwnEntry, Place::SystemEntry, Place::TrayLock] {
            let dir = tempfile::tempdir().unwrap();
            let paths = paths_in(dir.path());
            let own_entry = autostart::autostart_file(&paths);
            assert!(own_entry.starts_with(dir.path()), "{own_entry:?}");
            let lock = paths
                .cache_dir
                .join(companion_desktop::tray_lock::LOCK_NAME);
            // The package's entry is on, the person turned it off, no tray runs.
            let _ = std::fs::remove_dir_all(system_entry.parent().unwrap());
            write(
                &system_entry,
                &autostart::autostart_text(Path::new("/usr/bin/fabric-tray")),
            );
            write(&own_entry, &autostart::hidden_text());
            write(&lock, "");
            let (path, starts_at_login) = match place {
                // Read as absent: the package's entry decides.
                Place::OwnEntry => (own_entry.clone(), true),
                // Without the person's entry, read as absent: no login item.
                Place::SystemEntry => {
                    std::fs::remove_file(&own_entry).unwrap();
                    (system_entry.clone(), false)
                }
                Place::TrayLock => (lock.clone(), false),
            };
            kind.plant(&path);
            let before = file_type(&path);
            let what = format!("{place:?} as {kind:?}");
            let read = paths.clone();
            let (view, running) = watched(&what, move || {
                (commands::settings_view(&read), desktop::tray_running(&read))
            });
            assert_eq!(view.form.launch_at_login, starts_at_login, "{what}");
            assert_eq!(view.autostart_present, starts_at_login, "{what}");
            assert!(!running, "{what}: no tray runs");
            // Turning the login item over: a special entry of the person's is never written
            // over nor removed (an error says why), any other place is left as it is.
            for enabled in [!starts_at_login, starts_at_login] {
                let change = paths.clone();
                let result = watched(&what, move || {
                    autostart::set_autostart(&change, enabled).map_err(|e| e.to_string())
                });
                if place == Place::OwnEntry && enabled != starts_at_login {
                    assert!(result.is_err(), "{what}: turning it {enabled} said nothing");
                }
                assert_eq!(file_type(&path), before, "{what}: replaced or removed");
            }
        }
    }
}
