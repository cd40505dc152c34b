//! The mail watcher engine: one tokio task that watches any number of sessions' project
//! boards, for `watch-mail` (one session) and the tray (many), without a process per session.
//!
//! [`MailWatcher::start`] spawns the driver task and hands back the [`WatchEvent`] receiver.
//! Sessions come and go with [`MailWatcher::add_session`] and [`MailWatcher::remove_session`];
//! [`MailWatcher::shutdown`] (or dropping the handle) stops everything.
//!
//! How it looks:
//!
//! - **Fabric first, for everyone.** Before any look, `hub.json` is read. Fabric down (no live
//!   `hub.json`), or running without `session-hooks/1`, closes a shared gate: one
//!   [`WatchEvent::Unreachable`] with `session: None`, no child is ever spawned, and every
//!   session waits on the gate's backoff (doubling to 15 minutes). Without `session-hooks/1`
//!   a `fabric-mcp --rejoin-only` cannot be trusted to rejoin (a plain `fabric-mcp` would
//!   enroll a second session), so that Fabric is treated exactly like an unreadable board.
//!   When `hub.json` is live again the gate opens silently and every session looks at once.
//! - **Each session on its own clock.** A session is looked at when added, then every
//!   interval ± 20 % (never under 10 s). A look is a [`Look`]: the real one
//!   ([`FabricLook`]) runs `fabric-mcp --runner … --rejoin-only --runtime-session-id <id>`,
//!   calls `com.status` and ends the child under a 10 s deadline. Looks of different
//!   sessions run concurrently in a [`JoinSet`] (at most `max_concurrent_looks` at once).
//! - **Counts.** An answer carrying `unread` is recorded in the session's `board.json`, unless
//!   it holds a newer reading, and never into a spool that ended or was removed
//!   ([`Spool::record_board`]). With [`Audience::Agent`] (watch-mail) the newest count is then
//!   put to the `board.shown` rule the UserPromptSubmit hook shares ([`Spool::claim_rise`]):
//!   a rise over the last count a line was said for is a [`WatchEvent::Rose`], said once by
//!   whoever claims it first, and `board.shown` follows a fall too. With
//!   [`Audience::Person`] (the tray) `board.shown` is left to the agent's hooks and no rise is
//!   said here: the tray's model is the one rise detector for a person (it sees every
//!   `board.json` the engine, the hooks' worker and `watch-mail` write, and owns the baseline,
//!   the mute and the rate limit).
//! - **Failures.** A child that fails (not found, crash, no handshake, deadline) or a board
//!   that gives no count (`unavailable`, a refusal, no `unread`, an answer outside the
//!   contract) is said once per session ([`WatchEvent::Unreachable`] with the session), then
//!   that session backs off, doubling up to 15 minutes. Its next answer with a count is one
//!   [`WatchEvent::Back`], and the interval applies again. A session the gate parked gets a
//!   `Back` too when it first answers, and says nothing more while it still fails: the
//!   gate's event already said so.
//!
//! Every wait is on tokio's clock, so tests drive hours of schedule in milliseconds with
//! `tokio::time::pause`. The hooks log gets one `watch-mail` line per change of state (a
//! count that changed, a new problem, a recovery), never content.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Map;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::{Id, JoinError, JoinHandle, JoinSet};
use tokio::time::Instant;

use crate::deadline::after;
use crate::mcp::{self, CallOutcome, FabricClient, FabricError, Rejoin};
use crate::watch::schedule::{self, Backoff};
use companion_hosts::host::Host;
use companion_platform::paths::Paths;
use companion_sessions::board::{self, BoardReading, BoardState, RefusalCode};
use companion_sessions::hook_log::{self, Outcome};
use companion_sessions::hub::{self, DownReason, FabricState};
use companion_sessions::spool::{BoardRecord, BoardWrite, SessionId, Spool, UnreadRise};

