//! The scenarios, each run once per test binary (one binary per host) and kept as plain
//! facts the tests assert on; the temporary HOME is gone by the time a test looks.
//!
//! - [`baseline`]: the same session with no hooks of ours (Fabric registered and running):
//!   the answers, exit status, requests and wall time to compare with.
//! - [`main_run`]: our hooks installed as a person would (and, for Codex, approved through
//!   Codex's own app-server); a 4-turn session; Fabric's unread count raised after turn 1.
//! - [`quiet_run`]: Fabric down (no `hub.json`, or a dead pid), or `fabric` not registered;
//!   a 2-turn session with our hooks, and its own baseline when `fabric` is not registered.
//!
//! A scenario that cannot even run (a host that fails to start) is an `Err` every test of it
//! reports.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use model_stand_in::{Options, Recorded, StandIn};
use serde_json::{Value, json};

use crate::binaries;
use crate::codex_trust::{self, ExpectedHook};
use crate::findings::{self, model_path};
use crate::home::TestHome;
use crate::hosts::{self, Host, HostProgram, say};
use crate::install::{self, Installed};
use crate::sessions::{self, Finished, Route};

/// The model's reply to every turn.
pub const REPLY: &str = "All done here, nothing else to add.";
/// Turns of the main session.
pub const MAIN_TURNS: usize = 4;
/// Turns of the quiet sessions.
pub const QUIET_TURNS: usize = 2;
/// The unread count Fabric's board has after turn 1 of the main session.
pub const RAISED_UNREAD: u64 = 2;
/// How long to wait for the detached worker to report (it has a 10 s deadline of its own).
pub const WORKER_WAIT: Duration = Duration::from_secs(20);

/// Where temporary HOMEs go (set by the test binary: its `CARGO_TARGET_TMPDIR`).
static BASE: OnceLock<PathBuf> = OnceLock::new();

/// Sets the folder temporary HOMEs go in; call before anything else (the host macro does).
/// Codex refuses to set up its helper binaries under the temporary folder ("Refusing to
/// create helper binaries under temporary dir"), so its sandboxed commands fail at once
/// there: when the test's folder is under it (a clone in `/tmp`), the HOMEs go under the
/// runner's own cache folder instead, where a person's home would be.
pub fn set_base(dir: &str) {
    let _ = BASE.set(home_base(Path::new(dir), &std::env::temp_dir()));
}

/// Where the HOMEs go for a test folder `dir`: `<dir>/real-hosts`, unless `dir` is under the
/// temporary folder `temp`; then `$XDG_CACHE_HOME` (or `~/.cache`)
/// `/fabric-companion-test-homes`.
fn home_base(dir: &Path, temp: &Path) -> PathBuf {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if !canonical(dir).starts_with(canonical(temp)) {
        return dir.join("real-hosts");
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| dir.to_path_buf());
    cache.join("fabric-companion-test-homes")
}

/// The folder temporary HOMEs go in.
pub fn base_dir() -> PathBuf {
    base()
}

fn base() -> PathBuf {
    BASE.get()
        .cloned()
        .unwrap_or_else(|| home_base(&std::env::temp_dir(), &std::env::temp_dir()))
}

/// The sentences our hooks say, taken from the product itself (`fabric-session hook
/// session-start` in a scratch HOME), so the tests follow its wording.
#[derive(Clone, Debug)]
pub struct Texts {
    pub preamble: String,
    pub down_line: String,
}

