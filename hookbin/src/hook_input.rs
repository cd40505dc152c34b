//! The JSON object a host sends a hook on stdin, read defensively: bounded, never from a
//! terminal, and with only the fields we use (a prompt is skipped by the parser, never kept).

use std::io::{IsTerminal, Read};
use std::path::PathBuf;

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
}

impl HookInput {
    /// Parses a payload; `None` for anything that is not one JSON object.
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        serde_json::from_slice(bytes).ok()
    }

    /// Reads and parses stdin; `None` for a terminal, empty, garbage or oversized input.
    pub fn from_stdin() -> Option<Self> {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            return None;
        }
        let mut buf = Vec::new();
        stdin.lock().take(STDIN_LIMIT).read_to_end(&mut buf).ok()?;
        Self::parse(&buf)
    }

    /// The session id, when it is safe to use as a folder name.
    pub fn session(&self) -> Option<companion_core::spool::SessionId> {
        companion_core::spool::SessionId::new(self.session_id.as_deref()?)
    }

    /// The session's folder, when absolute.
    pub fn project_dir(&self) -> Option<&std::path::Path> {
        self.cwd.as_deref().filter(|p| p.is_absolute())
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
    fn garbage_is_none() {
        assert!(HookInput::parse(b"").is_none());
        assert!(HookInput::parse(b"[1,2]").is_none());
        assert!(HookInput::parse(b"{\"session_id\": 5}").is_none());
    }
}