/// How long one look may take, child start to child reaped (the spec's 10 s deadline).
pub const LOOK_DEADLINE: Duration = Duration::from_secs(10);
/// A safety net past the deadline for a [`Look`] that ignores its budget.
const LOOK_GRACE: Duration = Duration::from_secs(5);
/// How many events may wait unread before the driver waits for the reader.
const EVENT_BUFFER: usize = 64;
/// How many looks run at once by default.
pub const DEFAULT_MAX_CONCURRENT_LOOKS: usize = 4;
/// The `hooks.log` event name of the engine's lines.
pub const LOG_EVENT: &str = "watch-mail";

/// The session to look at, and the host whose runner `fabric-mcp` is started with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LookTarget {
    pub session: SessionId,
    pub host: Host,
}

/// Why a look got no answer from the board at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LookFailure {
    #[error("fabric-mcp was not found")]
    ProgramNotFound,
    #[error("fabric-mcp could not be started")]
    Spawn,
    #[error("fabric-mcp did not complete the MCP handshake")]
    Handshake,
    #[error("fabric-mcp did not answer in time")]
    Deadline,
    #[error("the com.status call failed")]
    CallFailed,
    #[error("the look stopped unexpectedly")]
    Panicked,
}

impl LookFailure {
    /// One word for the hooks log.
    pub fn word(self) -> &'static str {
        match self {
            LookFailure::ProgramNotFound => "no-fabric-mcp",
            LookFailure::Spawn => "spawn-failed",
            LookFailure::Handshake => "no-handshake",
            LookFailure::Deadline => "deadline",
            LookFailure::CallFailed => "call-failed",
            LookFailure::Panicked => "panicked",
        }
    }
}

impl From<&FabricError> for LookFailure {
    fn from(error: &FabricError) -> Self {
        match error {
            FabricError::ProgramNotFound => LookFailure::ProgramNotFound,
            FabricError::Spawn(_) => LookFailure::Spawn,
            FabricError::Handshake(_) => LookFailure::Handshake,
            FabricError::Deadline => LookFailure::Deadline,
        }
    }
}

/// One look at one session's board.
///
/// `budget` is how long the look may take in all; the engine adds a short safety net after
/// it. Implementations must end whatever they started (child processes) before returning.
pub trait Look: Send + Sync + 'static {
    fn look(
        &self,
        target: &LookTarget,
        budget: Duration,
    ) -> impl Future<Output = Result<BoardReading, LookFailure>> + Send;
}

/// The real look: `fabric-mcp --runner … --rejoin-only --runtime-session-id <id>`, one
/// `com.status`, then the child is ended and reaped ([`crate::mcp::with_session`]).
#[derive(Debug, Clone, Default)]
pub struct FabricLook {
    program: Option<PathBuf>,
}

impl FabricLook {
    /// Finds `fabric-mcp` at each look (`$FABRIC_MCP`, else on `PATH`).
    pub fn new() -> Self {
        FabricLook { program: None }
    }

    /// Always runs `program` as `fabric-mcp`.
    pub fn with_program(program: PathBuf) -> Self {
        FabricLook {
            program: Some(program),
        }
    }
}

impl Look for FabricLook {
    fn look(
        &self,
        target: &LookTarget,
        budget: Duration,
    ) -> impl Future<Output = Result<BoardReading, LookFailure>> + Send {
        let rejoin = match &self.program {
            Some(program) => Ok(Rejoin {
                program: program.clone(),
                host: target.host,
                session: target.session.clone(),
            }),
            None => {
                Rejoin::new(target.host, target.session.clone()).map_err(|e| LookFailure::from(&e))
            }
        };
        async move { look_with(&rejoin?, budget).await }
    }
}

/// One real look through `rejoin` within `budget`, usable without the engine.
pub async fn look_with(rejoin: &Rejoin, budget: Duration) -> Result<BoardReading, LookFailure> {
    let deadline = after(Instant::now(), budget);
    let outcome = mcp::with_session(rejoin, deadline, async |client: &FabricClient| {
        client.call("com.status", Map::new()).await
    })
    .await
    .map_err(|e| LookFailure::from(&e))?;
    match outcome {
        CallOutcome::Answered { text, is_error } => {
            Ok(board::reading_from_answer(text.as_deref(), is_error))
        }
        CallOutcome::Failed => Err(LookFailure::CallFailed),
    }
}

