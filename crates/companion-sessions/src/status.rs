//! `fabric-session status`: one snapshot of everything the hooks depend on, as plain text for
//! a person and as JSON (schema `fabric-session-status/1`, documented in `docs/status-json.md`)
//! for the tray and the dashboard. Read-only: it prunes nothing and calls nothing.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::hub::{DownReason, FabricState, read_fabric_state};
use crate::services;
use crate::session_state::{self, SessionState, Signal, StateRecord, ToolName, WaitReason};
use crate::spool::{self, BoardRecord};
use companion_hosts::approval::{self, HostApproval};
use companion_hosts::host::Host;
use companion_hosts::host_version;
use companion_hosts::install::HookStateKind;
use companion_hosts::registration::{self, Scope};
use companion_platform::paths::Paths;

/// The schema name carried in the JSON.
pub const STATUS_SCHEMA: &str = "fabric-session-status/1";

/// Whether Fabric runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum FabricRunState {
    Running,
    Down,
}

/// Whether the session hooks do anything: Fabric runs and advertises `session-hooks/1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum SessionHooks {
    Active,
    Inert,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Status {
    #[cfg_attr(feature = "ts", ts(type = "\"fabric-session-status/1\""))]
    pub schema: &'static str,
    pub fabric: FabricStatus,
    pub session_hooks: SessionHooks,
    pub hosts: Vec<HostStatus>,
    pub services: ServicesStatus,
    pub log: LogStatus,
    pub sessions: Vec<SessionStatus>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FabricStatus {
    pub state: FabricRunState,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub down_reason: Option<DownReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub origin: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub started_at: Option<String>,
    pub features: Vec<String>,
    pub hub_json: PathBuf,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HostStatus {
    pub host: Host,
    pub name: &'static str,
    pub fabric_registered: bool,
    pub scopes: Vec<Scope>,
    pub hooks: HookSummary,
    /// Whether the host runs our hooks, read from its own record of the person's approval;
    /// absent when none of ours is in its config.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub approval: Option<ApprovalSummary>,
    /// The host's version, when its files say it, against the one our hooks were tested with.
    pub host_version: HostVersionStatus,
}

/// A host's approval of our hooks, with what is left to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalSummary {
    #[serde(flatten)]
    pub record: HostApproval,
    /// What is left to do, in words; absent when the host needs no approval.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub description: Option<String>,
}

impl ApprovalSummary {
    /// Whether the host runs our hooks as installed.
    pub fn runs(&self) -> bool {
        self.record.approval.runs()
    }
}

/// A host's installed version against the tested one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HostVersionStatus {
    /// `null` when no file beside the host's program says it (or there is no program).
    pub installed: Option<String>,
    /// The version the hooks were tested with.
    pub tested: &'static str,
    /// The installed version is older than the tested one.
    pub older_than_tested: bool,
    /// The host's program the version was read beside.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub program: Option<PathBuf>,
}

