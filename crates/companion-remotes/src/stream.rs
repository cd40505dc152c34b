//! One line of a remote's `status --json --follow` stream, read as untrusted input.
//!
//! The other end may be anything: an older or newer `fabric-session`, a broken one, or a
//! machine that is not the person's friend. So a line is at most [`MAX_LINE_BYTES`]; a
//! document holds at most [`MAX_SESSIONS`] sessions (the rest are dropped and counted);
//! unknown fields are ignored; a session whose id, host or state does not check out is
//! dropped; every string a person will read is cleaned (no control or bidirectional
//! characters, at most [`MAX_LABEL_CHARS`]); times in the future are brought back to now.
//! Only the status fields are kept: nothing else of the document goes further.

use companion_hosts::host::Host;
use companion_sessions::session_state::{self, SessionState, WaitReason};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

use crate::remote::TmuxPane;

/// The schema a remote's documents must name.
pub const SCHEMA: &str = "fabric-session-status/1";
/// The longest line read from a remote; a longer one ends the link.
pub const MAX_LINE_BYTES: usize = 256 * 1024;
/// The most sessions kept from one remote.
pub const MAX_SESSIONS: usize = 64;
/// The longest project name or tool name kept, in characters.
pub const MAX_LABEL_CHARS: usize = 64;
/// The largest unread count believed.
pub const MAX_UNREAD: u64 = 1_000_000;

/// What a line said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// The remote's state now.
    Snapshot(RemoteState),
    /// Nothing changed; the link is alive.
    Heartbeat,
}

/// Why a line was refused (the link is then restarted).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StreamError {
    #[error("sent a line over {} KiB", MAX_LINE_BYTES / 1024)]
    TooLong,
    #[error("sent something that is not JSON")]
    NotJson,
    #[error("sent a document of another schema")]
    WrongSchema,
}

/// A remote's state as we keep it: the status fields only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteState {
    /// Fabric runs there.
    pub fabric_running: bool,
    pub sessions: Vec<RemoteSession>,
    /// Sessions left out: over [`MAX_SESSIONS`], or not checking out.
    pub dropped: usize,
}

/// One session at the other end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteSession {
    /// Its id there (letters, digits, `.`, `_`, `-`; at most 128).
    pub id: String,
    pub host: Host,
    /// The project folder's name, cleaned.
    pub project: String,
    pub state: SessionState,
    /// When it entered that state (Unix milliseconds, never after the line arrived).
    pub since_ms: Option<i64>,
    pub reason: Option<WaitReason>,
    pub tool: Option<String>,
    pub subagent: bool,
    pub interrupted: bool,
    pub in_turn: bool,
    pub turn_started_ms: Option<i64>,
    /// The board's last count (`None`: never counted).
    pub unread: Option<u64>,
    /// Its tmux pane there, when it runs in tmux.
    pub tmux_pane: Option<TmuxPane>,
}

#[derive(Deserialize)]
struct RawDoc {
    schema: Option<String>,
    heartbeat: Option<Value>,
    fabric: Option<RawFabric>,
    sessions: Option<Vec<Value>>,
}

