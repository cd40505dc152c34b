//! The session hooks, synchronous and small: each reads stdin, a few small files, maybe
//! writes to its spool, maybe starts the detached worker, prints at most one answer, and
//! returns. No async runtime, no network, no call to Fabric here.
//!
//! | event | acts when | does |
//! |---|---|---|
//! | session-start | `fabric` registered | preamble (Fabric running) or one "start Fabric" line; the services line on any host; with `session-hooks/1`, records the session and prunes stale spools |
//! | stop | registered, Fabric running with `session-hooks/1` | appends a turn, starts the worker |
//! | user-prompt-submit | the spool holds a count | one unread line when the count rose; Kimi Code also gets the preamble once |
//! | session-end | as for stop | spools the end, starts the worker |
//! | the state events: permission-request, permission-result, notification, pre-tool-use, post-tool-use, post-tool-use-failure, stop-failure, subagent-stop, interrupt | the session is recorded (its spool has `session.json`) | the session's state only ([`crate::signals`]); print nothing |
//!
//! Every event of a recorded session also moves its state ([`Spool::apply_signal`]). The state
//! events decide from the session's spool alone, a stat and a small file under its lock: no
//! host config, no `hub.json`, no process walk (they run on every tool call). They never
//! answer a permission (nothing is printed: the host shows its own prompt exactly as without
//! us) and record only the state, its time and at most the tool's name. Input they do not
//! expect changes nothing and is logged once by kind (`unexpected=<kind>`).
//!
//! Where a host differs (measured on the real hosts, see `Host`): Kimi Code shows SessionStart
//! output to no one, so there session-start only records and the preamble rides on the first
//! prompt; a resumed session (`source: resume`) of a host whose history keeps what our hooks
//! said (Codex, Kimi Code) is recorded but told nothing again, or the model would read it twice.
//! A subagent's own prompt (Codex) is not the person's: nothing is said or marked.
//!
//! In a session Fabric launched, or a Claude Code background job, every hook is silent.

use std::path::Path;

use crate::hook_input::{HookInput, Stdin, Unexpected};
use crate::output::{self, AnswerEvent};
use crate::signals;
use crate::texts;
use companion_hosts::host::Host;
use companion_hosts::registration;
use companion_platform::clock;
use companion_platform::detach;
use companion_platform::env_vars;
use companion_platform::paths::Paths;
use companion_platform::process;
use companion_sessions::hook_log::{self, Outcome};
use companion_sessions::hub::{self, FabricState};
use companion_sessions::launched;
use companion_sessions::services;
use companion_sessions::session_state::{SessionState, StateRecord};
use companion_sessions::spool::{self, EndRecord, SessionId, SessionRecord, Spool};
use companion_sessions::terminal_ids::TerminalIds;

/// A hook event on our command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookEvent {
    SessionStart,
    Stop,
    UserPromptSubmit,
    SessionEnd,
    PermissionRequest,
    PermissionResult,
    Notification,
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    StopFailure,
    SubagentStop,
    Interrupt,
}

impl HookEvent {
    /// Every event, the four of the turn first.
    pub const ALL: [HookEvent; 13] = [
        HookEvent::SessionStart,
        HookEvent::Stop,
        HookEvent::UserPromptSubmit,
        HookEvent::SessionEnd,
        HookEvent::PermissionRequest,
        HookEvent::PermissionResult,
        HookEvent::Notification,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::StopFailure,
        HookEvent::SubagentStop,
        HookEvent::Interrupt,
    ];

    /// The name on our command line and in the log.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session-start",
            HookEvent::Stop => "stop",
            HookEvent::UserPromptSubmit => "user-prompt-submit",
            HookEvent::SessionEnd => "session-end",
            HookEvent::PermissionRequest => "permission-request",
            HookEvent::PermissionResult => "permission-result",
            HookEvent::Notification => "notification",
            HookEvent::PreToolUse => "pre-tool-use",
            HookEvent::PostToolUse => "post-tool-use",
            HookEvent::PostToolUseFailure => "post-tool-use-failure",
            HookEvent::StopFailure => "stop-failure",
            HookEvent::SubagentStop => "subagent-stop",
            HookEvent::Interrupt => "interrupt",
        }
    }

    /// Parses [`HookEvent::name`] back.
    pub fn from_name(name: &str) -> Option<Self> {
        HookEvent::ALL
            .into_iter()
            .find(|event| event.name() == name)
    }

    /// Whether this event only moves the session's state (prints nothing, reads no config).
    pub fn state_only(self) -> bool {
        !matches!(
            self,
            HookEvent::SessionStart
                | HookEvent::Stop
                | HookEvent::UserPromptSubmit
                | HookEvent::SessionEnd
        )
    }
}