/// Why the board cannot be read right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// Fabric is not running (no live `hub.json`). Fabric-wide.
    FabricDown(DownReason),
    /// Fabric runs but does not advertise `session-hooks/1`, so no rejoin is tried. Fabric-wide.
    SessionHooksInert,
    /// The look got no answer (the child failed, hung or crashed).
    Look(LookFailure),
    /// The board answered without a count (`unavailable`, or no `unread` field).
    NoCount(BoardState),
    /// Fabric refused `com.status`.
    Refused(RefusalCode),
    /// The answer broke the contract.
    InvalidAnswer,
}

impl Problem {
    /// The problem a board reading without a count stands for (`None` for a count).
    pub fn from_reading(reading: &BoardReading) -> Option<Problem> {
        match reading {
            BoardReading::Count { .. } => None,
            BoardReading::NoCount { state } => Some(Problem::NoCount(*state)),
            BoardReading::Refused { code } => Some(Problem::Refused(*code)),
            BoardReading::Invalid => Some(Problem::InvalidAnswer),
        }
    }

    /// Whether this problem concerns Fabric as a whole rather than one session.
    pub fn is_fabric_wide(&self) -> bool {
        matches!(self, Problem::FabricDown(_) | Problem::SessionHooksInert)
    }

    /// A few words for a person (no content: states, codes and reasons only).
    pub fn describe(&self) -> String {
        match self {
            Problem::FabricDown(reason) => format!("Fabric is not running: {}", reason.describe()),
            Problem::SessionHooksInert => "Fabric does not advertise session-hooks/1".into(),
            Problem::Look(failure) => failure.to_string(),
            Problem::NoCount(BoardState::Unavailable) => "unavailable".into(),
            Problem::NoCount(state) => format!("{}, without a count", state.as_str()),
            Problem::Refused(code) => format!("refused: {}", code.as_str()),
            Problem::InvalidAnswer => "an answer outside the contract".into(),
        }
    }

    /// The hooks-log outcome and detail of this problem.
    fn log_parts(&self) -> (Outcome, String) {
        match self {
            Problem::FabricDown(reason) => {
                (Outcome::Ok, format!("fabric-down {}", down_word(*reason)))
            }
            Problem::SessionHooksInert => (Outcome::Ok, "session-hooks-inert".into()),
            Problem::Look(failure) => (Outcome::Unknown, format!("unreadable {}", failure.word())),
            Problem::NoCount(state) => (
                Outcome::Ok,
                format!("unreadable no-count board={}", state.as_str()),
            ),
            Problem::Refused(code) => (Outcome::Refused(code.as_str()), "unreadable".into()),
            Problem::InvalidAnswer => (Outcome::Ok, "unreadable invalid-answer".into()),
        }
    }
}

/// `no-hub-file`, `bad-hub-file` or `dead-pid`.
fn down_word(reason: DownReason) -> &'static str {
    match reason {
        DownReason::NoHubFile => "no-hub-file",
        DownReason::BadHubFile => "bad-hub-file",
        DownReason::DeadPid => "dead-pid",
    }
}

/// What the watcher tells its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEvent {
    /// The session's unread count rose from `from` to `to`.
    Rose {
        session: SessionId,
        from: u64,
        to: u64,
    },
    /// The board cannot be read: for every session (`session: None`, Fabric down or without
    /// session hooks) or for one. Said once; the next try is in `retry_in`.
    Unreachable {
        session: Option<SessionId>,
        problem: Problem,
        retry_in: Duration,
    },
    /// The session's board answers again with a count, after an `Unreachable`.
    Back { session: SessionId },
}

impl WatchEvent {
    /// The session the event is about (`None` for a Fabric-wide one).
    pub fn session(&self) -> Option<&SessionId> {
        match self {
            WatchEvent::Rose { session, .. } | WatchEvent::Back { session } => Some(session),
            WatchEvent::Unreachable { session, .. } => session.as_ref(),
        }
    }
}

