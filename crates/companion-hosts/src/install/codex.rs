//! Codex: our hooks in `$CODEX_HOME/hooks.json` (default `~/.codex`), in the JSON shape
//! [`super::json`] edits: SessionStart, UserPromptSubmit, Stop and SessionEnd, and the state
//! events PermissionRequest, PostToolUse, Interrupt and SubagentStop (Codex 0.169.0 has no
//! Notification or StopFailure).
//!
//! Owns the events Codex gets, the note about its approval, and the warning when its
//! `config.toml` turns hooks off (read through [`crate::approval`], which parses only the keys
//! it needs from that file and never prints a value from it).

use std::path::PathBuf;

use super::{EventSpec, HOOK_TIMEOUT_SECS};
use crate::approval;
use companion_platform::paths::Paths;

/// Codex hashes a matcher only for SessionStart among these (it ignores one elsewhere), so only
/// SessionStart has one: every way a session starts — a fresh start, a resume (recorded, said
/// nothing: Codex keeps the first start's context in the thread), and `/clear` (which wipes the
/// context the preamble was in). Codex caps SessionEnd at 3 s and warns at every start when a
/// hook asks for more, so ours asks for 3.
pub(crate) const EVENTS: &[EventSpec] = &[
    EventSpec {
        name: "SessionStart",
        arg: "session-start",
        matcher: Some("startup|resume|clear"),
        timeout: HOOK_TIMEOUT_SECS,
    },
    EventSpec {
        name: "UserPromptSubmit",
        arg: "user-prompt-submit",
        matcher: None,
        timeout: HOOK_TIMEOUT_SECS,
    },
    EventSpec {
        name: "Stop",
        arg: "stop",
        matcher: None,
        timeout: HOOK_TIMEOUT_SECS,
    },
    EventSpec {
        name: "SessionEnd",
        arg: "session-end",
        matcher: None,
        timeout: SESSION_END_TIMEOUT_SECS,
    },
    EventSpec::state("PermissionRequest", "permission-request"),
    EventSpec::state("PostToolUse", "post-tool-use"),
    // Codex caps Interrupt at 3 s as it does SessionEnd (its hash of the hook says so).
    EventSpec {
        name: "Interrupt",
        arg: "interrupt",
        matcher: None,
        timeout: SESSION_END_TIMEOUT_SECS,
    },
    EventSpec::state("SubagentStop", "subagent-stop"),
];

/// Codex's ceiling for a SessionEnd (and an Interrupt) hook.
pub(crate) const SESSION_END_TIMEOUT_SECS: u64 = 3;

/// Said with every Codex install plan.
pub(crate) const TRUST_NOTE: &str = "Codex runs a new or changed hook only after you approve it: run /hooks in Codex once this is written. It asks again whenever an entry's command or place in hooks.json changes, so the command runs a program whose path never changes (the package's, or the app's stable copy) and our entries go after any already there.";

pub(crate) fn config_file(paths: &Paths) -> PathBuf {
    paths.codex_home().join("hooks.json")
}

/// A warning when Codex's `config.toml` turns hooks off.
pub(crate) fn warnings(paths: &Paths) -> Vec<String> {
    match approval::codex_hooks_feature(paths) {
        Some(false) => vec![format!(
            "{} turns Codex hooks off ([features] hooks = false): ours will not run until that is changed.",
            paths.codex_home().join("config.toml").display()
        )],
        _ => Vec::new(),
    }
}

/// A warning when the edit moves hooks that are not ours to another place in `hooks.json`:
/// Codex ties an approval to the place, so it will ask for them again.
pub(crate) fn moved_warning(moved: usize) -> Option<String> {
    (moved > 0).then(|| {
        let (what, them) = if moved == 1 {
            ("1 hook that is not ours", "it")
        } else {
            ("hooks that are not ours", "them")
        };
        let what = if moved == 1 {
            what.to_string()
        } else {
            format!("{moved} {what}")
        };
        format!(
            "taking our entry out moves {what} to another place in hooks.json: Codex ties an approval to the place, so it will ask you to approve {them} again in /hooks."
        )
    })
}
