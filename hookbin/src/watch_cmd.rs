//! `fabric-session watch-mail [--interval 60] [--session-id <id>] [--host claude|codex|kimi]`:
//! the idle session's mail watcher, which the agent starts under a background watcher and
//! reads line by line. It is the [`engine`](super::engine) with one session and a printer.
//!
//! - **Refusals** (exit 2, one line on stderr, nothing started): in a session Fabric launched
//!   (or a Claude Code background job, like every hook), without a `fabric` registration for
//!   the host (in the current folder's scopes), or without a valid session id (`--session-id`,
//!   else `CLAUDE_CODE_SESSION_ID`).
//! - **Lines on stdout**, each flushed: `N unread on the project board — com.list` each time the
//!   count rises (never on a fall or the same count); one line when the board becomes
//!   unreadable or Fabric is down (with when it looks again); one line when it answers again.
//! - **Exits 0** on: end of stdin when stdin is a pipe or a socket (a terminal or `/dev/null`
//!   is not watched), SIGTERM, SIGINT, SIGHUP, the parent process gone (Linux:
//!   `PR_SET_PDEATHSIG` delivering SIGTERM, after one check that the parent is still there;
//!   other Unixes: the parent pid checked twice a second), or stdout closed (nobody reads the
//!   lines). Windows: Ctrl-C only (see `mod.rs`). A look in flight is aborted and its child
//!   killed.
//! - The hooks log gets `watch-mail` lines for start, stop and each change of state.

use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

use crate::texts;
use companion_hosts::host::Host;
use companion_hosts::registration;
use companion_platform::env_vars;
use companion_platform::paths::Paths;
use companion_platform::process;
use companion_sessions::hook_log::{self, Outcome};
use companion_sessions::launched::{self, Silence};
use companion_sessions::spool::SessionId;
use fabric_client::watch::engine::{
    Audience, FabricLook, LOG_EVENT, MailWatcher, Problem, WatchConfig, WatchEvent,
};
use fabric_client::watch::schedule;

/// Arguments of `fabric-session watch-mail`.
#[derive(Debug, Clone, clap::Args)]
pub struct WatchArgs {
    /// Seconds between looks (± 20 %): 10 to 86400 (24 hours); a value outside is clamped
    /// into that range.
    #[arg(long, default_value_t = 60)]
    pub interval: u64,
    /// The session to rejoin (default: $CLAUDE_CODE_SESSION_ID).
    #[arg(long)]
    pub session_id: Option<String>,
    /// The host whose session this is.
    #[arg(long, value_enum, default_value_t = Host::Claude)]
    pub host: Host,
}

/// The exit code of a refusal.
pub const EXIT_REFUSED: i32 = 2;
/// The exit code when the watcher itself failed (the runtime or the signal handlers).
pub const EXIT_FAILED: i32 = 1;
/// How often the parent pid is checked where the kernel does not signal its death.
const PARENT_POLL: Duration = Duration::from_millis(500);
/// How long stopping may take before the process exits anyway.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// Why `watch-mail` will not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("this session was launched by Fabric, which briefs it itself; not watching here")]
    FabricLaunched,
    #[error("this is a Claude Code background job, not the person's session; not watching here")]
    BackgroundJob,
    #[error("{0} has no `fabric` MCP server registered for this folder; nothing to watch")]
    NotRegistered(&'static str),
    #[error("no session id: pass --session-id <id> or set CLAUDE_CODE_SESSION_ID")]
    NoSessionId,
    #[error("the session id is not valid (1 to 128 of A-Z a-z 0-9 . _ -, not starting with a dot)")]
    BadSessionId,
}