/// Who the counts are said to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// The agent itself (`watch-mail`): rises are against `board.shown`, which is kept equal
    /// to the last count read, so the UserPromptSubmit hook does not repeat the line.
    Agent,
    /// A person (the tray): counts go to `board.json` only. No [`WatchEvent::Rose`] is said
    /// (the tray's model decides what to notify), and `board.shown` is left alone so the agent
    /// still hears of the mail at its next prompt.
    Person,
}

/// How a [`MailWatcher`] runs.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// The interval between looks (clamped to 10 s – 24 hours; ± 20 % jitter is added).
    pub interval: Duration,
    /// Fabric's `hub.json`.
    pub hub_json: PathBuf,
    /// The folder of the per-session spools (`board.json`, `board.shown`).
    pub sessions_dir: PathBuf,
    /// Where state changes are logged (`None`: not logged).
    pub hook_log: Option<PathBuf>,
    /// Who the counts are said to.
    pub audience: Audience,
    /// How long one look may take (the spec's 10 s).
    pub look_budget: Duration,
    /// How many looks may run at once.
    pub max_concurrent_looks: usize,
    /// Seeds the jitter (tests); `None` seeds it from the system.
    pub jitter_seed: Option<u64>,
}

impl WatchConfig {
    /// The places from `paths`, a 10 s look deadline and four looks at a time.
    pub fn new(paths: &Paths, interval: Duration, audience: Audience) -> Self {
        WatchConfig {
            interval: schedule::clamped(interval),
            hub_json: paths.hub_json(),
            sessions_dir: paths.sessions_dir(),
            hook_log: Some(paths.hook_log()),
            audience,
            look_budget: LOOK_DEADLINE,
            max_concurrent_looks: DEFAULT_MAX_CONCURRENT_LOOKS,
            jitter_seed: None,
        }
    }
}

enum Command {
    Add(SessionId, Host),
    Remove(SessionId),
    Shutdown,
}

/// The handle of a running watcher. Dropping it stops the watcher (looks in flight are
/// aborted: their children are killed); [`MailWatcher::shutdown`] also waits for that.
pub struct MailWatcher {
    commands: mpsc::UnboundedSender<Command>,
    driver: Option<JoinHandle<()>>,
}

impl MailWatcher {
    /// Starts the driver task on the current tokio runtime and returns the handle and the
    /// receiver of events. Panics outside a tokio runtime (it uses `tokio::spawn`).
    pub fn start<L: Look>(
        config: WatchConfig,
        look: L,
    ) -> (MailWatcher, mpsc::Receiver<WatchEvent>) {
        let (commands, command_rx) = mpsc::unbounded_channel();
        let (events, event_rx) = mpsc::channel(EVENT_BUFFER);
        let driver = Driver::new(config, look, events);
        let driver = tokio::spawn(driver.run(command_rx));
        (
            MailWatcher {
                commands,
                driver: Some(driver),
            },
            event_rx,
        )
    }

    /// Watches `session` (its first look is right away); a session already watched only gets
    /// its host updated. False when the watcher has stopped.
    pub fn add_session(&self, session: SessionId, host: Host) -> bool {
        self.commands.send(Command::Add(session, host)).is_ok()
    }

    /// Stops watching `session` (a look in flight finishes, its answer is ignored). False when
    /// the watcher has stopped.
    pub fn remove_session(&self, session: &SessionId) -> bool {
        self.commands.send(Command::Remove(session.clone())).is_ok()
    }

    /// Whether the driver task is still running.
    pub fn is_running(&self) -> bool {
        self.driver.as_ref().is_some_and(|d| !d.is_finished())
    }

    /// Stops the watcher: looks in flight are aborted (their children killed), and this waits
    /// until the driver has ended. The event receiver then yields `None`.
    pub async fn shutdown(mut self) {
        let _ = self.commands.send(Command::Shutdown);
        if let Some(driver) = self.driver.take() {
            let _ = driver.await;
        }
    }
}

