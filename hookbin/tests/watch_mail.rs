//! `watch-mail`, against the Fabric stand-in.
//!
//! - The command, as the real binary in a temporary HOME: the three refusals, what the first
//!   look says (a rise, a fall, the same count, a degraded count, an unavailable board, a
//!   refusal, a crash, a hang killed at the 10 s deadline and reaped, Fabric down, Fabric
//!   without session hooks), and every way it exits, each within a second.
//! - The engine in-process on tokio's paused clock, so several looks, the backoff up to its
//!   15-minute cap, the jitter and the 10 s floor are checked without waiting: with a
//!   scripted look, and with the real look against the stand-in (run on a real-time runtime
//!   inside `spawn_blocking`, which keeps the paused clock from jumping while a child runs).
#![cfg(unix)] // signals, a parent that dies, executable scripts: Unix only

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant as StdInstant};

use common::{Home, write};
use companion_hosts::host::Host;
use companion_sessions::board::{BoardReading, BoardState, RefusalCode};
use companion_sessions::hub::DownReason;
use companion_sessions::spool::{SessionId, Spool};
use fabric_client::watch::{
    Audience, FabricLook, Look, LookFailure, LookTarget, MailWatcher, Problem, WatchConfig,
    WatchEvent,
};
use tokio::time::Instant;

const SESSION_HOOKS: &[&str] = &["session-hooks/1"];
/// Generous limits for things that normally take milliseconds (a debug build, a busy machine).
const FIRST_LINE: Duration = Duration::from_secs(20);
/// The spec: every exit path ends the command within a second.
const EXIT_LIMIT: Duration = Duration::from_secs(1);

// ---- the command: helpers ------------------------------------------------------------------