/// Reads `<event> [--host <host>|--host=<host>]` without clap; `None` for anything else.
pub fn parse_hook_args(args: &[std::ffi::OsString]) -> Option<(HookEvent, Host)> {
    let mut args = args.iter().map(|a| a.to_str());
    let event = HookEvent::from_name(args.next()??)?;
    let host = match (args.next(), args.next(), args.next()) {
        (None, _, _) => Host::Claude,
        (Some(Some("--host")), Some(Some(name)), None) => Host::from_cli_name(name)?,
        (Some(Some(flag)), None, _) => Host::from_cli_name(flag.strip_prefix("--host=")?)?,
        _ => return None,
    };
    Some((event, host))
}

/// Starts `fabric-session worker <spool>` detached: the hook returns at once.
fn start_worker(spool_dir: &Path) -> std::io::Result<()> {
    let exe = std::env::current_exe()?;
    detach::spawn_detached(
        &exe,
        &[std::ffi::OsStr::new("worker"), spool_dir.as_os_str()],
    )
}

/// Runs one hook. Prints at most one answer; never fails.
pub fn run(event: HookEvent, host: Host) {
    // The event's time: when the host started the hook (hooks may finish out of order).
    let at_ms = clock::now_millis();
    let read = HookInput::read_stdin();
    let Some(paths) = Paths::from_env() else {
        return;
    };
    let input = match read {
        Stdin::Nothing => return,
        Stdin::Unexpected(kind) => {
            log_unexpected(&paths, event, host, None, kind);
            return;
        }
        Stdin::Input(input) => input,
    };
    hook_log::log_skipped_files(&paths.hook_log(), event.name(), host.cli_name());
    if event.state_only() {
        state_event(&paths, event, host, &input, at_ms);
        return;
    }
    match event {
        HookEvent::SessionStart => session_start(&paths, host, &input, at_ms),
        HookEvent::Stop => stop(&paths, host, &input, at_ms),
        HookEvent::UserPromptSubmit => user_prompt_submit(&paths, host, &input, at_ms),
        HookEvent::SessionEnd => session_end(&paths, host, &input),
        _ => {}
    }
}

/// A state event: the session's state from its spool, nothing printed.
fn state_event(paths: &Paths, event: HookEvent, host: Host, input: &HookInput, at_ms: i64) {
    let Some(session) = input.session() else {
        log_unexpected(paths, event, host, None, Unexpected::NoSession);
        return;
    };
    // Not a recorded session (Fabric's session hooks were off at its start, or Fabric launched
    // it): one stat, and nothing to do.
    let spool = Spool::new(&paths.sessions_dir(), &session);
    if !spool.has_session() {
        return;
    }
    match signals::signal(event, input) {
        Ok(Some(signal)) => {
            if let Ok(Some(record)) = spool.apply_signal(&signal, at_ms) {
                log(paths, event, host, Some(&session), &state_detail(&record));
            }
        }
        Ok(None) => {}
        Err(kind) => log_unexpected(paths, event, host, Some(&session), kind),
    }
}

/// Moves a recorded session's state for one of the four turn events (a stat when the session
/// is not recorded). Returns the new record when it changed.
fn move_state(
    paths: &Paths,
    event: HookEvent,
    input: &HookInput,
    session: &SessionId,
    at_ms: i64,
) -> Option<StateRecord> {
    let spool = Spool::new(&paths.sessions_dir(), session);
    if !spool.has_session() {
        return None;
    }
    let signal = signals::signal(event, input).ok()??;
    spool.apply_signal(&signal, at_ms).ok()?
}

/// `state=<state>` and, while it needs you, why.
fn state_detail(record: &StateRecord) -> String {
    let state = match record.state {
        SessionState::NeedsYou => "needs-you",
        other => other.word(),
    };
    let mut detail = format!("state={state}");
    if let Some(reason) = record.reason {
        detail.push_str(&format!(" reason={}", reason.word()));
    }
    if record.interrupted {
        detail.push_str(" interrupted");
    }
    detail
}

/// Input a hook did not expect: one log line per kind, ever (a marker in the cache says it
/// was logged), naming the kind only.
fn log_unexpected(
    paths: &Paths,
    event: HookEvent,
    host: Host,
    session: Option<&SessionId>,
    kind: Unexpected,
) {
    let marker_dir = paths.cache_dir.join("logged");
    if companion_platform::fsutil::create_private_dir(&marker_dir).is_err() {
        return;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(companion_platform::fsutil::PRIVATE_FILE_MODE);
    }
    if options
        .open(marker_dir.join(format!("unexpected-{}", kind.word())))
        .is_ok()
    {
        log(
            paths,
            event,
            host,
            session,
            &format!("unexpected={}", kind.word()),
        );
    }
}