impl Drop for MailWatcher {
    fn drop(&mut self) {
        if let Some(driver) = self.driver.take() {
            driver.abort();
        }
    }
}

/// A session's health as far as events go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Health {
    /// Answering (or never looked at): the next problem is said.
    Up,
    /// A problem was said (by this session or by the gate); `failures` in a row since.
    Down { failures: u32 },
}

struct Slot {
    host: Host,
    spool: Spool,
    generation: u64,
    due: Instant,
    in_flight: bool,
    health: Health,
    /// The last count read (to log changes only).
    last: Option<u64>,
    /// Whether this session's spool existed when added or was written by this watcher: then
    /// a missing spool means it was removed, and a reading never recreates it.
    spool_seen: bool,
    /// The last problem logged, so a repeat is not logged again.
    logged_problem: Option<Problem>,
}

/// The shared Fabric gate: closed while Fabric is down or without session hooks.
struct Gate {
    closed: Option<Problem>,
    backoff: Backoff,
    retry_at: Instant,
}

type LookResult = Result<BoardReading, LookFailure>;

struct Driver<L> {
    config: WatchConfig,
    look: Arc<L>,
    events: mpsc::Sender<WatchEvent>,
    sessions: HashMap<SessionId, Slot>,
    gate: Gate,
    looks: JoinSet<LookResult>,
    in_flight: HashMap<Id, (SessionId, u64)>,
    permits: Arc<Semaphore>,
    rng: fastrand::Rng,
    generations: u64,
}

impl<L: Look> Driver<L> {
    fn new(mut config: WatchConfig, look: L, events: mpsc::Sender<WatchEvent>) -> Self {
        config.interval = schedule::clamped(config.interval);
        let rng = match config.jitter_seed {
            Some(seed) => fastrand::Rng::with_seed(seed),
            None => fastrand::Rng::new(),
        };
        let permits = Arc::new(Semaphore::new(config.max_concurrent_looks.max(1)));
        Driver {
            config,
            look: Arc::new(look),
            events,
            sessions: HashMap::new(),
            gate: Gate {
                closed: None,
                backoff: Backoff::default(),
                retry_at: Instant::now(),
            },
            looks: JoinSet::new(),
            in_flight: HashMap::new(),
            permits,
            rng,
            generations: 0,
        }
    }

    async fn run(mut self, mut commands: mpsc::UnboundedReceiver<Command>) {
        loop {
            let wake = self.next_wake();
            tokio::select! {
                biased;
                command = commands.recv() => match command {
                    Some(Command::Add(session, host)) => self.add(session, host),
                    Some(Command::Remove(session)) => {
                        self.sessions.remove(&session);
                    }
                    Some(Command::Shutdown) | None => break,
                },
                Some(joined) = self.looks.join_next_with_id(), if !self.looks.is_empty() => {
                    self.finished(joined).await;
                }
                () = tokio::time::sleep_until(wake.unwrap_or_else(Instant::now)), if wake.is_some() => {
                    self.wake().await;
                }
            }
        }
        self.looks.shutdown().await;
        tracing::debug!("mail watcher stopped");
    }

    /// When something is next due: the gate's retry while it is closed, else the earliest
    /// session not being looked at.
    fn next_wake(&self) -> Option<Instant> {
        if self.sessions.is_empty() {
            return None;
        }
        if self.gate.closed.is_some() {
            return Some(self.gate.retry_at);
        }
        self.sessions
            .values()
            .filter(|slot| !slot.in_flight)
            .map(|slot| slot.due)
            .min()
    }

    fn add(&mut self, session: SessionId, host: Host) {
        if let Some(slot) = self.sessions.get_mut(&session) {
            slot.host = host;
            return;
        }
        // A session that arrives while the gate is closed does not wait out the whole
        // backoff when Fabric is already back (a re-check costs one small file read).
        if self.gate.closed.is_some() && self.fabric_problem().is_none() {
            self.open_gate(Instant::now());
        }
        self.generations += 1;
        let health = if self.gate.closed.is_some() {
            Health::Down { failures: 0 }
        } else {
            Health::Up
        };
        let spool = Spool::new(&self.config.sessions_dir, &session);
        let slot = Slot {
            host,
            spool_seen: spool.exists(),
            spool,
            generation: self.generations,
            due: Instant::now(),
            in_flight: false,
            health,
            last: None,
            logged_problem: None,
        };
        self.sessions.insert(session, slot);
    }

