//! The tray's snapshot with a special file at every path it reads (issue 15): a FIFO,
//! `/dev/zero` through a symlink, a folder and a symlink loop at `hub.json`, `~/.claude.json`,
//! a service descriptor, `hooks.log`, a session's `board.json`, our settings, Claude Code's
//! `settings.json`, Codex's `config.toml` and `hooks.json`, Kimi Code's `mcp.json` and
//! `config.toml`. Each read finishes under a watchdog (a hang fails the test; nothing is
//! timed) and gives the snapshot the file's absence gives, except that a host's hook config
//! that is not a regular file shows as unreadable (never "not installed", which would invite
//! an install over it).
//!
//! Then the tray program itself (the real binary, under a watchdog) with each kind of special
//! file at its single-instance lock: it never hangs in the open, never uses or replaces the
//! file, and exits non-zero with one line naming the lock.

#![cfg(unix)] // FIFOs, /dev/zero, symlink loops

use std::path::{Path, PathBuf};
use std::time::Duration;

use companion_hosts::host::Host;
use companion_hosts::install::HookStateKind;
use companion_platform::paths::Paths;
use companion_sessions::board::BoardState;
use companion_sessions::spool::{BoardRecord, SessionId, SessionRecord, Spool};
use fabric_tray::model::{FabricLine, Snapshot};
use test_support::files::{paths_in, write};
use test_support::special_files::{Kind, file_type};
use test_support::watchdog::{on_thread, run_watched};

const WATCHDOG: Duration = Duration::from_secs(20);

/// Everything the snapshot reads, present and meaningful.
fn populate(paths: &Paths, now: i64) {
    let home = &paths.home;
    fabric_fake::write_hub(&paths.fabric_dir, &["session-hooks/1"], std::process::id()).unwrap();
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
    write(
        &paths.services_dir.join("zz-planted.json"),
        r#"{"schema": "fabric-service/0.1", "name": "notes", "origin": "http://127.0.0.1:47100"}"#,
    );
    let stamp = fabric_tray::clock::format_rfc3339(now - 60);
    write(
        &paths.hook_log(),
        &format!("{stamp} stop claude s-1 refused fenced\n"),
    );
    let id = SessionId::new("s-1").unwrap();
    let spool = Spool::new(&paths.sessions_dir(), &id);
    spool
        .write_session(&SessionRecord {
            host: Host::Claude,
            project: "alpha".into(),
            started_at: stamp.clone(),
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
            observed_at: stamp,
        })
        .unwrap();
    write(
        &paths.config_dir.join("settings.json"),
        r#"{"notifications": true}"#,
    );
}

/// (name, path, a host's hook config)
fn targets(paths: &Paths) -> Vec<(&'static str, PathBuf, bool)> {
    let home = &paths.home;
    vec![
        ("hub.json", paths.hub_json(), false),
        (".claude.json", home.join(".claude.json"), false),
        (
            "descriptor",
            paths.services_dir.join("zz-planted.json"),
            false,
        ),
        ("hooks.log", paths.hook_log(), false),
        (
            "board.json",
            paths.spool_dir("s-1").join("board.json"),
            false,
        ),
        (
            "our settings",
            paths.config_dir.join("settings.json"),
            false,
        ),
        (
            "claude settings.json",
            home.join(".claude/settings.json"),
            true,
        ),
        ("codex config.toml", home.join(".codex/config.toml"), false),
        ("codex hooks.json", home.join(".codex/hooks.json"), true),
        ("kimi mcp.json", home.join(".kimi-code/mcp.json"), false),
        (
            "kimi config.toml",
            home.join(".kimi-code/config.toml"),
            true,
        ),
    ]
}

/// The tray's snapshot, read on a thread the watchdog gives up on.
fn snapshot_watched(paths: &Paths, now: i64, what: &str) -> Snapshot {
    let paths = paths.clone();
    on_thread(
        &format!("{what}: the tray's snapshot"),
        WATCHDOG,
        move || fabric_tray::snapshot::read(&paths, now),
    )
}

