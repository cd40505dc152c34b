//! Reads one [`crate::model::Snapshot`]: the library's status, the settings, and
//! whether a hook logged a failure in the last hour. The reduction itself ([`reduce`]) is
//! pure; [`read`] only gathers the inputs.

use std::path::Path;

use companion_platform::paths::Paths;
use companion_sessions::hook_log;
use companion_sessions::hub::DownReason;
use companion_sessions::session_state::{self, SessionState};
use companion_sessions::settings::{self, Settings};
use companion_sessions::status::{self, FabricRunState, SessionHooks, Status};

use crate::clock;
use crate::model::{FabricLine, HostView, SessionView, Snapshot};

/// How far back a hook failure shows the warning mark.
pub const FAILURE_WINDOW_SECS: i64 = 3600;
/// How much of the end of the hook log is read (the log rotates at 1 MB).
const LOG_TAIL_BYTES: u64 = 64 * 1024;

/// Gathers the inputs and reduces them.
pub fn read(paths: &Paths, now: i64) -> Snapshot {
    let (mut snapshot, candidates) = read_unlooked(paths, now);
    snapshot.looked_at = looked_at(paths, &candidates);
    snapshot
}

/// The sessions that could notify (idle with unread, or needing you): `(id, host pid)` each,
/// the ones the desktop is asked about.
pub type Candidates = Vec<(String, u32)>;

/// The snapshot without asking the desktop which session is looked at (`looked_at` is
/// `None`), and the sessions to ask about.
pub fn read_unlooked(paths: &Paths, now: i64) -> (Snapshot, Candidates) {
    let status = status::collect(paths, None);
    let settings = settings::load(&settings::settings_path(paths));
    let recent_failure = recent_failure(&paths.hook_log(), now);
    let snapshot = reduce(&status, &settings, recent_failure, now);
    let candidates = status
        .sessions
        .iter()
        .filter(|s| {
            s.state == SessionState::NeedsYou
                || (!s.in_turn && s.board.as_ref().is_some_and(|b| b.unread > 0))
        })
        .map(|s| (s.id.clone(), s.host_pid))
        .collect();
    (snapshot, candidates)
}

/// The session the person is looking at (its own tab is the one in front), asked of the
/// desktop and the terminal only for sessions that could notify.
pub fn looked_at(paths: &Paths, candidates: &Candidates) -> Option<String> {
    if candidates.is_empty() {
        return None;
    }
    let candidates: Vec<(&str, u32)> = candidates
        .iter()
        .map(|(id, pid)| (id.as_str(), *pid))
        .collect();
    session_focus::looked_at(&paths.sessions_dir(), &candidates)
}

/// The snapshot of `status` and `settings` at `now`.
pub fn reduce(status: &Status, settings: &Settings, recent_failure: bool, now: i64) -> Snapshot {
    let fabric = match status.fabric.state {
        FabricRunState::Running => FabricLine::Running {
            origin: status.fabric.origin.clone().unwrap_or_default(),
        },
        FabricRunState::Down => FabricLine::Down {
            reason: status
                .fabric
                .down_reason
                .map_or("unknown", DownReason::describe)
                .to_string(),
        },
    };
    let hosts = status
        .hosts
        .iter()
        .map(|h| HostView {
            host: h.host,
            name: h.name.to_string(),
            registered: h.fabric_registered,
            hooks: h.hooks.state,
            approval: h.approval.as_ref().map(|a| a.record.approval.clone()),
            version: h.host_version.clone(),
        })
        .collect();
    let sessions = status
        .sessions
        .iter()
        .map(|s| SessionView {
            id: s.id.clone(),
            host: s.host,
            project: s.project.clone(),
            unread: s.board.as_ref().map(|b| b.unread),
            in_turn: s.in_turn,
            state: s.state,
            // Rounded up: a grace counted from it is never cut short by the rounding.
            since: s
                .state_since
                .as_deref()
                .and_then(session_state::millis)
                .map(|ms| ms.div_euclid(1000) + i64::from(ms.rem_euclid(1000) > 0)),
            reason: s.reason,
            interrupted: s.interrupted,
            turn_started: unix_secs(s.turn_started_at.as_deref()),
            remote: None,
        })
        .collect();
    let paused = paused_until(settings).is_some_and(|until| until > now);
    Snapshot {
        fabric,
        session_hooks_active: status.session_hooks == SessionHooks::Active,
        hosts,
        sessions,
        recent_failure,
        notifications_muted: paused || !settings.notifications,
        paused,
        quiet_hours: settings.quiet_hours.clone(),
        local_minute: clock::local_minute_of_day(now),
        muted_projects: settings.muted_projects.iter().cloned().collect(),
        looked_at: None,
        needs_you_grace_secs: settings.effective_grace_secs(),
        long_turn_minutes: settings.long_turn(),
        remotes: Vec::new(),
    }
}