/// The checks before anything starts, in order: launched session, registration, session id.
pub fn preflight(
    args: &WatchArgs,
    paths: &Paths,
    cwd: Option<&Path>,
) -> Result<SessionId, Refusal> {
    match launched::silence(paths) {
        Some(Silence::FabricLaunched) => return Err(Refusal::FabricLaunched),
        Some(Silence::BackgroundJob) => return Err(Refusal::BackgroundJob),
        None => {}
    }
    if !registration::has_fabric(args.host, paths, cwd) {
        return Err(Refusal::NotRegistered(args.host.display_name()));
    }
    let id = args
        .session_id
        .clone()
        .filter(|id| !id.is_empty())
        .or_else(|| {
            std::env::var(env_vars::CLAUDE_CODE_SESSION_ID)
                .ok()
                .filter(|id| !id.is_empty())
        })
        .ok_or(Refusal::NoSessionId)?;
    SessionId::new(&id).ok_or(Refusal::BadSessionId)
}

/// Why the watcher stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StopReason {
    StdinClosed,
    Signal(&'static str),
    ParentGone,
    StdoutClosed,
    WatcherStopped,
}

impl StopReason {
    fn word(self) -> &'static str {
        match self {
            StopReason::StdinClosed => "stdin-closed",
            StopReason::Signal(name) => name,
            StopReason::ParentGone => "parent-gone",
            StopReason::StdoutClosed => "stdout-closed",
            StopReason::WatcherStopped => "watcher-stopped",
        }
    }
}

/// Runs the command; returns the process exit code.
pub fn run(args: &WatchArgs, paths: &Paths) -> i32 {
    // The parent as it was at start: a different one later means it is gone.
    let parent = process::parent_pid();
    init_tracing();
    let cwd = std::env::current_dir().ok();
    let session = match preflight(args, paths, cwd.as_deref()) {
        Ok(session) => session,
        Err(refusal) => {
            eprintln!("fabric-session watch-mail: {refusal}");
            return EXIT_REFUSED;
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("fabric-session watch-mail: cannot start: {error}");
            return EXIT_FAILED;
        }
    };
    let interval = schedule::clamped(Duration::from_secs(args.interval));
    let code = runtime.block_on(watch(session, args.host, interval, paths, parent));
    runtime.shutdown_timeout(Duration::from_millis(100));
    code
}

async fn watch(
    session: SessionId,
    host: Host,
    interval: Duration,
    paths: &Paths,
    parent: u32,
) -> i32 {
    // Handlers first, so that a signal from here on is a clean stop, then the parent's death.
    let mut signals = match Signals::install() {
        Ok(signals) => signals,
        Err(error) => {
            eprintln!("fabric-session watch-mail: cannot watch signals: {error}");
            return EXIT_FAILED;
        }
    };
    arm_parent_death_signal();
    let mut stdin_end = stdin_end();
    let config = WatchConfig::new(paths, interval, Audience::Agent);
    let (watcher, mut events) = MailWatcher::start(config, FabricLook::new());
    watcher.add_session(session.clone(), host);
    log(
        paths,
        host,
        &session,
        &format!("start interval={}", interval.as_secs()),
    );
    let parent_watch = parent_death(parent);
    tokio::pin!(parent_watch);
    let reason = loop {
        tokio::select! {
            signal = signals.recv() => break StopReason::Signal(signal),
            () = ended(&mut stdin_end) => break StopReason::StdinClosed,
            () = &mut parent_watch => break StopReason::ParentGone,
            event = events.recv() => match event {
                Some(event) => {
                    if say(&event).is_err() {
                        break StopReason::StdoutClosed;
                    }
                }
                None => break StopReason::WatcherStopped,
            },
        }
    };
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, watcher.shutdown()).await;
    log(
        paths,
        host,
        &session,
        &format!("stop reason={}", reason.word()),
    );
    tracing::debug!(reason = reason.word(), "watch-mail stopped");
    match reason {
        StopReason::WatcherStopped => EXIT_FAILED,
        _ => 0,
    }
}

/// The line said for an event.
pub fn line_for(event: &WatchEvent) -> String {
    match event {
        WatchEvent::Rose { to, .. } => texts::unread_line(*to),
        WatchEvent::Unreachable {
            problem, retry_in, ..
        } => {
            let retry = human_duration(*retry_in);
            match problem {
                Problem::FabricDown(_) => {
                    format!("Fabric is not running; watching again in {retry}.")
                }
                Problem::SessionHooksInert => format!(
                    "Fabric runs without session hooks (session-hooks/1), so the board cannot be read from \
                     here; watching again in {retry}."
                ),
                other => format!(
                    "The project board is unreadable ({}); watching again in {retry}.",
                    other.describe()
                ),
            }
        }
        WatchEvent::Back { .. } => "The project board answers again.".into(),
    }
}

