//! One state per session — working, needs you, finished, failed (and idle before its first
//! turn; gone is a pruned spool, as today) — as a small pure state machine over the hosts' own
//! hook events ([`Signal`]). [`apply`] takes the record the spool holds, a signal and its time
//! and gives the next record, or `None` when the signal changes nothing. No file, clock or
//! process here: the hooks ([`crate::spool::Spool::apply_signal`]) and the readers
//! ([`crate::status`]) feed it.
//!
//! The rules, each unit-tested below:
//! - a prompt starts a turn: `working`;
//! - a permission prompt or a question (also a subagent's) makes the session need you, since
//!   then, and why in a word (`permission`, `question`) with the tool's name when the host
//!   gives it; a second one while waiting keeps the first one's time;
//! - the wait ends when it is answered: the tool ran or failed, the host says the permission
//!   was answered (`working`); a subagent's answer, or its end, gives back the state from
//!   before its wait (the main turn may have finished meanwhile);
//! - Stop ends the turn (`finished`), StopFailure on an error (`failed`), an interrupt too
//!   (`finished`, marked interrupted); a Stop while a subagent waits keeps the wait (the
//!   subagent is still waiting) and comes back when it ends;
//! - a subagent's Stop changes nothing else; a subagent's prompt changes nothing;
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

/// A state the session returns to when a subagent's wait ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prior {
    pub state: SessionState,
    pub since: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// A session's state as the spool keeps it (`state.json`): the state, since when, why it
/// needs you and the tool's name; nothing of the tool's input or of any text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateRecord {
    pub state: SessionState,
    /// When the session entered this state (RFC 3339, to the millisecond).
    pub since: String,
    /// Needs you: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<WaitReason>,
    /// Needs you: the tool waiting, when the host names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolName>,
    /// Needs you: a subagent asked (its answer gives back [`StateRecord::prior`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub subagent: bool,
    /// Needs you, asked by a subagent: the state to return to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prior: Option<Prior>,
    /// Finished: the turn was interrupted (or a prompt refused) rather than ended by the agent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// When the current (or last) turn started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_started_at: Option<String>,
}

/// A host's hook event (or a host's own record), reduced to what the state needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// A session started, resumed or was cleared.
    Start,
    /// The context was compacted (can happen inside a turn): nothing changes.
    Compact,
    /// A prompt was submitted: by the person (`subagent: false`), or a subagent's own prompt.
    Prompt { subagent: bool },
    /// A permission prompt or a question is on screen.
    Ask {
        reason: WaitReason,
        tool: Option<ToolName>,
        subagent: bool,
    },
    /// A wait was answered: the tool ran (or failed), or the host says the permission was
    /// answered.
    Answered { subagent: bool },
    /// The turn ended.
    Stop,
    /// The turn ended on an error.
    StopFailure,
    /// The turn was interrupted.
    Interrupt,
    /// A subagent ended.
    SubagentStop,
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
        interrupted: false,
        turn_started_at: None,
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
    match signal {
        Signal::Start => Some(fresh(SessionState::Idle, at_ms)),
        Signal::Compact | Signal::Prompt { subagent: true } => None,
        Signal::Prompt { subagent: false } => Some(StateRecord {
            turn_started_at: Some(stamp(at_ms)),
            ..fresh(SessionState::Working, at_ms)
        }),
        Signal::Ask {
            reason,
            tool,
            subagent,
        } => {
            // Already waiting: the wait began then (Claude Code's permission notification
            // follows its PermissionRequest six seconds later, and names no agent).
            if state == Some(SessionState::NeedsYou) {
                return None;
            }
            let prior = (*subagent).then(|| match current {
                Some(c) => Prior {
                    state: c.state,
                    since: c.since.clone(),
                    interrupted: c.interrupted,
                },
                None => Prior {
                    state: SessionState::Working,
                    since: stamp(at_ms),
                    interrupted: false,
                },
            });
            Some(StateRecord {
                reason: Some(*reason),
                tool: tool.clone(),
                subagent: *subagent,
                prior,
                turn_started_at,
                ..fresh(SessionState::NeedsYou, at_ms)
            })
        }
        Signal::Answered { subagent } => match current {
            Some(c) if c.state == SessionState::NeedsYou && c.subagent && *subagent => {
                Some(give_back(c, at_ms))
            }
            Some(c) if c.state == SessionState::NeedsYou => Some(StateRecord {
                turn_started_at,
                ..fresh(SessionState::Working, at_ms)
            }),
            // A subagent's tool outside a wait says nothing about the session's turn.
            _ if *subagent => None,
            Some(c) if c.state == SessionState::Working => None,
            // The main thread works again (Kimi Code's subagent Stop looks like the session's).
            _ => Some(StateRecord {
                turn_started_at,
                ..fresh(SessionState::Working, at_ms)
            }),
        },
        Signal::Stop | Signal::StopFailure => {
            let to = if *signal == Signal::Stop {
                SessionState::Finished
            } else {
                SessionState::Failed
            };
            match current {
                // A subagent still waits: the wait stays, and the turn's end comes back after.
                Some(c) if c.state == SessionState::NeedsYou && c.subagent => {
                    let mut next = c.clone();
                    next.prior = Some(Prior {
                        state: to,
                        since: stamp(at_ms),
                        interrupted: false,
                    });
                    Some(next)
                }
                Some(c) if c.state == to && !c.interrupted => None,
                _ => Some(ended(to, false)),
            }
        }
        Signal::Interrupt => match state {
            Some(SessionState::Idle) => None,
            Some(SessionState::Finished) if current.is_some_and(|c| c.interrupted) => None,
            _ => Some(ended(SessionState::Finished, true)),
        },
        Signal::SubagentStop => match current {
            Some(c) if c.state == SessionState::NeedsYou && c.subagent => Some(give_back(c, at_ms)),
            _ => None,
        },
        Signal::HostIdle => match state {
            Some(SessionState::Working | SessionState::NeedsYou) => {
                Some(ended(SessionState::Finished, true))
            }
            _ => None,
        },
    }
}

