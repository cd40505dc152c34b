//! The project board as the hooks see it: parsing `com.status` answers and refusals exactly as
//! the Fabric Agent Contract (`fabric-project-comms/0.1`) defines them, and turning them into a
//! count or an honest "unknown".
//!
//! An unreadable board (`unavailable`, a refusal, no `unread` field, an answer that breaks the
//! contract) is never a zero. A `degraded` board that still gives a count is read.

use serde::{Deserialize, Serialize};

/// The comms protocol we understand.
pub const COMMS_PROTOCOL: &str = "fabric-project-comms/0.1";

/// `board.state` of `com.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum BoardState {
    Ready,
    Degraded,
    Unavailable,
}

impl BoardState {
    /// The word on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            BoardState::Ready => "ready",
            BoardState::Degraded => "degraded",
            BoardState::Unavailable => "unavailable",
        }
    }
}

/// The `board` object.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Board {
    pub state: BoardState,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub link: Option<String>,
}

/// One responder slot.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Responder {
    pub capability: String,
    pub state: ResponderState,
    #[serde(default)]
    pub generation: Option<u64>,
    #[serde(default, rename = "leaseExpiresAt")]
    pub lease_expires_at: Option<String>,
    #[serde(default)]
    pub provenance: Option<Provenance>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponderState {
    Active,
    Stale,
    Absent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provenance {
    Trusted,
    Asserted,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TelegramState {
    Off,
    On,
    Degraded,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transport {
    pub telegram: TelegramState,
}

/// A `com.status` result (`comms-status.schema.json`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComStatus {
    pub protocol: String,
    pub board: Board,
    #[serde(default)]
    pub project: Option<String>,
    pub responders: Vec<Responder>,
    #[serde(default)]
    pub transport: Option<Transport>,
    #[serde(default)]
    pub unread: Option<u64>,
}

/// The refusal codes of `comms-common.schema.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalCode {
    InvalidArguments,
    BodyTooLarge,
    NotAuthorized,
    AuthorityChanged,
    UnsupportedCapability,
    UnsupportedOperation,
    NotAvailable,
    IdempotencyConflict,
    IdempotencyWindowExpired,
    CapacityExceeded,
    DigestConflict,
    RevisionConflict,
    Fenced,
    LeaseExpired,
    InvalidTransition,
    ReconcileRequired,
    ObservationRequired,
    CursorResetRequired,
    ImmutableParticipants,
}

impl RefusalCode {
    /// The code as it appears on the wire and in our log.
    pub fn as_str(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RefusalError {
    pub code: RefusalCode,
    pub message: String,
    pub retryable: bool,
}

/// A typed refusal (`comms-refusal.schema.json`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refusal {
    pub error: RefusalError,
}

/// Why an answer was not accepted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ContractError {
    #[error("the answer is not valid JSON for this shape: {0}")]
    Shape(String),
    #[error("the answer speaks {0:?}, not {COMMS_PROTOCOL}")]
    Protocol(String),
    #[error("a field breaks the contract's limits: {0}")]
    Limit(&'static str),
}

/// Parses and checks a `com.status` result against the contract.
pub fn parse_com_status(text: &str) -> Result<ComStatus, ContractError> {
    let status: ComStatus =
        serde_json::from_str(text).map_err(|e| ContractError::Shape(e.to_string()))?;
    if status.protocol != COMMS_PROTOCOL {
        return Err(ContractError::Protocol(status.protocol));
    }
    if status.responders.len() > 256 {
        return Err(ContractError::Limit("responders"));
    }
    if status
        .board
        .reason
        .as_ref()
        .is_some_and(|r| r.is_empty() || r.chars().count() > 300)
    {
        return Err(ContractError::Limit("board.reason"));
    }
    if let Some(project) = &status.project
        && !is_project_id(project)
    {
        return Err(ContractError::Limit("project"));
    }
    Ok(status)
}

/// Parses and checks a refusal against the contract.
pub fn parse_refusal(text: &str) -> Result<Refusal, ContractError> {
    let refusal: Refusal =
        serde_json::from_str(text).map_err(|e| ContractError::Shape(e.to_string()))?;
    let len = refusal.error.message.chars().count();
    if len == 0 || len > 300 {
        return Err(ContractError::Limit("error.message"));
    }
    Ok(refusal)
}

fn is_project_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id.len() <= 192
        && chars.all(|c| c.is_ascii_alphanumeric() || "._:-".contains(c))
}

/// What one `com.status` call told us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardReading {
    /// The board gave a count (ready, or degraded with a count).
    Count { unread: u64, state: BoardState },
    /// The board answered without a count (`unavailable`, or no `unread`).
    NoCount { state: BoardState },
    /// Fabric refused the call.
    Refused { code: RefusalCode },
    /// The answer broke the contract.
    Invalid,
}

/// Reads a `tools/call` answer of `com.status`: its first text content and `isError`.
pub fn reading_from_answer(text: Option<&str>, is_error: bool) -> BoardReading {
    let Some(text) = text else {
        return BoardReading::Invalid;
    };
    if is_error {
        return match parse_refusal(text) {
            Ok(refusal) => BoardReading::Refused {
                code: refusal.error.code,
            },
            Err(_) => BoardReading::Invalid,
        };
    }
    match parse_com_status(text) {
        Ok(ComStatus {
            board,
            unread: Some(unread),
            ..
        }) if board.state != BoardState::Unavailable => BoardReading::Count {
            unread,
            state: board.state,
        },
        Ok(status) => BoardReading::NoCount {
            state: status.board.state,
        },
        Err(_) => BoardReading::Invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const READY: &str = r#"{"protocol":"fabric-project-comms/0.1","board":{"state":"ready"},"project":"proj-analytics","responders":[],"transport":{"telegram":"off"},"unread":2}"#;

    #[test]
    fn ready_and_degraded_counts_are_read() {
        assert_eq!(
            reading_from_answer(Some(READY), false),
            BoardReading::Count {
                unread: 2,
                state: BoardState::Ready
            }
        );
        let degraded = READY.replace("\"ready\"", "\"degraded\"");
        assert_eq!(
            reading_from_answer(Some(&degraded), false),
            BoardReading::Count {
                unread: 2,
                state: BoardState::Degraded
            }
        );
    }

    #[test]
    fn unavailable_or_missing_unread_is_never_zero() {
        let unavailable = r#"{"protocol":"fabric-project-comms/0.1","board":{"state":"unavailable","reason":"down"},"responders":[]}"#;
        assert_eq!(
            reading_from_answer(Some(unavailable), false),
            BoardReading::NoCount {
                state: BoardState::Unavailable
            }
        );
        let no_unread = READY.replace(",\"unread\":2", "");
        assert_eq!(
            reading_from_answer(Some(&no_unread), false),
            BoardReading::NoCount {
                state: BoardState::Ready
            }
        );
    }

    #[test]
    fn refusals_and_garbage() {
        let refusal = r#"{"error":{"code":"fenced","message":"No.","retryable":false}}"#;
        assert_eq!(
            reading_from_answer(Some(refusal), true),
            BoardReading::Refused {
                code: RefusalCode::Fenced
            }
        );
        assert_eq!(RefusalCode::Fenced.as_str(), "fenced");
        assert_eq!(
            reading_from_answer(Some("nope"), false),
            BoardReading::Invalid
        );
        assert_eq!(reading_from_answer(None, false), BoardReading::Invalid);
        let extra = READY.replace("\"unread\":2", "\"unread\":2,\"secret\":1");
        assert_eq!(
            reading_from_answer(Some(&extra), false),
            BoardReading::Invalid
        );
    }
}