    /// Fabric's state as far as looking goes: `None` when looks may start.
    fn fabric_problem(&self) -> Option<Problem> {
        match hub::read_fabric_state(&self.config.hub_json) {
            FabricState::Down(reason) => Some(Problem::FabricDown(reason)),
            FabricState::Running(hub) if !hub.has_session_hooks() => {
                Some(Problem::SessionHooksInert)
            }
            FabricState::Running(_) => None,
        }
    }

    async fn wake(&mut self) {
        let now = Instant::now();
        let gate_due = self.gate.closed.is_some() && now >= self.gate.retry_at;
        let session_due = self.gate.closed.is_none()
            && self
                .sessions
                .values()
                .any(|slot| !slot.in_flight && slot.due <= now);
        if !gate_due && !session_due {
            return;
        }
        match self.fabric_problem() {
            Some(problem) => self.close_gate(problem, now).await,
            None => {
                if self.gate.closed.is_some() {
                    self.open_gate(now);
                }
                self.start_due_looks(now);
            }
        }
    }

    async fn close_gate(&mut self, problem: Problem, now: Instant) {
        let wait = self.gate.backoff.fail(self.config.interval);
        self.gate.retry_at = after(now, wait);
        let previous = self.gate.closed.replace(problem);
        for slot in self.sessions.values_mut() {
            if slot.health == Health::Up {
                slot.health = Health::Down { failures: 0 };
            }
        }
        if previous != Some(problem) {
            let (outcome, detail) = problem.log_parts();
            self.log(None, None, outcome, &detail);
        }
        tracing::debug!(problem = ?problem, wait_secs = wait.as_secs(), "gate closed");
        if previous.is_none() {
            self.emit(WatchEvent::Unreachable {
                session: None,
                problem,
                retry_in: wait,
            })
            .await;
        }
    }

    fn open_gate(&mut self, now: Instant) {
        self.gate.closed = None;
        self.gate.backoff.reset();
        for slot in self.sessions.values_mut() {
            if !slot.in_flight {
                slot.due = now;
            }
        }
        self.log(None, None, Outcome::Ok, "fabric-running");
        tracing::debug!("gate open");
    }

    fn start_due_looks(&mut self, now: Instant) {
        let due: Vec<SessionId> = self
            .sessions
            .iter()
            .filter(|(_, slot)| !slot.in_flight && slot.due <= now)
            .map(|(session, _)| session.clone())
            .collect();
        for session in due {
            self.spawn_look(session);
        }
    }

    fn spawn_look(&mut self, session: SessionId) {
        let Some(slot) = self.sessions.get_mut(&session) else {
            return;
        };
        slot.in_flight = true;
        let target = LookTarget {
            session: session.clone(),
            host: slot.host,
        };
        let generation = slot.generation;
        let look = Arc::clone(&self.look);
        let permits = Arc::clone(&self.permits);
        let budget = self.config.look_budget;
        let handle = self.looks.spawn(async move {
            let _permit = permits.acquire_owned().await;
            match tokio::time::timeout(
                budget.saturating_add(LOOK_GRACE),
                look.look(&target, budget),
            )
            .await
            {
                Ok(result) => result,
                Err(_) => Err(LookFailure::Deadline),
            }
        });
        self.in_flight.insert(handle.id(), (session, generation));
    }

