//! The JSON object a host sends a hook on stdin, read defensively: bounded, never from a
//! terminal, and with only the fields we use. A prompt, a tool's input or response, a message
//! or a title are skipped by the parser, never kept. What cannot be read is said as an
//! [`Unexpected`] kind, for the log (once by kind), never with any of its content.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;

use companion_sessions::session_state::{Agent, AgentId};
use serde::Deserialize;

/// More than this on stdin is not a hook payload we need to read to the end.
const STDIN_LIMIT: u64 = 8 * 1024 * 1024;

/// The fields of a hook payload we use.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
pub struct HookInput {
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
    /// Set when the event comes from a subagent (Claude Code, Codex; Kimi Code says `main`
    /// for the session's own agent). Only compared, never kept.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The tool a permission prompt or a tool event is about.
    #[serde(default)]
    pub tool_name: Option<String>,
    /// Claude Code's Notification: what it notifies about.
    #[serde(default)]
    pub notification_type: Option<String>,
    /// Claude Code's PostToolUseFailure: the tool failed because the person interrupted it.
    #[serde(default)]
    pub is_interrupt: Option<bool>,
}

/// Input a hook did not expect, by kind (the log's word for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unexpected {
    /// More than [`STDIN_LIMIT`] bytes.
    TooLarge,
    /// Bytes that are not UTF-8.
    NotUtf8,
    /// Not one JSON object with the fields' types we read.
    NotJson,
    /// No usable `session_id`.
    NoSession,
    /// A Notification without its `notification_type`.
    NoNotificationType,
    /// A `notification_type` we do not know.
    UnknownNotificationType,
}

impl Unexpected {
    /// The word in the log (`unexpected=<word>`) and in the once-marker's name.
    pub fn word(self) -> &'static str {
        match self {
            Unexpected::TooLarge => "too-large",
            Unexpected::NotUtf8 => "not-utf8",
            Unexpected::NotJson => "not-json",
            Unexpected::NoSession => "no-session-id",
            Unexpected::NoNotificationType => "no-notification-type",
            Unexpected::UnknownNotificationType => "unknown-notification-type",
        }
    }
}

/// What stdin held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stdin {
    /// A terminal or nothing at all: someone ran the hook by hand, or the host sent nothing.
    Nothing,
    Input(HookInput),
    Unexpected(Unexpected),
}

impl HookInput {
    /// Parses a payload; `None` for anything that is not one JSON object.
    #[cfg(test)]
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        serde_json::from_slice(bytes).ok()
    }

    /// Parses a payload, saying why it cannot be read.
    pub fn parse_or_why(bytes: &[u8]) -> Result<Self, Unexpected> {
        serde_json::from_slice(bytes).map_err(|_| {
            if std::str::from_utf8(bytes).is_err() {
                Unexpected::NotUtf8
            } else {
                Unexpected::NotJson
            }
        })
    }

    /// Reads and parses stdin (at most [`STDIN_LIMIT`] bytes).
    pub fn read_stdin() -> Stdin {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            return Stdin::Nothing;
        }
        let mut buf = Vec::new();
        if stdin
            .lock()
            .take(STDIN_LIMIT + 1)
            .read_to_end(&mut buf)
            .is_err()
        {
            return Stdin::Nothing;
        }
        Self::classify(&buf)
    }

    /// What `bytes` (read from stdin, at most one byte over the limit) are.
    pub fn classify(bytes: &[u8]) -> Stdin {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Stdin::Nothing;
        }
        if bytes.len() as u64 > STDIN_LIMIT {
            return Stdin::Unexpected(Unexpected::TooLarge);
        }
        match Self::parse_or_why(bytes) {
            Ok(input) => Stdin::Input(input),
            Err(why) => Stdin::Unexpected(why),
        }
    }

    /// The session id, when it is safe to use as a folder name.
    pub fn session(&self) -> Option<companion_sessions::spool::SessionId> {
        companion_sessions::spool::SessionId::new(self.session_id.as_deref()?)
    }

    /// The session's folder, when absolute.
    pub fn project_dir(&self) -> Option<&std::path::Path> {
        self.cwd.as_deref().filter(|p| p.is_absolute())
    }

    /// Whether the event comes from a subagent rather than the session's own agent.
    pub fn by_subagent(&self) -> bool {
        self.subagent_id().is_some()
    }

    /// The subagent that sent the event (`None`: the session's own agent).
    pub fn subagent_id(&self) -> Option<AgentId> {
        self.agent_id
            .as_deref()
            .filter(|id| *id != "main")
            .and_then(AgentId::from_host)
    }

    /// Whose event: the session's own agent unless a subagent's id is given.
    pub fn agent(&self) -> Agent {
        self.subagent_id().map_or(Agent::Main, Agent::Sub)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_known_fields_and_skips_the_prompt() {
        let input = HookInput::parse(
            br#"{"session_id":"abc-123","cwd":"/w/p","hook_event_name":"UserPromptSubmit","prompt":"secret words"}"#,
        )
        .unwrap();
        assert_eq!(input.session_id.as_deref(), Some("abc-123"));
        assert_eq!(input.project_dir(), Some(std::path::Path::new("/w/p")));
        assert!(!format!("{input:?}").contains("secret"));
    }

    #[test]
    fn tool_input_and_titles_are_skipped_and_subagents_told_apart() {
        let input = HookInput::parse(
            br#"{"session_id":"s","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"rm -rf secret"},"session_title":"secret title","agent_id":"a1"}"#,
        )
        .unwrap();
        assert_eq!(input.tool_name.as_deref(), Some("Bash"));
        assert!(input.by_subagent());
        assert!(!format!("{input:?}").contains("secret"));
        let kimi_main = HookInput::parse(br#"{"session_id":"s","agent_id":"main"}"#).unwrap();
        assert!(!kimi_main.by_subagent());
        assert!(!HookInput::default().by_subagent());
    }

    #[test]
    fn garbage_is_none() {
        assert!(HookInput::parse(b"").is_none());
        assert!(HookInput::parse(b"[1,2]").is_none());
        assert!(HookInput::parse(b"{\"session_id\": 5}").is_none());
    }

    #[test]
    fn what_cannot_be_read_is_said_by_kind() {
        assert_eq!(HookInput::classify(b""), Stdin::Nothing);
        assert_eq!(HookInput::classify(b" \n"), Stdin::Nothing);
        assert_eq!(
            HookInput::classify(b"garbage"),
            Stdin::Unexpected(Unexpected::NotJson)
        );
        assert_eq!(
            HookInput::classify(b"{\"session_id\":\"\xff\"}"),
            Stdin::Unexpected(Unexpected::NotUtf8)
        );
        let huge = vec![b' '; STDIN_LIMIT as usize + 1];
        let mut huge = huge;
        huge[0] = b'{';
        assert_eq!(
            HookInput::classify(&huge),
            Stdin::Unexpected(Unexpected::TooLarge)
        );
        assert!(matches!(
            HookInput::classify(br#"{"session_id":"s"}"#),
            Stdin::Input(_)
        ));
    }
}
