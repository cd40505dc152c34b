//! What the tray shows from a snapshot: the count's text, the icon's state, each session's
//! line and the menu's lines in their order (sessions that need you first).

use super::*;

/// The icon's count text: empty for 0, the number up to 99, then `99+`.
pub fn count_text(total: u64) -> String {
    match total {
        0 => String::new(),
        1..=99 => total.to_string(),
        _ => "99+".to_string(),
    }
}

/// The total unread count over the live sessions (saturating: the counts come from files).
pub fn total_unread(snapshot: &Snapshot) -> u64 {
    snapshot
        .sessions
        .iter()
        .filter_map(|s| s.unread)
        .fold(0, u64::saturating_add)
}

/// The icon state of a snapshot.
pub fn icon_state(snapshot: &Snapshot) -> IconState {
    let down = matches!(snapshot.fabric, FabricLine::Down { .. });
    let wired = snapshot.hosts.iter().any(HostView::wired);
    IconState {
        count_text: count_text(total_unread(snapshot)),
        greyed: down || !wired,
        warning: snapshot.recent_failure,
        needs_you: snapshot.sessions.iter().any(SessionView::needs_you),
    }
}

pub(super) fn host_hooks_words(hooks: HookStateKind) -> &'static str {
    match hooks {
        HookStateKind::Installed => "hooks installed",
        HookStateKind::NotInstalled => "hooks not installed",
        HookStateKind::Stale => "hooks installed with a stale path",
        HookStateKind::Incomplete => "hooks partly installed",
        HookStateKind::Unreadable => "hooks config unreadable",
    }
}

/// How long a wait has lasted, as the menu says it: `just now`, `4 min`, `2 h`, `3 d`.
pub fn waited_words(secs: i64) -> String {
    match secs.max(0) {
        0..60 => "just now".to_string(),
        s @ 60..3600 => format!("{} min", s / 60),
        s @ 3600..86_400 => format!("{} h", s / 3600),
        s => format!("{} d", s / 86_400),
    }
}

/// The menu line of one session: `<project> · <host> · needs you (permission, 4 min)` while
/// it waits, else `<project> · <host> · N unread · <state>`.
pub fn session_line(session: &SessionView, now: u64) -> String {
    let project = if session.project.is_empty() {
        "?"
    } else {
        &session.project
    };
    let host = match &session.remote {
        Some(remote) => format!("{} on {remote}", session.host.display_name()),
        None => session.host.display_name().to_string(),
    };
    if session.needs_you() {
        let reason = session.reason.unwrap_or(WaitReason::Permission).word();
        let waited = session
            .since
            .map(|since| format!(", {}", waited_words(now as i64 - since)))
            .unwrap_or_default();
        return format!("{project} · {host} · needs you ({reason}{waited})");
    }
    let unread = match session.unread {
        Some(n) => format!("{n} unread"),
        None => "unread unknown".to_string(),
    };
    let activity = match session.state {
        SessionState::Finished if session.interrupted => "finished (interrupted)",
        other => other.word(),
    };
    format!("{project} · {host} · {unread} · {activity}")
}

/// A remote's menu line: `build-box: 2 sessions`, `build-box: connecting…`,
/// `build-box: unreachable since 10:42 (…)`. The time is the local wall clock's.
pub fn remote_line(remote: &RemoteView, now: u64) -> String {
    use companion_remotes::board::LinkState;
    let label = &remote.label;
    match &remote.link {
        LinkState::Connecting { .. } => format!("{label}: connecting…"),
        LinkState::Up { .. } => match remote.sessions {
            0 => format!("{label}: connected, no live sessions"),
            1 => format!("{label}: connected, 1 session"),
            n => format!("{label}: connected, {n} sessions"),
        },
        LinkState::Down { since, why } => {
            let seconds = crate::clock::local_seconds_of_day(*since);
            let at = format!("{:02}:{:02}", seconds / 3600, seconds / 60 % 60);
            let day = if now as i64 - since >= 86_400 {
                " (over a day)"
            } else {
                ""
            };
            match why {
                companion_remotes::board::Down::Unreachable { detail } if !detail.is_empty() => {
                    format!("{label}: unreachable since {at}{day}: {detail}")
                }
                companion_remotes::board::Down::Unreachable { .. } => {
                    format!("{label}: unreachable since {at}{day}")
                }
                companion_remotes::board::Down::Broken { what } => {
                    format!("{label}: unreachable since {at}{day}: it {what}")
                }
                other => format!("{label}: since {at}{day}, {}", other.describe()),
            }
        }
    }
}

/// The sessions in menu order: those that need you first (the longest waiting first), then
/// the others as listed.
pub fn menu_order(sessions: &[SessionView]) -> Vec<&SessionView> {
    let mut waiting: Vec<&SessionView> = sessions.iter().filter(|s| s.needs_you()).collect();
    waiting.sort_by_key(|s| s.since.unwrap_or(i64::MAX));
    waiting
        .into_iter()
        .chain(sessions.iter().filter(|s| !s.needs_you()))
        .collect()
}

/// The menu of a snapshot at `now` (the waits' lengths are counted to it).
pub fn menu_lines(snapshot: &Snapshot, now: u64) -> Vec<MenuLine> {
    let mut lines = Vec::new();
    lines.push(MenuLine::Info(match &snapshot.fabric {
        FabricLine::Running { origin } => format!("Fabric: running at {origin}"),
        FabricLine::Down { reason } => format!("Fabric: down ({reason})"),
    }));
    lines.push(MenuLine::Separator);
    if snapshot.sessions.is_empty() {
        lines.push(MenuLine::Info("No live sessions".into()));
    }
    for session in menu_order(&snapshot.sessions) {
        lines.push(MenuLine::Session {
            label: session_line(session, now),
            session: session.id.clone(),
        });
    }
    for remote in &snapshot.remotes {
        lines.push(MenuLine::Info(remote_line(remote, now)));
    }
    lines.push(MenuLine::Separator);
    let hooks_word = if snapshot.session_hooks_active {
        "Session hooks active"
    } else {
        "Session hooks inert"
    };
    for host in &snapshot.hosts {
        lines.push(MenuLine::Info(host.line(hooks_word)));
    }
    lines.push(MenuLine::Separator);
    lines.push(MenuLine::Submenu {
        label: if snapshot.paused {
            "Notifications (paused)".into()
        } else {
            "Notifications".into()
        },
        items: vec![
            MenuLine::Item {
                label: "Pause 1 hour".into(),
                action: Action::PauseHour,
                enabled: true,
            },
            MenuLine::Item {
                label: "Pause until tomorrow".into(),
                action: Action::PauseUntilTomorrow,
                enabled: true,
            },
            MenuLine::Item {
                label: "Resume".into(),
                action: Action::Resume,
                enabled: snapshot.paused,
            },
        ],
    });
    lines.push(MenuLine::Item {
        label: "Open Dashboard…".into(),
        action: Action::OpenDashboard,
        enabled: true,
    });
    lines.push(MenuLine::Item {
        label: "Open hook log".into(),
        action: Action::OpenHookLog,
        enabled: true,
    });
    lines.push(MenuLine::Separator);
    lines.push(MenuLine::Item {
        label: "Quit".into(),
        action: Action::Quit,
        enabled: true,
    });
    lines
}

/// The view of a snapshot at `now` (no memory needed).
pub fn view(snapshot: &Snapshot, now: u64) -> TrayView {
    let icon = icon_state(snapshot);
    let title = (!icon.count_text.is_empty()).then(|| icon.count_text.clone());
    TrayView {
        icon,
        menu: menu_lines(snapshot, now),
        title,
    }
}