/// A running `fabric-session watch-mail`, its stdout read line by line on a thread.
struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Running {
    fn start(home: &Home, args: &[&str]) -> Running {
        Running::start_with(home, args, Stdio::piped())
    }

    fn start_with(home: &Home, args: &[&str], stdin: Stdio) -> Running {
        let mut full = vec!["watch-mail"];
        full.extend_from_slice(args);
        let mut command = home.command(&full);
        command
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().expect("fabric-session starts");
        let stdin = child.stdin.take();
        let lines = read_lines(child.stdout.take().unwrap());
        Running {
            child,
            stdin,
            lines,
        }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The next stdout line, waiting at most `limit`.
    fn line(&self, limit: Duration) -> String {
        self.lines
            .recv_timeout(limit)
            .unwrap_or_else(|e| panic!("no line from watch-mail within {limit:?}: {e}"))
    }

    fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    fn signal(&self, signal: libc::c_int) {
        // SAFETY: signalling a child we started and have not reaped.
        assert_eq!(unsafe { libc::kill(self.pid(), signal) }, 0);
    }

    /// Waits for the exit; panics past `limit`.
    fn exits_within(&mut self, limit: Duration) -> ExitStatus {
        let start = StdInstant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < limit,
                "watch-mail still runs {limit:?} after it was told to stop"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Stops it by closing stdin and returns every line it printed after those already read.
    fn stop(mut self) -> Vec<String> {
        self.close_stdin();
        assert!(self.exits_within(EXIT_LIMIT).success());
        self.lines.try_iter().collect()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_lines(stdout: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// A home with `fabric` registered for Claude Code and Fabric running with session hooks.
fn ready_home(unread: u64) -> Home {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    home.fake.set_unread(unread);
    home
}

fn spool(home: &Home, session: &str) -> Spool {
    Spool::new(&home.cache_dir().join("sessions"), &sid(session))
}

fn sid(id: &str) -> SessionId {
    SessionId::new(id).unwrap()
}

/// The state letter of `/proc/<pid>/stat` (`None`: no such process).
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.get(stat.rfind(')')? + 2..)?.chars().next()
}

/// The pids of every stand-in started so far.
fn fake_pids(home: &Home) -> Vec<u32> {
    home.fake
        .starts()
        .iter()
        .map(|start| start["pid"].as_u64().unwrap() as u32)
        .collect()
}

fn assert_reaped(pids: &[u32]) {
    assert!(!pids.is_empty());
    for pid in pids {
        assert_eq!(
            process_state(*pid),
            None,
            "fabric-mcp {pid} is still there (zombie or alive)"
        );
    }
}

fn refusal(home: &Home, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut full = vec!["watch-mail"];
    full.extend_from_slice(args);
    let mut command = home.command(&full);
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.stdin(Stdio::null()).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("fabric-session watch-mail: "),
        "{stderr}"
    );
    stderr
}

// ---- the command: refusals -----------------------------------------------------------------

#[test]
fn refuses_without_a_session_id() {
    let home = ready_home(1);
    let stderr = refusal(&home, &["--interval", "10"], &[]);
    assert!(stderr.contains("no session id"), "{stderr}");
    let stderr = refusal(&home, &["--session-id", "../etc"], &[]);
    assert!(stderr.contains("session id is not valid"), "{stderr}");
    let stderr = refusal(&home, &[], &[("CLAUDE_CODE_SESSION_ID", "a b")]);
    assert!(stderr.contains("session id is not valid"), "{stderr}");
    assert!(home.fake.calls().is_empty());
    assert!(!home.cache_dir().join("sessions").exists());
}

#[test]
fn refuses_without_a_fabric_registration_for_the_host() {
    let home = Home::new();
    home.fabric_running(SESSION_HOOKS);
    let stderr = refusal(&home, &["--session-id", "s1"], &[]);
    assert!(
        stderr.contains("Claude Code has no `fabric` MCP server"),
        "{stderr}"
    );
    // Another host's registration does not count.
    home.register("kimi");
    let stderr = refusal(&home, &["--session-id", "s1", "--host", "codex"], &[]);
    assert!(stderr.contains("Codex has no `fabric`"), "{stderr}");
    assert!(home.fake.calls().is_empty());
}

#[test]
fn refuses_in_a_session_fabric_launched() {
    let home = ready_home(1);
    let fabric_codex_home = home.fabric_dir().join("sessions/f-1/codex");
    let markers: Vec<(&str, String)> = vec![
        ("FABRIC_LAUNCHED_SESSION", "1".into()),
        ("FABRIC_ACP_SESSION", "x".into()),
        ("FABRIC_BRIDGE_URL", "x".into()),
        ("KILO_CONFIG_CONTENT", "x".into()),
        ("CODEX_HOME", fabric_codex_home.to_str().unwrap().into()),
    ];
    for (name, value) in &markers {
        let stderr = refusal(&home, &["--session-id", "s1"], &[(name, value)]);
        assert!(stderr.contains("launched by Fabric"), "{name}: {stderr}");
    }
    let stderr = refusal(
        &home,
        &["--session-id", "s1"],
        &[("CLAUDE_CODE_SESSION_KIND", "bg")],
    );
    assert!(stderr.contains("background job"), "{stderr}");
    assert!(home.fake.calls().is_empty());
    // `0` is not the marker: that one starts (and is stopped at once).
    let mut home = home;
    home.extra_env
        .push(("FABRIC_LAUNCHED_SESSION".into(), "0".into()));
    let running = Running::start(&home, &["--session-id", "s1"]);
    assert_eq!(
        running.line(FIRST_LINE),
        "1 unread on the project board — com.list"
    );
    running.stop();
}

// ---- the command: the first look -----------------------------------------------------------

#[test]
fn first_look_says_a_rise_and_records_the_count() {
    let mut home = ready_home(3);
    // The session id from the environment, as Claude Code gives it.
    home.extra_env
        .push(("CLAUDE_CODE_SESSION_ID".into(), "s-env".into()));
    let running = Running::start(&home, &["--interval", "10"]);
    assert_eq!(
        running.line(FIRST_LINE),
        "3 unread on the project board — com.list"
    );
    let spool = spool(&home, "s-env");
    let board = spool.read_board().expect("board.json");
    assert_eq!((board.unread, board.state), (3, BoardState::Ready));
    assert_eq!(spool.read_shown(), Some(3));
    let starts = home.fake.starts();
    assert_eq!(starts.len(), 1);
    assert_eq!(
        starts[0]["argv"],
        serde_json::json!([
            "--runner",
            "claude-code",
            "--rejoin-only",
            "--runtime-session-id",
            "s-env"
        ])
    );
    assert_eq!(home.fake.tool_calls("com.status").len(), 1);
    assert_eq!(
        home.fake.calls().len(),
        2,
        "one start, one com.status, nothing else"
    );
    assert_reaped(&fake_pids(&home));
    assert!(running.stop().is_empty());
    let log = home.log_text();
    assert!(
        log.contains(" watch-mail claude s-env ok start interval=10"),
        "{log}"
    );
    assert!(
        log.contains(" watch-mail claude s-env ok unread=3 board=ready"),
        "{log}"
    );
    assert!(
        log.contains(" watch-mail claude s-env ok stop reason=stdin-closed"),
        "{log}"
    );
}

#[test]
fn first_look_says_nothing_on_a_fall_or_the_same_count() {
    for (shown, unread) in [(5, 3), (3, 3)] {
        let home = ready_home(unread);
        write(&home.spool("s1").join("board.shown"), &format!("{shown}\n"));
        let running = Running::start(&home, &["--session-id", "s1"]);
        let spool = spool(&home, "s1");
        common::wait_until("the first look", FIRST_LINE, || {
            spool.read_board().is_some()
        });
        assert!(running.stop().is_empty(), "shown {shown}, unread {unread}");
        // A fall is recorded, so a later rise from there is said.
        assert_eq!(spool.read_shown(), Some(unread));
        assert_eq!(spool.read_board().unwrap().unread, unread);
    }
}

#[test]
fn first_look_reads_a_degraded_board_that_gives_a_count() {
    let home = ready_home(2);
    home.fake.set_mode("degraded");
    let running = Running::start(&home, &["--session-id", "s1", "--interval", "10"]);
    assert_eq!(
        running.line(FIRST_LINE),
        "2 unread on the project board — com.list"
    );
    let board = spool(&home, "s1").read_board().unwrap();
    assert_eq!((board.unread, board.state), (2, BoardState::Degraded));
    running.stop();
}

/// Runs one first look that cannot read the board; returns the line said.
fn unreadable_first_look(mode: &str) -> (Home, String) {
    let home = ready_home(4);
    home.fake.set_mode(mode);
    let running = Running::start(&home, &["--session-id", "s1", "--interval", "10"]);
    let line = running.line(FIRST_LINE);
    // Said once: nothing more until the backoff (20 s) is over.
    assert!(running.stop().is_empty(), "{mode}");
    assert!(
        spool(&home, "s1").read_board().is_none(),
        "{mode}: an unreadable board leaves no count"
    );
    assert_eq!(spool(&home, "s1").read_shown(), None);
    assert_reaped(&fake_pids(&home));
    (home, line)
}

#[test]
fn an_unavailable_board_is_said_once_and_never_a_zero() {
    let (home, line) = unreadable_first_look("unavailable");
    assert_eq!(
        line,
        "The project board is unreadable (unavailable); watching again in 20s."
    );
    assert!(
        home.log_text()
            .contains(" watch-mail claude s1 ok unreadable no-count board=unavailable")
    );
}

#[test]
fn a_refusal_is_said_once() {
    let (home, line) = unreadable_first_look("refusal");
    assert_eq!(
        line,
        "The project board is unreadable (refused: not_available); watching again in 20s."
    );
    assert!(
        home.log_text()
            .contains(" watch-mail claude s1 refused not_available unreadable")
    );
}

#[test]
fn a_crash_at_start_is_said_once() {
    let (home, line) = unreadable_first_look("crash");
    assert_eq!(
        line,
        "The project board is unreadable (fabric-mcp did not complete the MCP handshake); watching again in 20s."
    );
    assert!(
        home.log_text()
            .contains(" watch-mail claude s1 outcome=unknown unreadable no-handshake")
    );
}

#[test]
fn a_hang_is_killed_at_the_ten_second_deadline_and_reaped() {
    for mode in ["hang", "hang-start"] {
        let home = ready_home(1);
        home.fake.set_mode(mode);
        let started = StdInstant::now();
        let running = Running::start(&home, &["--session-id", "s1", "--interval", "10"]);
        let line = running.line(Duration::from_secs(30));
        let took = started.elapsed();
        assert_eq!(
            line,
            "The project board is unreadable (fabric-mcp did not answer in time); watching again in 20s.",
            "{mode}"
        );
        assert!(
            took >= Duration::from_millis(9_500),
            "{mode}: gave up after {took:?}"
        );
        assert!(
            took < Duration::from_secs(14),
            "{mode}: gave up after {took:?}"
        );
        // Killed and reaped by the watcher, which still runs: no process, not even a zombie.
        assert_reaped(&fake_pids(&home));
        if mode == "hang" {
            assert_eq!(home.fake.tool_calls("com.status").len(), 1);
        }
        assert!(running.stop().is_empty());
    }
}

#[test]
fn fabric_down_is_said_once_and_no_fabric_mcp_is_started() {
    let home = Home::new();
    home.register("claude");
    let running = Running::start(&home, &["--session-id", "s1", "--interval", "10"]);
    assert_eq!(
        running.line(FIRST_LINE),
        "Fabric is not running; watching again in 20s."
    );
    assert!(running.stop().is_empty());
    assert!(home.fake.calls().is_empty());
    assert!(
        home.log_text()
            .contains(" watch-mail - - ok fabric-down no-hub-file")
    );
}

#[test]
fn fabric_down_then_back_is_one_line_each_and_a_later_rise_is_said() {
    let home = Home::new();
    home.register("claude");
    home.fake.set_unread(2);
    let running = Running::start(&home, &["--session-id", "s1", "--interval", "10"]);
    assert_eq!(
        running.line(FIRST_LINE),
        "Fabric is not running; watching again in 20s."
    );
    home.fabric_running(SESSION_HOOKS);
    let started = StdInstant::now();
    // The gate looks again after its 20 s backoff.
    assert_eq!(
        running.line(Duration::from_secs(40)),
        "The project board answers again."
    );
    assert!(
        started.elapsed() >= Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        running.line(FIRST_LINE),
        "2 unread on the project board — com.list"
    );
    // Back on the interval (10–12 s): the next rise is said, once.
    home.fake.set_unread(3);
    let answered = StdInstant::now();
    assert_eq!(
        running.line(Duration::from_secs(30)),
        "3 unread on the project board — com.list"
    );
    assert!(
        answered.elapsed() >= Duration::from_secs(8),
        "{:?}",
        answered.elapsed()
    );
    assert!(running.stop().is_empty());
    assert_eq!(home.fake.starts().len(), 2);
    assert_reaped(&fake_pids(&home));
}

#[test]
fn fabric_without_session_hooks_is_inert_and_never_rejoined() {
    let home = ready_home(1);
    home.fabric_running(&[]);
    let running = Running::start(&home, &["--session-id", "s1", "--interval", "60"]);
    assert_eq!(
        running.line(FIRST_LINE),
        "Fabric runs without session hooks (session-hooks/1), so the board cannot be read from here; \
         watching again in 2m."
    );
    assert!(running.stop().is_empty());
    assert!(home.fake.calls().is_empty());
}

// ---- the command: every way it exits -------------------------------------------------------

/// A watcher that has said its first line (Fabric down: no child), so it is fully running.
fn settled_watcher(home: &Home, stdin: Stdio) -> Running {
    let running = Running::start_with(home, &["--session-id", "s1", "--interval", "10"], stdin);
    assert!(
        running
            .line(FIRST_LINE)
            .starts_with("Fabric is not running")
    );
    running
}

fn registered_home() -> Home {
    let home = Home::new();
    home.register("claude");
    home
}

#[test]
fn exits_at_the_end_of_a_piped_stdin() {
    let home = registered_home();
    let mut running = settled_watcher(&home, Stdio::piped());
    // Input is read and ignored; only its end stops the watcher.
    running
        .stdin
        .as_mut()
        .unwrap()
        .write_all(b"anything\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(running.child.try_wait().unwrap().is_none());
    running.close_stdin();
    assert!(running.exits_within(EXIT_LIMIT).success());
    assert!(home.log_text().contains("stop reason=stdin-closed"));
}

#[test]
fn a_stdin_that_is_not_a_pipe_is_not_an_end() {
    let home = registered_home();
    let mut running = settled_watcher(&home, Stdio::null());
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        running.child.try_wait().unwrap().is_none(),
        "/dev/null's end stopped it"
    );
    running.signal(libc::SIGTERM);
    assert!(running.exits_within(EXIT_LIMIT).success());
}

#[test]
fn exits_cleanly_on_sigterm_sigint_and_sighup() {
    for (signal, word) in [
        (libc::SIGTERM, "sigterm"),
        (libc::SIGINT, "sigint"),
        (libc::SIGHUP, "sighup"),
    ] {
        let home = registered_home();
        let mut running = settled_watcher(&home, Stdio::piped());
        running.signal(signal);
        let status = running.exits_within(EXIT_LIMIT);
        assert_eq!(status.code(), Some(0), "{word}: {status:?}");
        assert!(
            home.log_text().contains(&format!("stop reason={word}")),
            "{word}"
        );
    }
}

#[test]
fn exits_within_a_second_while_a_look_hangs_and_leaves_no_fabric_mcp_running() {
    let home = ready_home(1);
    home.fake.set_mode("hang");
    let running = Running::start(&home, &["--session-id", "s1", "--interval", "10"]);
    common::wait_until("the hanging com.status", FIRST_LINE, || {
        !home.fake.tool_calls("com.status").is_empty()
    });
    let mut running = running;
    running.signal(libc::SIGTERM);
    assert_eq!(running.exits_within(EXIT_LIMIT).code(), Some(0));
    // Killed with the watcher: gone, or a zombie left to whoever adopted it.
    for pid in fake_pids(&home) {
        common::wait_until("the hung fabric-mcp to die", EXIT_LIMIT, || {
            matches!(process_state(pid), None | Some('Z'))
        });
    }
}

#[test]
fn exits_when_its_parent_is_killed() {
    let home = registered_home();
    // The watcher runs under a shell; the shell is then killed outright.
    let template = home.command(&[]);
    let mut shell = Command::new("sh");
    shell.env_clear();
    for (key, value) in template.get_envs() {
        if let Some(value) = value {
            shell.env(key, value);
        }
    }
    shell
        .current_dir(home.path())
        .arg("-c")
        .arg(r#""$0" watch-mail --session-id s1 --interval 10 & echo "$!"; wait"#)
        .arg(common::BIN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut shell = shell.spawn().unwrap();
    let lines = read_lines(shell.stdout.take().unwrap());
    let pid: u32 = lines
        .recv_timeout(FIRST_LINE)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let first = lines.recv_timeout(FIRST_LINE).unwrap();
    assert!(first.starts_with("Fabric is not running"), "{first}");
    shell.kill().unwrap();
    shell.wait().unwrap();
    let killed = StdInstant::now();
    // Gone, or exited and waiting for whoever adopted it to reap it.
    while matches!(process_state(pid), Some(state) if state != 'Z') {
        assert!(
            killed.elapsed() < EXIT_LIMIT,
            "watch-mail {pid} outlived its parent"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    common::wait_until("the stop line", Duration::from_secs(5), || {
        home.log_text()
            .contains(" watch-mail claude s1 ok stop reason=")
    });
}

/// Issue 21: `--interval 18446744073709551615` (2^64-1) panicked with "overflow when adding
/// duration to instant" once the first look was answered. The interval is clamped to its
/// documented range (10 s to 24 hours): the first look is said, the next is a day away, and
/// the end of stdin ends it cleanly (exit 0, no panic on stderr); with Fabric down the wait
/// said is a day.
#[test]
fn a_huge_interval_is_clamped_to_a_day_and_exits_cleanly() {
    let home = ready_home(3);
    let huge = u64::MAX.to_string();
    let run = |home: &Home| {
        let mut command = home.command(&["watch-mail", "--session-id", "s1", "--interval", &huge]);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = read_lines(child.stdout.take().unwrap());
        let first = lines.recv_timeout(FIRST_LINE).expect("a first line");
        // The look's answer is handled (the next look scheduled) before stdin closes.
        common::wait_until("the look's log line", FIRST_LINE, || {
            let log = home.log_text();
            log.contains(" watch-mail claude s1 ok unread=") || log.contains("down")
        });
        std::thread::sleep(Duration::from_millis(300));
        drop(stdin);
        let started = StdInstant::now();
        while child.try_wait().unwrap().is_none() {
            assert!(started.elapsed() < Duration::from_secs(5), "never exited");
            std::thread::sleep(Duration::from_millis(10));
        }
        let out = child.wait_with_output().unwrap();
        (first, out)
    };
    let (first, out) = run(&home);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(first, "3 unread on the project board — com.list");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let log = home.log_text();
    assert!(
        log.contains(" watch-mail claude s1 ok start interval=86400"),
        "{log}"
    );
    assert!(log.contains(" stop reason=stdin-closed"), "{log}");

    let home = registered_home();
    let (first, out) = run(&home);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(first, "Fabric is not running; watching again in 24h.");
}

// ---- the engine: a scripted look on the paused clock ---------------------------------------

type Answer = Result<BoardReading, LookFailure>;

/// A look whose answers the test sets per session; it records when each look happened.
#[derive(Clone, Default)]
struct Scripted(Arc<Mutex<Script>>);

#[derive(Default)]
struct Script {
    answers: HashMap<SessionId, Answer>,
    looks: Vec<(SessionId, Instant)>,
}

impl Scripted {
    fn answer(&self, session: &str, answer: Answer) {
        self.0.lock().unwrap().answers.insert(sid(session), answer);
    }

    fn count(&self, session: &str, unread: u64) {
        self.answer(
            session,
            Ok(BoardReading::Count {
                unread,
                state: BoardState::Ready,
            }),
        );
    }

    fn looks(&self, session: &str) -> Vec<Instant> {
        let session = sid(session);
        let script = self.0.lock().unwrap();
        script
            .looks
            .iter()
            .filter(|(s, _)| *s == session)
            .map(|(_, at)| *at)
            .collect()
    }

    fn all_looks(&self) -> usize {
        self.0.lock().unwrap().looks.len()
    }
}

impl Look for Scripted {
    fn look(&self, target: &LookTarget, _budget: Duration) -> impl Future<Output = Answer> + Send {
        let script = Arc::clone(&self.0);
        let session = target.session.clone();
        async move {
            let mut script = script.lock().unwrap();
            script.looks.push((session.clone(), Instant::now()));
            script
                .answers
                .get(&session)
                .cloned()
                .unwrap_or(Err(LookFailure::CallFailed))
        }
    }
}

/// A temporary Fabric folder and cache for the engine.
struct Bench {
    dir: tempfile::TempDir,
}

impl Bench {
    fn new() -> Bench {
        Bench {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn fabric_dir(&self) -> PathBuf {
        self.dir.path().join("fabric")
    }

    fn fabric_up(&self, features: &[&str]) {
        fabric_fake::write_hub(&self.fabric_dir(), features, std::process::id()).unwrap();
    }

    fn fabric_down(&self) {
        fabric_fake::remove_hub(&self.fabric_dir()).unwrap();
    }

    fn config(&self, interval_secs: u64, audience: Audience) -> WatchConfig {
        WatchConfig {
            interval: Duration::from_secs(interval_secs),
            hub_json: self.fabric_dir().join("hub.json"),
            sessions_dir: self.dir.path().join("cache/sessions"),
            hook_log: Some(self.log_path()),
            audience,
            look_budget: Duration::from_secs(10),
            max_concurrent_looks: 4,
            jitter_seed: Some(7),
        }
    }

    fn spool(&self, session: &str) -> Spool {
        Spool::new(&self.dir.path().join("cache/sessions"), &sid(session))
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("cache/hooks.log")
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }
}

/// Lets the driver handle whatever is ready (the paused clock moves only when all are idle).
async fn settle() {
    tokio::time::sleep(Duration::from_millis(1)).await;
}

/// Advances the paused clock until `session` is looked at once more; returns when.
async fn next_look(scripted: &Scripted, session: &str) -> Instant {
    let before = scripted.looks(session).len();
    for _ in 0..20_000 {
        settle().await;
        let looks = scripted.looks(session);
        if looks.len() > before {
            assert_eq!(looks.len(), before + 1, "two looks at once");
            return looks[before];
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("{session} was not looked at again");
}

fn drain(events: &mut tokio::sync::mpsc::Receiver<WatchEvent>) -> Vec<WatchEvent> {
    std::iter::from_fn(|| events.try_recv().ok()).collect()
}

fn rose(session: &str, from: u64, to: u64) -> WatchEvent {
    WatchEvent::Rose {
        session: sid(session),
        from,
        to,
    }
}

fn back(session: &str) -> WatchEvent {
    WatchEvent::Back {
        session: sid(session),
    }
}

fn gaps(looks: &[Instant]) -> Vec<Duration> {
    looks.windows(2).map(|w| w[1] - w[0]).collect()
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

#[tokio::test(start_paused = true)]
async fn engine_says_a_rise_and_never_a_fall_or_the_same() {
    let bench = Bench::new();
    bench.fabric_up(SESSION_HOOKS);
    let scripted = Scripted::default();
    let (watcher, mut events) =
        MailWatcher::start(bench.config(60, Audience::Agent), scripted.clone());
    scripted.count("s1", 2);
    assert!(watcher.add_session(sid("s1"), Host::Claude));
    next_look(&scripted, "s1").await;
    assert_eq!(drain(&mut events), [rose("s1", 0, 2)]);
    let spool = bench.spool("s1");
    assert_eq!(
        (spool.read_board().unwrap().unread, spool.read_shown()),
        (2, Some(2))
    );
    // The same count: nothing.
    next_look(&scripted, "s1").await;
    assert_eq!(drain(&mut events), []);
    // A fall: nothing, and board.shown follows it down.
    scripted.count("s1", 1);
    next_look(&scripted, "s1").await;
    assert_eq!(drain(&mut events), []);
    assert_eq!(
        (spool.read_board().unwrap().unread, spool.read_shown()),
        (1, Some(1))
    );
    // A rise from there is said.
    scripted.count("s1", 4);
    next_look(&scripted, "s1").await;
    assert_eq!(drain(&mut events), [rose("s1", 1, 4)]);
    // The UserPromptSubmit hook already said 6: the watcher does not say it again.
    spool.write_shown(6).unwrap();
    scripted.count("s1", 6);
    next_look(&scripted, "s1").await;
    assert_eq!(drain(&mut events), []);
    for gap in gaps(&scripted.looks("s1")) {
        assert!(gap >= secs(48) && gap <= secs(72), "{gap:?}");
    }
    watcher.shutdown().await;
    assert_eq!(events.recv().await, None);
}

#[tokio::test(start_paused = true)]
async fn engine_backs_off_doubling_to_fifteen_minutes_then_returns_to_the_interval() {
    let bench = Bench::new();
    bench.fabric_up(SESSION_HOOKS);
    let scripted = Scripted::default();
    let (watcher, mut events) =
        MailWatcher::start(bench.config(60, Audience::Agent), scripted.clone());
    scripted.answer("s1", Err(LookFailure::Deadline));
    watcher.add_session(sid("s1"), Host::Claude);
    next_look(&scripted, "s1").await;
    assert_eq!(
        drain(&mut events),
        [WatchEvent::Unreachable {
            session: Some(sid("s1")),
            problem: Problem::Look(LookFailure::Deadline),
            retry_in: secs(120),
        }]
    );
    for _ in 0..6 {
        next_look(&scripted, "s1").await;
    }
    // Said once; the waits double from twice the interval and stop at the cap, exactly.
    assert_eq!(drain(&mut events), []);
    assert_eq!(
        gaps(&scripted.looks("s1")),
        [
            secs(120),
            secs(240),
            secs(480),
            secs(900),
            secs(900),
            secs(900)
        ]
    );
    // Other failures while backing off stay silent too.
    scripted.answer(
        "s1",
        Ok(BoardReading::Refused {
            code: RefusalCode::NotAvailable,
        }),
    );
    next_look(&scripted, "s1").await;
    assert_eq!(drain(&mut events), []);
    // The board answers: one Back, then the count, then the interval again.
    scripted.count("s1", 1);
    next_look(&scripted, "s1").await;
    assert_eq!(drain(&mut events), [back("s1"), rose("s1", 0, 1)]);
    let answered = scripted.looks("s1").last().copied().unwrap();
    let after = next_look(&scripted, "s1").await;
    assert!(after - answered >= secs(48) && after - answered <= secs(72));
    assert_eq!(drain(&mut events), []);
    let log = bench.log_text();
    assert_eq!(
        log.matches("outcome=unknown unreadable deadline").count(),
        1,
        "{log}"
    );
    assert_eq!(
        log.matches("refused not_available unreadable").count(),
        1,
        "{log}"
    );
    assert_eq!(log.matches(" ok back").count(), 1, "{log}");
    watcher.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn engine_backoff_of_the_ten_second_floor_and_of_a_long_interval() {
    // An interval under 10 s is 10 s: backoff from 20 s to the cap.
    let bench = Bench::new();
    bench.fabric_up(SESSION_HOOKS);
    let scripted = Scripted::default();
    let (watcher, _events) = MailWatcher::start(bench.config(3, Audience::Agent), scripted.clone());
    scripted.answer(
        "s1",
        Ok(BoardReading::NoCount {
            state: BoardState::Unavailable,
        }),
    );
    watcher.add_session(sid("s1"), Host::Claude);
    for _ in 0..9 {
        next_look(&scripted, "s1").await;
    }
    let waits: Vec<u64> = gaps(&scripted.looks("s1"))
        .iter()
        .map(Duration::as_secs)
        .collect();
    assert_eq!(waits, [20, 40, 80, 160, 320, 640, 900, 900]);
    assert!(bench.spool("s1").read_board().is_none(), "never a zero");
    watcher.shutdown().await;
    // An interval over 15 minutes is never shortened by backing off.
    let scripted = Scripted::default();
    let (watcher, _events) =
        MailWatcher::start(bench.config(3600, Audience::Agent), scripted.clone());
    scripted.answer("s2", Err(LookFailure::Handshake));
    watcher.add_session(sid("s2"), Host::Claude);
    for _ in 0..3 {
        next_look(&scripted, "s2").await;
    }
    assert_eq!(gaps(&scripted.looks("s2")), [secs(3600), secs(3600)]);
    watcher.shutdown().await;
}

/// Issue 21: an interval of 2^64-1 s (and a look budget as large) overflowed `Instant`
/// arithmetic and killed the engine. It is a day at most: looks go on, a day apart (± 20 %),
/// and backing off waits a day.
#[tokio::test(start_paused = true)]
async fn engine_a_huge_interval_is_a_day_and_never_overflows_a_deadline() {
    let bench = Bench::new();
    bench.fabric_up(SESSION_HOOKS);
    let scripted = Scripted::default();
    let mut config = bench.config(u64::MAX, Audience::Agent);
    config.look_budget = Duration::MAX;
    let (watcher, mut events) = MailWatcher::start(config, scripted.clone());
    scripted.count("s1", 2);
    scripted.answer("s2", Err(LookFailure::Deadline));
    watcher.add_session(sid("s1"), Host::Claude);
    watcher.add_session(sid("s2"), Host::Claude);
    next_look(&scripted, "s1").await;
    let day = secs(24 * 3600);
    tokio::time::sleep(day * 13 / 10).await;
    settle().await;
    let looks = scripted.looks("s1");
    assert_eq!(looks.len(), 2, "looked at again within a day ± 20 %");
    let gap = looks[1] - looks[0];
    assert!(gap >= day * 8 / 10 && gap <= day * 12 / 10, "{gap:?}");
    let events = drain(&mut events);
    assert!(events.contains(&rose("s1", 0, 2)), "{events:?}");
    assert!(
        events.contains(&WatchEvent::Unreachable {
            session: Some(sid("s2")),
            problem: Problem::Look(LookFailure::Deadline),
            retry_in: day,
        }),
        "{events:?}"
    );
    assert_eq!(scripted.looks("s2").len(), 2, "s2 retried after a day");
    watcher.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn engine_jitter_stays_within_twenty_percent_and_over_ten_seconds() {
    let bench = Bench::new();
    bench.fabric_up(SESSION_HOOKS);
    for interval in [60, 5, 10] {
        let scripted = Scripted::default();
        let (watcher, _events) =
            MailWatcher::start(bench.config(interval, Audience::Agent), scripted.clone());
        scripted.count("s1", 0);
        watcher.add_session(sid("s1"), Host::Claude);
        for _ in 0..120 {
            next_look(&scripted, "s1").await;
        }
        let waits: Vec<f64> = gaps(&scripted.looks("s1"))
            .iter()
            .map(Duration::as_secs_f64)
            .collect();
        let min = waits.iter().copied().fold(f64::MAX, f64::min);
        let max = waits.iter().copied().fold(0.0, f64::max);
        let mean = waits.iter().sum::<f64>() / waits.len() as f64;
        if interval == 60 {
            // Uniform over 48..72 s: the whole range is used, centred on the interval.
            assert!(min >= 48.0 && max <= 72.0, "{min}..{max}");
            assert!(min < 51.6 && max > 68.4, "{min}..{max}");
            assert!((mean - 60.0).abs() < 3.0, "mean {mean}");
        } else {
            // Raised to 10 s, jittered, and never under 10 s: 10..12 s.
            assert!(min == 10.0 && max <= 12.0, "{interval}: {min}..{max}");
            assert!(max > 11.5, "{interval}: {min}..{max}");
        }
        watcher.shutdown().await;
    }
}

#[tokio::test(start_paused = true)]
async fn engine_fabric_down_then_back_is_one_event_each_and_starts_nothing() {
    let bench = Bench::new();
    let scripted = Scripted::default();
    let (watcher, mut events) =
        MailWatcher::start(bench.config(60, Audience::Agent), scripted.clone());
    scripted.count("s1", 3);
    watcher.add_session(sid("s1"), Host::Claude);
    settle().await;
    assert_eq!(
        drain(&mut events),
        [WatchEvent::Unreachable {
            session: None,
            problem: Problem::FabricDown(DownReason::NoHubFile),
            retry_in: secs(120),
        }]
    );
    tokio::time::sleep(secs(3600)).await;
    assert_eq!(scripted.all_looks(), 0, "no look while Fabric is down");
    assert_eq!(drain(&mut events), []);
    // Back: the gate's next check (at most 15 minutes on) lets the look through.
    bench.fabric_up(SESSION_HOOKS);
    let down_since = Instant::now();
    let looked = next_look(&scripted, "s1").await;
    assert!(looked - down_since <= secs(900));
    assert_eq!(drain(&mut events), [back("s1"), rose("s1", 0, 3)]);
    // Down again (a dead pid this time): one more event, then quiet.
    fabric_fake::write_hub(&bench.fabric_dir(), SESSION_HOOKS, 4_194_304).unwrap();
    tokio::time::sleep(secs(73)).await;
    assert_eq!(
        drain(&mut events),
        [WatchEvent::Unreachable {
            session: None,
            problem: Problem::FabricDown(DownReason::DeadPid),
            retry_in: secs(120),
        }]
    );
    let looks = scripted.all_looks();
    tokio::time::sleep(secs(3600)).await;
    assert_eq!((scripted.all_looks(), drain(&mut events)), (looks, vec![]));
    bench.fabric_down();
    tokio::time::sleep(secs(3600)).await;
    assert_eq!(
        drain(&mut events),
        [],
        "another down reason is logged, not said again"
    );
    bench.fabric_up(SESSION_HOOKS);
    next_look(&scripted, "s1").await;
    assert_eq!(drain(&mut events), [back("s1")]);
    let log = bench.log_text();
    assert_eq!(
        log.matches(" watch-mail - - ok fabric-down ").count(),
        3,
        "{log}"
    );
    assert_eq!(
        log.matches(" watch-mail - - ok fabric-running").count(),
        2,
        "{log}"
    );
    watcher.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn engine_a_session_added_after_fabric_came_back_looks_at_once() {
    let bench = Bench::new();
    let scripted = Scripted::default();
    let (watcher, mut events) =
        MailWatcher::start(bench.config(60, Audience::Agent), scripted.clone());
    scripted.count("s1", 1);
    scripted.count("s2", 2);
    watcher.add_session(sid("s1"), Host::Claude);
    settle().await;
    assert_eq!(drain(&mut events).len(), 1);
    tokio::time::sleep(secs(30)).await;
    bench.fabric_up(SESSION_HOOKS);
    // Without waiting for the gate's retry (90 s away): both look now.
    let now = Instant::now();
    watcher.add_session(sid("s2"), Host::Claude);
    settle().await;
    assert_eq!(scripted.looks("s1"), [now]);
    assert_eq!(scripted.looks("s2"), [now]);
    let mut said = drain(&mut events);
    said.sort_by_key(|e| (e.session().cloned(), matches!(e, WatchEvent::Rose { .. })));
    // s1 heard that Fabric was down, so it hears it is back; s2 never did.
    assert_eq!(said, [back("s1"), rose("s1", 0, 1), rose("s2", 0, 2)]);
    watcher.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn engine_never_looks_through_a_fabric_without_session_hooks() {
    let bench = Bench::new();
    bench.fabric_up(&[]);
    let scripted = Scripted::default();
    let (watcher, mut events) =
        MailWatcher::start(bench.config(10, Audience::Agent), scripted.clone());
    scripted.count("s1", 3);
    watcher.add_session(sid("s1"), Host::Claude);
    settle().await;
    assert_eq!(
        drain(&mut events),
        [WatchEvent::Unreachable {
            session: None,
            problem: Problem::SessionHooksInert,
            retry_in: secs(20),
        }]
    );
    tokio::time::sleep(secs(4 * 3600)).await;
    assert_eq!((scripted.all_looks(), drain(&mut events)), (0, vec![]));
    bench.fabric_up(SESSION_HOOKS);
    next_look(&scripted, "s1").await;
    assert_eq!(drain(&mut events), [back("s1"), rose("s1", 0, 3)]);
    watcher.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn engine_watches_many_sessions_with_one_gate_and_their_own_counts() {
    let bench = Bench::new();
    bench.fabric_up(SESSION_HOOKS);
    let scripted = Scripted::default();
    let (watcher, mut events) =
        MailWatcher::start(bench.config(60, Audience::Agent), scripted.clone());
    for (session, unread) in [("a", 1), ("b", 2), ("c", 0)] {
        scripted.count(session, unread);
        watcher.add_session(sid(session), Host::Claude);
    }
    settle().await;
    // Looked at together, at once.
    let firsts: Vec<Instant> = ["a", "b", "c"]
        .iter()
        .map(|s| scripted.looks(s)[0])
        .collect();
    assert!(firsts.iter().all(|at| *at == firsts[0]));
    let mut said = drain(&mut events);
    said.sort_by_key(|e| e.session().cloned());
    assert_eq!(said, [rose("a", 0, 1), rose("b", 0, 2)]);
    // One session failing backs off alone; the others keep their interval.
    scripted.answer("c", Err(LookFailure::CallFailed));
    next_look(&scripted, "c").await;
    assert!(
        matches!(&drain(&mut events)[..], [WatchEvent::Unreachable { session: Some(s), .. }] if *s == sid("c"))
    );
    // Fabric down: one event for everyone.
    bench.fabric_down();
    tokio::time::sleep(secs(600)).await;
    let said = drain(&mut events);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(matches!(
        said[0],
        WatchEvent::Unreachable { session: None, .. }
    ));
    // Back: each session that answers says so once; its count is its own.
    scripted.count("a", 5);
    scripted.count("c", 1);
    bench.fabric_up(SESSION_HOOKS);
    next_look(&scripted, "a").await;
    let mut said = drain(&mut events);
    said.sort_by_key(|e| (e.session().cloned(), matches!(e, WatchEvent::Rose { .. })));
    assert_eq!(
        said,
        [
            back("a"),
            rose("a", 1, 5),
            back("b"),
            back("c"),
            rose("c", 0, 1)
        ]
    );
    // Removed: never looked at again.
    assert!(watcher.remove_session(&sid("b")));
    settle().await;
    let b_looks = scripted.looks("b").len();
    for _ in 0..5 {
        next_look(&scripted, "a").await;
    }
    assert_eq!(scripted.looks("b").len(), b_looks);
    watcher.shutdown().await;
    assert_eq!(events.recv().await, None);
}

#[tokio::test(start_paused = true)]
async fn engine_for_a_person_leaves_board_shown_to_the_agent() {
    let bench = Bench::new();
    bench.fabric_up(SESSION_HOOKS);
    let scripted = Scripted::default();
    let (watcher, mut events) =
        MailWatcher::start(bench.config(60, Audience::Person), scripted.clone());
    scripted.count("s1", 3);
    watcher.add_session(sid("s1"), Host::Codex);
    next_look(&scripted, "s1").await;
    // A person's rises are the tray model's to find (the one rise detector): the engine only
    // writes board.json, which the tray reads.
    assert_eq!(drain(&mut events), []);
    scripted.count("s1", 5);
    next_look(&scripted, "s1").await;
    assert_eq!(drain(&mut events), []);
    let spool = bench.spool("s1");
    assert_eq!(spool.read_board().unwrap().unread, 5);
    assert_eq!(
        spool.read_shown(),
        None,
        "the agent's next prompt still hears of it"
    );
    assert!(
        bench
            .log_text()
            .contains(" watch-mail codex s1 ok unread=5 board=ready")
    );
    drop(watcher);
    // Dropping the handle stops the watcher too.
    tokio::time::sleep(secs(1)).await;
    assert_eq!(events.recv().await, None);
}

// ---- the engine with the stand-in ----------------------------------------------------------

/// Runs a look on its own real-time runtime inside `spawn_blocking`: the paused clock does not
/// jump while a blocking task runs, so a real child gets real time for its deadline.
struct RealTime(Arc<FabricLook>);

impl Look for RealTime {
    fn look(&self, target: &LookTarget, budget: Duration) -> impl Future<Output = Answer> + Send {
        let look = Arc::clone(&self.0);
        let target = target.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(async {
                    // A script just written can be briefly "text file busy" while another
                    // test's fork still holds it open: try again.
                    for _ in 0..5 {
                        match look.look(&target, budget).await {
                            Err(LookFailure::Spawn) => {
                                tokio::time::sleep(Duration::from_millis(50)).await;
                            }
                            other => return other,
                        }
                    }
                    Err(LookFailure::Spawn)
                })
            })
            .await
            .unwrap_or(Err(LookFailure::Panicked))
        }
    }
}

/// A `fabric-mcp` that is the stand-in with this home's state folder (no process-wide env).
fn fabric_mcp_for(home: &Home) -> PathBuf {
    let path = home.path().join("bin/fabric-mcp");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let script = format!(
        "#!/bin/sh\nFABRIC_FAKE_STATE='{}' exec '{}' \"$@\"\n",
        home.fake.state_dir().display(),
        fabric_fake::fake_binary().display()
    );
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A watcher on the paused clock whose looks start the stand-in; `recorded` counts its looks.
fn stand_in_watcher(
    home: &Home,
    budget: Duration,
) -> (MailWatcher, tokio::sync::mpsc::Receiver<WatchEvent>) {
    home.fabric_running(SESSION_HOOKS);
    let config = WatchConfig {
        look_budget: budget,
        jitter_seed: Some(3),
        ..WatchConfig::new(&paths_of(home), Duration::from_secs(60), Audience::Agent)
    };
    MailWatcher::start(
        config,
        RealTime(Arc::new(FabricLook::with_program(fabric_mcp_for(home)))),
    )
}

fn paths_of(home: &Home) -> companion_platform::paths::Paths {
    companion_platform::paths::Paths {
        home: home.path().to_path_buf(),
        fabric_dir: home.fabric_dir(),
        services_dir: home.services_dir(),
        cache_dir: home.cache_dir(),
        data_dir: home.path().join(".local/share/fabric-companion"),
        config_dir: home.path().join(".config/fabric-companion"),
    }
}

/// Advances the paused clock until the stand-in has been started `count` times in all and
/// that look's outcome is handled.
async fn stand_in_looks(home: &Home, count: usize) {
    for _ in 0..20_000 {
        if home.fake.starts().len() >= count {
            // The child's calls are recorded before it is reaped and the result handled.
            for _ in 0..50 {
                settle().await;
            }
            return;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("the stand-in was not started {count} times");
}

#[tokio::test(start_paused = true)]
async fn engine_with_the_stand_in_says_a_rise_never_a_fall_or_the_same() {
    let home = Home::new();
    home.fake.set_unread(2);
    let (watcher, mut events) = stand_in_watcher(&home, Duration::from_secs(10));
    watcher.add_session(sid("s1"), Host::Claude);
    let mut expected = Vec::new();
    for (look, unread, said) in [
        (1, 2, Some((0, 2))),
        (2, 2, None),
        (3, 1, None),
        (4, 5, Some((1, 5))),
    ] {
        home.fake.set_unread(unread);
        stand_in_looks(&home, look).await;
        let now = drain(&mut events);
        assert_eq!(
            now,
            said.map(|(from, to)| rose("s1", from, to))
                .into_iter()
                .collect::<Vec<_>>(),
            "look {look}"
        );
        expected.extend(now);
        assert_eq!(spool(&home, "s1").read_shown(), Some(unread));
    }
    watcher.shutdown().await;
    assert_eq!(home.fake.tool_calls("com.status").len(), 4);
    for start in home.fake.starts() {
        assert_eq!(
            start["argv"],
            serde_json::json!([
                "--runner",
                "claude-code",
                "--rejoin-only",
                "--runtime-session-id",
                "s1"
            ])
        );
    }
    assert_reaped(&fake_pids(&home));
    assert_eq!(expected.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn engine_with_the_stand_in_reads_only_answers_with_a_count() {
    let home = Home::new();
    home.fake.set_mode("degraded");
    home.fake.set_unread(2);
    let (watcher, mut events) = stand_in_watcher(&home, Duration::from_secs(10));
    watcher.add_session(sid("s1"), Host::Claude);
    stand_in_looks(&home, 1).await;
    assert_eq!(drain(&mut events), [rose("s1", 0, 2)]);
    home.fake.set_mode("unavailable");
    stand_in_looks(&home, 2).await;
    assert_eq!(
        drain(&mut events),
        [WatchEvent::Unreachable {
            session: Some(sid("s1")),
            problem: Problem::NoCount(BoardState::Unavailable),
            retry_in: secs(120),
        }]
    );
    for (look, mode) in [(3, "refusal"), (4, "crash")] {
        home.fake.set_mode(mode);
        stand_in_looks(&home, look).await;
        assert_eq!(drain(&mut events), [], "{mode}: said once already");
    }
    // Unreadable looks never touched the count.
    assert_eq!(spool(&home, "s1").read_board().unwrap().unread, 2);
    home.fake.set_mode("ready");
    home.fake.set_unread(3);
    stand_in_looks(&home, 5).await;
    assert_eq!(drain(&mut events), [back("s1"), rose("s1", 2, 3)]);
    watcher.shutdown().await;
    let log = home.log_text();
    for expected in [
        " watch-mail claude s1 ok unread=2 board=degraded",
        " watch-mail claude s1 ok unreadable no-count board=unavailable",
        " watch-mail claude s1 refused not_available unreadable",
        " watch-mail claude s1 outcome=unknown unreadable no-handshake",
        " watch-mail claude s1 ok back",
        " watch-mail claude s1 ok unread=3 board=ready",
    ] {
        assert!(log.contains(expected), "{expected}\n{log}");
    }
    assert_reaped(&fake_pids(&home));
}

#[tokio::test(start_paused = true)]
async fn engine_kills_a_hung_stand_in_at_the_deadline_and_reaps_it() {
    let home = Home::new();
    home.fake.set_mode("hang");
    let (watcher, mut events) = stand_in_watcher(&home, Duration::from_secs(1));
    watcher.add_session(sid("s1"), Host::Claude);
    let started = StdInstant::now();
    // The paused clock stands still while the look runs on its real-time runtime.
    let event = events.recv().await.unwrap();
    assert_eq!(
        event,
        WatchEvent::Unreachable {
            session: Some(sid("s1")),
            problem: Problem::Look(LookFailure::Deadline),
            retry_in: secs(120),
        }
    );
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert_reaped(&fake_pids(&home));
    watcher.shutdown().await;
}