    async fn finished(&mut self, joined: Result<(Id, LookResult), JoinError>) {
        let (id, result) = match joined {
            Ok((id, result)) => (id, result),
            Err(error) => (error.id(), Err(LookFailure::Panicked)),
        };
        let Some((session, generation)) = self.in_flight.remove(&id) else {
            return;
        };
        match self.sessions.get_mut(&session) {
            Some(slot) if slot.generation == generation => slot.in_flight = false,
            _ => return,
        }
        let now = Instant::now();
        match result {
            Ok(BoardReading::Count { unread, state }) => {
                self.answered(session, unread, state, now).await
            }
            Ok(reading) => {
                let problem = Problem::from_reading(&reading).unwrap_or(Problem::InvalidAnswer);
                self.failed(session, problem, now).await;
            }
            Err(failure) => self.failed(session, Problem::Look(failure), now).await,
        }
    }

    async fn answered(&mut self, session: SessionId, unread: u64, state: BoardState, now: Instant) {
        let wait = schedule::jittered(self.config.interval, self.rng.f64());
        let audience = self.config.audience;
        let Some(slot) = self.sessions.get_mut(&session) else {
            return;
        };
        let record = BoardRecord::observed_now(unread, state);
        // A spool this watcher saw is never recreated once it is gone (the session ended).
        let written = slot.spool.record_board(&record, !slot.spool_seen);
        match &written {
            Ok(BoardWrite::Written) => slot.spool_seen = true,
            Ok(kept) => tracing::debug!(?kept, "board.json kept"),
            Err(error) => tracing::debug!(%error, "board.json not written"),
        }
        let rise = match audience {
            // The session ended: nothing more is said to its agent.
            Audience::Agent if !matches!(written, Ok(BoardWrite::Ended)) => {
                match slot.spool.claim_rise() {
                    Ok(rise) => rise,
                    Err(error) => {
                        tracing::debug!(%error, "board.shown not written");
                        None
                    }
                }
            }
            Audience::Agent => None,
            // A person's rises are the tray model's to find (the one detector for a person).
            Audience::Person => None,
        };
        let was_down = matches!(slot.health, Health::Down { .. });
        let changed = slot.last != Some(unread);
        slot.health = Health::Up;
        slot.last = Some(unread);
        slot.logged_problem = None;
        slot.due = after(now, wait);
        let host = slot.host;
        if was_down {
            self.log(Some(host), Some(&session), Outcome::Ok, "back");
            self.emit(WatchEvent::Back {
                session: session.clone(),
            })
            .await;
        }
        if changed {
            let detail = format!("unread={unread} board={}", state.as_str());
            self.log(Some(host), Some(&session), Outcome::Ok, &detail);
        }
        if let Some(UnreadRise { from, to }) = rise {
            self.emit(WatchEvent::Rose { session, from, to }).await;
        }
    }

    async fn failed(&mut self, session: SessionId, problem: Problem, now: Instant) {
        let interval = self.config.interval;
        let Some(slot) = self.sessions.get_mut(&session) else {
            return;
        };
        let (say, failures) = match slot.health {
            Health::Up => (true, 1),
            Health::Down { failures } => (false, failures.saturating_add(1)),
        };
        let wait = schedule::backoff(interval, failures);
        slot.health = Health::Down { failures };
        slot.due = after(now, wait);
        let log_it = slot.logged_problem != Some(problem);
        slot.logged_problem = Some(problem);
        let host = slot.host;
        tracing::debug!(problem = ?problem, failures, wait_secs = wait.as_secs(), "look failed");
        if log_it {
            let (outcome, detail) = problem.log_parts();
            self.log(Some(host), Some(&session), outcome, &detail);
        }
        if say {
            self.emit(WatchEvent::Unreachable {
                session: Some(session),
                problem,
                retry_in: wait,
            })
            .await;
        }
    }

    async fn emit(&self, event: WatchEvent) {
        // A reader that went away does not stop the watcher; board.json still gets written.
        let _ = self.events.send(event).await;
    }

    fn log(&self, host: Option<Host>, session: Option<&SessionId>, outcome: Outcome, detail: &str) {
        let Some(log) = &self.config.hook_log else {
            return;
        };
        let _ = hook_log::append(
            log,
            &hook_log::Entry {
                event: LOG_EVENT,
                host: host.map(Host::cli_name).unwrap_or(""),
                session: session.map(SessionId::as_str),
                outcome,
                detail,
            },
        );
    }
}