fn log(paths: &Paths, event: HookEvent, host: Host, session: Option<&SessionId>, detail: &str) {
    let _ = hook_log::append(
        &paths.hook_log(),
        &hook_log::Entry {
            event: event.name(),
            host: host.cli_name(),
            session: session.map(SessionId::as_str),
            outcome: Outcome::Ok,
            detail,
        },
    );
}

/// What session-start says, and what it found on the way.
struct Briefing {
    text: String,
    detail: Vec<&'static str>,
    fabric: FabricState,
    registered: bool,
}

/// The preamble (or the down line) when registered, plus the services line on any host.
fn briefing(paths: &Paths, host: Host, input: &HookInput) -> Briefing {
    let registered = registration::has_fabric(host, paths, input.project_dir());
    let fabric = hub::read_fabric_state(&paths.hub_json());
    let mut parts = Vec::new();
    let mut detail = Vec::new();
    if registered {
        match &fabric {
            FabricState::Running(hub) => {
                parts.push(texts::preamble(&hub.origin));
                detail.push("preamble");
            }
            FabricState::Down(_) => {
                parts.push(texts::fabric_down().to_string());
                detail.push("fabric-down");
            }
        }
    }
    let count = services::count_descriptors(&paths.services_dir);
    if count.total > 0 {
        parts.push(texts::services_line(count, &paths.services_dir));
        detail.push("services");
    }
    Briefing {
        text: parts.join("\n"),
        detail,
        fabric,
        registered,
    }
}

fn session_start(paths: &Paths, host: Host, input: &HookInput, at_ms: i64) {
    if launched::silence(paths).is_some() {
        return;
    }
    let mut briefing = briefing(paths, host, input);
    let session = input.session();
    if briefing.registered
        && briefing.fabric.session_hooks_active()
        && let Some(session) = &session
    {
        record_session(paths, host, input, session);
        spool::prune_stale(&paths.sessions_dir(), Some(session));
        briefing.detail.push("recorded");
    }
    if let Some(session) = &session {
        move_state(paths, HookEvent::SessionStart, input, session, at_ms);
    }
    let quiet_resume =
        input.source.as_deref() == Some("resume") && host.history_keeps_hook_context();
    if quiet_resume || !host.session_start_reaches_model() {
        let said_before = !briefing.text.is_empty();
        briefing.detail.retain(|d| *d == "recorded");
        if quiet_resume && said_before {
            // The resumed history already holds what we said; Kimi Code's next prompt must not
            // bring the preamble again either.
            if host == Host::Kimi
                && let Some(session) = &session
            {
                let _ = Spool::new(&paths.sessions_dir(), session).claim_preamble_once();
            }
            briefing.detail.push("resumed-quiet");
        }
    } else {
        output::emit(host, AnswerEvent::SessionStart, &briefing.text);
    }
    if !briefing.detail.is_empty() {
        log(
            paths,
            HookEvent::SessionStart,
            host,
            session.as_ref(),
            &briefing.detail.join(" "),
        );
    }
}

fn record_session(paths: &Paths, host: Host, input: &HookInput, session: &SessionId) {
    // Claude Code names its own pid (`CLAUDE_PID`): exact, and no walk up the process tree.
    let named = match host {
        Host::Claude => std::env::var(env_vars::CLAUDE_PID)
            .ok()
            .and_then(|pid| pid.trim().parse::<u32>().ok())
            .filter(|pid| *pid > 1)
            .and_then(process::process_info),
        _ => None,
    };
    let host_process = named.or_else(process::host_process);
    let record = SessionRecord {
        host,
        project: input
            .project_dir()
            .and_then(|dir| dir.file_name())
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default(),
        started_at: clock::now_rfc3339(),
        host_pid: host_process.as_ref().map(|p| p.pid).unwrap_or(0),
        host_start_ticks: host_process.as_ref().map(|p| p.start_ticks).unwrap_or(0),
        cwd: input.project_dir().map(std::path::Path::to_path_buf),
        // Only the terminal's ids, from our environment (no process is asked).
        terminal: TerminalIds::from_env(),
    };
    let _ = Spool::new(&paths.sessions_dir(), session).write_session(&record);
}

/// Stop and SessionEnd act only for a registered host of a Fabric that advertises session hooks.
fn session_hooks_apply(paths: &Paths, host: Host, input: &HookInput) -> Option<SessionId> {
    let session = input.session()?;
    if launched::silence(paths).is_some() {
        return None;
    }
    if !hub::read_fabric_state(&paths.hub_json()).session_hooks_active() {
        return None;
    }
    registration::has_fabric(host, paths, input.project_dir()).then_some(session)
}