/// [`Texts`], computed once.
pub fn texts() -> &'static Texts {
    static TEXTS: OnceLock<Texts> = OnceLock::new();
    TEXTS.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("texts-")
            .tempdir_in({
                let b = base();
                std::fs::create_dir_all(&b).expect("the base folder");
                b
            })
            .expect("a scratch folder");
        let home = dir.path();
        std::fs::write(
            home.join(".claude.json"),
            json!({"mcpServers": {"fabric": {"command": "fabric-mcp"}}}).to_string(),
        )
        .expect("a registration");
        let fabric_dir = home.join(".local/share/passioncode-fabric");
        let say_at_start = || {
            let mut command = std::process::Command::new(binaries::fabric_session());
            command
                .args(["hook", "session-start"])
                .env_clear()
                .env("HOME", home)
                .env("XDG_CACHE_HOME", home.join(".cache"))
                .env("XDG_DATA_HOME", home.join(".local/share"))
                .env("XDG_CONFIG_HOME", home.join(".config"))
                .env("PATH", "/usr/bin:/bin")
                .current_dir(home)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped());
            let mut child = command.spawn().expect("fabric-session runs");
            use std::io::Write;
            let payload = json!({"session_id": "texts", "cwd": home, "hook_event_name": "SessionStart", "source": "startup"});
            let _ = child
                .stdin
                .take()
                .expect("stdin")
                .write_all(payload.to_string().as_bytes());
            let output = child.wait_with_output().expect("fabric-session ends");
            let value: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
                panic!(
                    "session-start did not answer JSON ({e}): {}",
                    String::from_utf8_lossy(&output.stdout)
                )
            });
            value["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .expect("additionalContext")
                .to_owned()
        };
        fabric_fake::write_hub(&fabric_dir, &[], std::process::id()).expect("hub.json");
        let preamble = say_at_start();
        fabric_fake::remove_hub(&fabric_dir).expect("hub.json removed");
        let down_line = say_at_start();
        assert_ne!(preamble, down_line, "the preamble and the down line differ");
        Texts {
            preamble,
            down_line,
        }
    })
}

/// One turn as the tests see it.
#[derive(Clone, Debug)]
pub struct TurnFacts {
    pub tag: String,
    pub answer: String,
    pub elapsed: Duration,
    /// The model request of this turn (`None` when none held its prompt).
    pub request: Option<Recorded>,
}

/// One session as the tests see it.
#[derive(Clone, Debug)]
pub struct SessionFacts {
    pub host: Host,
    pub version: String,
    pub session_id: Option<String>,
    pub turns: Vec<TurnFacts>,
    pub exit_codes: Vec<Option<i32>>,
    /// Start, turns and end, without the waits between turns.
    pub wall: Duration,
    /// The parts of `wall`: starting, each turn, ending.
    pub start_time: Duration,
    pub end_time: Duration,
    /// Things the run noticed on the way (a worker that never reported, …).
    pub notes: Vec<String>,
    /// The unread count in our spool after each turn (when the worker reported).
    pub board_after_turn: Vec<Option<u64>>,
    /// The host process we started, when the session has one ([`sessions::Session::host_pid`]),
    /// and the host pid our spool recorded after the first turn.
    pub host_pid: Option<u32>,
    pub recorded_host_pid: Option<u64>,
}

/// Everything about the main session.
#[derive(Clone, Debug)]
pub struct MainFacts {
    pub session: SessionFacts,
    pub installed: Installed,
    /// The hooks approved through Codex's app-server (Codex only).
    pub approved: Vec<ExpectedHook>,
    /// The host's hook config after the install, as text.
    pub hook_config: String,
    pub stable_binary: PathBuf,
    /// Every `fabric-fake` record, after the session's end settled.
    pub fabric_records: Vec<Value>,
    /// Whether our SessionEnd hook acted (our log has its line).
    pub session_end_acted: bool,
    /// Whether the session's spool folder was gone after the end.
    pub spool_gone_after_end: bool,
    /// Files of ours (or records sent to Fabric) holding a prompt's tag.
    pub prompt_leaks: Vec<(String, String)>,
    /// Our hook log, for messages.
    pub hook_log: String,
    /// Requests the model stand-in did not answer with 200 (method, path, status): a host
    /// calling something the stand-in does not serve would show here.
    pub unanswered: Vec<(String, String, u16)>,
}

/// A quiet scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quiet {
    /// `fabric` registered, no `hub.json`.
    FabricDown,
    /// `fabric` registered, `hub.json` naming a process that is gone.
    FabricDeadPid,
    /// Fabric running, `fabric` not registered in the host.
    NotRegistered,
}

/// A quiet session and the baseline it is compared with.
#[derive(Clone, Debug)]
pub struct QuietFacts {
    pub with_hooks: SessionFacts,
    pub baseline: SessionFacts,
    pub prompt_leaks: Vec<(String, String)>,
}

