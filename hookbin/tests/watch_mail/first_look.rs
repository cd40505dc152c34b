//! The command's first look and what it says after: a rise, an unavailable board, a refusal, a
//! crash, a hang, Fabric down and back.

use super::*;

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
