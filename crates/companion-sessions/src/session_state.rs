//! One state per session — working, needs you, finished, failed (and idle before its first
//! turn; gone is a pruned spool, as today) — as a small pure state machine over the hosts' own
//! hook events ([`Signal`]). [`apply`] takes the record the spool holds, a signal and its time
//! and gives the next record, or `None` when the signal changes nothing. No file, clock or
//! process here: the hooks ([`crate::spool::Spool::apply_signal`]) and the readers
//! ([`crate::status`]) feed it.
//!
//! The rules, each unit-tested below:
//! - a prompt starts a turn: `working`;
//! - each agent's permission prompt or question (the main thread is one agent, each subagent
//!   another, by the host's `agent_id`) opens that agent's own [`Wait`]; the session needs you
//!   while any wait is open, since the oldest, and why in a word (`permission`, `question`)
//!   with the tool's name when the host gives it; the same agent asking again keeps its first
//!   time; at most [`MAX_WAITS`] are kept;
//! - an event ends only its own agent's wait: that agent's tool ran or failed, or the host
//!   says its permission was answered; a subagent's end ([`Signal::SubagentStop`]) ends that
//!   subagent's. When the last wait ends, the state from beneath the waits comes back (the
//!   main turn may have finished meanwhile); the main thread's answer means it works again;
//! - a wait the host does not attribute (Claude Code's permission notification names no agent)
//!   is [`Agent::Unnamed`]: it adds nothing while another wait is open, a named ask takes it
//!   over, and any agent's answer ends it;
//! - Stop ends the turn (`finished`), StopFailure on an error (`failed`), an interrupt too
//!   (`finished`, marked interrupted); Stop ends the main thread's wait, not a subagent's (the
//!   subagent is still waiting: the turn's end comes back when it is answered);
//! - a subagent's prompt changes nothing; the main thread's prompt starts a new turn and ends
//!   its own wait, while a subagent's stays open until that subagent's answer or end;
//! - the host saying its prompt is idle (Claude Code: its own session record, or its
//!   `idle_prompt` notification) ends a turn the hooks never said ended (an interrupt or a
//!   refused prompt fires no hook there): `finished`, interrupted;
//! - a new start or a resume clears everything (`idle`); a compaction changes nothing;
//! - a signal older than the record (hooks can finish out of order) changes nothing.

use serde::{Deserialize, Serialize};

use companion_platform::clock;

/// What a session is doing, as `status --json`, the tray and the dashboard show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum SessionState {
    /// Started or resumed; no turn yet.
    Idle,
    /// A turn is going on (a prompt was submitted, a tool ran).
    Working,
    /// Stopped on a permission prompt or a question: waiting for the person.
    NeedsYou,
    /// The turn ended (or was interrupted); the host waits for the next prompt.
    Finished,
    /// The turn ended on an error.
    Failed,
}

impl SessionState {
    /// The word a person reads.
    pub fn word(self) -> &'static str {
        match self {
            SessionState::Idle => "idle",
            SessionState::Working => "working",
            SessionState::NeedsYou => "needs you",
            SessionState::Finished => "finished",
            SessionState::Failed => "failed",
        }
    }

    /// A turn is going on (working, or waiting for the person inside it).
    pub fn in_turn(self) -> bool {
        matches!(self, SessionState::Working | SessionState::NeedsYou)
    }
}

/// Why a session needs you, in a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum WaitReason {
    /// A tool waits for the person's permission.
    Permission,
    /// The agent asked the person a question (or an MCP server asked for input).
    Question,
}

impl WaitReason {
    pub fn word(self) -> &'static str {
        match self {
            WaitReason::Permission => "permission",
            WaitReason::Question => "question",
        }
    }
}

/// A tool's name as a host gives it, kept only when it is a plain name (`Bash`,
/// `mcp__server__tool`): letters, digits, `_ - . :`, at most 64 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(type = "string"))]
pub struct ToolName(String);

impl ToolName {
    pub const MAX_LEN: usize = 64;

