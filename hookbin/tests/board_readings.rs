//! Board readings from three writers — the worker, `watch-mail` and the tray — and the
//! `board.shown` rule shared by the UserPromptSubmit hook and `watch-mail`: an older reading
//! never replaces a newer one, a reading never recreates a spool that ended or was removed,
//! and a rise is said once, whoever says it.

mod common;

use std::future::Future;
use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use common::{Home, stdout, wait_until, write};
use companion_hosts::host::Host;
use companion_sessions::board::{BoardReading, BoardState};
use companion_sessions::spool::{SessionId, Spool};
use fabric_client::watch::{
    Audience, Look, LookFailure, LookTarget, MailWatcher, WatchConfig, WatchEvent,
};

const SESSION_HOOKS: &[&str] = &["session-hooks/1"];
const WAIT: Duration = Duration::from_secs(40);
/// A reading taken later than any this test run makes.
/// A reading taken "later" than any the test makes: 30 s ahead, inside the skew a stored time
/// may be ahead of the clock before it counts as from before a clock jump (a reading stamped
/// years ahead no longer blocks new ones; see `faults.rs`, the clock jumping back).
fn future() -> String {
    let at = time::OffsetDateTime::now_utc() + time::Duration::seconds(30);
    companion_platform::clock::rfc3339(at)
}

fn sid(id: &str) -> SessionId {
    SessionId::new(id).unwrap()
}

fn board_json(unread: u64, observed_at: &str) -> String {
    format!(r#"{{"unread":{unread},"state":"ready","observedAt":"{observed_at}"}}"#)
}

fn session_json() -> String {
    format!(
        r#"{{"host":"claude","project":"p","startedAt":"2026-01-01T00:00:00Z","hostPid":{}}}"#,
        std::process::id()
    )
}

// ---- the worker ---------------------------------------------------------------------------

#[test]
fn the_worker_never_replaces_a_newer_reading() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    home.fake.set_unread(2);
    let future = future();
    // watch-mail already wrote a reading taken after the worker's.
    write(&home.spool("s1").join("session.json"), &session_json());
    write(
        &home.spool("s1").join("board.json"),
        &board_json(7, &future),
    );
    home.hook("stop", "claude", &home.payload("s1", "Stop"));
    wait_until("the status line", WAIT, || {
        home.log_text().contains(" status claude s1 ")
    });
    let log = home.log_text();
    assert!(
        log.contains(" status claude s1 ok unread=2 board=ready kept-newer"),
        "{log}"
    );
    let spool = Spool::at(home.spool("s1"));
    let board = spool.read_board().unwrap();
    assert_eq!(
        (board.unread, board.observed_at.as_str()),
        (7, future.as_str())
    );
}

// ---- the engine (watch-mail and the tray) ---------------------------------------------------

/// A look that answers a count, first doing what the test asks (ending the session, say).
struct Answering {
    unread: u64,
    before: Box<dyn Fn(&SessionId) + Send + Sync>,
}

impl Look for Answering {
    fn look(
        &self,
        target: &LookTarget,
        _budget: Duration,
    ) -> impl Future<Output = Result<BoardReading, LookFailure>> + Send {
        (self.before)(&target.session);
        let unread = self.unread;
        async move {
            Ok(BoardReading::Count {
                unread,
                state: BoardState::Ready,
            })
        }
    }
}

struct Bench {
    dir: tempfile::TempDir,
}

impl Bench {
    fn new() -> Bench {
        let bench = Bench {
            dir: tempfile::tempdir().unwrap(),
        };
        fabric_fake::write_hub(&bench.fabric_dir(), SESSION_HOOKS, std::process::id()).unwrap();
        bench
    }

    fn fabric_dir(&self) -> PathBuf {
        self.dir.path().join("fabric")
    }

    fn sessions_dir(&self) -> PathBuf {
        self.dir.path().join("cache/sessions")
    }

    fn spool(&self, session: &str) -> Spool {
        Spool::new(&self.sessions_dir(), &sid(session))
    }

    fn config(&self, audience: Audience) -> WatchConfig {
        WatchConfig {
            interval: Duration::from_secs(60),
            hub_json: self.fabric_dir().join("hub.json"),
            sessions_dir: self.sessions_dir(),
            hook_log: None,
            audience,
            look_budget: Duration::from_secs(10),
            max_concurrent_looks: 4,
            jitter_seed: Some(7),
        }
    }