/// `20s`, `2m`, `1m30s`, `1h`, `1h5m`.
pub fn human_duration(duration: Duration) -> String {
    let total = duration.as_secs();
    let (hours, minutes, seconds) = (total / 3600, (total % 3600) / 60, total % 60);
    match (hours, minutes, seconds) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m{s}s"),
        (h, 0, _) => format!("{h}h"),
        (h, m, _) => format!("{h}h{m}m"),
    }
}

fn say(event: &WatchEvent) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "{}", line_for(event))?;
    out.flush()
}

fn log(paths: &Paths, host: Host, session: &SessionId, detail: &str) {
    let _ = hook_log::append(
        &paths.hook_log(),
        &hook_log::Entry {
            event: LOG_EVENT,
            host: host.cli_name(),
            session: Some(session.as_str()),
            outcome: Outcome::Ok,
            detail,
        },
    );
}

/// Diagnostics on stderr only when `FABRIC_SESSION_LOG` names a level (never content).
fn init_tracing() {
    let Some(level) = std::env::var(env_vars::FABRIC_SESSION_LOG)
        .ok()
        .and_then(|value| value.parse::<tracing::level_filters::LevelFilter>().ok())
    else {
        return;
    };
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(io::stderr)
        .with_ansi(false)
        .try_init();
}

// ---- stdin ---------------------------------------------------------------------------------

/// A receiver that resolves at the end of stdin, when stdin is a pipe (or a socket, as some
/// hosts give their children); `None` otherwise, so a terminal or `/dev/null` is not an end.
fn stdin_end() -> Option<tokio::sync::oneshot::Receiver<()>> {
    if !stdin_is_pipe() {
        return None;
    }
    let (done, end) = tokio::sync::oneshot::channel();
    // A plain thread, not tokio's stdin: a blocked read must never hold up the exit.
    std::thread::Builder::new()
        .name("watch-mail-stdin".into())
        .spawn(move || {
            let mut stdin = io::stdin().lock();
            let mut buffer = [0u8; 1024];
            loop {
                match io::Read::read(&mut stdin, &mut buffer) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = done.send(());
        })
        .ok()?;
    Some(end)
}

async fn ended(end: &mut Option<tokio::sync::oneshot::Receiver<()>>) {
    match end {
        Some(end) => {
            let _ = end.await;
        }
        None => std::future::pending().await,
    }
}

#[cfg(unix)]
fn stdin_is_pipe() -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    let Ok(fd) = io::stdin().as_fd().try_clone_to_owned() else {
        return false;
    };
    std::fs::File::from(fd).metadata().is_ok_and(|meta| {
        let kind = meta.file_type();
        kind.is_fifo() || kind.is_socket()
    })
}

/// Windows: an anonymous or named pipe (`GetFileType` says `FILE_TYPE_PIPE`).
#[cfg(windows)]
fn stdin_is_pipe() -> bool {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::{FILE_TYPE_PIPE, GetFileType};
    let handle = io::stdin().as_raw_handle();
    if handle.is_null() {
        return false;
    }
    // SAFETY: the handle is our own standard input, open for the life of the process.
    unsafe { GetFileType(handle) == FILE_TYPE_PIPE }
}

#[cfg(not(any(unix, windows)))]
fn stdin_is_pipe() -> bool {
    false
}

// ---- signals and the parent ---------------------------------------------------------------

#[cfg(unix)]
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn install() -> io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "sigterm",
            _ = self.int.recv() => "sigint",
            _ = self.hup.recv() => "sighup",
        }
    }
}

#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn install() -> io::Result<Self> {
        Ok(Signals)
    }

    async fn recv(&mut self) -> &'static str {
        #[cfg(windows)]
        if tokio::signal::ctrl_c().await.is_ok() {
            return "ctrl-c";
        }
        std::future::pending().await
    }
}

