//! The engine with the Fabric stand-in as the look (real processes, real time).

use super::engine::{Answer, back, drain, rose, secs, settle};
use super::*;

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
