//! The remotes the tray follows: one link per remote in the settings (`companion-remotes`),
//! kept in step with the settings at every reading, on the snapshot reader's thread; their
//! board saved for the dashboard (`remotes.json`, removed when the tray ends); their sessions
//! as the model's [`SessionView`]s (ids `remote:<remote>/<id>`) and each link as a
//! [`RemoteView`] for the menu.
//!
//! A remote's sessions count only while its link is up: when it is down nothing of it is
//! known, and the menu says since when.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use companion_platform::paths::Paths;
use companion_remotes::board::{self, Board, Entry, LinkState};
use companion_remotes::link::{Link, LinkSettings};
use companion_remotes::remote::Remote;

use crate::model::{RemoteView, SessionView};

/// The id prefix of a remote session in the model and the menu.
pub const SESSION_PREFIX: &str = "remote:";

/// The links, the board they write and its saved copy.
pub struct Remotes {
    board: Board,
    links: BTreeMap<String, Link>,
    refused: BTreeSet<String>,
    file: PathBuf,
    saved: Option<Vec<Entry>>,
    settings: LinkSettings,
}

impl Remotes {
    /// No remote yet; `wake` is called (from a link's thread) when the board changes.
    pub fn new(paths: &Paths, wake: impl Fn() + Send + Sync + 'static) -> Remotes {
        Remotes {
            board: Board::new(wake),
            links: BTreeMap::new(),
            refused: BTreeSet::new(),
            file: board::file_path(paths),
            saved: None,
            settings: LinkSettings::from_env(),
        }
    }

    /// Starts a link for each remote in `wanted` that has none, and stops the links of
    /// remotes no longer in it. A remote that does not check out is said once in the log.
    pub fn follow(&mut self, wanted: &[String]) {
        let mut keep = BTreeSet::new();
        for text in wanted {
            match Remote::parse(text) {
                Ok(remote) => {
                    keep.insert(remote.spec().to_string());
                    if !self.links.contains_key(remote.spec()) {
                        let spec = remote.spec().to_string();
                        match Link::start(remote, self.board.clone(), self.settings.clone()) {
                            Ok(link) => {
                                self.links.insert(spec, link);
                            }
                            Err(err) => tracing::warn!(%err, "cannot start a remote's link"),
                        }
                    }
                }
                Err(err) => {
                    if self.refused.insert(text.clone()) {
                        tracing::warn!(%err, "a remote in the settings is refused");
                    }
                }
            }
        }
        let gone: Vec<String> = self
            .links
            .keys()
            .filter(|spec| !keep.contains(*spec))
            .cloned()
            .collect();
        for spec in gone {
            drop(self.links.remove(&spec));
            self.board.remove(&spec);
        }
    }

    /// Every remote's entry now, saved for the dashboard when it changed.
    pub fn entries(&mut self) -> Vec<Entry> {
        let entries = self.board.entries();
        if self.saved.as_ref() != Some(&entries) {
            let result = if entries.is_empty() {
                std::fs::remove_file(&self.file).or_else(|e| {
                    if e.kind() == std::io::ErrorKind::NotFound {
                        Ok(())
                    } else {
                        Err(e)
                    }
                })
            } else {
                board::save(&self.file, &entries)
            };
            match result {
                Ok(()) => self.saved = Some(entries.clone()),
                Err(err) => tracing::warn!(%err, "cannot save the remotes for the dashboard"),
            }
        }
        entries
    }
}

impl Drop for Remotes {
    fn drop(&mut self) {
        self.links.clear();
        let _ = std::fs::remove_file(&self.file);
    }
}

/// The model's id of session `id` on remote `spec`.
pub fn session_id(spec: &str, id: &str) -> String {
    format!("{SESSION_PREFIX}{spec}/{id}")
}

/// The remote (as written) and the session's id there, from a model id.
pub fn split_session_id(text: &str) -> Option<(&str, &str)> {
    text.strip_prefix(SESSION_PREFIX)?.rsplit_once('/')
}

/// The sessions of the remotes whose links are up, as the model sees them, and each link
/// as the menu says it.
pub fn views(entries: &[Entry]) -> (Vec<SessionView>, Vec<RemoteView>) {
    let mut sessions = Vec::new();
    let mut links = Vec::new();
    for entry in entries {
        let up = matches!(entry.link, LinkState::Up { .. });
        if up {
            sessions.extend(entry.sessions.iter().map(|s| {
                SessionView {
                    id: session_id(&entry.remote, &s.id),
                    host: s.host,
                    project: s.project.clone(),
                    unread: s.unread,
                    in_turn: s.in_turn,
                    state: s.state,
                    // Rounded up, as the local ones: a grace is never cut short by the rounding.
                    since: s
                        .since_ms
                        .map(|ms| ms.div_euclid(1000) + i64::from(ms.rem_euclid(1000) > 0)),
                    reason: s.reason,
                    interrupted: s.interrupted,
                    turn_started: s.turn_started_ms.map(|ms| ms.div_euclid(1000)),
                    remote: Some(entry.label.clone()),
                }
            }));
        }
        links.push(RemoteView {
            label: entry.label.clone(),
            link: entry.link.clone(),
            sessions: if up { entry.sessions.len() } else { 0 },
        });
    }
    (sessions, links)
}

#[cfg(test)]
mod tests {
    use super::*;
    use companion_hosts::host::Host;
    use companion_remotes::board::Down;
    use companion_remotes::stream::RemoteSession;
    use companion_sessions::session_state::SessionState;

    fn entry(link: LinkState) -> Entry {
        Entry {
            remote: "me@build-box".into(),
            label: "build-box".into(),
            link,
            fabric_running: true,
            sessions: vec![RemoteSession {
                id: "s-1".into(),
                host: Host::Claude,
                project: "api".into(),
                state: SessionState::NeedsYou,
                since_ms: Some(1_000_500),
                reason: None,
                tool: None,
                subagent: false,
                interrupted: false,
                in_turn: true,
                turn_started_ms: None,
                unread: Some(2),
                tmux_pane: None,
            }],
        }
    }

    #[test]
    fn a_remote_s_sessions_count_only_while_its_link_is_up() {
        let (sessions, links) = views(&[entry(LinkState::Up { since: 5 })]);
        assert_eq!(sessions.len(), 1);
        assert_eq!(sessions[0].id, "remote:me@build-box/s-1");
        assert_eq!(sessions[0].remote.as_deref(), Some("build-box"));
        assert_eq!(sessions[0].since, Some(1001));
        assert_eq!(links[0].sessions, 1);
        let down = LinkState::Down {
            since: 5,
            why: Down::NotSetUp,
        };
        let (sessions, links) = views(&[entry(down)]);
        assert!(sessions.is_empty());
        assert_eq!(links[0].sessions, 0);
    }

    #[test]
    fn a_remote_session_id_splits_back_even_with_slashes_in_the_remote() {
        let id = session_id("ssh://me@host:2222", "abc-1");
        assert_eq!(split_session_id(&id), Some(("ssh://me@host:2222", "abc-1")));
        assert_eq!(split_session_id("abc-1"), None);
    }
}