#[test]
fn the_trays_snapshot_treats_a_special_file_anywhere_as_absent_and_never_hangs() {
    let now = fabric_tray::clock::now_unix();
    let probe = tempfile::tempdir().unwrap();
    let n = targets(&paths_in(probe.path())).len();
    for index in 0..n {
        let baseline = {
            let dir = tempfile::tempdir().unwrap();
            let paths = paths_in(dir.path());
            populate(&paths, now);
            let (name, path, _) = targets(&paths).remove(index);
            std::fs::remove_file(&path).unwrap();
            snapshot_watched(&paths, now, &format!("{name} absent"))
        };
        for kind in Kind::NOT_REGULAR {
            let dir = tempfile::tempdir().unwrap();
            let paths = paths_in(dir.path());
            populate(&paths, now);
            let (name, path, hook_config) = targets(&paths).remove(index);
            kind.plant(&path);
            let what = format!("{name} as {kind:?}");
            let mut snap = snapshot_watched(&paths, now, &what);
            if hook_config {
                let unreadable: Vec<_> = snap
                    .hosts
                    .iter()
                    .filter(|h| h.hooks == HookStateKind::Unreadable)
                    .collect();
                assert_eq!(unreadable.len(), 1, "{what}: {:?}", snap.hosts);
                for (got, want) in snap.hosts.iter_mut().zip(&baseline.hosts) {
                    got.hooks = want.hooks;
                }
            }
            // A loop at hub.json is told apart as unreadable; Fabric is down either way.
            if let (Kind::SymlinkLoop, FabricLine::Down { reason }) = (kind, &mut snap.fabric)
                && reason == "hub.json unreadable"
            {
                *reason = "no hub.json".into();
            }
            assert_eq!(snap, baseline, "{what}: differs from the file being absent");
        }
    }
    // A sanity check of the set-up: with everything present the snapshot sees it all.
    let dir = tempfile::tempdir().unwrap();
    let paths = paths_in(dir.path());
    populate(&paths, now);
    let full = snapshot_watched(&paths, now, "everything present");
    assert!(full.recent_failure);
    assert!(full.hosts.iter().all(|h| h.registered));
    assert_eq!(full.sessions.len(), 1);
    assert_eq!(full.sessions[0].unread, Some(3));
}

/// Runs the real `fabric-tray` with `home` as its home and `runtime` as `$XDG_RUNTIME_DIR`
/// (no display, no session bus); gives up on it (killed, then a failure) after the watchdog.
fn run_tray_watched(home: &Path, runtime: &Path, what: &str) -> std::process::Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_fabric-tray"));
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_RUNTIME_DIR", runtime)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"));
    run_watched(command, b"", &format!("{what}: the tray"), WATCHDOG)
}

#[test]
fn a_special_file_at_the_trays_lock_makes_the_tray_exit_with_one_line_never_hang() {
    let kinds = Kind::NOT_REGULAR;
    // Each start looks for a tray host for a few seconds first: the kinds run side by side.
    let runs: Vec<_> = kinds
        .into_iter()
        .map(|kind| {
            std::thread::spawn(move || {
                let dir = tempfile::tempdir().unwrap();
                let home = dir.path().join("home");
                let runtime = dir.path().join("run");
                std::fs::create_dir_all(&home).unwrap();
                std::fs::create_dir_all(&runtime).unwrap();
                let lock = runtime.join(companion_desktop::tray_lock::LOCK_NAME);
                kind.plant(&lock);
                let before = file_type(&lock);
                let what = format!("the tray's lock as {kind:?}");
                let out = run_tray_watched(&home, &runtime, &what);
                let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
                assert!(!out.status.success(), "{what}: exited 0: {stderr}");
                let lines: Vec<&str> = stderr
                    .lines()
                    .filter(|l| l.starts_with("fabric-tray:"))
                    .collect();
                assert_eq!(lines.len(), 1, "{what}: one line of error: {stderr}");
                assert!(
                    lines[0].contains(&lock.display().to_string()),
                    "{what}: the line names the lock: {stderr}"
                );
                assert_eq!(file_type(&lock), before, "{what}: the file was replaced");
                if let Kind::Fifo | Kind::DevZero | Kind::Directory = kind {
                    assert!(
                        lines[0].contains("not a regular file"),
                        "{what}: the line says what is wrong: {stderr}"
                    );
                }
            })
        })
        .collect();
    for run in runs {
        if let Err(panic) = run.join() {
            std::panic::resume_unwind(panic);
        }
    }
}