    /// Starts a watcher of `sessions`, lets it look at each once, stops it; returns its events.
    async fn one_look_each(
        &self,
        audience: Audience,
        look: Answering,
        sessions: &[&str],
    ) -> Vec<WatchEvent> {
        let (watcher, mut events) = MailWatcher::start(self.config(audience), look);
        for session in sessions {
            assert!(watcher.add_session(sid(session), Host::Claude));
        }
        // The paused clock runs the looks (due at once) long before the next interval.
        tokio::time::sleep(Duration::from_secs(5)).await;
        watcher.shutdown().await;
        let mut said = Vec::new();
        while let Some(event) = events.recv().await {
            said.push(event);
        }
        said
    }
}

#[tokio::test(start_paused = true)]
async fn the_engine_never_replaces_a_newer_reading_and_says_the_newest() {
    let bench = Bench::new();
    let spool = bench.spool("s1");
    let future = future();
    write(&spool.dir().join("session.json"), &session_json());
    write(&spool.dir().join("board.json"), &board_json(9, &future));
    let look = Answering {
        unread: 5,
        before: Box::new(|_| {}),
    };
    let events = bench.one_look_each(Audience::Agent, look, &["s1"]).await;
    let board = spool.read_board().unwrap();
    assert_eq!(
        (board.unread, board.observed_at.as_str()),
        (9, future.as_str())
    );
    // The rise said is the newest count, once.
    assert_eq!(
        events,
        [WatchEvent::Rose {
            session: sid("s1"),
            from: 0,
            to: 9
        }]
    );
    assert_eq!(spool.read_shown(), Some(9));
}

#[tokio::test(start_paused = true)]
async fn a_reading_never_recreates_a_spool_that_ended_or_was_removed() {
    for audience in [Audience::Agent, Audience::Person] {
        let bench = Bench::new();
        for session in ["removed", "ended"] {
            write(
                &bench.spool(session).dir().join("session.json"),
                &session_json(),
            );
        }
        // The SessionEnd worker wrote end.json and has not removed the spool yet.
        write(
            &bench.spool("ended").dir().join("end.json"),
            r#"{"reason":"other","at":"2026-01-01T00:00:00Z","host":"claude"}"#,
        );
        // The SessionEnd worker removes this spool while the look is on its way.
        let sessions = bench.sessions_dir();
        let look = Answering {
            unread: 4,
            before: Box::new(move |session: &SessionId| {
                if session.as_str() == "removed" {
                    Spool::new(&sessions, session).remove().unwrap();
                }
            }),
        };
        let events = bench
            .one_look_each(audience, look, &["removed", "ended"])
            .await;
        assert!(
            !bench.spool("removed").dir().exists(),
            "{audience:?}: the removed spool was recreated"
        );
        assert!(
            bench.spool("ended").read_board().is_none(),
            "{audience:?}: a reading went into an ended session's spool"
        );
        assert!(
            !events.iter().any(|e| matches!(e, WatchEvent::Rose { .. })),
            "{audience:?}: {events:?}"
        );
    }
}

// ---- the board.shown rule: a rise is said once ---------------------------------------------

/// Starts `hook user-prompt-submit` for `session`; returns the child to wait for.
fn start_prompt(home: &Home, session: &str) -> std::process::Child {
    let mut child = home
        .command(&["hook", "user-prompt-submit", "--host", "claude"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let payload = home.payload(session, "UserPromptSubmit");
    child.stdin.take().unwrap().write_all(&payload).unwrap();
    child
}

#[test]
fn a_rise_watch_mail_is_saying_is_not_said_again_by_the_prompt_hook() {
    let home = Home::new();
    write(&home.spool("s1").join("session.json"), &session_json());
    write(
        &home.spool("s1").join("board.json"),
        &board_json(5, &future()),
    );
    let spool = Spool::at(home.spool("s1"));
    // watch-mail holds the spool's lock while it applies the rule: it says 5.
    let lock = spool.lock().unwrap();
    let prompt = start_prompt(&home, "s1");
    std::thread::sleep(Duration::from_millis(1500));
    spool.write_shown(5).unwrap();
    drop(lock);
    let out = prompt.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(stdout(&out), "", "the prompt said it again");
    assert_eq!(spool.read_shown(), Some(5));
}

#[test]
fn concurrent_prompts_say_a_rise_once() {
    let home = Home::new();
    write(&home.spool("s1").join("session.json"), &session_json());
    write(
        &home.spool("s1").join("board.json"),
        &board_json(3, &future()),
    );
    let prompts: Vec<_> = (0..24).map(|_| start_prompt(&home, "s1")).collect();
    let said = prompts
        .into_iter()
        .map(|p| p.wait_with_output().unwrap())
        .filter(|out| stdout(out).contains("3 unread on the project board"))
        .count();
    assert_eq!(said, 1);
}