fn stop(paths: &Paths, host: Host, input: &HookInput, at_ms: i64) {
    // The state first, from the spool alone: the turn is over whatever Fabric is doing.
    if let Some(session) = input.session() {
        move_state(paths, HookEvent::Stop, input, &session, at_ms);
    }
    let Some(session) = session_hooks_apply(paths, host, input) else {
        return;
    };
    let spool = Spool::new(&paths.sessions_dir(), &session);
    if spool.read_session().is_none() {
        record_session(paths, host, input, &session);
    }
    let Ok(turn) = spool.append_turn(host, input.project_dir()) else {
        return;
    };
    let started = start_worker(spool.dir()).is_ok();
    let detail = if started {
        format!("turn={}", turn.seq)
    } else {
        format!("turn={} worker-not-started", turn.seq)
    };
    log(paths, HookEvent::Stop, host, Some(&session), &detail);
}

fn session_end(paths: &Paths, host: Host, input: &HookInput) {
    let Some(session) = session_hooks_apply(paths, host, input) else {
        // Fabric is not there to be told, but the session is over all the same: a recorded
        // session's spool says so (it is gone from every list), and is pruned once its host
        // process is gone.
        if let Some(session) = input.session() {
            let spool = Spool::new(&paths.sessions_dir(), &session);
            if spool.has_session() && spool.read_end().is_none() {
                let _ = spool.write_end(&EndRecord {
                    reason: end_reason(input),
                    at: clock::now_rfc3339(),
                    host,
                });
            }
        }
        return;
    };
    let spool = Spool::new(&paths.sessions_dir(), &session);
    let record = EndRecord {
        reason: end_reason(input),
        at: clock::now_rfc3339(),
        host,
    };
    if spool.write_end(&record).is_err() {
        return;
    }
    let started = start_worker(spool.dir()).is_ok();
    let detail = if started {
        "end"
    } else {
        "end worker-not-started"
    };
    log(paths, HookEvent::SessionEnd, host, Some(&session), detail);
}

/// SessionEnd's reason when it is a short plain word, else `other`.
fn end_reason(input: &HookInput) -> String {
    input
        .reason
        .as_deref()
        .filter(|r| !r.is_empty() && r.len() <= 64 && r.chars().all(|c| c.is_ascii_graphic()))
        .unwrap_or("other")
        .to_string()
}

fn user_prompt_submit(paths: &Paths, host: Host, input: &HookInput, at_ms: i64) {
    if launched::silence_from_env(paths).is_some() {
        return;
    }
    let Some(session) = input.session() else {
        return;
    };
    // A subagent's own prompt (Codex) is not the person's: no turn starts, nothing is said.
    if input.by_subagent() {
        return;
    }
    move_state(paths, HookEvent::UserPromptSubmit, input, &session, at_ms);
    let spool = Spool::new(&paths.sessions_dir(), &session);
    let mut parts = Vec::new();
    let mut detail = Vec::new();
    // Kimi Code does not show SessionStart output to the model: the preamble rides here once.
    // Whether it already did is one stat, checked before any config or process is read.
    if host == Host::Kimi && !spool.preamble_shown() && launched::silence(paths).is_none() {
        let briefing = briefing(paths, host, input);
        if !briefing.text.is_empty() && spool.claim_preamble_once() {
            parts.push(briefing.text);
            detail.push("preamble".to_string());
        }
    }
    if let Ok(Some(rise)) = spool.claim_rise() {
        parts.push(texts::unread_line(rise.to));
        detail.push(format!("unread={}", rise.to));
    }
    if spool.has_session() {
        let _ = spool.mark_prompt();
    }
    output::emit(host, AnswerEvent::UserPromptSubmit, &parts.join("\n"));
    if !detail.is_empty() {
        log(
            paths,
            HookEvent::UserPromptSubmit,
            host,
            Some(&session),
            &detail.join(" "),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<std::ffi::OsString> {
        list.iter().map(Into::into).collect()
    }

    #[test]
    fn hook_arguments_by_hand() {
        assert_eq!(
            parse_hook_args(&args(&["stop"])),
            Some((HookEvent::Stop, Host::Claude))
        );
        assert_eq!(
            parse_hook_args(&args(&["session-start", "--host", "kimi"])),
            Some((HookEvent::SessionStart, Host::Kimi))
        );
        assert_eq!(
            parse_hook_args(&args(&["user-prompt-submit", "--host=codex"])),
            Some((HookEvent::UserPromptSubmit, Host::Codex))
        );
        for bad in [
            &["nope"][..],
            &[],
            &["stop", "--host"],
            &["stop", "--host", "vim"],
            &["stop", "--host", "kimi", "extra"],
            &["stop", "--verbose"],
        ] {
            assert_eq!(parse_hook_args(&args(bad)), None, "{bad:?}");
        }
    }
}