/// The state from before a subagent's wait.
fn give_back(current: &StateRecord, at_ms: i64) -> StateRecord {
    match &current.prior {
        Some(prior) => StateRecord {
            interrupted: prior.interrupted,
            turn_started_at: current.turn_started_at.clone(),
            ..fresh(prior.state, millis(&prior.since).unwrap_or(at_ms))
        },
        None => StateRecord {
            turn_started_at: current.turn_started_at.clone(),
            ..fresh(SessionState::Working, at_ms)
        },
    }
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

    fn ask(subagent: bool) -> Signal {
        Signal::Ask {
            reason: WaitReason::Permission,
            tool: ToolName::new("Bash"),
            subagent,
        }
    }

    const PROMPT: Signal = Signal::Prompt { subagent: false };
    const ANSWERED: Signal = Signal::Answered { subagent: false };

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
        assert_eq!(apply(working.as_ref(), &Signal::SubagentStop, T0 + 1), None);
        let finished = run(&[(PROMPT, T0), (Signal::Stop, T0 + 1)]);
        assert_eq!(
            apply(finished.as_ref(), &Signal::SubagentStop, T0 + 2),
            None
        );
        // A main-thread wait is not the subagent's to end.
        let waiting = run(&[(PROMPT, T0), (ask(false), T0 + 1)]);
        assert_eq!(apply(waiting.as_ref(), &Signal::SubagentStop, T0 + 2), None);
        // Nor is a subagent's own prompt a new turn.
        assert_eq!(
            apply(
                finished.as_ref(),
                &Signal::Prompt { subagent: true },
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
        let back = apply(Some(&r), &Signal::Answered { subagent: true }, T0 + 2).unwrap();
        assert_eq!(back.state, SessionState::Working);
        assert_eq!(back.since, stamp(T0), "the turn's working since it began");
        // A background subagent after the main turn ended: answered, finished again.
        let r = run(&[
            (PROMPT, T0),
            (Signal::Stop, T0 + 1),
            (ask(true), T0 + 2),
            (Signal::Answered { subagent: true }, T0 + 3),
        ])
        .unwrap();
        assert_eq!(r.state, SessionState::Finished);
        assert_eq!(r.since, stamp(T0 + 1));
        // The subagent ending (a refusal inside it runs no tool) ends its wait too.
        let r = run(&[
            (PROMPT, T0),
            (Signal::Stop, T0 + 1),
            (ask(true), T0 + 2),
            (Signal::SubagentStop, T0 + 3),
        ])
        .unwrap();
        assert_eq!(r.state, SessionState::Finished);
    }

    #[test]
    fn the_main_turn_ending_while_a_subagent_waits_keeps_the_wait() {
        let r = run(&[(PROMPT, T0), (ask(true), T0 + 1), (Signal::Stop, T0 + 2)]).unwrap();
        assert_eq!(r.state, SessionState::NeedsYou, "the subagent still waits");
        assert_eq!(r.since, stamp(T0 + 1));
        let r = apply(Some(&r), &Signal::Answered { subagent: true }, T0 + 3).unwrap();
        assert_eq!(r.state, SessionState::Finished);
        assert_eq!(r.since, stamp(T0 + 2));
    }

    #[test]
    fn a_main_thread_answer_ends_any_wait_and_a_second_ask_keeps_the_first() {
        let r = run(&[(PROMPT, T0), (ask(true), T0 + 1), (ANSWERED, T0 + 2)]).unwrap();
        assert_eq!(r.state, SessionState::Working);
        let r = run(&[(PROMPT, T0), (ask(true), T0 + 1), (ask(false), T0 + 2)]).unwrap();
        assert_eq!(r.state, SessionState::NeedsYou);
        assert!(r.subagent, "the wait is still the subagent's");
        assert_eq!(r.since, stamp(T0 + 1));
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
            apply(
                finished.as_ref(),
                &Signal::Answered { subagent: true },
                T0 + 2
            ),
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
