//! The detached worker: the only part of the hooks that talks to Fabric.
//!
//! A Stop or SessionEnd hook spools what happened and starts `fabric-session worker <spool>`
//! in its own session with stdio closed, then returns at once. The worker waits its turn
//! behind another worker on the same spool ([`LOCK_WAIT`]), measures the turn with git (all
//! of git within [`GIT_BUDGET`]; past it the numbers are null), then gives Fabric its own
//! [`FABRIC_BUDGET`], whatever git took: it rejoins the session through
//! `fabric-mcp --rejoin-only`, sends the pending turn observations and reads `com.status` into
//! `board.json` (Stop), or releases the session's claims and observes the end, then removes the
//! spool (SessionEnd). A turn is marked sent (`observed.seq`) only once Fabric answered it: a
//! refused call is logged by its code and dropped, an answer that never came is logged as
//! `outcome=unknown` and the turn stays pending for the next worker. Nothing is retried in a
//! loop: the idempotency keys make a repeat the same event.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::mcp::{self, CallOutcome, FabricClient, Rejoin};
use crate::{deadline, git_turn};
use companion_hosts::host::Host;
use companion_platform::paths::Paths;
use companion_sessions::board::{self, BoardReading};
use companion_sessions::hook_log::{self, Outcome};
use companion_sessions::hub;
use companion_sessions::spool::{
    BoardRecord, BoardWrite, SessionId, Spool, TurnEntry, TurnStatsRecord,
};

/// How long a worker waits for another worker on the same spool (a little over one whole run).
pub const LOCK_WAIT: Duration = Duration::from_secs(12);
/// All of a turn's git commands together; past this the turn is sent with null numbers.
pub const GIT_BUDGET: Duration = Duration::from_secs(3);
/// The `fabric-mcp` session's own time, from its start, whatever the lock and git took.
pub const FABRIC_BUDGET: Duration = Duration::from_secs(7);
/// How often a worker waiting for another's lock looks again.
const LOCK_POLL: Duration = Duration::from_millis(50);

