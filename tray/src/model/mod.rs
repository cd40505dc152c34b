//! The tray model: a pure function of (previous model, new snapshot, now).
//!
//! [`Snapshot`] is everything the tray shows, reduced from `companion_sessions::status::Status`,
//! the settings and the hook log (see [`crate::snapshot`]). [`decide`] turns it into a
//! [`TrayView`] (icon state, menu lines, macOS title) and the notifications to raise or
//! withdraw, keeping per-session counts and rate-limit state in [`Model`]. Nothing here
//! touches a file, a clock or a display, so every rule is unit-tested.
//!
//! Notifications never nag ([`silenced`], [`decide`]): none for a session in a turn, none
//! while notifications are off or paused, none in the quiet hours (the icon still counts),
//! none for a muted project, none for the session whose window is the active one (the person
//! is looking at it); at most one a minute per session; and rises in several sessions within
//! [`COALESCE_SECS`] become one notification ("3 sessions · 7 unread") replaced in place.
//!
//! A session that needs you (stopped on a permission prompt or a question, its state from
//! its hooks) marks the icon, comes first in the menu (`<project> · <host> · needs you
//! (permission, 4 min)`), and gets one notification per wait once the wait has lasted the
//! grace (a setting): under the same rules but the in-a-turn one (a wait is inside its turn),
//! decided once when the grace is up (rate-limited: later, when the minute is up), coalesced
//! with other waits within [`COALESCE_SECS`], and withdrawn once the wait is over. A turn
//! longer than the long-turn setting (off unless set) says so when it finishes.
//! [`Decision::wake_at`] is when the model wants to decide again with no file changing (a
//! grace, a rate limit or a minute of the menu's waiting time running out).

mod view;
mod words;

use view::host_hooks_words;
pub use view::{
    count_text, icon_state, menu_lines, menu_order, session_line, total_unread, view, waited_words,
};
pub use words::{focus_notice, notification_text};

use std::collections::{BTreeMap, BTreeSet};

use companion_hosts::approval::Approval;
use companion_hosts::host::Host;
use companion_hosts::install::HookStateKind;
use companion_sessions::session_state::{SessionState, WaitReason};
use companion_sessions::settings::QuietHours;
use companion_sessions::status::HostVersionStatus;
use session_focus::{FocusError, Raised};

/// At most one notification a minute per session.
pub const RATE_LIMIT_SECS: u64 = 60;
/// Rises within this many seconds of the last notification join it (replaced in place).
pub const COALESCE_SECS: u64 = 5;

/// Fabric as the menu shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FabricLine {
    Running { origin: String },
    Down { reason: String },
}

/// One host's registration and hook state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostView {
    pub host: Host,
    pub name: String,
    /// A `fabric` MCP server is registered in this host.
    pub registered: bool,
    /// Our hooks' state in the host's config.
    pub hooks: HookStateKind,
    /// Whether the host runs our hooks, from its own record of the person's approval (`None`:
    /// none of ours in its config).
    pub approval: Option<Approval>,
    /// The host's version against the one our hooks were tested with.
    pub version: HostVersionStatus,
}

impl HostView {
    /// Whether this host is wired to Fabric: `fabric` registered, our hooks in place, and the
    /// host willing to run them (approved, where it asks).
    pub fn wired(&self) -> bool {
        self.registered
            && matches!(
                self.hooks,
                HookStateKind::Installed | HookStateKind::Incomplete
            )
            && self.approval.as_ref().is_none_or(Approval::runs)
    }

    /// The host's menu line: its name and version, our hooks, what is left to approve, and a
    /// version older than the tested one.
    fn line(&self, hooks_word: &str) -> String {
        let mut name = self.name.clone();
        if let Some(version) = &self.version.installed {
            name.push(' ');
            name.push_str(version);
            if self.version.older_than_tested {
                name.push_str(&format!(" (older than tested {})", self.version.tested));
            }
        }
        let left = self
            .approval
            .as_ref()
            .filter(|a| !a.runs())
            .and_then(|a| a.describe(self.host))
            .map(|text| format!(", {text}"))
            .unwrap_or_default();
        let registered = if self.registered {
            ""
        } else {
            " (fabric not registered)"
        };
        format!(
            "{name}: {}{left}{registered} · {hooks_word}",
            host_hooks_words(self.hooks)
        )
    }
}

/// One live session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionView {
    pub id: String,
    pub host: Host,
    pub project: String,
    /// The last count the board gave (`None`: never read; unknown is not zero).
    pub unread: Option<u64>,
    pub in_turn: bool,
    /// What it is doing, from its hooks.
    pub state: SessionState,
    /// When it entered that state (Unix seconds), when known.
    pub since: Option<i64>,
    /// Needs you: why.
    pub reason: Option<WaitReason>,
    /// Finished: interrupted (or its prompt refused).
    pub interrupted: bool,
    /// When its current (or last) turn started (Unix seconds).
    pub turn_started: Option<i64>,
    /// The remote it runs on (its name as a person reads it); `None`: this machine.
    pub remote: Option<String>,
}

impl SessionView {
    /// Whether it waits for the person.
    pub fn needs_you(&self) -> bool {
        self.state == SessionState::NeedsYou
    }

    /// The project as notifications name it: `api`, or `api on build-box` for a remote's.
    pub fn project_named(&self) -> String {
        match &self.remote {
            Some(remote) => format!("{} on {remote}", self.project),
            None => self.project.clone(),
        }
    }
}

/// One remote's link, as the menu says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteView {
    /// Its name as a person reads it.
    pub label: String,
    pub link: companion_remotes::board::LinkState,
    /// Its sessions shown (none while the link is down).
    pub sessions: usize,
}

/// Everything the tray shows at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub fabric: FabricLine,
    pub session_hooks_active: bool,
    pub hosts: Vec<HostView>,
    pub sessions: Vec<SessionView>,
    /// A hook logged a failure (`refused …` or `outcome=unknown`) in the last hour.
    pub recent_failure: bool,
    /// Notifications may not be raised now (paused or turned off).
    pub notifications_muted: bool,
    /// The daily quiet hours from the settings.
    pub quiet_hours: Option<QuietHours>,
    /// The minute of the local day (0–1439) the snapshot was taken at.
    pub local_minute: u32,
    /// Projects (folder names) whose sessions never notify.
    pub muted_projects: BTreeSet<String>,
    /// The session whose window is the active one (the person is looking at it), where the
    /// desktop can tell (X11).
    pub looked_at: Option<String>,
    /// The Pause items set a pause that has not ended yet (Resume is enabled).
    pub paused: bool,
    /// Seconds a session must have needed you before it is notified.
    pub needs_you_grace_secs: u64,
    /// A turn longer than this many minutes says so when it finishes (`None`: never).
    pub long_turn_minutes: Option<u64>,
    /// The remotes followed, each link's state.
    pub remotes: Vec<RemoteView>,
}

/// What the icon shows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct IconState {
    /// Empty for no unread, `1`–`99`, then `99+`.
    pub count_text: String,
    pub greyed: bool,
    pub warning: bool,
    /// A session needs you: the mark.
    pub needs_you: bool,
}

/// A menu action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    PauseHour,
    PauseUntilTomorrow,
    Resume,
    OpenDashboard,
    OpenHookLog,
    /// The first-run offer: the dashboard's Hooks view on this host's install plan.
    SetUpHooks(Host),
    /// The first-run offer, dismissed for this host for good.
    DismissOffer(Host),
    Quit,
}