type Cached<T> = Result<T, String>;

fn cell<T: Clone + Send + 'static>(
    cache: &'static OnceLock<Mutex<HashMap<String, Cached<T>>>>,
    key: String,
    make: impl FnOnce() -> Cached<T>,
) -> Cached<T> {
    let map = cache.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = map.get(&key) {
        return found.clone();
    }
    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(make))
        .unwrap_or_else(|panic| Err(panic_text(&panic)));
    map.insert(key, made.clone());
    made
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "the scenario panicked".to_owned())
}

fn prompt(tag: &str, turn: usize) -> String {
    format!(
        "Turn {} of this session. Please reply briefly. Reference: {tag}.",
        turn + 1
    )
}

/// Runs `turns` turns of a session in `home`; `between(turn, session_id)` runs after each
/// turn but the last, outside the timed part.
fn run_session(
    home: &TestHome,
    stand_in: &StandIn,
    route: Route,
    label: &str,
    turns: usize,
    mut between: impl FnMut(usize, &str, &mut Vec<String>) -> Option<u64>,
) -> Result<SessionFacts, String> {
    let host = home.host();
    let mut notes = Vec::new();
    let mut facts = Vec::new();
    let mut boards = Vec::new();
    let mut session = sessions::start_with(home, route)?;
    let host_pid = session.host_pid();
    let mut recorded_host_pid = None;
    let start_time = session.start_time();
    let mut wall = start_time;
    for turn in 0..turns {
        let tag = findings::tag(label, turn);
        let before = stand_in.requests().len();
        let done = session.turn(&prompt(&tag, turn))?;
        wall += done.elapsed;
        let request = findings::turn_request(&stand_in.requests(), before, model_path(host), &tag);
        facts.push(TurnFacts {
            tag,
            answer: done.answer,
            elapsed: done.elapsed,
            request,
        });
        let id = session.session_id().unwrap_or_default();
        if turn == 0 {
            recorded_host_pid = std::fs::read_to_string(home.spool(&id).join("session.json"))
                .ok()
                .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                .and_then(|record| record["hostPid"].as_u64());
        }
        boards.push(if turn + 1 < turns {
            between(turn, &id, &mut notes)
        } else {
            None
        });
    }
    let session_id = session.session_id();
    let Finished {
        exit_codes,
        elapsed,
        ..
    } = session.finish()?;
    wall += elapsed;
    Ok(SessionFacts {
        host,
        version: home.program.version.clone(),
        session_id,
        turns: facts,
        exit_codes,
        wall,
        start_time,
        end_time: elapsed,
        notes,
        board_after_turn: boards,
        host_pid,
        recorded_host_pid,
    })
}