/// Adds the remotes' sessions (those whose links are up) and their links to `snapshot`.
pub fn add_remotes(snapshot: &mut Snapshot, entries: &[companion_remotes::board::Entry]) {
    let (sessions, links) = crate::remotes::views(entries);
    snapshot.sessions.extend(sessions);
    snapshot.remotes = links;
}

/// A state time (RFC 3339, to the millisecond) in whole Unix seconds.
fn unix_secs(stamp: Option<&str>) -> Option<i64> {
    stamp
        .and_then(session_state::millis)
        .map(|ms| ms.div_euclid(1000))
}

/// When the pause ends (Unix seconds), if one is set.
pub fn paused_until(settings: &Settings) -> Option<i64> {
    settings
        .notifications_paused_until
        .as_deref()
        .and_then(clock::parse_rfc3339)
}

/// Whether `line` is a hook failure (`refused …` or `outcome=unknown`) logged at or after
/// `since`, read by the core's one parser of the log.
pub fn is_failure_since(line: &str, since: i64) -> bool {
    hook_log::parse_line(line).is_some_and(|line| {
        line.is_failure() && clock::parse_rfc3339(&line.time).is_some_and(|t| t >= since)
    })
}

/// Whether the hook log's tail holds a failure of the last hour.
pub fn recent_failure(log: &Path, now: i64) -> bool {
    // Never blocks on a FIFO or a device put at the log's place (the core's one careful read).
    let Some(bytes) = companion_platform::fsutil::read_tail(log, LOG_TAIL_BYTES) else {
        return false;
    };
    let since = now - FAILURE_WINDOW_SECS;
    String::from_utf8_lossy(&bytes)
        .lines()
        .any(|line| is_failure_since(line, since))
}

#[cfg(test)]
mod tests {
    use super::*;
    use companion_hosts::host::Host;
    use companion_sessions::board::BoardState;
    use companion_sessions::spool::{BoardRecord, SessionId, SessionRecord, Spool};

    fn paths_in(home: &Path) -> Paths {
        let fabric_dir = home.join("share/passioncode-fabric");
        Paths {
            home: home.to_path_buf(),
            services_dir: fabric_dir.join("services"),
            fabric_dir,
            cache_dir: home.join("cache/fabric-companion"),
            data_dir: home.join("share/fabric-companion"),
            config_dir: home.join("config/fabric-companion"),
        }
    }

    #[test]
    fn read_reduces_the_library_status_settings_and_log() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        let now = clock::now_unix();
        // Fabric down, nothing registered, no sessions.
        let snap = read(&paths, now);
        assert!(matches!(snap.fabric, FabricLine::Down { .. }));
        assert!(!snap.session_hooks_active);
        assert!(snap.sessions.is_empty());
        assert_eq!(snap.hosts.len(), 3);
        assert!(snap.hosts.iter().all(|h| !h.registered));