impl Action {
    /// The menu item id.
    pub fn id(self) -> &'static str {
        match self {
            Action::PauseHour => "pause-hour",
            Action::PauseUntilTomorrow => "pause-tomorrow",
            Action::Resume => "resume",
            Action::OpenDashboard => "open-dashboard",
            Action::OpenHookLog => "open-hook-log",
            Action::SetUpHooks(Host::Claude) => "set-up-hooks-claude",
            Action::SetUpHooks(Host::Codex) => "set-up-hooks-codex",
            Action::SetUpHooks(Host::Kimi) => "set-up-hooks-kimi",
            Action::DismissOffer(Host::Claude) => "dismiss-offer-claude",
            Action::DismissOffer(Host::Codex) => "dismiss-offer-codex",
            Action::DismissOffer(Host::Kimi) => "dismiss-offer-kimi",
            Action::Quit => "quit",
        }
    }

    /// The action of a menu item id.
    pub fn from_id(id: &str) -> Option<Action> {
        [
            Action::PauseHour,
            Action::PauseUntilTomorrow,
            Action::Resume,
            Action::OpenDashboard,
            Action::OpenHookLog,
            Action::Quit,
        ]
        .into_iter()
        .chain(Host::ALL.into_iter().map(Action::SetUpHooks))
        .chain(Host::ALL.into_iter().map(Action::DismissOffer))
        .find(|a| a.id() == id)
    }
}

/// What choosing a menu item asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    Action(Action),
    /// Jump to this session's window (a session line).
    Focus(String),
}

/// The prefix of a session line's menu item id.
const FOCUS_ID_PREFIX: &str = "focus:";

impl Choice {
    /// The menu item id.
    pub fn id(&self) -> String {
        match self {
            Choice::Action(action) => action.id().to_string(),
            Choice::Focus(session) => format!("{FOCUS_ID_PREFIX}{session}"),
        }
    }

    /// What a menu item id asks for.
    pub fn from_id(id: &str) -> Option<Choice> {
        match id.strip_prefix(FOCUS_ID_PREFIX) {
            Some(session) if !session.is_empty() => Some(Choice::Focus(session.to_string())),
            Some(_) => None,
            None => Action::from_id(id).map(Choice::Action),
        }
    }
}

/// One line of the menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MenuLine {
    /// A line that only informs (disabled).
    Info(String),
    /// A live session: choosing it jumps to its window.
    Session {
        label: String,
        session: String,
    },
    Separator,
    Item {
        label: String,
        action: Action,
        enabled: bool,
    },
    Submenu {
        label: String,
        items: Vec<MenuLine>,
    },
}

/// What the platform shell shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrayView {
    pub icon: IconState,
    pub menu: Vec<MenuLine>,
    /// The macOS menu-bar title (the count), `None` when nothing is unread.
    pub title: Option<String>,
}

/// One session in a notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notified {
    pub session: String,
    pub project: String,
    pub host: Host,
    pub what: Notice,
}

/// What a notification says of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// The board's unread count rose to this.
    Unread(u64),
    /// It needs you, since `since` (Unix seconds).
    NeedsYou { reason: WaitReason, since: i64 },
    /// A turn of this many minutes finished.
    LongTurn { minutes: u64 },
}

/// A notification to raise (or replace, same `key`) or withdraw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotificationAction {
    /// Shows the notification `key`, replacing the one of that key on screen.
    Raise {
        key: String,
        sessions: Vec<Notified>,
    },
    Withdraw {
        key: String,
    },
}

/// A notification on screen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Shown {
    /// Its sessions, by id.
    sessions: BTreeMap<String, Notified>,
    /// When it was last raised or replaced (seconds).
    at: u64,
}

/// A wait the model has seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Wait {
    /// When it began (Unix seconds): a new time is a new wait.
    since: i64,
    /// Its notification was decided (raised, or silenced at its grace).
    decided: bool,
}

/// What the tray remembers between snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Model {
    /// False until the first snapshot: the first counts are the baseline.
    started: bool,
    /// The last known count per live session (a `None` reading keeps the last count).
    counts: BTreeMap<String, Option<u64>>,
    /// When the last notification was raised per session (seconds).
    last_raised: BTreeMap<String, u64>,
    /// Notifications that may still be on screen, by key.
    shown: BTreeMap<String, Shown>,
    /// The waits of the sessions that need you, by session.
    waits: BTreeMap<String, Wait>,
    /// "Needs you" notifications that may still be on screen, by key.
    waits_shown: BTreeMap<String, Shown>,
    /// The finished turns already looked at for the long-turn notice, by session (their
    /// finishing time), and the notices that may be on screen (key → session, finishing time).
    long_turns: BTreeMap<String, i64>,
    long_turns_shown: BTreeMap<String, (String, i64)>,
}

/// Why a session's rise is not notified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Silence {
    /// A prompt started a turn: the person is at it.
    InTurn,
    /// Notifications are turned off or paused.
    Off,
    /// Inside the daily quiet hours.
    QuietHours,
    /// The session's project is muted.
    ProjectMuted,
    /// The session's window is the active one.
    LookedAt,
}

/// Whether the quiet hours hold at the snapshot's local minute.
pub fn quiet_now(snapshot: &Snapshot) -> bool {
    snapshot
        .quiet_hours
        .as_ref()
        .is_some_and(|q| q.contains(snapshot.local_minute))
}

/// Why a rise of `session` would not be notified now (`None`: it would).
pub fn silenced(snapshot: &Snapshot, session: &SessionView) -> Option<Silence> {
    if session.in_turn {
        Some(Silence::InTurn)
    } else {
        silenced_for_person(snapshot, session)
    }
}

/// Why a notification about `session` that is not mail (it needs you, a long turn finished)
/// would not be raised now: every rule but the in-a-turn one, which is for mail.
pub fn silenced_for_person(snapshot: &Snapshot, session: &SessionView) -> Option<Silence> {
    if snapshot.notifications_muted {
        Some(Silence::Off)
    } else if quiet_now(snapshot) {
        Some(Silence::QuietHours)
    } else if snapshot.muted_projects.contains(&session.project) {
        Some(Silence::ProjectMuted)
    } else if snapshot.looked_at.as_deref() == Some(session.id.as_str()) {
        Some(Silence::LookedAt)
    } else {
        None
    }
}

/// The result of [`decide`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub model: Model,
    pub view: TrayView,
    pub notifications: Vec<NotificationAction>,
    /// When to decide again though no file changed (same clock as `now`): a wait's grace or
    /// its rate limit running out, or the next minute of a wait the menu counts.
    pub wake_at: Option<u64>,
}

/// The sessions the watch-mail engine should watch: live, idle sessions of a host with a
/// `fabric` registration, while Session hooks are active.
pub fn watch_set(snapshot: &Snapshot) -> BTreeMap<String, Host> {
    if !snapshot.session_hooks_active {
        return BTreeMap::new();
    }
    snapshot
        .sessions
        .iter()
        .filter(|s| !s.in_turn)
        .filter(|s| {
            snapshot
                .hosts
                .iter()
                .any(|h| h.host == s.host && h.registered)
        })
        .map(|s| (s.id.clone(), s.host))
        .collect()
}

