//! The engine on a paused clock with a scripted look: rises, backoff, jitter, Fabric down and
//! back, many sessions.

use super::*;

pub(super) type Answer = Result<BoardReading, LookFailure>;

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
pub(super) async fn settle() {
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

pub(super) fn drain(events: &mut tokio::sync::mpsc::Receiver<WatchEvent>) -> Vec<WatchEvent> {
    std::iter::from_fn(|| events.try_recv().ok()).collect()
}

pub(super) fn rose(session: &str, from: u64, to: u64) -> WatchEvent {
    WatchEvent::Rose {
        session: sid(session),
        from,
        to,
    }
}

pub(super) fn back(session: &str) -> WatchEvent {
    WatchEvent::Back {
        session: sid(session),
    }
}

fn gaps(looks: &[Instant]) -> Vec<Duration> {
    looks.windows(2).map(|w| w[1] - w[0]).collect()
}

pub(super) fn secs(n: u64) -> Duration {
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
