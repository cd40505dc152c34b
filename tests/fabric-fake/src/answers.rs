//! The stand-in's behaviour modes and the exact JSON it answers with.
//!
//! Every document built here is meant to be valid against the Fabric Agent Contract schemas
//! in `tests/fabric-contract/` (`tests/contract.rs` checks that).

use std::fmt;
use std::str::FromStr;

use serde_json::{Value, json};

/// The board protocol the stand-in speaks.
pub const COMMS_PROTOCOL: &str = "fabric-project-comms/0.1";

/// The project id the stand-in's board belongs to.
pub const PROJECT: &str = "proj-fake";

/// The refusal codes of the contract (`comms-common.schema.json#/$defs/refusalCode`).
pub const REFUSAL_CODES: &[&str] = &[
    "invalid_arguments",
    "body_too_large",
    "not_authorized",
    "authority_changed",
    "unsupported_capability",
    "unsupported_operation",
    "not_available",
    "idempotency_conflict",
    "idempotency_window_expired",
    "capacity_exceeded",
    "digest_conflict",
    "revision_conflict",
    "fenced",
    "lease_expired",
    "invalid_transition",
    "reconcile_required",
    "observation_required",
    "cursor_reset_required",
    "immutable_participants",
];

/// The refusal code used when the state folder names none.
pub const DEFAULT_REFUSAL_CODE: &str = "not_available";

/// How the stand-in behaves, as written in the state folder's `mode` file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Everything works; `com.status` says the board is ready.
    #[default]
    Ready,
    /// `com.status` says the board is degraded (still with `unread`).
    Degraded,
    /// `com.status` says the board is unavailable, with no `unread` field.
    Unavailable,
    /// Every tool call is refused (`isError: true`, contract refusal body).
    Refusal,
    /// The process records its start, then exits with code 3 without speaking MCP.
    Crash,
    /// The process answers `initialize` but never answers a tool call.
    Hang,
    /// The process never answers anything, not even `initialize`.
    HangStart,
    /// The process prints lines that are not JSON-RPC to stdout, over and over, and answers
    /// nothing.
    Garbage,
    /// The process closes its stdout at once and then waits, alive, with stdin open.
    CloseStdout,
    /// The process starts a `sleep` that inherits its stdout (so the pipe stays open), records
    /// it, and exits at once without speaking MCP.
    ForkHolder,
    /// Fabric runs but its hub does not answer: the process reads its stdin (the requests
    /// arrive and are taken), asks the hub named in `hub.json` (connects to its origin and
    /// sends a request) and answers nothing while it waits for the hub's reply.
    HubSilent,
}

impl Mode {
    /// Every mode, in the order the docs list them.
    pub const ALL: [Mode; 11] = [
        Mode::Ready,
        Mode::Degraded,
        Mode::Unavailable,
        Mode::Refusal,
        Mode::Crash,
        Mode::Hang,
        Mode::HangStart,
        Mode::Garbage,
        Mode::CloseStdout,
        Mode::ForkHolder,
        Mode::HubSilent,
    ];

    /// The word written in the `mode` file.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Ready => "ready",
            Mode::Degraded => "degraded",
            Mode::Unavailable => "unavailable",
            Mode::Refusal => "refusal",
            Mode::Crash => "crash",
            Mode::Hang => "hang",
            Mode::HangStart => "hang-start",
            Mode::Garbage => "garbage",
            Mode::CloseStdout => "close-stdout",
            Mode::ForkHolder => "fork-holder",
            Mode::HubSilent => "hub-silent",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|mode| mode.as_str() == s.trim())
            .ok_or_else(|| {
                let known: Vec<&str> = Mode::ALL.iter().map(|m| m.as_str()).collect();
                format!("unknown mode {s:?} (known: {})", known.join(", "))
            })
    }
}

/// The `com.status` answer for `mode`: `degraded` and `unavailable` give those board
/// states, every other mode gives a ready board. `unread` is left out when the board is
/// unavailable (unknown, never zero).
pub fn status_answer(mode: Mode, unread: u64) -> Value {
    let board = match mode {
        Mode::Degraded => json!({
            "state": "degraded",
            "reason": "The stand-in says the board is degraded.",
        }),
        Mode::Unavailable => json!({
            "state": "unavailable",
            "reason": "The stand-in says the board is unavailable.",
        }),
        _ => json!({"state": "ready"}),
    };
    let mut answer = json!({
        "protocol": COMMS_PROTOCOL,
        "board": board,
        "project": PROJECT,
        "responders": [],
        "transport": {"telegram": "off"},
    });
    if mode != Mode::Unavailable {
        answer["unread"] = json!(unread);
    }
    answer
}

/// The refusal body every tool answers with in [`Mode::Refusal`] (sent with `isError: true`).
pub fn refusal_answer(code: &str) -> Value {
    json!({
        "error": {
            "code": code,
            "message": "The stand-in refuses this call.",
            "retryable": false,
        }
    })
}

/// The `com.list` answer: an empty, exhausted page (valid against `comms-page.schema.json`).
pub fn list_answer(read_at: &str) -> Value {
    json!({
        "protocol": COMMS_PROTOCOL,
        "audience": {"project": PROJECT, "grant": "participant"},
        "snapshot": {"readAt": read_at},
        "messages": [],
        "cursor": null,
    })
}

/// The `fabric_whoami` answer.
pub fn whoami_answer(runner: &str, runtime_session_id: Option<&str>) -> Value {
    json!({
        "enrolled": true,
        "runtimeSessionId": runtime_session_id,
        "runner": runner,
    })
}

/// The answer of the tools that only acknowledge (`com.read_ack`, `fabric_session_observe`,
/// `fabric_work_*`).
pub fn ok_answer() -> Value {
    json!({"ok": true})
}