    pub fn new(name: &str) -> Option<Self> {
        let ok = !name.is_empty()
            && name.len() <= Self::MAX_LEN
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'));
        ok.then(|| ToolName(name.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Serialize for ToolName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// Only a plain name reads back: anything else in a file is refused, never shown.
impl<'de> Deserialize<'de> for ToolName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        ToolName::new(&text).ok_or_else(|| serde::de::Error::custom("not a plain tool name"))
    }
}

/// The longest subagent id kept as the host gives it; a longer or odd one is kept as a digest.
const MAX_AGENT_ID_LEN: usize = 64;

/// The most waits one session keeps open (a host flooding asks from new agents adds no more).
pub const MAX_WAITS: usize = 16;

/// A subagent's id as the host gives it (`agent_id`), kept only to tell its wait from
/// another's: a plain id (letters, digits, `_ - . :`, at most 64) as given, anything else
/// as a digest of it, so two subagents stay apart and nothing odd reaches a file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct AgentId(String);

impl AgentId {
    /// The id of a subagent from the host's `agent_id`; `None` when empty.
    pub fn from_host(raw: &str) -> Option<Self> {
        if raw.is_empty() {
            return None;
        }
        if Self::is_plain(raw) {
            return Some(AgentId(raw.to_string()));
        }
        // FNV-1a: stable across runs and versions (the spool outlives a program).
        let digest = raw.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        Some(AgentId(format!("h{digest:016x}")))
    }

    fn is_plain(id: &str) -> bool {
        !id.is_empty()
            && id.len() <= MAX_AGENT_ID_LEN
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Only a plain id reads back from a file.
impl<'de> Deserialize<'de> for AgentId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if AgentId::is_plain(&text) {
            Ok(AgentId(text))
        } else {
            Err(serde::de::Error::custom("not a plain agent id"))
        }
    }
}

/// Whose event, or whose wait.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    /// The session's own agent (the main thread).
    Main,
    /// A subagent, by its id.
    Sub(AgentId),
    /// The host did not say whose (a permission notification): any agent's answer ends it.
    Unnamed,
}

impl Agent {
    /// A subagent's (an unnamed wait is not known to be one).
    pub fn is_sub(&self) -> bool {
        matches!(self, Agent::Sub(_))
    }
}

/// One agent's open wait: a permission prompt or a question on screen since `since`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Wait {
    pub agent: Agent,
    pub reason: WaitReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolName>,
    pub since: String,
}

/// The state beneath the waits: what the session is when the last wait ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prior {
    pub state: SessionState,
    pub since: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// A session's state as the spool keeps it (`state.json`): the state, since when, the open
/// waits (whose, why, the tool's name, since when); nothing of the tool's input or of any text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateRecord {
    pub state: SessionState,
    /// When the session entered this state (RFC 3339, to the millisecond); needs you: since
    /// the oldest open wait.
    pub since: String,
    /// Needs you: why the oldest wait waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<WaitReason>,
    /// Needs you: the tool the oldest wait is about, when the host names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolName>,
    /// Needs you: the oldest wait is a subagent's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub subagent: bool,
    /// Needs you: the state beneath the waits, given back when the last one ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prior: Option<Prior>,
    /// Needs you: every open wait, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<Wait>,
    /// Finished: the turn was interrupted (or a prompt refused) rather than ended by the agent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// When the current (or last) turn started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_started_at: Option<String>,
}

impl StateRecord {
    /// The open waits, oldest first. A record written before waits were kept by agent (one
    /// wait, `subagent` or not) reads as that one wait, unnamed when it was a subagent's.
    pub fn open_waits(&self) -> Vec<Wait> {
        if self.state != SessionState::NeedsYou {
            return Vec::new();
        }
        if !self.waits.is_empty() {
            return self.waits.clone();
        }
        vec![Wait {
            agent: if self.subagent {
                Agent::Unnamed
            } else {
                Agent::Main
            },
            reason: self.reason.unwrap_or(WaitReason::Permission),
            tool: self.tool.clone(),
            since: self.since.clone(),
        }]
    }

    /// The state beneath the waits (the record's own when nothing waits).
    fn beneath(&self) -> Prior {
        if self.state != SessionState::NeedsYou {
            return Prior {
                state: self.state,
                since: self.since.clone(),
                interrupted: self.interrupted,
            };
        }
        self.prior.clone().unwrap_or(Prior {
            state: SessionState::Working,
            since: self.since.clone(),
            interrupted: false,
        })
    }
}

