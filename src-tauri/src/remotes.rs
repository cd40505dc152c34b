//! The remotes as the dashboard shows them: what the tray last saved of its links and their
//! sessions (`remotes.json`, read through `companion-remotes`; the dashboard never runs a
//! link), shaped for the page, and a remote session's "Go to" (its tmux pane there, then the
//! local terminal whose `ssh` reaches it).

use companion_hosts::host::Host;
use companion_platform::paths::Paths;
use companion_remotes::board::{self, LinkState};
use companion_sessions::session_state::{self, SessionState, WaitReason};
use serde::Serialize;

/// The model id prefix the tray uses for a remote's session (`remote:<remote>/<id>`).
const SESSION_PREFIX: &str = "remote:";

/// One remote the tray follows.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RemoteView {
    /// As written in the settings.
    pub remote: String,
    /// Its name as a person reads it.
    pub label: String,
    pub link: RemoteLink,
    /// Its sessions (none while the link is down: nothing of them is known then).
    pub sessions: Vec<RemoteSessionView>,
}

/// Where a remote's link stands (times RFC 3339).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum RemoteLink {
    Connecting { since: String },
    Up { since: String },
    Down { since: String, why: String },
}

/// One session on a remote.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RemoteSessionView {
    /// The id "Go to" takes (`remote:<remote>/<id>`).
    pub id: String,
    pub host: Host,
    pub project: String,
    pub state: SessionState,
    #[cfg_attr(test, ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_since: Option<String>,
    #[cfg_attr(test, ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<WaitReason>,
    /// The board's last count (`null`: never counted).
    pub unread: Option<u64>,
    /// Its tmux pane there, when it runs in tmux.
    #[cfg_attr(test, ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tmux_pane: Option<String>,
}

fn rfc3339(unix_secs: i64) -> String {
    session_state::stamp(unix_secs.saturating_mul(1000))
}

fn rfc3339_ms(ms: i64) -> String {
    session_state::stamp(ms)
}

/// The remotes as the tray last saved them; none while the tray is not running (the file
/// would be stale: nothing follows them then).
pub fn remotes_view(paths: &Paths, tray_running: bool) -> Vec<RemoteView> {
    if !tray_running {
        return Vec::new();
    }
    board::load(&board::file_path(paths))
        .into_iter()
        .map(|entry| {
            let up = matches!(entry.link, LinkState::Up { .. });
            let link = match &entry.link {
                LinkState::Connecting { since } => RemoteLink::Connecting {
                    since: rfc3339(*since),
                },
                LinkState::Up { since } => RemoteLink::Up {
                    since: rfc3339(*since),
                },
                LinkState::Down { since, why } => RemoteLink::Down {
                    since: rfc3339(*since),
                    why: why.describe(),
                },
            };
            let sessions = if up {
                entry
                    .sessions
                    .iter()
                    .map(|s| RemoteSessionView {
                        id: format!("{SESSION_PREFIX}{}/{}", entry.remote, s.id),
                        host: s.host,
                        project: s.project.clone(),
                        state: s.state,
                        state_since: s.since_ms.map(rfc3339_ms),
                        reason: s.reason,
                        unread: s.unread,
                        tmux_pane: s.tmux_pane.as_ref().map(|p| p.as_str().to_string()),
                    })
                    .collect()
            } else {
                Vec::new()
            };
            RemoteView {
                remote: entry.remote,
                label: entry.label,
                link,
                sessions,
            }
        })
        .collect()
}

/// A remote session's jump, when `id` names one (`remote:<remote>/<id>`).
pub fn focus(
    paths: &Paths,
    id: &str,
) -> Option<Result<session_focus::Raised, session_focus::FocusError>> {
    let (remote, session) = id.strip_prefix(SESSION_PREFIX)?.rsplit_once('/')?;
    Some(
        companion_remotes::jump::jump_to(&board::file_path(paths), remote, session)
            .map(|jumped| jumped.raised),
    )
}

/// Checks the remotes typed in Settings: each must be one the tray can follow; duplicates
/// and blanks dropped.
pub fn checked(remotes: &[String]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for text in remotes.iter().map(|r| r.trim()).filter(|r| !r.is_empty()) {
        let remote = companion_remotes::remote::Remote::parse(text)
            .map_err(|err| format!("\"{text}\" cannot be followed: {err}"))?;
        if !out.iter().any(|r| r == remote.spec()) {
            out.push(remote.spec().to_string());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_remotes_are_checked_and_kept_once() {
        assert_eq!(
            checked(&[
                " build-box ".into(),
                "".into(),
                "build-box".into(),
                "docker:devc".into()
            ]),
            Ok(vec!["build-box".to_string(), "docker:devc".to_string()])
        );
        let refused = checked(&["-oProxyCommand=x".into()]).unwrap_err();
        assert_eq!(
            refused,
            "\"-oProxyCommand=x\" cannot be followed: a remote cannot start with '-'"
        );
    }
}