/// The idempotency key of one event of one session: the same inputs give the same key.
pub fn idempotency_key(session: &SessionId, event: &str, number: u64) -> String {
    let digest = Sha256::digest(format!("{session}\0{event}\0{number}").as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("fs-{event}-{number}-{hex}")
}

/// What the worker found to do.
struct Work {
    session: SessionId,
    host: Host,
    turns: Vec<TurnEntry>,
    end: Option<companion_sessions::spool::EndRecord>,
    cwd: Option<PathBuf>,
}

/// Runs the worker for one spool. Never panics outward; every failure is logged or dropped.
pub fn run(spool_dir: &Path) {
    let Some(paths) = Paths::from_env() else {
        return;
    };
    companion_sessions::hook_log::log_skipped_files(&paths.hook_log(), "worker", "-");
    // Only our own spools, never an arbitrary folder named on the command line.
    let sessions = paths.sessions_dir();
    if spool_dir.parent() != Some(sessions.as_path()) {
        return;
    }
    let spool = Spool::at(spool_dir.to_path_buf());
    let Some(session) = spool.session_id() else {
        return;
    };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(run_async(&paths, &spool, session));
}

async fn run_async(paths: &Paths, spool: &Spool, session: SessionId) {
    let lock_deadline = deadline::from_now(LOCK_WAIT);
    // One worker per spool at a time; a later one waits, then finds what is left.
    let _lock = loop {
        if !spool.exists() {
            return;
        }
        match spool.try_worker_lock() {
            Ok(Some(lock)) => break lock,
            Ok(None) if deadline::from_now(LOCK_POLL) < lock_deadline => {
                tokio::time::sleep(LOCK_POLL).await;
            }
            _ => return,
        }
    };
    let Some(work) = pending_work(spool, session) else {
        return;
    };
    let log = |event: &str, outcome: Outcome, detail: &str| {
        let _ = hook_log::append(
            &paths.hook_log(),
            &hook_log::Entry {
                event,
                host: work.host.cli_name(),
                session: Some(work.session.as_str()),
                outcome,
                detail,
            },
        );
    };
    // Never start a fabric-mcp unless Fabric runs and advertises session hooks. The turns
    // stay pending: nothing was sent.
    if !hub::read_fabric_state(&paths.hub_json()).session_hooks_active() {
        return;
    }
    let rejoin = match Rejoin::new(work.host, work.session.clone()) {
        Ok(rejoin) => rejoin,
        Err(err) => {
            log("worker", Outcome::Unknown, &err.to_string());
            return;
        }
    };
    // git has its own budget; a repository too slow to measure sends nulls.
    let stats = match &work.cwd {
        Some(cwd) if !work.turns.is_empty() => {
            git_turn::measure(cwd, deadline::from_now(GIT_BUDGET)).await
        }
        _ => git_turn::TurnStats::default(),
    };
    if let Some(last) = work.turns.last() {
        let _ = spool.write_turn_stats(&TurnStatsRecord {
            seq: last.seq,
            files_changed: stats.files_changed,
            lines_added: stats.lines_added,
            lines_removed: stats.lines_removed,
        });
    }
    let in_flight: Cell<Option<&'static str>> = Cell::new(None);
    // The last turn Fabric answered (accepted or refused), in order.
    let answered: Cell<Option<u64>> = Cell::new(None);
    let fabric_deadline = deadline::from_now(FABRIC_BUDGET);
    let result = mcp::with_session(&rejoin, fabric_deadline, async |client: &FabricClient| {
        for turn in &work.turns {
            in_flight.set(Some("observe-turn"));
            let args = turn_arguments(&work, turn, &stats);
            let outcome = client.call("fabric_session_observe", args).await;
            log(
                "observe-turn",
                call_outcome(&outcome),
                &format!("turn={}", turn.seq),
            );
            if outcome == CallOutcome::Failed {
                // Unknown: this turn and the later ones stay pending.
                break;
            }
            answered.set(Some(turn.seq));
        }
        if let Some(end) = &work.end {
            in_flight.set(Some("release"));
            let args = object(json!({
                "claims": "session",
                "outcome": "let-go",
                "reason": end.reason,
                "idempotencyKey": idempotency_key(&work.session, "release", 0),
            }));
            let outcome = client.call("fabric_work_release", args).await;
            log("release", call_outcome(&outcome), "");
            in_flight.set(Some("observe-end"));
            let args = object(json!({
                "event": "end",
                "runtime": work.host.runner(),
                "runtimeSessionId": work.session.as_str(),
                "observedAt": end.at,
                "reason": end.reason,
                "idempotencyKey": idempotency_key(&work.session, "end", 0),
            }));
            let outcome = client.call("fabric_session_observe", args).await;
            log("observe-end", call_outcome(&outcome), "");
        } else {
            in_flight.set(Some("status"));
            let outcome = client.call("com.status", Map::new()).await;
            let detail = record_board(spool, &outcome);
            log("status", call_outcome(&outcome), &detail);
        }
        in_flight.set(None);
    })
    .await;
    if let Err(err) = result {
        let event = in_flight.get().unwrap_or("worker");
        log(event, Outcome::Unknown, &err.to_string());
    }
    if let Some(seq) = answered.get() {
        let _ = spool.set_observed_seq(seq);
    }
    if work.end.is_some() {
        let _ = spool.remove();
    }
}

fn pending_work(spool: &Spool, session: SessionId) -> Option<Work> {
    let observed = spool.observed_seq();
    let turns: Vec<TurnEntry> = spool
        .read_turns()
        .into_iter()
        .filter(|t| t.seq > observed)
        .collect();
    let end = spool.read_end();
    if turns.is_empty() && end.is_none() {
        return None;
    }
    let record = spool.read_session();
    let host = end
        .as_ref()
        .map(|e| e.host)
        .or_else(|| turns.last().map(|t| t.host))
        .or_else(|| record.as_ref().map(|r| r.host))?;
    let cwd = turns
        .last()
        .and_then(|t| t.cwd.clone())
        .or_else(|| record.and_then(|r| r.cwd));
    Some(Work {
        session,
        host,
        turns,
        end,
        cwd,
    })
}

fn turn_arguments(
    work: &Work,
    turn: &TurnEntry,
    stats: &git_turn::TurnStats,
) -> Map<String, Value> {
    object(json!({
        "event": "turn",
        "runtime": work.host.runner(),
        "runtimeSessionId": work.session.as_str(),
        "observedAt": turn.at,
        "head": stats.head,
        "filesChanged": stats.files_changed,
        "linesAdded": stats.lines_added,
        "linesRemoved": stats.lines_removed,
        "idempotencyKey": idempotency_key(&work.session, "turn", turn.seq),
    }))
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The log outcome of one call.
pub fn call_outcome(outcome: &CallOutcome) -> Outcome {
    match outcome {
        CallOutcome::Answered {
            text,
            is_error: true,
        } => {
            let code = text
                .as_deref()
                .and_then(|t| board::parse_refusal(t).ok())
                .map(|r| r.error.code.as_str())
                .unwrap_or_else(|| "invalid-refusal".into());
            Outcome::Refused(code)
        }
        CallOutcome::Answered { .. } => Outcome::Ok,
        CallOutcome::Failed => Outcome::Unknown,
    }
}

/// Writes `board.json` when the answer carries a count; returns the log detail.
fn record_board(spool: &Spool, outcome: &CallOutcome) -> String {
    let CallOutcome::Answered { text, is_error } = outcome else {
        return String::new();
    };
    match board::reading_from_answer(text.as_deref(), *is_error) {
        BoardReading::Count { unread, state } => {
            let record = BoardRecord::observed_now(unread, state);
            let reading = format!("unread={unread} board={}", state.as_str());
            // The worker's spool exists (it holds its lock): never create one.
            match spool.record_board(&record, false) {
                Ok(BoardWrite::Written) => reading,
                Ok(BoardWrite::KeptNewer) => format!("{reading} kept-newer"),
                Ok(BoardWrite::Ended) => format!("{reading} ended"),
                Err(_) => "board.json not written".into(),
            }
        }
        BoardReading::NoCount { state } => format!("no-count board={}", state.as_str()),
        BoardReading::Refused { .. } => String::new(),
        BoardReading::Invalid => "invalid-answer".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idempotency_keys_are_stable_and_match_the_contract_pattern() {
        let session = SessionId::new("0f9a6c1e-1234").unwrap();
        let a = idempotency_key(&session, "turn", 3);
        assert_eq!(a, idempotency_key(&session, "turn", 3));
        assert_ne!(a, idempotency_key(&session, "turn", 4));
        assert!(a.len() >= 8 && a.len() <= 128);
        assert!(
            a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._:-".contains(c))
        );
    }
}