impl HostVersionStatus {
    /// A warning for a person when the installed version is older than the tested one.
    pub fn warning(&self, host: Host) -> Option<String> {
        let installed = self
            .installed
            .as_deref()
            .filter(|_| self.older_than_tested)?;
        Some(format!(
            "{} {installed} is older than {}, the version these hooks were tested with: update it",
            host.display_name(),
            self.tested
        ))
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServicesStatus {
    pub dir: PathBuf,
    pub descriptors: usize,
    pub local: usize,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LogStatus {
    pub path: PathBuf,
    pub rotated: PathBuf,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionStatus {
    pub id: String,
    pub host: Host,
    pub project: String,
    pub started_at: String,
    pub host_pid: u32,
    /// The tmux pane the session runs in (`%N`), when the terminal ids its session-start hook
    /// recorded have one (checked again when read back: `%` and digits only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub tmux_pane: Option<String>,
    /// A prompt started a turn after the last Stop.
    pub in_turn: bool,
    /// What the session is doing, from its hooks ([`crate::session_state`]): `idle`,
    /// `working`, `needs-you`, `finished` or `failed`.
    pub state: SessionState,
    /// Since when (RFC 3339, to the millisecond); absent before any hook recorded a state.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub state_since: Option<String>,
    /// Needs you: why, in a word (`permission`, `question`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub reason: Option<WaitReason>,
    /// Needs you: the tool waiting, when the host names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub tool: Option<ToolName>,
    /// Needs you: a subagent asked.
    pub subagent: bool,
    /// Finished: the turn was interrupted (or its prompt refused), not ended by the agent.
    pub interrupted: bool,
    /// When the current (or last) turn started.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub turn_started_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub last_turn: Option<TurnStatus>,
    /// The last board reading (`null` when the board never gave a count).
    pub board: Option<BoardRecord>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TurnStatus {
    pub seq: u64,
    pub at: String,
    /// What the turn left changed against HEAD (untracked files included); absent until the
    /// worker measured this turn, `null` outside a git repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub files_changed: Option<Option<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub lines_added: Option<Option<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub lines_removed: Option<Option<u64>>,
}

/// Whether our hooks are in a host's config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HookSummary {
    /// `installed`, `not-installed`, `stale` (installed, but the command's program does not
    /// exist), `incomplete` (some of our events missing) or `unreadable` (the config does not
    /// parse).
    pub state: HookStateKind,
    /// The program our installed command runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub command_path: Option<PathBuf>,
    /// Words for a person.
    pub description: String,
}

impl HookSummary {
    /// Words for a person.
    pub fn describe(&self) -> &str {
        &self.description
    }
}

/// Our hooks' state in one host's config.
pub fn hook_summary(host: Host, paths: &Paths) -> HookSummary {
    let state = companion_hosts::install::hook_state(host, paths);
    HookSummary {
        state: state.kind(),
        command_path: state.command_path().map(Path::to_path_buf),
        description: state.describe(),
    }
}

/// Whether `host` runs the hooks of ours in its config, from its own record; `None` when none
/// of ours is there.
pub fn approval_summary(host: Host, paths: &Paths, hooks: &HookSummary) -> Option<ApprovalSummary> {
    if matches!(
        hooks.state,
        HookStateKind::NotInstalled | HookStateKind::Unreadable
    ) {
        return None;
    }
    let record = approval::read(host, paths)?;
    let description = record.approval.describe(host);
    Some(ApprovalSummary {
        record,
        description,
    })
}

/// The host's installed version against the tested one (files only, no process started).
pub fn host_version(host: Host, paths: &Paths) -> HostVersionStatus {
    let found = host_version::installed(host, paths);
    let installed = found.as_ref().map(|f| f.version.clone());
    HostVersionStatus {
        older_than_tested: installed
            .as_deref()
            .is_some_and(|v| host_version::older_than_tested(host, v)),
        installed,
        tested: host_version::tested(host),
        program: found.map(|f| f.program),
    }
}

/// Collects the snapshot. `cwd` is where Claude Code's local and project scopes are looked up.
pub fn collect(paths: &Paths, cwd: Option<&Path>) -> Status {
    let fabric = read_fabric_state(&paths.hub_json());
    let fabric_status = match &fabric {
        FabricState::Running(hub) => FabricStatus {
            state: FabricRunState::Running,
            down_reason: None,
            origin: Some(hub.origin.clone()),
            pid: Some(hub.pid),
            started_at: hub.started_at.clone(),
            features: hub.features.clone(),
            hub_json: paths.hub_json(),
        },
        FabricState::Down(reason) => FabricStatus {
            state: FabricRunState::Down,
            down_reason: Some(*reason),
            origin: None,
            pid: None,
            started_at: None,
            features: Vec::new(),
            hub_json: paths.hub_json(),
        },
    };
    let hosts = Host::ALL
        .into_iter()
        .map(|host| {
            let scopes = registration::fabric_scopes(host, paths, cwd);
            let hooks = hook_summary(host, paths);
            HostStatus {
                host,
                name: host.display_name(),
                fabric_registered: !scopes.is_empty(),
                scopes,
                approval: approval_summary(host, paths, &hooks),
                hooks,
                host_version: host_version(host, paths),
            }
        })
        .collect();
    let count = services::count_descriptors(&paths.services_dir);
    let sessions = spool::live_sessions(&paths.sessions_dir())
        .into_iter()
        .map(|live| {
            let state = session_state(
                paths,
                live.record.host,
                live.record.host_pid,
                live.id.as_str(),
                live.state.as_ref(),
                live.in_turn,
            );
            (live, state)
        })
        .map(|(live, state)| SessionStatus {
            id: live.id.to_string(),
            host: live.record.host,
            project: live.record.project,
            started_at: live.record.started_at,
            host_pid: live.record.host_pid,
            tmux_pane: live.record.terminal.tmux_pane,
            in_turn: live.in_turn,
            state: state.as_ref().map_or(
                if live.in_turn {
                    SessionState::Working
                } else {
                    SessionState::Idle
                },
                |s| s.state,
            ),
            state_since: state.as_ref().map(|s| s.since.clone()),
            reason: state.as_ref().and_then(|s| s.reason),
            tool: state.as_ref().and_then(|s| s.tool.clone()),
            subagent: state.as_ref().is_some_and(|s| s.subagent),
            interrupted: state.as_ref().is_some_and(|s| s.interrupted),
            turn_started_at: state.as_ref().and_then(|s| s.turn_started_at.clone()),
            last_turn: live.last_turn.map(|turn| {
                let stats = live.turn_stats.filter(|stats| stats.seq == turn.seq);
                TurnStatus {
                    seq: turn.seq,
                    at: turn.at,
                    files_changed: stats.as_ref().map(|s| s.files_changed),
                    lines_added: stats.as_ref().map(|s| s.lines_added),
                    lines_removed: stats.as_ref().map(|s| s.lines_removed),
                }
            }),
            board: live.board,
        })
        .collect();
    Status {
        schema: STATUS_SCHEMA,
        session_hooks: if fabric.session_hooks_active() {
            SessionHooks::Active
        } else {
            SessionHooks::Inert
        },
        fabric: fabric_status,
        hosts,
        services: ServicesStatus {
            dir: paths.services_dir.clone(),
            descriptors: count.total,
            local: count.local,
        },
        log: LogStatus {
            path: paths.hook_log(),
            rotated: crate::hook_log::rotated_path(&paths.hook_log()),
        },
        sessions,
    }
}

/// A session's state as its hooks recorded it, with what the host's own record adds where its
/// hooks stay silent ([`crate::host_activity`]: Claude Code runs no hook on an interrupt or a
/// refused prompt, and none between an approval and the end of the approved command; its own
/// record says `idle`, or `busy`, from then on).
pub fn session_state(
    paths: &Paths,
    host: Host,
    host_pid: u32,
    session: &str,
    recorded: Option<&StateRecord>,
    in_turn: bool,
) -> Option<StateRecord> {
    use crate::host_activity::{self, Activity};
    let recorded = recorded.cloned();
    let busy = recorded.as_ref().map_or(in_turn, |r| r.state.in_turn());
    if !busy {
        return recorded;
    }
    let Some((activity, at)) = host_activity::activity(host, paths, host_pid, session) else {
        return recorded;
    };
    let record = recorded.as_ref()?;
    match activity {
        Activity::Idle => session_state::apply(Some(record), &Signal::HostIdle, at).or(recorded),
        // Busy: nothing is on the host's screen for the person any more, so every open wait
        // was answered, each as its own agent's answer.
        Activity::Busy if record.state == SessionState::NeedsYou => {
            let answered = record
                .open_waits()
                .into_iter()
                .fold(record.clone(), |r, wait| {
                    let signal = Signal::Answered { agent: wait.agent };
                    session_state::apply(Some(&r), &signal, at).unwrap_or(r)
                });
            Some(answered)
        }
        Activity::Busy | Activity::Waiting => recorded,
    }
}

/// A session's state in words: `working`, `needs you (permission, 4 min)`, `finished`,
/// `finished (interrupted)`, `failed`, `idle`. `now_ms` is the time the waiting is counted to.
pub fn state_words(session: &SessionStatus, now_ms: i64) -> String {
    match session.state {
        SessionState::NeedsYou => {
            let mut parts = Vec::new();
            parts.push(
                session
                    .reason
                    .unwrap_or(WaitReason::Permission)
                    .word()
                    .to_string(),
            );
            if let Some(since) = session
                .state_since
                .as_deref()
                .and_then(session_state::millis)
            {
                parts.push(waited(now_ms.saturating_sub(since)));
            }
            format!("needs you ({})", parts.join(", "))
        }
        SessionState::Finished if session.interrupted => "finished (interrupted)".to_string(),
        other => other.word().to_string(),
    }
}

/// How long a wait has lasted, in the largest whole unit: `12 s`, `4 min`, `2 h`, `3 d`.
pub fn waited(ms: i64) -> String {
    let secs = ms.max(0) / 1000;
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        3600..86_400 => format!("{} h", secs / 3600),
        _ => format!("{} d", secs / 86_400),
    }
}

/// The plain-text report.
pub fn render_text(status: &Status) -> String {
    let mut out = String::new();
    let fabric = &status.fabric;
    match fabric.state {
        FabricRunState::Running => out.push_str(&format!(
            "Fabric: running at {} (pid {})\n",
            fabric.origin.as_deref().unwrap_or("?"),
            fabric.pid.unwrap_or(0)
        )),
        FabricRunState::Down => out.push_str(&format!(
            "Fabric: down ({})\n",
            fabric.down_reason.map_or("unknown", DownReason::describe)
        )),
    }
    let features = if fabric.features.is_empty() {
        "none".to_string()
    } else {
        fabric.features.join(", ")
    };
    out.push_str(&format!("Features: {features}\n"));
    let session_hooks = match status.session_hooks {
        SessionHooks::Active => "active",
        SessionHooks::Inert => "inert",
    };
    out.push_str(&format!("Session hooks: {session_hooks}\n"));
    for host in &status.hosts {
        let registered = if host.fabric_registered {
            let scopes: Vec<&str> = host.scopes.iter().map(|s| scope_word(*s)).collect();
            format!("fabric registered ({})", scopes.join(", "))
        } else {
            "fabric not registered".to_string()
        };
        let version = match &host.host_version.installed {
            Some(version) => format!(" {version}"),
            None => String::new(),
        };
        let approval = match host
            .approval
            .as_ref()
            .and_then(|a| a.description.as_deref())
        {
            Some(text) => format!(", {text}"),
            None => String::new(),
        };
        out.push_str(&format!(
            "{}{version}: {registered}; hooks {}{approval}\n",
            host.name,
            host.hooks.describe()
        ));
        if let Some(warning) = host.host_version.warning(host.host) {
            out.push_str(&format!("  Warning: {warning}\n"));
        }
    }
    out.push_str(&format!(
        "Service descriptors: {} in {} ({} on 127.0.0.1)\n",
        status.services.descriptors,
        status.services.dir.display(),
        status.services.local
    ));
    out.push_str(&format!("Hook log: {}\n", status.log.path.display()));
    if status.sessions.is_empty() {
        out.push_str("Live sessions: none\n");
    } else {
        out.push_str("Live sessions:\n");
        for session in &status.sessions {
            let unread = match &session.board {
                Some(board) => format!("{} unread", board.unread),
                None => "unread unknown".to_string(),
            };
            let activity = state_words(session, companion_platform::clock::now_millis());
            out.push_str(&format!(
                "  {} · {} · {unread} · {activity} ({})\n",
                if session.project.is_empty() {
                    "?"
                } else {
                    &session.project
                },
                session.host,
                session.id
            ));
        }
    }
    out
}

fn scope_word(scope: Scope) -> &'static str {
    match scope {
        Scope::User => "user",
        Scope::Local => "local",
        Scope::Project => "project",
    }
}