/// A host's hook event (or a host's own record), reduced to what the state needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// A session started, resumed or was cleared.
    Start,
    /// The context was compacted (can happen inside a turn): nothing changes.
    Compact,
    /// A prompt was submitted: by the person (the main agent's), or a subagent's own prompt.
    Prompt { agent: Agent },
    /// A permission prompt or a question is on screen, for `agent`.
    Ask {
        reason: WaitReason,
        tool: Option<ToolName>,
        agent: Agent,
    },
    /// `agent`'s wait was answered: its tool ran (or failed), or the host says the permission
    /// was answered.
    Answered { agent: Agent },
    /// The turn ended.
    Stop,
    /// The turn ended on an error.
    StopFailure,
    /// The turn was interrupted.
    Interrupt,
    /// A subagent ended (its id, when the host gives it).
    SubagentStop { agent: Option<AgentId> },
    /// The host says its prompt is idle, waiting for the next one (no turn going on).
    HostIdle,
}

/// A time in milliseconds since the Unix epoch as the record keeps it.
pub fn stamp(at_ms: i64) -> String {
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(at_ms) * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    clock::rfc3339_millis(at)
}

/// A record's time in milliseconds (`None` when it does not parse).
pub fn millis(stamp: &str) -> Option<i64> {
    let at = clock::parse_rfc3339(stamp)?;
    i64::try_from(at.unix_timestamp_nanos() / 1_000_000).ok()
}

/// More than this ahead of a signal, a record's time means the clock went back since.
const FUTURE_SKEW_MS: i64 = 60_000;

fn fresh(state: SessionState, at_ms: i64) -> StateRecord {
    StateRecord {
        state,
        since: stamp(at_ms),
        reason: None,
        tool: None,
        subagent: false,
        prior: None,
        waits: Vec::new(),
        interrupted: false,
        turn_started_at: None,
    }
}

/// The record of `waits` (oldest first) over the state beneath them.
fn compose(waits: Vec<Wait>, beneath: Prior, turn_started_at: Option<String>) -> StateRecord {
    let Some(oldest) = waits.first() else {
        return StateRecord {
            state: beneath.state,
            since: beneath.since,
            interrupted: beneath.interrupted,
            turn_started_at,
            ..fresh(beneath.state, 0)
        };
    };
    StateRecord {
        state: SessionState::NeedsYou,
        since: oldest.since.clone(),
        reason: Some(oldest.reason),
        tool: oldest.tool.clone(),
        subagent: oldest.agent.is_sub(),
        prior: Some(beneath),
        interrupted: false,
        turn_started_at,
        waits,
    }
}