/// Decides the view and the notifications for `next`, given what `prev` remembers. `now` is
/// in seconds (any epoch, only differences are used).
pub fn decide(prev: &Model, next: &Snapshot, now: u64) -> Decision {
    let mut model = Model {
        started: true,
        counts: BTreeMap::new(),
        last_raised: prev.last_raised.clone(),
        shown: prev.shown.clone(),
        waits: BTreeMap::new(),
        waits_shown: prev.waits_shown.clone(),
        long_turns: BTreeMap::new(),
        long_turns_shown: prev.long_turns_shown.clone(),
    };
    let mut rises: Vec<Notified> = Vec::new();
    let mut cleared: Vec<&str> = Vec::new();
    for session in &next.sessions {
        let before = prev.counts.get(&session.id).copied();
        // A board that cannot be read keeps its last count: unknown is not zero.
        let known_before = before.flatten();
        let count = session.unread.or(known_before);
        model.counts.insert(session.id.clone(), count);
        let Some(now_count) = session.unread else {
            continue;
        };
        if now_count == 0 {
            cleared.push(&session.id);
            continue;
        }
        // The first snapshot is the baseline; a session seen later starts from zero.
        let reference = match before {
            Some(known) => known.unwrap_or(0),
            None if prev.started => 0,
            None => continue,
        };
        if now_count <= reference || silenced(next, session).is_some() {
            continue;
        }
        let limited = prev
            .last_raised
            .get(&session.id)
            .is_some_and(|&at| now.saturating_sub(at) < RATE_LIMIT_SECS);
        if limited {
            continue;
        }
        model.last_raised.insert(session.id.clone(), now);
        rises.push(Notified {
            session: session.id.clone(),
            project: session.project_named(),
            host: session.host,
            what: Notice::Unread(now_count),
        });
    }
    let mut notifications = Vec::new();
    // Sessions at zero and sessions that ended leave their notification; an emptied one is
    // withdrawn.
    let live: BTreeSet<&String> = next.sessions.iter().map(|s| &s.id).collect();
    let mut emptied = Vec::new();
    for (key, shown) in &mut model.shown {
        let before = shown.sessions.len();
        shown
            .sessions
            .retain(|id, _| live.contains(id) && !cleared.contains(&id.as_str()));
        if before > 0 && shown.sessions.is_empty() {
            emptied.push(key.clone());
        }
    }
    for key in emptied {
        model.shown.remove(&key);
        notifications.push(NotificationAction::Withdraw { key });
    }
    if !rises.is_empty() {
        notifications.extend(coalesce(&mut model.shown, rises, now));
    }
    let mut wake_at = None;
    notifications.extend(decide_waits(prev, next, now, &mut model, &mut wake_at));
    notifications.extend(decide_long_turns(prev, next, &mut model));
    model.last_raised.retain(|id, _| live.contains(id));
    Decision {
        model,
        view: view(next, now),
        notifications,
        wake_at,
    }
}

/// The key of a session's "needs you" notification.
fn wait_key(session: &str) -> String {
    format!("needs-you:{session}")
}

/// The "needs you" notifications: one per wait once it has lasted the grace, unless silenced
/// then; withdrawn (or replaced without it) once the wait is over. `wake_at` gets the next
/// time this wants deciding again.
fn decide_waits(
    prev: &Model,
    next: &Snapshot,
    now: u64,
    model: &mut Model,
    wake_at: &mut Option<u64>,
) -> Vec<NotificationAction> {
    let now_secs = now as i64;
    let mut wake = |at: i64| {
        let at = at.max(now_secs + 1) as u64;
        *wake_at = Some(wake_at.map_or(at, |w| w.min(at)));
    };
    let grace = next.needs_you_grace_secs as i64;
    let mut rises = Vec::new();
    for session in next.sessions.iter().filter(|s| s.needs_you()) {
        let since = session.since.unwrap_or(now_secs);
        let mut wait = match prev.waits.get(&session.id) {
            Some(known) if known.since == since => *known,
            _ => Wait {
                since,
                decided: false,
            },
        };
        // The menu counts the wait in minutes: come back when the next one is up.
        let waited = now_secs - since;
        wake(since + (waited.max(0) / 60 + 1) * 60);
        if !wait.decided {
            if waited < grace {
                wake(since + grace);
            } else if silenced_for_person(next, session).is_some() {
                wait.decided = true;
            } else if let Some(&at) = prev
                .last_raised
                .get(&session.id)
                .filter(|&&at| now.saturating_sub(at) < RATE_LIMIT_SECS)
            {
                wake(at as i64 + RATE_LIMIT_SECS as i64);
            } else {
                wait.decided = true;
                model.last_raised.insert(session.id.clone(), now);
                rises.push(Notified {
                    session: session.id.clone(),
                    project: session.project_named(),
                    host: session.host,
                    what: Notice::NeedsYou {
                        reason: session.reason.unwrap_or(WaitReason::Permission),
                        since,
                    },
                });
            }
        }
        model.waits.insert(session.id.clone(), wait);
    }
    let mut out = Vec::new();
    // A wait that is over (answered, or its session gone) leaves its notification.
    let still = |id: &String, what: &Notice| match what {
        Notice::NeedsYou { since, .. } => model.waits.get(id).is_some_and(|w| w.since == *since),
        _ => false,
    };
    let mut emptied = Vec::new();
    let mut reduced = Vec::new();
    for (key, shown) in &mut model.waits_shown {
        let before = shown.sessions.len();
        shown.sessions.retain(|id, n| still(id, &n.what));
        if shown.sessions.is_empty() {
            emptied.push(key.clone());
        } else if shown.sessions.len() < before {
            reduced.push(key.clone());
        }
    }
    for key in emptied {
        model.waits_shown.remove(&key);
        out.push(NotificationAction::Withdraw { key });
    }
    if !rises.is_empty() {
        let recent = model
            .waits_shown
            .iter()
            .filter(|(_, s)| now.saturating_sub(s.at) < COALESCE_SECS)
            .max_by_key(|(_, s)| s.at)
            .map(|(key, _)| key.clone());
        let key = recent.unwrap_or_else(|| wait_key(&rises[0].session));
        let entry = model.waits_shown.entry(key.clone()).or_default();
        entry.at = now;
        for rise in rises {
            entry.sessions.insert(rise.session.clone(), rise);
        }
        reduced.retain(|k| *k != key);
        out.push(NotificationAction::Raise {
            key,
            sessions: entry.sessions.values().cloned().collect(),
        });
    }
    for key in reduced {
        if let Some(shown) = model.waits_shown.get(&key) {
            out.push(NotificationAction::Raise {
                key,
                sessions: shown.sessions.values().cloned().collect(),
            });
        }
    }
    out
}

/// The key of a session's "long turn finished" notification.
fn long_turn_key(session: &str) -> String {
    format!("long-turn:{session}")
}

