//! The load of issue 15, in one place for the two tests that run it: `hookbin/tests/load.rs`
//! (the hooks, their workers and an in-process reader) and `tray/tests/load.rs` (the same
//! with the real tray and dashboard running, which includes this file by path).
//!
//! [`drive`] runs 20 live sessions across the three hosts, each a prompt and a Stop every
//! 200–500 ms (each session on its own beat) for [`load_secs`] (`FABRIC_LOAD_SECS`, default
//! 60), every hook through the caller's runner (so each test starts the real binary its own
//! way) and asserted to exit 0; [`Reader`] does what the tray and the dashboard read (the
//! status snapshot, each spool's board and turns, the log's tail) as fast as it can,
//! asserting it never sees a torn `board.json` or log line; [`wait_for_workers`] and
//! [`assert_nothing_lost_or_torn`] check the end state. Never used outside tests; Linux only
//! (a thread's CPU time is `RUSAGE_THREAD`).
#![allow(dead_code)] // each test uses its own part

use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use companion_platform::paths::Paths;
use companion_sessions::hook_log;
use companion_sessions::spool::{MAX_TURNS, Spool};
use companion_sessions::status;

/// Live sessions.
pub const SESSIONS: usize = 20;
/// The hosts they run in, in turn.
pub const HOSTS: [&str; 3] = ["claude", "codex", "kimi"];

/// How long the load lasts: `$FABRIC_LOAD_SECS` (CI may shorten it), else a minute.
pub fn load_secs() -> u64 {
    std::env::var("FABRIC_LOAD_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60)
}

/// The sessions: `load-<i>`, with its host.
pub fn sessions() -> Vec<(String, &'static str)> {
    (0..SESSIONS)
        .map(|i| (format!("load-{i}"), HOSTS[i % HOSTS.len()]))
        .collect()
}

/// The host's event name of a hook's command-line event.
pub fn event_name(event: &str) -> &'static str {
    match event {
        "session-start" => "SessionStart",
        "user-prompt-submit" => "UserPromptSubmit",
        "stop" => "Stop",
        "session-end" => "SessionEnd",
        other => panic!("unknown hook event {other}"),
    }
}

/// Runs one hook: `(event, host, session id)` on the command line's terms
/// (`user-prompt-submit`, `claude`, `load-3`), to its end.
pub type RunHook = dyn Fn(&str, &str, &str) -> Output + Send + Sync;

/// Every session's prompt and Stop on its own beat until `secs` have passed; every hook must
/// exit 0. Gives each session's number of Stops.
pub fn drive(
    sessions: &[(String, &'static str)],
    secs: u64,
    hook: Arc<RunHook>,
) -> Vec<(String, u64)> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let drivers: Vec<_> = sessions
        .iter()
        .enumerate()
        .map(|(i, (id, host))| {
            let hook = hook.clone();
            let id = id.clone();
            let host = *host;
            std::thread::spawn(move || {
                let mut stops = 0u64;
                // A few hundred milliseconds apart, each session on its own beat.
                let beat = Duration::from_millis(200 + (i as u64 * 37) % 300);
                while Instant::now() < deadline {
                    let out = hook("user-prompt-submit", host, &id);
                    assert!(out.status.success(), "{id}: {out:?}");
                    let out = hook("stop", host, &id);
                    assert!(out.status.success(), "{id}: {out:?}");
                    stops += 1;
                    std::thread::sleep(beat);
                }
                (id, stops)
            })
        })
        .collect();
    drivers.into_iter().map(|d| d.join().unwrap()).collect()
}

/// The CPU time of the calling thread.
pub fn cpu_time_of_this_thread() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr());
        usage.assume_init()
    };
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
}

/// A thread reading what the tray and the dashboard read, as fast as it can, until stopped.
pub struct Reader {
    done: Arc<AtomicBool>,
    reads: Arc<AtomicU64>,
    handle: JoinHandle<Duration>,
}

impl Reader {
    pub fn start(paths: Paths, sessions: &[(String, &'static str)]) -> Reader {
        let done = Arc::new(AtomicBool::new(false));
        let reads = Arc::new(AtomicU64::new(0));
        let sessions = sessions.to_vec();
        let handle = {
            let done = done.clone();
            let reads = reads.clone();
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    let snapshot = status::collect(&paths, None);
                    assert!(snapshot.sessions.len() <= SESSIONS);
                    for (id, _) in &sessions {
                        let board = paths.spool_dir(id).join("board.json");
                        if let Ok(Some(bytes)) =
                            companion_platform::fsutil::read_bounded(&board, 65536)
                        {
                            assert!(
                                serde_json::from_slice::<serde_json::Value>(&bytes).is_ok(),
                                "a torn board.json: {:?}",
                                String::from_utf8_lossy(&bytes)
                            );
                        }
                        let _ = Spool::at(paths.spool_dir(id)).read_turns();
                    }
                    if let Some(tail) =
                        companion_platform::fsutil::read_tail(&paths.hook_log(), 65536)
                    {
                        let text = String::from_utf8_lossy(&tail);
                        // The tail holds whole lines only; each must be one the log's
                        // parser reads.
                        for line in text.lines() {
                            assert!(hook_log::parse_line(line).is_some(), "torn: {line:?}");
                        }
                    }
                    reads.fetch_add(1, Ordering::Relaxed);
                }
                cpu_time_of_this_thread()
            })
        };
        Reader {
            done,
            reads,
            handle,
        }
    }

    /// Stops it; gives the number of snapshots it took and its CPU time. Panics with the
    /// reader's own failure (a torn file) when it failed.
    pub fn stop(self) -> (u64, Duration) {
        self.done.store(true, Ordering::Relaxed);
        let cpu = self.handle.join().unwrap();
        (self.reads.load(Ordering::Relaxed), cpu)
    }
}

/// Waits (at most a minute) until no worker holds any session's spool lock.
pub fn wait_for_workers(paths: &Paths, counts: &[(String, u64)]) {
    let start = Instant::now();
    loop {
        let busy = counts
            .iter()
            .any(|(id, _)| matches!(Spool::at(paths.spool_dir(id)).try_worker_lock(), Ok(None)));
        if !busy {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "workers still running"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// No turn entry lost beyond the cap (each session keeps its last `min(stops, 50)` turns,
/// numbered without a gap up to its count of Stops) and no torn log line. Gives the total
/// number of Stops.
pub fn assert_nothing_lost_or_torn(paths: &Paths, counts: &[(String, u64)]) -> u64 {
    let mut total = 0;
    for (id, stops) in counts {
        let turns = Spool::at(paths.spool_dir(id)).read_turns();
        let kept = (*stops as usize).min(MAX_TURNS);
        assert_eq!(turns.len(), kept, "{id}: {stops} stops");
        let seqs: Vec<u64> = turns.iter().map(|t| t.seq).collect();
        let want: Vec<u64> = (stops + 1 - kept as u64..=*stops).collect();
        assert_eq!(seqs, want, "{id}: a turn was lost or numbered twice");
        total += stops;
    }
    let log = std::fs::read_to_string(paths.hook_log()).unwrap_or_default();
    for line in log.lines() {
        assert!(
            hook_log::parse_line(line).is_some(),
            "torn log line {line:?}"
        );
    }
    total
}
