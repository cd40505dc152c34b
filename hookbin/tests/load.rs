//! Load (issue 15): 20 live sessions across the three hosts, each with a prompt and a Stop
//! every few hundred milliseconds for `FABRIC_LOAD_SECS` seconds (default 60), every Stop
//! starting its detached worker against the Fabric stand-in, while a reader does what the
//! tray and the dashboard do (the status snapshot, each spool's board and turns, the log's
//! tail) as fast as it can.
//!
//! What must hold: every hook exits 0; no turn entry is lost beyond the cap (each session's
//! `turns.jsonl` holds its last `min(stops, 50)` turns, numbered without a gap up to its
//! count of Stops); the reader never sees a torn file (every `board.json` it reads parses,
//! every log line parses); every worker ends. The reader's CPU time is printed (a figure, not
//! an assertion). Not covered here: the running tray and dashboard processes and the tray's
//! notification rate limit (see the tray's own tests).

#![cfg(target_os = "linux")] // a temporary HOME by environment, a thread's CPU time (RUSAGE_THREAD)

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::Home;
use companion_core::hook_log;
use companion_core::paths::Paths;
use companion_core::spool::{MAX_TURNS, Spool};
use companion_core::status;

const SESSIONS: usize = 20;
const HOSTS: [&str; 3] = ["claude", "codex", "kimi"];

fn cpu_time_of_this_thread() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr());
        usage.assume_init()
    };
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
}

#[test]
fn twenty_sessions_stopping_every_few_hundred_ms_lose_and_tear_nothing() {
    let secs: u64 = std::env::var("FABRIC_LOAD_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let home = Arc::new(Home::new());
    for host in HOSTS {
        home.register(host);
    }
    home.fabric_running(&["session-hooks/1"]);
    home.fake.set_unread(1);
    let sessions: Vec<(String, &str)> = (0..SESSIONS)
        .map(|i| (format!("load-{i}"), HOSTS[i % HOSTS.len()]))
        .collect();
    for (id, host) in &sessions {
        let out = home.hook("session-start", host, &home.payload(id, "SessionStart"));
        assert!(out.status.success(), "{id}");
    }

    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let paths = Paths {
        home: home.path().to_path_buf(),
        services_dir: home.services_dir(),
        fabric_dir: home.fabric_dir(),
        cache_dir: home.cache_dir(),
        data_dir: home.path().join(".local/share/fabric-companion"),
        config_dir: home.path().join(".config/fabric-companion"),
    };
    let reader = {
        let done = done.clone();
        let reads = reads.clone();
        let sessions = sessions.clone();
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                let snapshot = status::collect(&paths, None);
                assert!(snapshot.sessions.len() <= SESSIONS);
                for (id, _) in &sessions {
                    let board = paths.spool_dir(id).join("board.json");
                    if let Ok(Some(bytes)) = companion_core::fsutil::read_bounded(&board, 65536) {
                        assert!(
                            serde_json::from_slice::<serde_json::Value>(&bytes).is_ok(),
                            "a torn board.json: {:?}",
                            String::from_utf8_lossy(&bytes)
                        );
                    }
                    let _ = Spool::at(paths.spool_dir(id)).read_turns();
                }
                if let Some(tail) = companion_core::fsutil::read_tail(&paths.hook_log(), 65536) {
                    let text = String::from_utf8_lossy(&tail);
                    // The first line of a tail may start mid-line; the rest are whole.
                    for line in text.lines().skip(1) {
                        assert!(hook_log::parse_line(line).is_some(), "torn: {line:?}");
                    }
                }
                reads.fetch_add(1, Ordering::Relaxed);
            }
            cpu_time_of_this_thread()
        })
    };

    let deadline = Instant::now() + Duration::from_secs(secs);
    let drivers: Vec<_> = sessions
        .iter()
        .enumerate()
        .map(|(i, (id, host))| {
            let home = home.clone();
            let id = id.clone();
            let host = *host;
            std::thread::spawn(move || {
                let mut stops = 0u64;
                // A few hundred milliseconds apart, each session on its own beat.
                let beat = Duration::from_millis(200 + (i as u64 * 37) % 300);
                while Instant::now() < deadline {
                    let out = home.hook(
                        "user-prompt-submit",
                        host,
                        &home.payload(&id, "UserPromptSubmit"),
                    );
                    assert!(out.status.success(), "{id}");
                    let out = home.hook("stop", host, &home.payload(&id, "Stop"));
                    assert!(out.status.success(), "{id}");
                    stops += 1;
                    std::thread::sleep(beat);
                }
                (id, stops)
            })
        })
        .collect();
    let counts: Vec<(String, u64)> = drivers.into_iter().map(|d| d.join().unwrap()).collect();
    done.store(true, Ordering::Relaxed);
    let reader_cpu = reader.join().unwrap();

    // Every worker ends.
    let start = Instant::now();
    loop {
        let busy = counts
            .iter()
            .any(|(id, _)| matches!(Spool::at(home.spool(id)).try_worker_lock(), Ok(None)));
        if !busy {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "workers still running"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let mut total = 0;
    for (id, stops) in &counts {
        let turns = Spool::at(home.spool(id)).read_turns();
        let kept = (*stops as usize).min(MAX_TURNS);
        assert_eq!(turns.len(), kept, "{id}: {stops} stops");
        let seqs: Vec<u64> = turns.iter().map(|t| t.seq).collect();
        let want: Vec<u64> = (stops + 1 - kept as u64..=*stops).collect();
        assert_eq!(seqs, want, "{id}: a turn was lost or numbered twice");
        total += stops;
    }
    for line in home.log_text().lines() {
        assert!(
            hook_log::parse_line(line).is_some(),
            "torn log line {line:?}"
        );
    }
    eprintln!(
        "load: {SESSIONS} sessions, {total} stops in {secs} s; the reader took {} snapshots in {:.2} s of CPU ({:.1}% of one core)",
        reads.load(Ordering::Relaxed),
        reader_cpu.as_secs_f64(),
        100.0 * reader_cpu.as_secs_f64() / secs as f64
    );
}