/// "A long turn finished": off unless the setting is there; one per finished turn that took
/// longer, when it is first seen finished (not for turns that finished before the tray
/// started); withdrawn once the session works again or is gone.
fn decide_long_turns(prev: &Model, next: &Snapshot, model: &mut Model) -> Vec<NotificationAction> {
    let mut out = Vec::new();
    for session in &next.sessions {
        let (SessionState::Finished, Some(finished), false) =
            (session.state, session.since, session.interrupted)
        else {
            continue;
        };
        model.long_turns.insert(session.id.clone(), finished);
        let seen = prev.long_turns.get(&session.id) == Some(&finished);
        let (Some(minutes), Some(started), false, true) = (
            next.long_turn_minutes,
            session.turn_started,
            seen,
            prev.started,
        ) else {
            continue;
        };
        let took = (finished - started).max(0) as u64;
        if took < minutes * 60 || silenced_for_person(next, session).is_some() {
            continue;
        }
        let key = long_turn_key(&session.id);
        model
            .long_turns_shown
            .insert(key.clone(), (session.id.clone(), finished));
        out.push(NotificationAction::Raise {
            key,
            sessions: vec![Notified {
                session: session.id.clone(),
                project: session.project_named(),
                host: session.host,
                what: Notice::LongTurn { minutes: took / 60 },
            }],
        });
    }
    let over: Vec<String> = model
        .long_turns_shown
        .iter()
        .filter(|(_, (id, finished))| model.long_turns.get(id) != Some(finished))
        .map(|(key, _)| key.clone())
        .collect();
    for key in over {
        model.long_turns_shown.remove(&key);
        out.push(NotificationAction::Withdraw { key });
    }
    out
}