#[derive(Deserialize)]
struct RawFabric {
    state: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSession {
    id: String,
    host: Host,
    #[serde(default)]
    project: Option<String>,
    state: SessionState,
    #[serde(default)]
    state_since: Option<String>,
    #[serde(default)]
    reason: Option<WaitReason>,
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    subagent: Option<bool>,
    #[serde(default)]
    interrupted: Option<bool>,
    #[serde(default)]
    in_turn: Option<bool>,
    #[serde(default)]
    turn_started_at: Option<String>,
    #[serde(default)]
    board: Option<RawBoard>,
    #[serde(default)]
    tmux_pane: Option<String>,
}

#[derive(Deserialize)]
struct RawBoard {
    unread: Option<u64>,
}

/// Reads one line (without its newline) that arrived at `now_ms`.
pub fn parse_line(line: &[u8], now_ms: i64) -> Result<Line, StreamError> {
    if line.len() > MAX_LINE_BYTES {
        return Err(StreamError::TooLong);
    }
    let doc: RawDoc = serde_json::from_slice(line).map_err(|_| StreamError::NotJson)?;
    if doc.schema.as_deref() != Some(SCHEMA) {
        return Err(StreamError::WrongSchema);
    }
    if doc.heartbeat.is_some() && doc.sessions.is_none() {
        return Ok(Line::Heartbeat);
    }
    let mut state = RemoteState {
        fabric_running: doc
            .fabric
            .and_then(|f| f.state)
            .is_some_and(|s| s == "running"),
        ..RemoteState::default()
    };
    for raw in doc.sessions.unwrap_or_default() {
        if state.sessions.len() == MAX_SESSIONS {
            state.dropped += 1;
            continue;
        }
        match serde_json::from_value::<RawSession>(raw)
            .ok()
            .and_then(|raw| checked(raw, now_ms))
        {
            Some(session) if !state.sessions.iter().any(|s| s.id == session.id) => {
                state.sessions.push(session)
            }
            _ => state.dropped += 1,
        }
    }
    Ok(Line::Snapshot(state))
}

fn checked(raw: RawSession, now_ms: i64) -> Option<RemoteSession> {
    let id_ok = !raw.id.is_empty()
        && raw.id.len() <= 128
        && raw
            .id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !raw.id.starts_with('.');
    if !id_ok {
        return None;
    }
    let time = |text: Option<String>| {
        text.as_deref()
            .and_then(session_state::millis)
            .map(|ms| ms.min(now_ms))
    };
    let needs_you = raw.state == SessionState::NeedsYou;
    Some(RemoteSession {
        id: raw.id,
        host: raw.host,
        project: clean(raw.project.as_deref().unwrap_or("")),
        state: raw.state,
        since_ms: time(raw.state_since),
        reason: raw.reason.filter(|_| needs_you),
        tool: raw
            .tool
            .filter(|_| needs_you)
            .map(|t| clean(&t))
            .filter(|t| !t.is_empty()),
        subagent: raw.subagent.unwrap_or(false) && needs_you,
        interrupted: raw.interrupted.unwrap_or(false),
        in_turn: raw.in_turn.unwrap_or(false),
        turn_started_ms: time(raw.turn_started_at),
        unread: raw.board.and_then(|b| b.unread).map(|n| n.min(MAX_UNREAD)),
        tmux_pane: raw.tmux_pane.as_deref().and_then(TmuxPane::new),
    })
}

/// A string a person will read: control and bidirectional characters out, whitespace runs
/// as one space, at most [`MAX_LABEL_CHARS`] characters.
pub fn clean(text: &str) -> String {
    clean_to(text, MAX_LABEL_CHARS)
}

/// [`clean`] with a limit of `max` characters (a longer text ends in `…`).
pub fn clean_to(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    for c in text.chars() {
        let c = match c {
            c if c.is_whitespace() => ' ',
            c if c.is_control() => continue,
            '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => continue,
            '\u{feff}' => continue,
            c => c,
        };
        if c == ' ' && (out.is_empty() || out.ends_with(' ')) {
            continue;
        }
        if count == max {
            out.pop();
            out.push('…');
            break;
        }
        out.push(c);
        count += 1;
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn doc(sessions: &str) -> Vec<u8> {
        format!(
            r#"{{"schema":"fabric-session-status/1","fabric":{{"state":"running","hubJson":"/x"}},"hosts":[],"sessions":[{sessions}]}}"#
        )
        .into_bytes()
    }

    fn session(extra: &str) -> String {
        format!(
            r#"{{"id":"s-1","host":"claude","project":"api","startedAt":"2026-01-01T00:00:00Z","hostPid":7,"inTurn":true,"state":"needs-you","stateSince":"2026-12-01T10:00:00.000Z","reason":"permission","tool":"Bash","subagent":false,"interrupted":false,"board":{{"unread":3}}{extra}}}"#
        )
    }

    #[test]
    fn a_document_keeps_the_status_fields_only() {
        let line = doc(&session(
            r#","tmuxPane":"%4","prompt":"secret","newField":{"a":1}"#,
        ));
        let Ok(Line::Snapshot(state)) = parse_line(&line, NOW) else {
            panic!("not read");
        };
        assert!(state.fabric_running);
        assert_eq!(state.dropped, 0);
        let s = &state.sessions[0];
        assert_eq!(
            (s.id.as_str(), s.host, s.project.as_str(), s.state),
            ("s-1", Host::Claude, "api", SessionState::NeedsYou)
        );
        assert_eq!(s.reason, Some(WaitReason::Permission));
        assert_eq!(s.tool.as_deref(), Some("Bash"));
        assert_eq!(s.unread, Some(3));
        assert_eq!(s.tmux_pane.as_ref().map(TmuxPane::as_str), Some("%4"));
        assert!(s.since_ms.is_some_and(|ms| ms < NOW));
    }

    #[test]
    fn a_heartbeat_is_alive_and_says_nothing_else() {
        let line = br#"{"schema":"fabric-session-status/1","heartbeat":"2026-12-06T10:00:00Z"}"#;
        assert_eq!(parse_line(line, NOW), Ok(Line::Heartbeat));
    }

    #[test]
    fn garbage_another_schema_and_a_huge_line_are_refused() {
        assert_eq!(parse_line(b"hello", NOW), Err(StreamError::NotJson));
        assert_eq!(
            parse_line(b"{\"schema\":\"x/2\"}", NOW),
            Err(StreamError::WrongSchema)
        );
        assert_eq!(parse_line(b"[1,2]", NOW), Err(StreamError::NotJson));
        let huge = vec![b' '; MAX_LINE_BYTES + 1];
        assert_eq!(parse_line(&huge, NOW), Err(StreamError::TooLong));
    }

    #[test]
    fn sessions_that_do_not_check_out_are_dropped_and_counted() {
        let bad = [
            session("").replace("\"s-1\"", "\"../../etc\""),
            session("").replace("\"claude\"", "\"bash\""),
            session("").replace("\"needs-you\"", "\"pwned\""),
            session("").replace("\"s-1\"", "\"\""),
            session(""),
            session(""),
        ];
        let Ok(Line::Snapshot(state)) = parse_line(&doc(&bad.join(",")), NOW) else {
            panic!("not read");
        };
        assert_eq!(
            state.sessions.len(),
            1,
            "one good one, its duplicate dropped"
        );
        assert_eq!(state.dropped, 5);
    }

    #[test]
    fn strings_are_cleaned_counts_bounded_times_never_ahead() {
        let hostile = session(r#","tmuxPane":"%1; rm -rf ~""#)
            .replace("\"api\"", "\"a\\u0000p\\u001b[31mi\\u202e\\n x\"")
            .replace("\"Bash\"", &format!("\"{}\"", "T".repeat(500)))
            .replace("\"unread\":3", "\"unread\":99999999999")
            .replace("2026-12-01T10:00:00.000Z", "2099-01-01T00:00:00Z");
        let Ok(Line::Snapshot(state)) = parse_line(&doc(&hostile), NOW) else {
            panic!("not read");
        };
        let s = &state.sessions[0];
        assert_eq!(s.project, "ap[31mi x");
        assert_eq!(
            s.tool.as_ref().map(|t| t.chars().count()),
            Some(MAX_LABEL_CHARS)
        );
        assert_eq!(s.unread, Some(MAX_UNREAD));
        assert_eq!(s.since_ms, Some(NOW));
        assert_eq!(s.tmux_pane, None);
    }

    #[test]
    fn at_most_so_many_sessions_are_kept() {
        let many: Vec<String> = (0..MAX_SESSIONS + 10)
            .map(|i| session("").replace("\"s-1\"", &format!("\"s-{i}\"")))
            .collect();
        let Ok(Line::Snapshot(state)) = parse_line(&doc(&many.join(",")), NOW) else {
            panic!("not read");
        };
        assert_eq!((state.sessions.len(), state.dropped), (MAX_SESSIONS, 10));
    }
}