        // Fabric running (this process) with session hooks, Claude Code registered, a live
        // session (hosted by this process) with a count, a fresh failure, a pause.
        std::fs::create_dir_all(&paths.fabric_dir).unwrap();
        std::fs::write(
            paths.hub_json(),
            format!(
                r#"{{"protocol":"fabric-hub/0.1","origin":"http://127.0.0.1:47070","pid":{},"features":["session-hooks/1"]}}"#,
                std::process::id()
            ),
        )
        .unwrap();
        std::fs::write(
            dir.path().join(".claude.json"),
            r#"{"mcpServers":{"fabric":{"command":"fabric-mcp"}}}"#,
        )
        .unwrap();
        let id = SessionId::new("s-1").unwrap();
        let spool = Spool::new(&paths.sessions_dir(), &id);
        spool
            .write_session(&SessionRecord {
                host: Host::Claude,
                project: "alpha".into(),
                started_at: clock::format_rfc3339(now),
                host_pid: std::process::id(),
                host_start_ticks: 0,
                cwd: None,
                terminal: Default::default(),
            })
            .unwrap();
        spool
            .write_board(&BoardRecord {
                unread: 7,
                state: BoardState::Ready,
                observed_at: clock::format_rfc3339(now),
            })
            .unwrap();
        std::fs::write(
            paths.hook_log(),
            format!(
                "{} stop claude s-1 refused fenced\n",
                clock::format_rfc3339(now - 60)
            ),
        )
        .unwrap();
        std::fs::create_dir_all(&paths.config_dir).unwrap();
        std::fs::write(
            settings::settings_path(&paths),
            format!(
                r#"{{"notificationsPausedUntil":"{}"}}"#,
                clock::format_rfc3339(now + 600)
            ),
        )
        .unwrap();
        let snap = read(&paths, now);
        assert_eq!(
            snap.fabric,
            FabricLine::Running {
                origin: "http://127.0.0.1:47070".into()
            }
        );
        assert!(snap.session_hooks_active);
        assert!(snap.hosts[0].registered);
        assert_eq!(
            snap.hosts[0].hooks,
            companion_hosts::install::HookStateKind::NotInstalled
        );
        assert_eq!(snap.sessions.len(), 1);
        assert_eq!(snap.sessions[0].unread, Some(7));
        assert_eq!(snap.sessions[0].project, "alpha");
        assert!(!snap.sessions[0].in_turn);
        assert!(snap.recent_failure);
        assert!(snap.paused && snap.notifications_muted);
        // Not wired (hooks not installed): grey, with the count and the warning.
        let icon = crate::model::icon_state(&snap);
        assert!(icon.greyed && icon.warning);
        assert_eq!(icon.count_text, "7");
        // An hour and more later the failure and the pause are over.
        let later = read(&paths, now + 3700);
        assert!(!later.recent_failure && !later.paused && !later.notifications_muted);
        // Quiet hours (all day here) and notifications turned off mute without a pause.
        std::fs::write(
            settings::settings_path(&paths),
            r#"{"quietHours":{"start":"00:00","end":"23:59"}}"#,
        )
        .unwrap();
        let quiet = read(&paths, now);
        let minute = clock::local_minute_of_day(now);
        assert_eq!(quiet.local_minute, minute);
        assert_eq!(crate::model::quiet_now(&quiet), minute < 23 * 60 + 59);
        assert!(!quiet.paused && !quiet.notifications_muted);
        std::fs::write(
            settings::settings_path(&paths),
            r#"{"notifications":false}"#,
        )
        .unwrap();
        let off = read(&paths, now);
        assert!(off.notifications_muted && !off.paused);
    }

    #[test]
    fn failures_are_refusals_and_unknown_outcomes_of_the_last_hour() {
        let now = clock::parse_rfc3339("2026-12-02T12:00:00Z").unwrap();
        let since = now - FAILURE_WINDOW_SECS;
        assert!(is_failure_since(
            "2026-12-02T11:30:00Z stop claude s1 refused fenced",
            since
        ));
        assert!(is_failure_since(
            "2026-12-02T11:59:59Z worker claude s1 outcome=unknown deadline",
            since
        ));
        assert!(!is_failure_since(
            "2026-12-02T10:59:59Z stop claude s1 refused fenced",
            since
        ));
        assert!(!is_failure_since(
            "2026-12-02T11:30:00Z stop claude s1 ok unread=3",
            since
        ));
        assert!(!is_failure_since("garbage", since));

        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("hooks.log");
        assert!(!recent_failure(&log, now));
        std::fs::write(
            &log,
            "2026-12-02T11:00:01Z stop claude s1 ok\n2026-12-02T11:10:00Z worker claude s1 outcome=unknown\n",
        )
        .unwrap();
        assert!(recent_failure(&log, now));
        assert!(!recent_failure(&log, now + 3600));
    }

    #[test]
    fn pause_quiet_hours_and_off_mute_notifications() {
        let now = 1_790_000_000;
        let settings = Settings {
            notifications_paused_until: Some(clock::format_rfc3339(now + 60)),
            ..Settings::default()
        };
        assert_eq!(paused_until(&settings), Some(now + 60));
        let off = Settings {
            notifications: false,
            ..Settings::default()
        };
        assert!(paused_until(&off).is_none());
    }
}