/// Puts this snapshot's rises on screen: into the notification raised within the last
/// [`COALESCE_SECS`] (replaced in place), else into one notification of their own (keyed by
/// a rising session's notification already on screen, so it is replaced, not stacked).
fn coalesce(
    shown: &mut BTreeMap<String, Shown>,
    rises: Vec<Notified>,
    now: u64,
) -> Vec<NotificationAction> {
    let recent = shown
        .iter()
        .filter(|(_, s)| now.saturating_sub(s.at) < COALESCE_SECS)
        .max_by_key(|(_, s)| s.at)
        .map(|(key, _)| key.clone());
    let own = || {
        rises
            .iter()
            .find_map(|r| {
                shown
                    .iter()
                    .find(|(_, s)| s.sessions.contains_key(&r.session))
                    .map(|(key, _)| key.clone())
            })
            .unwrap_or_else(|| rises[0].session.clone())
    };
    let key = recent.unwrap_or_else(own);
    let mut out = Vec::new();
    // A rising session leaves any other notification it was in.
    let mut emptied = Vec::new();
    for (other, s) in shown.iter_mut().filter(|(k, _)| **k != key) {
        let before = s.sessions.len();
        s.sessions
            .retain(|id, _| !rises.iter().any(|r| &r.session == id));
        if before > 0 && s.sessions.is_empty() {
            emptied.push(other.clone());
        }
    }
    for other in emptied {
        shown.remove(&other);
        out.push(NotificationAction::Withdraw { key: other });
    }
    let entry = shown.entry(key.clone()).or_default();
    entry.at = now;
    for rise in rises {
        entry.sessions.insert(rise.session.clone(), rise);
    }
    out.push(NotificationAction::Raise {
        key,
        sessions: entry.sessions.values().cloned().collect(),
    });
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A host line for tests (the offer rule's tests use it too).
    pub(crate) fn host(host: Host, registered: bool, hooks: HookStateKind) -> HostView {
        HostView {
            host,
            name: host.display_name().into(),
            registered,
            hooks,
            approval: None,
            version: HostVersionStatus {
                installed: None,
                tested: companion_hosts::host_version::tested(host),
                older_than_tested: false,
                program: None,
            },
        }
    }

    #[test]
    fn a_host_waiting_for_approval_says_what_is_left_and_is_not_wired() {
        let mut snap = snapshot(vec![]);
        snap.hosts[1] = host(Host::Codex, true, HookStateKind::Installed);
        snap.hosts[1].approval = Some(Approval::Waiting {
            events: vec!["SessionStart".into(), "Stop".into()],
            approved_elsewhere: false,
        });
        snap.hosts[1].version.installed = Some("0.160.0".into());
        snap.hosts[1].version.older_than_tested = true;
        assert!(!snap.hosts[1].wired());
        let lines = menu_lines(&snap, 0);
        assert!(
            lines.contains(&MenuLine::Info(
                "Codex 0.160.0 (older than tested 0.169.0): hooks installed, waiting for your approval in Codex: run /hooks (SessionStart, Stop) · Session hooks active"
                    .into()
            )),
            "{lines:?}"
        );
        snap.hosts[1].approval = Some(Approval::Approved);
        assert!(snap.hosts[1].wired());
        snap.hosts[1].version.older_than_tested = false;
        assert!(menu_lines(&snap, 0).contains(&MenuLine::Info(
            "Codex 0.160.0: hooks installed · Session hooks active".into()
        )));
        // Claude Code and Kimi Code need no approval.
        snap.hosts[0].approval = Some(Approval::NotNeeded);
        assert!(snap.hosts[0].wired());
    }

    pub(crate) fn session(id: &str, unread: Option<u64>, in_turn: bool) -> SessionView {
        SessionView {
            id: id.into(),
            host: Host::Claude,
            project: "my-project".into(),
            unread,
            in_turn,
            state: if in_turn {
                SessionState::Working
            } else {
                SessionState::Idle
            },
            since: None,
            reason: None,
            interrupted: false,
            turn_started: None,
            remote: None,
        }
    }

    /// A snapshot for tests: Fabric running, three hosts, `sessions`, noon (the offer rule's
    /// tests use it too).
    pub(crate) fn snapshot(sessions: Vec<SessionView>) -> Snapshot {
        Snapshot {
            fabric: FabricLine::Running {
                origin: "http://127.0.0.1:47070".into(),
            },
            session_hooks_active: true,
            hosts: vec![
                host(Host::Claude, true, HookStateKind::Installed),
                host(Host::Codex, false, HookStateKind::NotInstalled),
                host(Host::Kimi, true, HookStateKind::Stale),
            ],
            sessions,
            recent_failure: false,
            notifications_muted: false,
            paused: false,
            quiet_hours: None,
            local_minute: 12 * 60,
            muted_projects: BTreeSet::new(),
            looked_at: None,
            needs_you_grace_secs: 5,
            long_turn_minutes: None,
            remotes: Vec::new(),
        }
    }

    /// A model that has seen `sessions` (the baseline).
    fn seen(sessions: Vec<SessionView>) -> Model {
        decide(&Model::default(), &snapshot(sessions), 0).model
    }

    #[test]
    fn count_rendering() {
        assert_eq!(count_text(0), "");
        assert_eq!(count_text(1), "1");
        assert_eq!(count_text(99), "99");
        assert_eq!(count_text(100), "99+");
        let snap = snapshot(vec![
            session("a", Some(60), false),
            session("b", Some(40), true),
            session("c", None, false),
        ]);
        assert_eq!(icon_state(&snap).count_text, "99+");
        assert_eq!(view(&snap, 0).title.as_deref(), Some("99+"));
        assert_eq!(view(&snapshot(vec![]), 0).title, None);
    }

    #[test]
    fn grey_when_fabric_down_or_no_host_wired_and_warning_on_recent_failure() {
        let mut snap = snapshot(vec![]);
        assert!(!icon_state(&snap).greyed);
        assert!(!icon_state(&snap).warning);
        snap.fabric = FabricLine::Down {
            reason: "no hub.json".into(),
        };
        assert!(icon_state(&snap).greyed);
        let mut snap = snapshot(vec![]);
        snap.hosts[0].hooks = HookStateKind::Stale;
        assert!(icon_state(&snap).greyed, "stale hooks are not wired");
        snap.hosts[0].hooks = HookStateKind::Installed;
        snap.hosts[0].registered = false;
        assert!(
            icon_state(&snap).greyed,
            "hooks without fabric are not wired"
        );
        let mut snap = snapshot(vec![]);
        snap.recent_failure = true;
        assert!(icon_state(&snap).warning);
        assert!(!icon_state(&snap).greyed);
    }

    #[test]
    fn menu_lines_show_fabric_sessions_hosts_and_actions() {
        let snap = snapshot(vec![session("a", Some(3), false), session("b", None, true)]);
        let lines = menu_lines(&snap, 0);
        let infos: Vec<&str> = lines
            .iter()
            .filter_map(|l| match l {
                MenuLine::Info(text) | MenuLine::Session { label: text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            lines[2],
            MenuLine::Session {
                label: "my-project · Claude Code · 3 unread · idle".into(),
                session: "a".into()
            },
            "a session line is a choice: it jumps to the session"
        );
        assert_eq!(
            infos,
            [
                "Fabric: running at http://127.0.0.1:47070",
                "my-project · Claude Code · 3 unread · idle",
                "my-project · Claude Code · unread unknown · working",
                "Claude Code: hooks installed · Session hooks active",
                "Codex: hooks not installed (fabric not registered) · Session hooks active",
                "Kimi Code: hooks installed with a stale path · Session hooks active",
            ]
        );
        let items: Vec<(String, bool)> = lines
            .iter()
            .flat_map(|l| match l {
                MenuLine::Item { label, enabled, .. } => vec![(label.clone(), *enabled)],
                MenuLine::Submenu { items, .. } => items
                    .iter()
                    .filter_map(|i| match i {
                        MenuLine::Item { label, enabled, .. } => Some((label.clone(), *enabled)),
                        _ => None,
                    })
                    .collect(),
                _ => vec![],
            })
            .collect();
        let labels: Vec<&str> = items.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Pause 1 hour",
                "Pause until tomorrow",
                "Resume",
                "Open Dashboard…",
                "Open hook log",
                "Quit"
            ]
        );
        assert!(!items[2].1, "Resume is disabled when not paused");

        let mut down = snapshot(vec![]);
        down.fabric = FabricLine::Down {
            reason: "its process is gone".into(),
        };
        down.session_hooks_active = false;
        down.paused = true;
        let lines = menu_lines(&down, 0);
        assert_eq!(
            lines[0],
            MenuLine::Info("Fabric: down (its process is gone)".into())
        );
        assert!(lines.contains(&MenuLine::Info("No live sessions".into())));
        assert!(lines.contains(&MenuLine::Info(
            "Claude Code: hooks installed · Session hooks inert".into()
        )));
        let resume_enabled = lines.iter().any(|l| {
            matches!(l, MenuLine::Submenu { label, items } if label == "Notifications (paused)"
                && items.contains(&MenuLine::Item { label: "Resume".into(), action: Action::Resume, enabled: true }))
        });
        assert!(resume_enabled);
    }

    #[test]
    fn action_ids_round_trip() {
        for action in [
            Action::PauseHour,
            Action::PauseUntilTomorrow,
            Action::Resume,
            Action::OpenDashboard,
            Action::OpenHookLog,
            Action::Quit,
        ] {
            assert_eq!(Action::from_id(action.id()), Some(action));
            assert_eq!(Choice::from_id(action.id()), Some(Choice::Action(action)));
        }
        assert_eq!(Action::from_id("nope"), None);
        let focus = Choice::Focus("sess-1".into());
        assert_eq!(focus.id(), "focus:sess-1");
        assert_eq!(Choice::from_id(&focus.id()), Some(focus));
        assert_eq!(Choice::from_id("focus:"), None);
    }

    #[test]
    fn first_snapshot_is_the_baseline() {
        let d = decide(
            &Model::default(),
            &snapshot(vec![session("a", Some(4), false)]),
            0,
        );
        assert!(d.notifications.is_empty());
    }

    #[test]
    fn a_rise_of_an_idle_session_raises_one_notification() {
        let model = seen(vec![session("a", Some(1), false)]);
        let d = decide(&model, &snapshot(vec![session("a", Some(3), false)]), 100);
        assert_eq!(
            d.notifications,
            [NotificationAction::Raise {
                key: "a".into(),
                sessions: vec![Notified {
                    session: "a".into(),
                    project: "my-project".into(),
                    host: Host::Claude,
                    what: Notice::Unread(3)
                }]
            }]
        );
        // The same count again says nothing.
        let again = decide(&d.model, &snapshot(vec![session("a", Some(3), false)]), 500);
        assert!(again.notifications.is_empty());
    }

    #[test]
    fn a_first_count_after_the_baseline_is_a_rise_from_zero() {
        let model = seen(vec![session("a", None, false)]);
        let d = decide(&model, &snapshot(vec![session("a", Some(2), false)]), 10);
        assert_eq!(d.notifications.len(), 1);
        // A session that appears after the start counts from zero too.
        let d = decide(
            &model,
            &snapshot(vec![
                session("a", None, false),
                session("b", Some(1), false),
            ]),
            10,
        );
        assert_eq!(d.notifications.len(), 1);
    }

    #[test]
    fn no_notification_in_a_turn_or_while_muted() {
        let model = seen(vec![session("a", Some(1), false)]);
        let d = decide(&model, &snapshot(vec![session("a", Some(5), true)]), 100);
        assert!(d.notifications.is_empty());
        let mut muted = snapshot(vec![session("a", Some(5), false)]);
        muted.notifications_muted = true;
        let d = decide(&model, &muted, 100);
        assert!(d.notifications.is_empty());
        // The count is remembered: resuming later does not replay the rise.
        let d = decide(&d.model, &snapshot(vec![session("a", Some(5), false)]), 200);
        assert!(d.notifications.is_empty());
    }

    #[test]
    fn at_most_one_a_minute_per_session() {
        let model = seen(vec![session("a", Some(1), false)]);
        let d = decide(&model, &snapshot(vec![session("a", Some(2), false)]), 1000);
        assert_eq!(d.notifications.len(), 1);
        let d = decide(
            &d.model,
            &snapshot(vec![session("a", Some(3), false)]),
            1030,
        );
        assert!(d.notifications.is_empty(), "30 s later: rate limited");
        let d = decide(
            &d.model,
            &snapshot(vec![session("a", Some(4), false)]),
            1061,
        );
        assert_eq!(d.notifications.len(), 1, "61 s after the first");
        // Another session has its own limit.
        let d = decide(
            &d.model,
            &snapshot(vec![
                session("a", Some(4), false),
                session("b", Some(1), false),
            ]),
            1062,
        );
        assert_eq!(d.notifications.len(), 1);
    }

    #[test]
    fn a_fall_says_nothing_and_zero_withdraws() {
        let model = seen(vec![session("a", Some(1), false)]);
        let d = decide(&model, &snapshot(vec![session("a", Some(5), false)]), 100);
        let d = decide(&d.model, &snapshot(vec![session("a", Some(2), false)]), 200);
        assert!(d.notifications.is_empty(), "a fall says nothing");
        let d = decide(&d.model, &snapshot(vec![session("a", Some(0), false)]), 300);
        assert_eq!(
            d.notifications,
            [NotificationAction::Withdraw { key: "a".into() }]
        );
        let d = decide(&d.model, &snapshot(vec![session("a", Some(0), false)]), 400);
        assert!(d.notifications.is_empty(), "withdrawn once");
        // Zero without a notification on screen withdraws nothing.
        let model = seen(vec![session("b", Some(1), false)]);
        let d = decide(&model, &snapshot(vec![session("b", Some(0), false)]), 100);
        assert!(d.notifications.is_empty());
    }

    #[test]
    fn an_unknown_count_keeps_the_last_one_and_an_ended_session_withdraws() {
        let model = seen(vec![session("a", Some(2), false)]);
        let d = decide(&model, &snapshot(vec![session("a", None, false)]), 100);
        assert!(d.notifications.is_empty());
        let d = decide(&d.model, &snapshot(vec![session("a", Some(2), false)]), 200);
        assert!(d.notifications.is_empty(), "unknown is not zero");
        let d = decide(&d.model, &snapshot(vec![session("a", Some(3), false)]), 300);
        assert_eq!(d.notifications.len(), 1);
        let d = decide(&d.model, &snapshot(vec![]), 400);
        assert_eq!(
            d.notifications,
            [NotificationAction::Withdraw { key: "a".into() }]
        );
    }

    #[test]
    fn watch_set_is_idle_registered_sessions_while_hooks_are_active() {
        let mut snap = snapshot(vec![
            session("idle", Some(1), false),
            session("busy", Some(1), true),
            SessionView {
                host: Host::Codex,
                ..session("codex", None, false)
            },
        ]);
        let set = watch_set(&snap);
        assert_eq!(set.keys().collect::<Vec<_>>(), ["idle"]);
        snap.session_hooks_active = false;
        assert!(watch_set(&snap).is_empty());
    }

    #[test]
    fn a_jump_that_raised_nothing_says_where_and_says_why_once() {
        let raised = Raised {
            program: "xterm".into(),
            pid: 10,
            window: 0x40000c,
            tmux: None,
            tab: None,
        };
        assert_eq!(focus_notice(&Ok(raised), false), None);
        assert_eq!(
            focus_notice(&Err(FocusError::ProcessGone), false)
                .unwrap()
                .0,
            "Session ended"
        );
        let refused = Err(FocusError::NotAllowed {
            refusal: session_focus::Refusal::Wayland,
            place: Box::new(session_focus::Place {
                project: "proj".into(),
                folder: Some("/home/p/proj".into()),
                host: Host::Codex,
                terminal: None,
                tmux: Some("work:1.0".into()),
                tab: None,
            }),
        });
        assert_eq!(
            focus_notice(&refused, false).unwrap().1,
            "Cannot go there: this Wayland desktop does not let a program raise another's window. It is proj (Codex) in /home/p/proj, tmux work:1.0."
        );
        assert_eq!(
            focus_notice(&refused, true).unwrap().1,
            "It is proj (Codex) in /home/p/proj, tmux work:1.0."
        );
    }

    fn raised_keys(d: &Decision) -> Vec<(String, Vec<String>)> {
        d.notifications
            .iter()
            .filter_map(|n| match n {
                NotificationAction::Raise { key, sessions } => Some((
                    key.clone(),
                    sessions.iter().map(|s| s.session.clone()).collect(),
                )),
                NotificationAction::Withdraw { .. } => None,
            })
            .collect()
    }

    #[test]
    fn the_rules_people_read_name_the_model_s_numbers() {
        let rules = companion_sessions::settings::NOTIFICATION_RULES;
        assert!(rules[2].contains(&format!("within {COALESCE_SECS} seconds")));
        assert_eq!(RATE_LIMIT_SECS, 60);
        assert!(rules[3].contains("one notification a minute per session"));
    }

    /// Issue 22, item 4: the counts come from files; their total saturates instead of
    /// overflowing (a panic in a debug build, a wrapped count otherwise).
    #[test]
    fn the_unread_total_saturates() {
        let snap = snapshot(vec![
            session("a", Some(u64::MAX), false),
            session("b", Some(7), false),
        ]);
        assert_eq!(total_unread(&snap), u64::MAX);
        assert_eq!(icon_state(&snap).count_text, "99+");
        // Both rise at once: one notification for the two, its total saturated too.
        let model = seen(vec![
            session("a", Some(0), false),
            session("b", Some(0), false),
        ]);
        let d = decide(&model, &snap, 100);
        assert!(!d.notifications.is_empty());
    }

    #[test]
    fn the_session_being_looked_at_is_not_notified() {
        let model = seen(vec![
            session("a", Some(1), false),
            session("b", Some(1), false),
        ]);
        let mut snap = snapshot(vec![
            session("a", Some(2), false),
            session("b", Some(2), false),
        ]);
        snap.looked_at = Some("a".into());
        assert_eq!(silenced(&snap, &snap.sessions[0]), Some(Silence::LookedAt));
        assert_eq!(silenced(&snap, &snap.sessions[1]), None);
        let d = decide(&model, &snap, 100);
        assert_eq!(raised_keys(&d), [("b".to_string(), vec!["b".to_string()])]);
        // Its count is taken in: looking away later does not replay the rise.
        let d = decide(
            &d.model,
            &snapshot(vec![
                session("a", Some(2), false),
                session("b", Some(2), false),
            ]),
            200,
        );
        assert!(d.notifications.is_empty());
        assert_eq!(icon_state(&snap).count_text, "4", "the icon still counts");
    }

    #[test]
    fn rises_within_seconds_become_one_notification_replaced_in_place() {
        let three = |a, b, c| {
            snapshot(vec![
                session("a", Some(a), false),
                session("b", Some(b), false),
                SessionView {
                    project: "other".into(),
                    ..session("c", Some(c), false)
                },
            ])
        };
        let model = decide(&Model::default(), &three(0, 0, 0), 0).model;
        // a rises: its own notification.
        let d = decide(&model, &three(2, 0, 0), 1000);
        assert_eq!(raised_keys(&d), [("a".to_string(), vec!["a".to_string()])]);
        // b rises 2 s later: the same notification (key a) now holds both.
        let d = decide(&d.model, &three(2, 3, 0), 1002);
        assert_eq!(
            raised_keys(&d),
            [("a".to_string(), vec!["a".to_string(), "b".to_string()])]
        );
        // c rises 4 s after that (within 5 s of the last replace): three sessions, 7 unread.
        let d = decide(&d.model, &three(2, 3, 2), 1006);
        let NotificationAction::Raise { key, sessions } = &d.notifications[0] else {
            panic!("{:?}", d.notifications)
        };
        assert_eq!(key, "a");
        assert_eq!(
            notification_text(sessions),
            ("3 sessions · 7 unread".into(), "my-project, other".into())
        );
        assert_eq!(d.notifications.len(), 1, "replaced, never stacked");
        // Back to zero everywhere: the one notification is withdrawn once.
        let d = decide(&d.model, &three(0, 0, 1), 1100);
        assert!(d.notifications.is_empty(), "c still has unread");
        let d = decide(&d.model, &three(0, 0, 0), 1101);
        assert_eq!(
            d.notifications,
            [NotificationAction::Withdraw { key: "a".into() }]
        );
        // Rises far apart stay apart.
        let d = decide(&d.model, &three(1, 0, 0), 2000);
        let d = decide(&d.model, &three(1, 1, 0), 2030);
        assert_eq!(raised_keys(&d), [("b".to_string(), vec!["b".to_string()])]);
    }

    #[test]
    fn two_sessions_rising_in_one_snapshot_share_one_notification() {
        let model = seen(vec![
            session("a", Some(0), false),
            session("b", Some(0), false),
        ]);
        let d = decide(
            &model,
            &snapshot(vec![
                session("a", Some(1), false),
                session("b", Some(4), false),
            ]),
            50,
        );
        assert_eq!(
            raised_keys(&d),
            [("a".to_string(), vec!["a".to_string(), "b".to_string()])]
        );
    }

    #[test]
    fn quiet_hours_across_midnight_silence_but_the_icon_counts() {
        let model = seen(vec![session("a", Some(1), false)]);
        let mut snap = snapshot(vec![session("a", Some(5), false)]);
        snap.quiet_hours = Some(QuietHours {
            start: "19:00".into(),
            end: "08:00".into(),
        });
        for (minute, quiet) in [
            (23 * 60, true),
            (2 * 60, true),
            (19 * 60, true),
            (7 * 60 + 59, true),
            (8 * 60, false),
            (12 * 60, false),
            (18 * 60 + 59, false),
        ] {
            snap.local_minute = minute;
            assert_eq!(quiet_now(&snap), quiet, "minute {minute}");
        }
        snap.local_minute = 23 * 60;
        assert_eq!(
            silenced(&snap, &snap.sessions[0]),
            Some(Silence::QuietHours)
        );
        let d = decide(&model, &snap, 100);
        assert!(d.notifications.is_empty());
        assert_eq!(
            d.view.icon.count_text, "5",
            "while quiet, the icon still counts"
        );
        // Morning: the night's count is not replayed; the next rise notifies.
        snap.local_minute = 9 * 60;
        let d = decide(&d.model, &snap, 200);
        assert!(d.notifications.is_empty());
        snap.sessions[0].unread = Some(6);
        assert_eq!(decide(&d.model, &snap, 300).notifications.len(), 1);
    }

    #[test]
    fn a_muted_project_never_notifies_others_do() {
        let other = |id: &str, unread| SessionView {
            project: "loud".into(),
            ..session(id, Some(unread), false)
        };
        let model = seen(vec![session("a", Some(0), false), other("b", 0)]);
        let mut snap = snapshot(vec![session("a", Some(3), false), other("b", 2)]);
        snap.muted_projects.insert("my-project".into());
        assert_eq!(
            silenced(&snap, &snap.sessions[0]),
            Some(Silence::ProjectMuted)
        );
        let d = decide(&model, &snap, 10);
        assert_eq!(raised_keys(&d), [("b".to_string(), vec!["b".to_string()])]);
        assert_eq!(d.view.icon.count_text, "5");
    }

    /// A session that needs you since `since` (Unix seconds).
    fn waiting(id: &str, since: i64) -> SessionView {
        SessionView {
            state: SessionState::NeedsYou,
            since: Some(since),
            reason: Some(WaitReason::Permission),
            in_turn: true,
            ..session(id, Some(0), true)
        }
    }

    fn wait_raises(d: &Decision) -> Vec<(String, Vec<String>)> {
        raised_keys(d)
            .into_iter()
            .filter(|(k, _)| k.starts_with("needs-you:"))
            .collect()
    }

    #[test]
    fn a_wait_marks_the_icon_and_comes_first_in_the_menu() {
        let mut snap = snapshot(vec![
            session("a", Some(3), false),
            SessionView {
                project: "web".into(),
                ..waiting("b", 1000)
            },
        ]);
        snap.sessions[1].host = Host::Codex;
        let icon = icon_state(&snap);
        assert!(icon.needs_you);
        assert_eq!(icon.count_text, "3", "the mark is not the count");
        let lines = menu_lines(&snap, 1000 + 4 * 60 + 10);
        assert_eq!(
            lines[2],
            MenuLine::Session {
                label: "web · Codex · needs you (permission, 4 min)".into(),
                session: "b".into()
            }
        );
        assert_eq!(
            lines[3],
            MenuLine::Session {
                label: "my-project · Claude Code · 3 unread · idle".into(),
                session: "a".into()
            }
        );
        assert_eq!(
            session_line(&snap.sessions[1], 1010),
            "web · Codex · needs you (permission, just now)"
        );
        snap.sessions[1].reason = Some(WaitReason::Question);
        assert_eq!(
            session_line(&snap.sessions[1], 1000 + 7300),
            "web · Codex · needs you (question, 2 h)"
        );
        assert!(!icon_state(&snapshot(vec![session("a", Some(3), true)])).needs_you);
        // Grey and amber keep the mark.
        snap.fabric = FabricLine::Down { reason: "x".into() };
        snap.recent_failure = true;
        let icon = icon_state(&snap);
        assert!(icon.greyed && icon.warning && icon.needs_you);
    }

    #[test]
    fn one_notification_per_wait_after_the_grace_and_none_for_an_answer_given_at_once() {
        let model = seen(vec![session("a", Some(0), false)]);
        // Asked at 1000: nothing during the grace; the model wants to decide again at 1005.
        let d = decide(&model, &snapshot(vec![waiting("a", 1000)]), 1002);
        assert!(d.notifications.is_empty());
        assert_eq!(d.wake_at, Some(1005));
        assert!(d.view.icon.needs_you, "the mark shows at once");
        // Answered at once: no notification ever.
        let answered = decide(&d.model, &snapshot(vec![session("a", Some(0), true)]), 1003);
        assert!(answered.notifications.is_empty());
        assert_eq!(answered.wake_at, None);
        // Not answered: one notification at the grace, even in a turn.
        let d = decide(&d.model, &snapshot(vec![waiting("a", 1000)]), 1005);
        assert_eq!(
            wait_raises(&d),
            [("needs-you:a".to_string(), vec!["a".to_string()])]
        );
        let NotificationAction::Raise { sessions, .. } = &d.notifications[0] else {
            panic!()
        };
        assert_eq!(
            notification_text(sessions),
            (
                "my-project needs you".into(),
                "Claude Code is waiting for your permission.".into()
            )
        );
        // Only one per wait.
        let again = decide(&d.model, &snapshot(vec![waiting("a", 1000)]), 1200);
        assert!(again.notifications.is_empty());
        // Answered: withdrawn.
        let done = decide(
            &again.model,
            &snapshot(vec![session("a", Some(0), true)]),
            1201,
        );
        assert_eq!(
            done.notifications,
            [NotificationAction::Withdraw {
                key: "needs-you:a".into()
            }]
        );
        // The session gone: withdrawn too.
        let d = decide(&done.model, &snapshot(vec![waiting("a", 1300)]), 1310);
        assert_eq!(wait_raises(&d).len(), 1);
        let gone = decide(&d.model, &snapshot(vec![]), 1311);
        assert_eq!(
            gone.notifications,
            [NotificationAction::Withdraw {
                key: "needs-you:a".into()
            }]
        );
    }

    #[test]
    fn a_remote_s_sessions_and_links_are_named_in_the_menu_and_notifications() {
        use companion_remotes::board::{Down, LinkState};
        let remote = |mut s: SessionView| {
            s.remote = Some("build-box".into());
            s
        };
        let model = seen(vec![]);
        let mut snap = snapshot(vec![remote(waiting("remote:me@build-box/s-9", 1000))]);
        snap.muted_projects.insert("other".into());
        snap.remotes = vec![
            RemoteView {
                label: "build-box".into(),
                link: LinkState::Up { since: 900 },
                sessions: 1,
            },
            RemoteView {
                label: "gpu".into(),
                link: LinkState::Down {
                    since: 950,
                    why: Down::HostKey {
                        by_hand: "ssh gpu".into(),
                    },
                },
                sessions: 0,
            },
        ];
        let d = decide(&model, &snap, 1065);
        let lines: Vec<String> = d
            .view
            .menu
            .iter()
            .filter_map(|l| match l {
                MenuLine::Session { label, .. } | MenuLine::Info(label) => Some(label.clone()),
                _ => None,
            })
            .collect();
        assert!(
            lines.contains(
                &"my-project · Claude Code on build-box · needs you (permission, 1 min)"
                    .to_string()
            ),
            "{lines:?}"
        );
        assert!(lines.contains(&"build-box: connected, 1 session".to_string()));
        assert!(
            lines.iter().any(|l| l.starts_with("gpu: since ")
                && l.ends_with(", its host key is not known yet: run `ssh gpu` once")),
            "{lines:?}"
        );
        assert!(d.view.icon.needs_you, "a remote's wait marks the icon");
        let NotificationAction::Raise { sessions, .. } = &d.notifications[0] else {
            panic!("{:?}", d.notifications)
        };
        assert_eq!(sessions[0].project, "my-project on build-box");
        // A muted project is muted on a remote too.
        snap.muted_projects.insert("my-project".into());
        assert!(decide(&seen(vec![]), &snap, 1065).notifications.is_empty());
    }

    #[test]
    fn a_wait_is_silenced_by_the_person_s_rules_but_not_by_the_turn() {
        for mute in 0..4 {
            let model = seen(vec![]);
            let mut snap = snapshot(vec![waiting("a", 1000)]);
            match mute {
                0 => snap.notifications_muted = true,
                1 => {
                    snap.quiet_hours = Some(QuietHours {
                        start: "00:00".into(),
                        end: "23:59".into(),
                    })
                }
                2 => {
                    snap.muted_projects.insert("my-project".into());
                }
                _ => snap.looked_at = Some("a".into()),
            }
            let d = decide(&model, &snap, 1010);
            assert!(d.notifications.is_empty(), "rule {mute}");
            assert!(d.view.icon.needs_you, "the icon still marks it");
            // Decided once: looking away later does not replay it.
            let d = decide(&d.model, &snapshot(vec![waiting("a", 1000)]), 1020);
            assert!(d.notifications.is_empty(), "rule {mute} replayed");
        }
        assert_eq!(
            silenced(&snapshot(vec![waiting("a", 0)]), &waiting("a", 0)),
            Some(Silence::InTurn),
            "mail would be silenced in the turn"
        );
    }

    #[test]
    fn a_second_wait_within_a_minute_waits_for_the_rate_limit_and_waits_coalesce() {
        let model = seen(vec![]);
        let d = decide(&model, &snapshot(vec![waiting("a", 1000)]), 1006);
        assert_eq!(wait_raises(&d).len(), 1);
        let d = decide(&d.model, &snapshot(vec![session("a", Some(0), true)]), 1010);
        // A new wait at 1020: its grace is up at 1025, its rate limit at 1066.
        let d = decide(&d.model, &snapshot(vec![waiting("a", 1020)]), 1030);
        assert!(d.notifications.is_empty());
        assert_eq!(d.wake_at, Some(1066));
        let d = decide(&d.model, &snapshot(vec![waiting("a", 1020)]), 1066);
        assert_eq!(wait_raises(&d).len(), 1);
        // Two sessions whose graces end within seconds share one notification.
        let model = seen(vec![]);
        let d = decide(&model, &snapshot(vec![waiting("a", 2000)]), 2005);
        let d = decide(
            &d.model,
            &snapshot(vec![
                waiting("a", 2000),
                SessionView {
                    project: "web".into(),
                    ..waiting("b", 2002)
                },
            ]),
            2007,
        );
        let NotificationAction::Raise { key, sessions } = &d.notifications[0] else {
            panic!("{:?}", d.notifications)
        };
        assert_eq!(key, "needs-you:a");
        assert_eq!(
            notification_text(sessions),
            ("2 sessions need you".into(), "my-project, web".into())
        );
        // One answered: replaced in place by the other alone.
        let d = decide(
            &d.model,
            &snapshot(vec![
                session("a", Some(0), true),
                SessionView {
                    project: "web".into(),
                    ..waiting("b", 2002)
                },
            ]),
            2010,
        );
        assert_eq!(
            wait_raises(&d),
            [("needs-you:a".to_string(), vec!["b".to_string()])]
        );
    }

    #[test]
    fn a_long_turn_finishing_says_so_only_when_set() {
        let finished = |since: i64, started: i64| SessionView {
            state: SessionState::Finished,
            since: Some(since),
            turn_started: Some(started),
            ..session("a", Some(0), false)
        };
        let working = SessionView {
            state: SessionState::Working,
            since: Some(0),
            turn_started: Some(0),
            ..session("a", Some(0), true)
        };
        let model = seen(vec![working.clone()]);
        // Off by default.
        let d = decide(&model, &snapshot(vec![finished(900, 0)]), 901);
        assert!(d.notifications.is_empty());
        let mut snap = snapshot(vec![finished(900, 0)]);
        snap.long_turn_minutes = Some(10);
        let d = decide(&model, &snap, 901);
        let NotificationAction::Raise { key, sessions } = &d.notifications[0] else {
            panic!("{:?}", d.notifications)
        };
        assert_eq!(key, "long-turn:a");
        assert_eq!(
            notification_text(sessions),
            (
                "my-project finished".into(),
                "Claude Code finished a turn of 15 min.".into()
            )
        );
        // Once; and withdrawn when the next turn starts.
        assert!(decide(&d.model, &snap, 950).notifications.is_empty());
        let mut next = snapshot(vec![working]);
        next.long_turn_minutes = Some(10);
        assert_eq!(
            decide(&d.model, &next, 960).notifications,
            [NotificationAction::Withdraw {
                key: "long-turn:a".into()
            }]
        );
        // A short turn, an interrupted one, or one finished before the tray started: nothing.
        snap.sessions[0] = finished(500, 0);
        assert!(decide(&model, &snap, 501).notifications.is_empty());
        snap.sessions[0] = SessionView {
            interrupted: true,
            ..finished(900, 0)
        };
        assert!(decide(&model, &snap, 901).notifications.is_empty());
        snap.sessions[0] = finished(900, 0);
        assert!(
            decide(&Model::default(), &snap, 901)
                .notifications
                .is_empty()
        );
    }

    #[test]
    fn notification_text_names_the_project_or_counts_the_sessions() {
        let n = |session: &str, project: &str, unread| Notified {
            session: session.into(),
            project: project.into(),
            host: Host::Claude,
            what: Notice::Unread(unread),
        };
        assert_eq!(
            notification_text(&[n("a", "proj", 3)]),
            ("proj".into(), "3 unread on the project board".into())
        );
        assert_eq!(
            notification_text(&[n("a", "web", 3), n("b", "api", 2), n("c", "web", 2)]),
            ("3 sessions · 7 unread".into(), "web, api".into())
        );
    }
}