/// Waits until `check` holds or `limit` passes; gives whether it held.
fn wait_for(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if check() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn start_stand_in() -> Result<StandIn, String> {
    StandIn::start(Options {
        reply: REPLY.to_owned(),
        log_file: None,
    })
    .map_err(|e| format!("cannot start the model stand-in: {e}"))
}

fn is_ours(command: &str) -> bool {
    command.contains("fabric-session") && command.contains(" hook ")
}

/// Installs our hooks as a person would and, for Codex, approves them through Codex's own
/// app-server as its `/hooks` screen does.
fn wire(home: &TestHome) -> Result<(Installed, Vec<ExpectedHook>), String> {
    let installed = install::install_hooks(home);
    let approved = match home.host() {
        Host::Codex => codex_trust::grant_ours(home, is_ours)?,
        _ => Vec::new(),
    };
    Ok((installed, approved))
}

fn hook_config_text(home: &TestHome) -> String {
    let path = match home.host() {
        Host::Claude => home.home.join(".claude/settings.json"),
        Host::Codex => home.codex_home().join("hooks.json"),
        Host::Kimi => home.kimi_home().join("config.toml"),
    };
    std::fs::read_to_string(path).unwrap_or_default()
}

fn leaks(home: &TestHome, sessions: &[&SessionFacts]) -> Vec<(String, String)> {
    let tags: Vec<String> = sessions
        .iter()
        .flat_map(|s| s.turns.iter().map(|t| t.tag.clone()))
        .collect();
    let mut dirs = home.our_dirs();
    dirs.push(home.fake.state_dir().to_path_buf());
    findings::files_holding(&dirs, &tags)
        .into_iter()
        .map(|(path, tag)| (findings::shown(&path, &home.home), tag))
        .collect()
}

/// The host session with no hooks of ours: `fabric` registered (or not) and Fabric running.
pub fn baseline(program: &HostProgram, registered: bool, turns: usize) -> Cached<SessionFacts> {
    static CACHE: OnceLock<Mutex<HashMap<String, Cached<SessionFacts>>>> = OnceLock::new();
    let key = format!("{:?}-{registered}-{turns}", program.host);
    cell(&CACHE, key, || {
        let stand_in = start_stand_in()?;
        let home = TestHome::new(&base(), program, &stand_in.url());
        if registered {
            home.register_fabric();
        }
        home.fabric_running();
        run_session(&home, &stand_in, Route::Usual, "base", turns, |_, _, _| {
            None
        })
    })
}

/// The main session with our hooks: [`MAIN_TURNS`] turns, each host's usual way.
pub fn main_run(program: &HostProgram) -> Cached<MainFacts> {
    hooked_run(program, Route::Usual, MAIN_TURNS)
}

/// A session with our hooks, driven along `route`, of `turns` turns.
pub fn hooked_run(program: &HostProgram, route: Route, turns: usize) -> Cached<MainFacts> {
    static CACHE: OnceLock<Mutex<HashMap<String, Cached<MainFacts>>>> = OnceLock::new();
    cell(
        &CACHE,
        format!("{:?}-{route:?}-{turns}", program.host),
        || {
            let stand_in = start_stand_in()?;
            let home = TestHome::new(&base(), program, &stand_in.url());
            home.register_fabric();
            home.fabric_running();
            home.fake.set_unread(0);
            let (installed, approved) = wire(&home)?;
            let hook_config = hook_config_text(&home);
            let worker_calls = |session: &str, tool: &str| {
                home.fake
                    .tool_calls(tool)
                    .into_iter()
                    .filter(|r| findings::from_worker(r) && findings::names_session(r, session))
                    .count()
            };
            let session = run_session(
                &home,
                &stand_in,
                route,
                "main",
                turns,
                |turn, id, notes| {
                    // The Stop hook of this turn starts the worker; wait for its `com.status` and
                    // the count it keeps, when our Stop hook acted at all.
                    let expected = if turn == 0 { 0 } else { RAISED_UNREAD };
                    if route == Route::Resume {
                        // Each process ends the session (SessionEnd) and its spool with it: there is
                        // no count to wait for between turns.
                        return None;
                    }
                    let stop_acted = home.hook_log_lines("stop", id).len() > turn;
                    let board = if stop_acted {
                        let reported = wait_for(WORKER_WAIT, || {
                            worker_calls(id, "com.status") > turn
                                && home.board_unread(id) == Some(expected)
                        });
                        if !reported {
                            notes.push(format!(
                        "after turn {}: the worker did not report an unread count of {expected} within {} s",
                        turn + 1,
                        WORKER_WAIT.as_secs()
                    ));
                        }
                        home.board_unread(id)
                    } else {
                        notes.push(format!(
                    "after turn {}: our Stop hook did not act (no `stop` line in hooks.log)",
                    turn + 1
                ));
                        None
                    };
                    if turn == 0 {
                        home.fake.set_unread(RAISED_UNREAD);
                    }
                    board
                },
            )?;
            let id = session.session_id.clone().unwrap_or_default();
            let session_end_acted = wait_for(Duration::from_secs(2), || {
                !home.hook_log_lines("session-end", &id).is_empty()
            });
            let spool_gone_after_end = session_end_acted
                && wait_for(WORKER_WAIT, || {
                    worker_calls(&id, "fabric_work_release") > 0 && !home.spool(&id).exists()
                });
            let prompt_leaks = leaks(&home, &[&session]);
            Ok(MainFacts {
                installed,
                approved,
                hook_config,
                stable_binary: home.stable_binary(),
                fabric_records: home.fake.calls(),
                session_end_acted,
                spool_gone_after_end,
                prompt_leaks,
                hook_log: home.hook_log_text(),
                unanswered: stand_in
                    .requests()
                    .into_iter()
                    .filter(|r| r.status != 200)
                    .map(|r| (r.method, r.path, r.status))
                    .collect(),
                session,
            })
        },
    )
}

/// A quiet session with our hooks, and the baseline it is compared with.
pub fn quiet_run(program: &HostProgram, quiet: Quiet) -> Cached<QuietFacts> {
    static CACHE: OnceLock<Mutex<HashMap<String, Cached<QuietFacts>>>> = OnceLock::new();
    cell(&CACHE, format!("{:?}-{quiet:?}", program.host), || {
        let registered = quiet != Quiet::NotRegistered;
        // Registered: the main session's baseline serves (its first turns are the same
        // session so far); not registered needs one of its own.
        let mut baseline = if registered {
            baseline(program, true, MAIN_TURNS)?
        } else {
            baseline(program, false, QUIET_TURNS)?
        };
        baseline.turns.truncate(QUIET_TURNS);
        // A host with a process per turn has an exit code per turn.
        baseline.exit_codes.truncate(QUIET_TURNS);
        let stand_in = start_stand_in()?;
        let home = TestHome::new(&base(), program, &stand_in.url());
        if registered {
            home.register_fabric();
        }
        match quiet {
            Quiet::FabricDown => home.fabric_stopped(),
            Quiet::FabricDeadPid => home.fabric_dead_pid(),
            Quiet::NotRegistered => home.fabric_running(),
        }
        wire(&home)?;
        let with_hooks = run_session(
            &home,
            &stand_in,
            Route::Usual,
            "quiet",
            QUIET_TURNS,
            |_, _, _| None,
        )?;
        let prompt_leaks = leaks(&home, &[&with_hooks]);
        Ok(QuietFacts {
            with_hooks,
            baseline,
            prompt_leaks,
        })
    })
}

/// Panics with the scenario's error.
pub fn expect<T>(result: Cached<T>, what: &str) -> T {
    result.unwrap_or_else(|e| panic!("{what} could not run: {e}"))
}

/// A host's program for a test, or `None` after saying why it does not run.
pub fn require(host: Host, test: &str) -> Option<HostProgram> {
    hosts::require(host, test)
}

/// Prints one line past the harness's capture.
pub fn report(line: &str) {
    say(line);
}

/// A session's time, part by part (`start 0.40 + 0.21 + … + end 0.05 = 1.20 s`).
pub fn time_parts(session: &SessionFacts) -> String {
    let turns: Vec<String> = session
        .turns
        .iter()
        .map(|t| format!("{:.2}", t.elapsed.as_secs_f64()))
        .collect();
    format!(
        "start {:.2} + turns {} + end {:.2} = {:.2} s",
        session.start_time.as_secs_f64(),
        turns.join(" + "),
        session.end_time.as_secs_f64(),
        session.wall.as_secs_f64()
    )
}

/// For messages: a session's turns, short.
pub fn describe(session: &SessionFacts) -> String {
    let mut out = format!(
        "{} {} session {:?}, exit codes {:?}",
        session.host, session.version, session.session_id, session.exit_codes
    );
    for note in &session.notes {
        out.push_str(&format!("\n  note: {note}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homes_never_go_under_the_temporary_folder() {
        let temp = tempfile::tempdir().unwrap();
        let inside = temp.path().join("clone/target/tmp");
        std::fs::create_dir_all(&inside).unwrap();
        let base = home_base(&inside, temp.path());
        assert!(!base.starts_with(temp.path()), "{}", base.display());
        assert!(base.ends_with("fabric-companion-test-homes"));
        let elsewhere = Path::new("/work/clone/target/tmp");
        assert_eq!(
            home_base(elsewhere, temp.path()),
            elsewhere.join("real-hosts")
        );
    }
}