/// The next record after `signal` at `at_ms`, or `None` when it changes nothing.
pub fn apply(current: Option<&StateRecord>, signal: &Signal, at_ms: i64) -> Option<StateRecord> {
    // A signal older than the record: the record already follows a later event. (A record
    // from the future means the clock went back: every signal is newer then.)
    if let Some(since) = current.and_then(|c| millis(&c.since))
        && at_ms < since
        && since - at_ms <= FUTURE_SKEW_MS
    {
        return None;
    }
    let state = current.map(|c| c.state);
    let turn_started_at = current.and_then(|c| c.turn_started_at.clone());
    let ended = |state: SessionState, interrupted: bool| StateRecord {
        interrupted,
        turn_started_at: turn_started_at.clone(),
        ..fresh(state, at_ms)
    };
    let mut waits = current.map(StateRecord::open_waits).unwrap_or_default();
    let mut beneath = current.map(StateRecord::beneath).unwrap_or(Prior {
        state: SessionState::Working,
        since: stamp(at_ms),
        interrupted: false,
    });
    let working_now = Prior {
        state: SessionState::Working,
        since: stamp(at_ms),
        interrupted: false,
    };
    match signal {
        Signal::Start => return Some(fresh(SessionState::Idle, at_ms)),
        Signal::Compact
        | Signal::Prompt {
            agent: Agent::Sub(_),
        } => return None,
        Signal::Prompt { .. } => {
            // A new turn of the main thread: its own wait (and any unattributed one) is over;
            // a subagent still waiting keeps its wait (Claude Code runs subagents in the
            // background, and tells the main thread of one's end with a prompt of its own).
            waits.retain(|w| w.agent.is_sub());
            let working = Prior {
                state: SessionState::Working,
                since: stamp(at_ms),
                interrupted: false,
            };
            return Some(compose(waits, working, Some(stamp(at_ms))));
        }
        Signal::Ask {
            reason,
            tool,
            agent,
        } => {
            // Already waiting: that wait began then (Claude Code's permission notification
            // follows its PermissionRequest six seconds later, and names no agent).
            if waits.iter().any(|w| &w.agent == agent)
                || (*agent == Agent::Unnamed && !waits.is_empty())
            {
                return None;
            }
            if let Some(unnamed) = waits.iter_mut().find(|w| w.agent == Agent::Unnamed) {
                // The host now says whose the unattributed wait is: it keeps its time.
                unnamed.agent = agent.clone();
                unnamed.reason = *reason;
                unnamed.tool = tool.clone();
            } else if waits.len() >= MAX_WAITS {
                return None;
            } else {
                waits.push(Wait {
                    agent: agent.clone(),
                    reason: *reason,
                    tool: tool.clone(),
                    since: stamp(at_ms),
                });
            }
        }
        Signal::Answered { agent } => {
            let before = waits.len();
            waits.retain(|w| &w.agent != agent && w.agent != Agent::Unnamed);
            let ended_a_wait = waits.len() != before;
            if agent.is_sub() {
                // A subagent's tool outside its wait says nothing about the session's turn.
                if !ended_a_wait {
                    return None;
                }
            } else if ended_a_wait || current.is_none() || beneath.state != SessionState::Working {
                // The main thread works again (also after a Stop: Kimi Code's subagent Stop
                // looks like the session's own, and the Agent tool's result follows it).
                beneath = working_now;
            } else {
                return None;
            }
        }
        Signal::Stop | Signal::StopFailure => {
            let to = if *signal == Signal::Stop {
                SessionState::Finished
            } else {
                SessionState::Failed
            };
            if current.is_some_and(|c| c.state == to && !c.interrupted) {
                return None;
            }
            // The main thread's wait ends with its turn; a subagent's wait stays (it still
            // waits), and the turn's end comes back after it.
            waits.retain(|w| w.agent.is_sub());
            if waits.is_empty() {
                return Some(ended(to, false));
            }
            beneath = Prior {
                state: to,
                since: stamp(at_ms),
                interrupted: false,
            };
        }
        Signal::Interrupt => {
            return match state {
                Some(SessionState::Idle) => None,
                Some(SessionState::Finished) if current.is_some_and(|c| c.interrupted) => None,
                _ => Some(ended(SessionState::Finished, true)),
            };
        }
        Signal::SubagentStop { agent } => {
            let before = waits.len();
            match agent {
                Some(id) => waits.retain(|w| w.agent != Agent::Sub(id.clone())),
                // No id: only when one subagent waits can its end be that one's.
                None => {
                    if waits.iter().filter(|w| w.agent.is_sub()).count() == 1 {
                        waits.retain(|w| !w.agent.is_sub());
                    }
                }
            }
            if waits.len() == before {
                return None;
            }
        }
        Signal::HostIdle => {
            return match state {
                Some(SessionState::Working | SessionState::NeedsYou) => {
                    Some(ended(SessionState::Finished, true))
                }
                _ => None,
            };
        }
    }
    Some(compose(waits, beneath, turn_started_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_796_000_000_000;

    fn run(signals: &[(Signal, i64)]) -> Option<StateRecord> {
        let mut record: Option<StateRecord> = None;
        for (signal, at) in signals {
            if let Some(next) = apply(record.as_ref(), signal, *at) {
                record = Some(next);
            }
        }
        record
    }

    fn sub(id: &str) -> Agent {
        Agent::Sub(AgentId::from_host(id).unwrap())
    }

    /// A permission prompt: the main thread's (`false`) or subagent `agent-1`'s (`true`).
    fn ask(subagent: bool) -> Signal {
        ask_by(if subagent {
            sub("agent-1")
        } else {
            Agent::Main
        })
    }

    fn ask_by(agent: Agent) -> Signal {
        Signal::Ask {
            reason: WaitReason::Permission,
            tool: ToolName::new("Bash"),
            agent,
        }
    }

    fn answered_by(agent: Agent) -> Signal {
        Signal::Answered { agent }
    }

    fn sub_stop(id: &str) -> Signal {
        Signal::SubagentStop {
            agent: AgentId::from_host(id),
        }
    }

    const PROMPT: Signal = Signal::Prompt { agent: Agent::Main };
    const ANSWERED: Signal = Signal::Answered { agent: Agent::Main };

    fn state(record: &Option<StateRecord>) -> SessionState {
        record.as_ref().expect("a record").state
    }

    #[test]
    fn a_start_is_idle_and_a_prompt_works() {
        let r = run(&[(Signal::Start, T0)]);
        assert_eq!(state(&r), SessionState::Idle);
        let r = run(&[(Signal::Start, T0), (PROMPT, T0 + 10)]);
        let r = r.unwrap();
        assert_eq!(r.state, SessionState::Working);
        assert_eq!(r.turn_started_at.as_deref(), Some(stamp(T0 + 10).as_str()));
        assert_eq!(r.since, stamp(T0 + 10));
    }

    #[test]
    fn a_permission_prompt_needs_you_since_then_with_why_and_the_tool() {
        let r = run(&[(PROMPT, T0), (ask(false), T0 + 500)]).unwrap();
        assert_eq!(r.state, SessionState::NeedsYou);
        assert_eq!(r.since, stamp(T0 + 500));
        assert_eq!(r.reason, Some(WaitReason::Permission));
        assert_eq!(r.tool.as_ref().map(ToolName::as_str), Some("Bash"));
        assert_eq!(r.turn_started_at, Some(stamp(T0)));
        // Claude Code's own notification 6 s later keeps the wait's start.
        let again = apply(Some(&r), &ask(false), T0 + 6500);
        assert_eq!(again, None);
    }

    #[test]
    fn answered_goes_back_to_working() {
        let r = run(&[(PROMPT, T0), (ask(false), T0 + 1), (ANSWERED, T0 + 2)]).unwrap();
        assert_eq!(r.state, SessionState::Working);
        assert_eq!(r.reason, None);
        assert_eq!(r.tool, None);
        assert_eq!(r.turn_started_at, Some(stamp(T0)));
        // A tool running outside a wait changes nothing.
        assert_eq!(apply(Some(&r), &ANSWERED, T0 + 3), None);
    }

    #[test]
    fn stop_finishes_and_stop_failure_fails() {
        let r = run(&[(PROMPT, T0), (Signal::Stop, T0 + 5)]).unwrap();
        assert_eq!(r.state, SessionState::Finished);
        assert!(!r.interrupted);
        assert_eq!(r.turn_started_at, Some(stamp(T0)));
        let r = run(&[(PROMPT, T0), (Signal::StopFailure, T0 + 5)]).unwrap();
        assert_eq!(r.state, SessionState::Failed);
        // A Stop while the main thread waits: the turn is over, nothing waits any more.
        let r = run(&[(PROMPT, T0), (ask(false), T0 + 1), (Signal::Stop, T0 + 2)]).unwrap();
        assert_eq!(r.state, SessionState::Finished);
    }

    #[test]
    fn an_interrupt_ends_the_turn_and_any_wait() {
        for before in [
            vec![(PROMPT, T0)],
            vec![(PROMPT, T0), (ask(false), T0 + 1)],
            vec![(PROMPT, T0), (ask(true), T0 + 1)],
        ] {
            let mut signals = before.clone();
            signals.push((Signal::Interrupt, T0 + 9));
            let r = run(&signals).unwrap();
            assert_eq!(r.state, SessionState::Finished, "{before:?}");
            assert!(r.interrupted);
            assert_eq!(r.since, stamp(T0 + 9));
        }
        // Nothing to interrupt before the first turn.
        assert_eq!(
            apply(
                run(&[(Signal::Start, T0)]).as_ref(),
                &Signal::Interrupt,
                T0 + 1
            ),
            None
        );
    }

    #[test]
    fn the_host_saying_it_is_idle_ends_a_turn_no_hook_ended() {
        // Claude Code: Esc at its permission prompt, or a refusal, runs no hook.
        let r = run(&[
            (PROMPT, T0),
            (ask(false), T0 + 1),
            (Signal::HostIdle, T0 + 4),
        ])
        .unwrap();
        assert_eq!(r.state, SessionState::Finished);
        assert!(r.interrupted);
        let r = run(&[(PROMPT, T0), (Signal::HostIdle, T0 + 4)]).unwrap();
        assert_eq!(r.state, SessionState::Finished);
        // Idle before the record's time is an older fact: nothing changes.
        let working = run(&[(PROMPT, T0)]);
        assert_eq!(apply(working.as_ref(), &Signal::HostIdle, T0 - 1), None);
        // A finished or failed turn stays as it is.
        let done = run(&[(PROMPT, T0), (Signal::StopFailure, T0 + 1)]);
        assert_eq!(apply(done.as_ref(), &Signal::HostIdle, T0 + 2), None);
    }

    #[test]
    fn a_new_prompt_after_anything_works() {
        for before in [
            Signal::Stop,
            Signal::StopFailure,
            Signal::Interrupt,
            ask(false),
            Signal::HostIdle,
        ] {
            let r = run(&[(PROMPT, T0), (before.clone(), T0 + 1), (PROMPT, T0 + 2)]).unwrap();
            assert_eq!(r.state, SessionState::Working, "after {before:?}");
            assert_eq!(r.turn_started_at, Some(stamp(T0 + 2)));
            assert!(!r.interrupted && r.reason.is_none());
        }
    }

    #[test]
    fn a_resume_or_start_clears_a_wait_and_a_compaction_changes_nothing() {
        let waiting = run(&[(PROMPT, T0), (ask(false), T0 + 1)]);
        let r = apply(waiting.as_ref(), &Signal::Start, T0 + 2).unwrap();
        assert_eq!(r.state, SessionState::Idle);
        assert_eq!(r.reason, None);
        assert_eq!(apply(waiting.as_ref(), &Signal::Compact, T0 + 2), None);
    }

    #[test]
    fn a_subagent_s_stop_changes_nothing() {
        let working = run(&[(PROMPT, T0)]);
        assert_eq!(apply(working.as_ref(), &sub_stop("agent-1"), T0 + 1), None);
        let finished = run(&[(PROMPT, T0), (Signal::Stop, T0 + 1)]);
        assert_eq!(apply(finished.as_ref(), &sub_stop("agent-1"), T0 + 2), None);
        // A main-thread wait is not the subagent's to end.
        let waiting = run(&[(PROMPT, T0), (ask(false), T0 + 1)]);
        assert_eq!(apply(waiting.as_ref(), &sub_stop("agent-1"), T0 + 2), None);
        // Nor is a subagent's own prompt a new turn.
        assert_eq!(
            apply(
                finished.as_ref(),
                &Signal::Prompt {
                    agent: sub("agent-1")
                },
                T0 + 3
            ),
            None
        );
    }

    #[test]
    fn a_subagent_s_permission_prompt_makes_the_session_need_you() {
        // Inside the main turn: answered, the turn works on.
        let r = run(&[(PROMPT, T0), (ask(true), T0 + 1)]).unwrap();
        assert_eq!(r.state, SessionState::NeedsYou);
        assert!(r.subagent);
        let back = apply(Some(&r), &answered_by(sub("agent-1")), T0 + 2).unwrap();
        assert_eq!(back.state, SessionState::Working);
        assert_eq!(back.since, stamp(T0), "the turn's working since it began");
        // A background subagent after the main turn ended: answered, finished again.
        let r = run(&[
            (PROMPT, T0),
            (Signal::Stop, T0 + 1),
            (ask(true), T0 + 2),
            (answered_by(sub("agent-1")), T0 + 3),
        ])
        .unwrap();
        assert_eq!(r.state, SessionState::Finished);
        assert_eq!(r.since, stamp(T0 + 1));
        // The subagent ending (a refusal inside it runs no tool) ends its wait too.
        let r = run(&[
            (PROMPT, T0),
            (Signal::Stop, T0 + 1),
            (ask(true), T0 + 2),
            (sub_stop("agent-1"), T0 + 3),
        ])
        .unwrap();
        assert_eq!(r.state, SessionState::Finished);
    }

    #[test]
    fn the_main_turn_ending_while_a_subagent_waits_keeps_the_wait() {
        let r = run(&[(PROMPT, T0), (ask(true), T0 + 1), (Signal::Stop, T0 + 2)]).unwrap();
        assert_eq!(r.state, SessionState::NeedsYou, "the subagent still waits");
        assert_eq!(r.since, stamp(T0 + 1));
        let r = apply(Some(&r), &answered_by(sub("agent-1")), T0 + 3).unwrap();
        assert_eq!(r.state, SessionState::Finished);
        assert_eq!(r.since, stamp(T0 + 2));
    }

    #[test]
    fn each_wait_is_its_own_agent_s_and_the_oldest_gives_the_time() {
        // The main thread's answer ends its own wait, not the subagent's.
        let r = run(&[
            (PROMPT, T0),
            (ask(true), T0 + 1),
            (ask(false), T0 + 2),
            (ANSWERED, T0 + 3),
        ])
        .unwrap();
        assert_eq!(r.state, SessionState::NeedsYou);
        assert!(r.subagent, "the subagent's wait is still open");
        assert_eq!(r.since, stamp(T0 + 1), "since the oldest wait");
        assert_eq!(r.waits.len(), 1);
        // Its answer then gives back the main thread working since its own answer.
        let r = apply(Some(&r), &answered_by(sub("agent-1")), T0 + 4).unwrap();
        assert_eq!(r.state, SessionState::Working);
        assert_eq!(r.since, stamp(T0 + 3));
        // Without a wait of its own, a main-thread tool leaves a subagent's wait open.
        let r = run(&[(PROMPT, T0), (ask(true), T0 + 1), (ANSWERED, T0 + 2)]).unwrap();
        assert_eq!(r.state, SessionState::NeedsYou);
        assert_eq!(r.since, stamp(T0 + 1));
    }

    #[test]
    fn another_agent_never_ends_a_wait() {
        // The three sequences of the issue, each ending while the first wait is open.
        let main_waits = [
            (PROMPT, T0),
            (ask(false), T0 + 1),
            (answered_by(sub("agent-bg")), T0 + 2),
        ];
        let one_waits_two_runs = [
            (PROMPT, T0),
            (ask_by(sub("agent-1")), T0 + 1),
            (answered_by(sub("agent-2")), T0 + 2),
        ];
        let one_waits_two_ends = [
            (PROMPT, T0),
            (ask_by(sub("agent-1")), T0 + 1),
            (sub_stop("agent-2"), T0 + 2),
        ];
        for signals in [&main_waits[..], &one_waits_two_runs, &one_waits_two_ends] {
            let r = run(signals).unwrap();
            assert_eq!(r.state, SessionState::NeedsYou, "{signals:?}");
            assert_eq!(r.since, stamp(T0 + 1), "{signals:?}");
        }
        // Two subagents waiting: the session needs you until both are answered.
        let both = run(&[
            (PROMPT, T0),
            (ask_by(sub("agent-1")), T0 + 1),
            (ask_by(sub("agent-2")), T0 + 2),
            (answered_by(sub("agent-2")), T0 + 3),
        ])
        .unwrap();
        assert_eq!(both.state, SessionState::NeedsYou);
        assert_eq!(both.since, stamp(T0 + 1));
        let r = apply(Some(&both), &sub_stop("agent-1"), T0 + 4).unwrap();
        assert_eq!(r.state, SessionState::Working);
        assert_eq!(r.since, stamp(T0), "the turn's working since it began");
        // A subagent's end without an id ends a wait only when one subagent waits.
        let unnamed_end = Signal::SubagentStop { agent: None };
        let two = run(&[
            (PROMPT, T0),
            (ask_by(sub("agent-1")), T0 + 1),
            (ask_by(sub("agent-2")), T0 + 2),
        ]);
        assert_eq!(apply(two.as_ref(), &unnamed_end, T0 + 4), None);
        let one = run(&[(PROMPT, T0), (ask(true), T0 + 1)]);
        let r = apply(one.as_ref(), &unnamed_end, T0 + 2).unwrap();
        assert_eq!(r.state, SessionState::Working);
    }

    #[test]
    fn a_new_turn_of_the_main_thread_keeps_a_subagent_s_wait() {
        let r = run(&[
            (PROMPT, T0),
            (Signal::Stop, T0 + 1),
            (ask(true), T0 + 2),
            (PROMPT, T0 + 3),
        ])
        .unwrap();
        assert_eq!(r.state, SessionState::NeedsYou);
        assert_eq!(r.since, stamp(T0 + 2));
        assert_eq!(r.turn_started_at, Some(stamp(T0 + 3)));
        let r = apply(Some(&r), &answered_by(sub("agent-1")), T0 + 4).unwrap();
        assert_eq!(r.state, SessionState::Working);
        assert_eq!(r.since, stamp(T0 + 3), "working since the new turn began");
    }

    #[test]
    fn an_unattributed_notification_joins_the_open_wait_or_is_ended_by_any_answer() {
        // Claude Code's permission notification (no agent) six seconds after a subagent's
        // PermissionRequest adds nothing.
        let r = run(&[
            (PROMPT, T0),
            (ask(true), T0 + 1),
            (ask_by(Agent::Unnamed), T0 + 6001),
        ])
        .unwrap();
        assert_eq!(r.waits.len(), 1);
        // Alone, it is ended by any agent's answer, since we cannot tell whose it is.
        let r = run(&[
            (PROMPT, T0),
            (ask_by(Agent::Unnamed), T0 + 1),
            (answered_by(sub("agent-9")), T0 + 2),
        ])
        .unwrap();
        assert_eq!(r.state, SessionState::Working);
        // A named ask after it takes it over, keeping its time.
        let r = run(&[
            (PROMPT, T0),
            (ask_by(Agent::Unnamed), T0 + 1),
            (ask(true), T0 + 2),
        ])
        .unwrap();
        assert_eq!(r.waits.len(), 1);
        assert_eq!(r.waits[0].agent, sub("agent-1"));
        assert_eq!(r.since, stamp(T0 + 1));
    }

    #[test]
    fn waits_are_bounded_and_odd_agent_ids_are_kept_as_digests() {
        let mut signals = vec![(PROMPT, T0)];
        for n in 0..40 {
            signals.push((ask_by(sub(&format!("agent-{n}"))), T0 + 1 + n));
        }
        let r = run(&signals).unwrap();
        assert_eq!(r.waits.len(), MAX_WAITS);
        let odd = AgentId::from_host("a b/../\nx").unwrap();
        assert!(odd.as_str().starts_with('h') && odd.as_str().len() == 17);
        assert_ne!(odd, AgentId::from_host("a b/../\ny").unwrap());
        assert_eq!(AgentId::from_host(""), None);
        let long = "x".repeat(65);
        assert_ne!(AgentId::from_host(&long).unwrap().as_str(), long);
        // Only a plain id reads back.
        let bad: Result<Wait, _> = serde_json::from_str(
            r#"{"agent":{"sub":"a b"},"reason":"permission","since":"2026-12-02T10:00:00.000Z"}"#,
        );
        assert!(bad.is_err());
    }

    #[test]
    fn a_record_from_before_waits_were_kept_by_agent_reads_as_one_wait() {
        let old: StateRecord = serde_json::from_str(
            r#"{"state":"needs-you","since":"2026-12-02T10:00:00.000Z","reason":"permission","subagent":true,"prior":{"state":"working","since":"2026-12-02T09:59:00.000Z"}}"#,
        )
        .unwrap();
        assert_eq!(old.open_waits().len(), 1);
        let at = millis("2026-12-02T10:00:01.000Z").unwrap();
        let r = apply(Some(&old), &answered_by(sub("agent-1")), at).unwrap();
        assert_eq!(r.state, SessionState::Working);
        assert_eq!(r.since, "2026-12-02T09:59:00.000Z");
    }

    #[test]
    fn a_tool_of_the_main_thread_after_a_stop_is_working_again() {
        // Kimi Code's subagent Stop looks like the session's own; the Agent tool's result
        // comes right after it.
        let r = run(&[(PROMPT, T0), (Signal::Stop, T0 + 1), (ANSWERED, T0 + 2)]).unwrap();
        assert_eq!(r.state, SessionState::Working);
        assert_eq!(r.turn_started_at, Some(stamp(T0)));
        // A subagent's tool after the turn ended says nothing.
        let finished = run(&[(PROMPT, T0), (Signal::Stop, T0 + 1)]);
        assert_eq!(
            apply(finished.as_ref(), &answered_by(sub("agent-1")), T0 + 2),
            None
        );
    }

    #[test]
    fn an_older_signal_changes_nothing_unless_the_clock_went_back() {
        let working = run(&[(PROMPT, T0 + 1000)]);
        assert_eq!(apply(working.as_ref(), &ask(false), T0 + 999), None);
        // The record is more than a minute ahead: the clock went back; the signal counts.
        let r = apply(working.as_ref(), &ask(false), T0 - 120_000).unwrap();
        assert_eq!(r.state, SessionState::NeedsYou);
    }

    #[test]
    fn tool_names_are_plain_names_only() {
        assert!(ToolName::new("Bash").is_some());
        assert!(ToolName::new("mcp__fabric__com.status").is_some());
        for bad in ["", "rm -rf /", "a\nb", &"x".repeat(65), "Bash(ls)"] {
            assert!(ToolName::new(bad).is_none(), "{bad:?}");
        }
        let record: Result<StateRecord, _> = serde_json::from_str(
            r#"{"state":"needs-you","since":"2026-12-02T10:00:00.000Z","tool":"touch secret"}"#,
        );
        assert!(
            record.is_err(),
            "a tool that is not a plain name never reads back"
        );
    }

    #[test]
    fn the_record_round_trips_in_the_spool_s_shape() {
        let r = run(&[(PROMPT, T0), (ask(true), T0 + 1)]).unwrap();
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains(r#""state":"needs-you""#), "{text}");
        assert!(text.contains(r#""reason":"permission""#), "{text}");
        let back: StateRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
    }
}
