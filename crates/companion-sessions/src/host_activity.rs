//! What a host's own record says its session is doing, for what its hooks do not tell.
//!
//! Claude Code 2.1.328 runs no hook when the person presses Esc at its permission prompt, refuses
//! the prompt, or interrupts a turn: no Stop, no PostToolUse. It does keep its own record of
//! each running session, `<config dir>/sessions/<pid>.json` (`$CLAUDE_CONFIG_DIR`, default
//! `~/.claude`), rewritten whenever the session's status changes: `"status"` is `busy`,
//! `waiting` (`"waitingFor": "permission prompt"`) or `idle`, with `"statusUpdatedAt"` in
//! milliseconds (checked against the real program in `tests/real-hosts`). An `idle` written
//! after our state's time ends a turn the hooks never ended
//! ([`crate::session_state::Signal::HostIdle`]); a `busy` written after a wait began means the
//! person answered it and the approved command runs (Claude Code runs no hook until the
//! command ends, which may be minutes later).
//!
//! Only that one file of the session's own process is opened (bounded, never blocking), and of
//! it only `status`, `statusUpdatedAt` and `sessionId` are read. The `.key` file beside it
//! holds a token and is never opened. Codex and Kimi Code need none of this: their hooks say
//! when a turn is interrupted (`Interrupt`) and when a permission is answered.

use std::path::Path;

use serde::Deserialize;

use companion_hosts::host::Host;
use companion_platform::paths::Paths;

/// The most of the record read (it is a few hundred bytes).
const RECORD_LIMIT: u64 = 64 * 1024;

/// The fields of Claude Code's session record we read.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClaudeRecord {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    status_updated_at: Option<i64>,
}

/// The folder of Claude Code's session records.
pub fn claude_sessions_dir(paths: &Paths) -> std::path::PathBuf {
    paths.claude_dir().join("sessions")
}

/// What the host's record says the session is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// At its prompt, no turn going on.
    Idle,
    /// A turn is going on.
    Busy,
    /// Waiting for the person (a permission prompt, a question).
    Waiting,
}

/// What the host's own record says the session `session_id` (run by `host_pid`) is doing, and
/// since when (milliseconds); `None` when the host keeps no such record.
pub fn activity(
    host: Host,
    paths: &Paths,
    host_pid: u32,
    session_id: &str,
) -> Option<(Activity, i64)> {
    match host {
        Host::Claude => claude_activity(&claude_sessions_dir(paths), host_pid, session_id),
        Host::Codex | Host::Kimi => None,
    }
}

fn claude_activity(dir: &Path, host_pid: u32, session_id: &str) -> Option<(Activity, i64)> {
    if host_pid == 0 {
        return None;
    }
    let record: ClaudeRecord =
        companion_platform::fsutil::read_json(&dir.join(format!("{host_pid}.json")), RECORD_LIMIT)?;
    // The pid may run another session now (`/clear`, `--resume` in the same process).
    if record
        .session_id
        .as_deref()
        .is_some_and(|id| id != session_id)
    {
        return None;
    }
    let activity = match record.status.as_deref()? {
        "idle" => Activity::Idle,
        "busy" => Activity::Busy,
        "waiting" => Activity::Waiting,
        _ => return None,
    };
    Some((activity, record.status_updated_at?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_s_record_says_what_and_since_when() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(claude_activity(dir.path(), 42, "s1"), None);
        std::fs::write(
            dir.path().join("42.json"),
            r#"{"pid":42,"sessionId":"s1","cwd":"/p","status":"idle","updatedAt":1796399631101,"statusUpdatedAt":1796399631101}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("42.0123.key"), "never read").unwrap();
        assert_eq!(
            claude_activity(dir.path(), 42, "s1"),
            Some((Activity::Idle, 1_796_399_631_101))
        );
        assert_eq!(
            claude_activity(dir.path(), 42, "other"),
            None,
            "another session"
        );
        assert_eq!(claude_activity(dir.path(), 0, "s1"), None);
        std::fs::write(
            dir.path().join("42.json"),
            r#"{"sessionId":"s1","status":"waiting","waitingFor":"permission prompt","statusUpdatedAt":1796399633744}"#,
        )
        .unwrap();
        assert_eq!(
            claude_activity(dir.path(), 42, "s1"),
            Some((Activity::Waiting, 1_796_399_633_744))
        );
        std::fs::write(
            dir.path().join("42.json"),
            r#"{"sessionId":"s1","status":"busy","statusUpdatedAt":1796399640000}"#,
        )
        .unwrap();
        assert_eq!(
            claude_activity(dir.path(), 42, "s1"),
            Some((Activity::Busy, 1_796_399_640_000))
        );
        std::fs::write(dir.path().join("42.json"), "not json").unwrap();
        assert_eq!(claude_activity(dir.path(), 42, "s1"), None);
    }
}