/// Linux: SIGTERM (handled like any other) when the parent dies.
#[cfg(target_os = "linux")]
fn arm_parent_death_signal() {
    // SAFETY: PR_SET_PDEATHSIG only sets a signal number on this process.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong);
    }
}

#[cfg(not(target_os = "linux"))]
fn arm_parent_death_signal() {}

/// Resolves when the parent we started with is gone: checked at once (it may have died
/// before the death signal was armed), then, where the kernel does not signal it (not
/// Linux), every [`PARENT_POLL`]. On Windows a parent that could not be named at start (a
/// process of another kind, as a Unix program starting us under Wine) is never watched:
/// stdin's end and Ctrl-C still end the watcher.
async fn parent_death(parent: u32) {
    let started = process::process_info(parent).map_or(0, |info| info.start_ticks);
    if cfg!(windows) && (parent == 0 || started == 0) {
        return std::future::pending().await;
    }
    loop {
        if parent_gone(parent, started) {
            return;
        }
        if cfg!(target_os = "linux") {
            std::future::pending::<()>().await;
        }
        tokio::time::sleep(PARENT_POLL).await;
    }
}

/// Whether the parent we started with is gone: on Unix we were re-parented; Windows never
/// re-parents, so there the parent (pid and start time) must no longer be alive.
fn parent_gone(parent: u32, started: u64) -> bool {
    if cfg!(windows) {
        !process::same_process_alive(parent, started)
    } else {
        process::parent_pid() != parent
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use companion_sessions::board::{BoardState, RefusalCode};
    use companion_sessions::hub::DownReason;
    use fabric_client::watch::engine::LookFailure;

    fn session() -> SessionId {
        SessionId::new("s1").unwrap()
    }

    #[test]
    fn a_rise_is_the_hooks_unread_line() {
        let event = WatchEvent::Rose {
            session: session(),
            from: 1,
            to: 4,
        };
        assert_eq!(line_for(&event), "4 unread on the project board — com.list");
    }

    #[test]
    fn problems_and_recovery_are_one_short_line_each() {
        let unreachable = |problem| WatchEvent::Unreachable {
            session: None,
            problem,
            retry_in: Duration::from_secs(120),
        };
        assert_eq!(
            line_for(&unreachable(Problem::FabricDown(DownReason::NoHubFile))),
            "Fabric is not running; watching again in 2m."
        );
        assert!(line_for(&unreachable(Problem::SessionHooksInert)).contains("session-hooks/1"));
        assert_eq!(
            line_for(&unreachable(Problem::NoCount(BoardState::Unavailable))),
            "The project board is unreadable (unavailable); watching again in 2m."
        );
        assert_eq!(
            line_for(&unreachable(Problem::Refused(RefusalCode::NotAvailable))),
            "The project board is unreadable (refused: not_available); watching again in 2m."
        );
        assert_eq!(
            line_for(&unreachable(Problem::Look(LookFailure::Deadline))),
            "The project board is unreadable (fabric-mcp did not answer in time); watching again in 2m."
        );
        for problem in [
            Problem::NoCount(BoardState::Ready),
            Problem::InvalidAnswer,
            Problem::Look(LookFailure::Handshake),
        ] {
            let line = line_for(&unreachable(problem));
            assert_eq!(line.lines().count(), 1);
            assert!(
                line.starts_with("The project board is unreadable ("),
                "{line}"
            );
        }
        assert_eq!(
            line_for(&WatchEvent::Back { session: session() }),
            "The project board answers again."
        );
    }

    #[test]
    fn durations_read_naturally() {
        let secs = Duration::from_secs;
        assert_eq!(human_duration(secs(20)), "20s");
        assert_eq!(human_duration(secs(120)), "2m");
        assert_eq!(human_duration(secs(90)), "1m30s");
        assert_eq!(human_duration(secs(900)), "15m");
        assert_eq!(human_duration(secs(3600)), "1h");
        assert_eq!(human_duration(secs(3900)), "1h5m");
    }
}
