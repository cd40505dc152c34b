//! Load (issue 15): 20 live sessions across the three hosts, each with a prompt and a Stop
//! every few hundred milliseconds for `FABRIC_LOAD_SECS` seconds (default 60), every Stop
//! starting its detached worker against the Fabric stand-in, while a reader does what the
//! tray and the dashboard do (the status snapshot, each spool's board and turns, the log's
//! tail) as fast as it can. The driver, the reader and the end checks are
//! `load_support/mod.rs`, shared with `tray/tests/load.rs`, which runs the same load with the
//! real `fabric-tray` and `fabric-companion` on a virtual desktop and checks the tray's
//! notification rate limit there (and reports both programs' CPU and memory).
//!
//! What must hold: every hook exits 0; no turn entry is lost beyond the cap (each session's
//! `turns.jsonl` holds its last `min(stops, 50)` turns, numbered without a gap up to its
//! count of Stops); the reader never sees a torn file (every `board.json` it reads parses,
//! every log line parses); every worker ends. The reader's CPU time is printed (a figure, not
//! an assertion).

#![cfg(target_os = "linux")] // a temporary HOME by environment, a thread's CPU time (RUSAGE_THREAD)

mod common;
mod load_support;

use std::sync::Arc;

use common::Home;
use companion_platform::paths::Paths;
use load_support::{Reader, SESSIONS, event_name};

#[test]
fn twenty_sessions_stopping_every_few_hundred_ms_lose_and_tear_nothing() {
    let secs = load_support::load_secs();
    let home = Arc::new(Home::new());
    for host in load_support::HOSTS {
        home.register(host);
    }
    home.fabric_running(&["session-hooks/1"]);
    home.fake.set_unread(1);
    let sessions = load_support::sessions();
    for (id, host) in &sessions {
        let out = home.hook("session-start", host, &home.payload(id, "SessionStart"));
        assert!(out.status.success(), "{id}");
    }
    let paths = Paths {
        home: home.path().to_path_buf(),
        services_dir: home.services_dir(),
        fabric_dir: home.fabric_dir(),
        cache_dir: home.cache_dir(),
        data_dir: home.path().join(".local/share/fabric-companion"),
        config_dir: home.path().join(".config/fabric-companion"),
    };
    let reader = Reader::start(paths.clone(), &sessions);
    let hook = {
        let home = home.clone();
        Arc::new(move |event: &str, host: &str, id: &str| {
            home.hook(event, host, &home.payload(id, event_name(event)))
        })
    };
    let counts = load_support::drive(&sessions, secs, hook);
    let (reads, reader_cpu) = reader.stop();

    load_support::wait_for_workers(&paths, &counts);
    let total = load_support::assert_nothing_lost_or_torn(&paths, &counts);
    eprintln!(
        "load: {SESSIONS} sessions, {total} stops in {secs} s; the reader took {reads} snapshots in {:.2} s of CPU ({:.1}% of one core)",
        reader_cpu.as_secs_f64(),
        100.0 * reader_cpu.as_secs_f64() / secs as f64
    );
}
