//! Faults, for real (issue 15). Of the file system: a full disk (a small tmpfs mounted over
//! the cache folder or a host's config folder) while the hooks write the spool and the log
//! and while the installer writes a host's config; the cache folder read-only (a read-only
//! tmpfs) or not a folder at all. Mounting needs root (CI runs as root); without it each test
//! says why on stderr and checks nothing.
//!
//! What must hold: every hook exits 0 with nothing on stderr and still gives its answer;
//! nothing is half-written (every JSON file parses, every log line is whole, no temp file is
//! left); a host's config keeps its exact bytes and no partial backup is left; once space is
//! back everything works again.
//!
//! Of Fabric: `fabric-mcp` printing garbage, closing its stdout, leaving a child holding the
//! pipe; Fabric's pid alive but its hub never answering (the stand-in's `hub-silent` mode
//! against a listener that accepts and never replies), for every hook, the worker, `status`
//! and `watch-mail`; and the clock jumping back. Those need no root.

#![cfg(target_os = "linux")] // tmpfs mounts, workers found in /proc

mod common;
mod install_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Home, claude_context, stdout};
use companion_sessions::hook_log;
use install_support::Sandbox;

const WAIT: Duration = Duration::from_secs(30);

/// A tmpfs mounted for the length of a test.
struct Mount(PathBuf);

impl Mount {
    /// `None` (and a line on stderr saying why) when this machine cannot mount one.
    fn tmpfs(at: &Path, options: &str, test: &str) -> Option<Mount> {
        std::fs::create_dir_all(at).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(at)
            .output();
        match out {
            Ok(out) if out.status.success() => Some(Mount(at.to_path_buf())),
            Ok(out) => {
                eprintln!(
                    "{test}: skipped, cannot mount a tmpfs here (needs root): {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                None
            }
            Err(err) => {
                eprintln!("{test}: skipped, cannot run mount: {err}");
                None
            }
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fills the file system under `dir` with `filler` until it is full.
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).unwrap();
    let block = [0u8; 512];
    while file.write_all(&block).is_ok() {}
    let _ = file.sync_all();
    path
}

/// Pids of `fabric-session worker` processes working in `home`.
fn workers_in(home: &Path) -> Vec<u32> {
    let needle = home.as_os_str().as_encoded_bytes().to_vec();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|s| s.rsplit_once(") ").map(|(_, r)| r.starts_with('Z')))
            .unwrap_or(true);
        if !zombie
            && cmdline.split(|&b| b == 0).any(|arg| arg == b"worker")
            && cmdline
                .windows(needle.len())
                .any(|w| w == needle.as_slice())
        {
            pids.push(pid);
        }
    }
    pids
}

fn wait_for_workers(home: &Path) {
    let start = Instant::now();
    while !workers_in(home).is_empty() {
        assert!(start.elapsed() < WAIT, "workers did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every file under `dir`: no temp file, every JSON file parses, every JSON-lines file and
/// the hook log hold only whole lines.
fn assert_nothing_torn(dir: &Path) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
                continue;
            }
            assert!(!name.ends_with(".tmp"), "a temp file was left: {path:?}");
            let bytes = std::fs::read(&path).unwrap();
            if name.ends_with(".json") {
                assert!(
                    serde_json::from_slice::<serde_json::Value>(&bytes).is_ok(),
                    "{path:?} is torn: {:?}",
                    String::from_utf8_lossy(&bytes)
                );
            }
            if name.ends_with(".jsonl") || name.starts_with("hooks.log") {
                let text = String::from_utf8(bytes).unwrap();
                assert!(
                    text.is_empty() || text.ends_with('\n'),
                    "{path:?} ends in half a line"
                );
                for line in text.lines() {
                    if name.ends_with(".jsonl") {
                        assert!(
                            serde_json::from_str::<serde_json::Value>(line).is_ok(),
                            "{path:?}: torn line {line:?}"
                        );
                    } else {
                        assert!(
                            hook_log::parse_line(line).is_some(),
                            "{path:?}: torn line {line:?}"
                        );
                    }
                }
            }
        }
    }
}

fn run_session(home: &Home, session: &str) -> Vec<std::process::Output> {
    let mut outs = Vec::new();
    for (event, name) in [
        ("session-start", "SessionStart"),
        ("user-prompt-submit", "UserPromptSubmit"),
        ("stop", "Stop"),
        ("stop", "Stop"),
        ("stop", "Stop"),
    ] {
        let out = home.hook(event, "claude", &home.payload(session, name));
        assert!(out.status.success(), "{event}: {out:?}");
        assert!(out.stderr.is_empty(), "{event}: {out:?}");
        outs.push(out);
    }
    outs
}

#[test]
fn a_full_disk_never_tears_the_spool_or_the_log_and_every_hook_still_answers() {
    let test = "a_full_disk_never_tears_the_spool_or_the_log";
    let home = Home::new();
    home.register("claude");
    home.fabric_running(&["session-hooks/1"]);
    let cache = home.cache_dir();
    let Some(_mount) = Mount::tmpfs(&cache, "size=64k", test) else {
        return;
    };
    // The log's last page all but full, so the next line crosses into a page the disk has
    // not got: the write stops part way (the case that tore lines).
    let head = "2026-01-01T00:00:00Z stop claude s0 ok ";
    let pad = "x".repeat(4096 - 20 - head.len() - 1);
    std::fs::write(home.log_path(), format!("{head}{pad}\n")).unwrap();
    let filler = fill(&cache);

    let outs = run_session(&home, "s1");
    let context = claude_context(&outs[0], "SessionStart");
    assert!(context.starts_with("Fabric is running"), "{context}");
    wait_for_workers(home.path());
    assert_nothing_torn(&cache);

    // Space back: the same session and a new one work, and the log reads whole.
    std::fs::remove_file(&filler).unwrap();
    run_session(&home, "s2");
    let out = home.hook("session-end", "claude", &home.payload("s2", "SessionEnd"));
    assert!(out.status.success());
    wait_for_workers(home.path());
    assert_nothing_torn(&cache);
    let log = home.log_text();
    assert!(
        log.contains(" session-start claude s2 ok"),
        "the log works again:\n{log}"
    );
    assert!(
        log.contains(" stop claude s2 ok turn="),
        "turns are recorded again:\n{log}"
    );
}

#[test]
fn a_full_disk_while_installing_leaves_the_config_exactly_as_it_was() {
    let test = "a_full_disk_while_installing_leaves_the_config_exactly_as_it_was";
    let sandbox = Sandbox::new();
    sandbox.install_stable_binary();
    let dir = sandbox.host_dir("claude");
    let Some(_mount) = Mount::tmpfs(&dir, "size=32k", test) else {
        return;
    };
    let config = sandbox.config("claude");
    let original = format!(
        "{{\n  \"theme\": \"dark\",\n  \"notes\": \"{}\"\n}}\n",
        "n".repeat(6000)
    );
    std::fs::write(&config, &original).unwrap();
    let filler = fill(&dir);

    let plan = sandbox.plan("claude", &[]);
    let digest = plan["digest"].as_str().unwrap().to_string();
    let run = sandbox.install("claude", &["--apply", "--expect-sha256", &digest]);
    run.refused();
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["filler", "settings.json"],
        "no temp file, no partial backup"
    );

    // With room again the same plan applies, with a whole backup.
    std::fs::remove_file(&filler).unwrap();
    sandbox
        .install("claude", &["--apply", "--expect-sha256", &digest])
        .ok();
    let backups = sandbox.backups("claude");
    assert_eq!(backups.len(), 1);
    assert_eq!(std::fs::read_to_string(&backups[0]).unwrap(), original);
}

fn cache_fault_checks(home: &Home, label: &str) {
    let outs = run_session(home, "s1");
    let context = claude_context(&outs[0], "SessionStart");
    assert!(
        context.starts_with("Fabric is running"),
        "{label}: {context}"
    );
    let out = home.hook("session-end", "claude", &home.payload("s1", "SessionEnd"));
    assert!(out.status.success() && out.stderr.is_empty(), "{label}");
    let status = home.command(&["status"]).output().unwrap();
    assert!(status.status.success(), "{label}: {status:?}");
    assert!(
        stdout(&status).contains("Fabric: running"),
        "{label}: {}",
        stdout(&status)
    );
    wait_for_workers(home.path());
}

#[test]
fn a_cache_folder_that_is_a_file_changes_nothing_and_stops_no_hook() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(&["session-hooks/1"]);
    std::fs::create_dir_all(home.cache_dir().parent().unwrap()).unwrap();
    std::fs::write(home.cache_dir(), "a file of the person's").unwrap();
    cache_fault_checks(&home, "cache folder is a file");
    assert_eq!(
        std::fs::read_to_string(home.cache_dir()).unwrap(),
        "a file of the person's"
    );
}

#[test]
fn a_read_only_cache_folder_stops_no_hook() {
    let test = "a_read_only_cache_folder_stops_no_hook";
    let home = Home::new();
    home.register("claude");
    home.fabric_running(&["session-hooks/1"]);
    let Some(_mount) = Mount::tmpfs(&home.cache_dir(), "ro,size=64k", test) else {
        return;
    };
    cache_fault_checks(&home, "read-only cache folder");
    assert_eq!(std::fs::read_dir(home.cache_dir()).unwrap().count(), 0);
}

// ---- fabric-mcp misbehaving ------------------------------------------------------------

fn gone(pid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => true,
    }
}

/// `fabric-mcp` printing garbage, closing its stdout early, or leaving a child that holds the
/// pipe open after it exits: the hook returns at once (exit 0), the worker logs the turn's
/// outcome as unknown, ends by its deadline (a watchdog, not a timing assertion) and leaves
/// no process behind (the stand-in and its child are gone), and nothing is recorded as if
/// Fabric had answered.
#[test]
fn a_misbehaving_fabric_mcp_never_outlives_the_worker() {
    for mode in ["garbage", "close-stdout", "fork-holder"] {
        let home = Home::new();
        home.register("claude");
        home.fabric_running(&["session-hooks/1"]);
        home.fake.set_mode(mode);
        let out = home.hook("stop", "claude", &home.payload("s1", "Stop"));
        assert!(out.status.success() && out.stderr.is_empty(), "{mode}");
        let start = Instant::now();
        while !home.log_text().contains("outcome=unknown") {
            assert!(
                start.elapsed() < WAIT,
                "{mode}: no outcome logged:\n{}",
                home.log_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        wait_for_workers(home.path());
        let mut pids: Vec<u64> = home
            .fake
            .calls()
            .iter()
            .filter_map(|c| c["pid"].as_u64())
            .collect();
        pids.extend(home.fake.children().into_iter().map(u64::from));
        assert!(!pids.is_empty(), "{mode}: the stand-in never started");
        if mode == "fork-holder" {
            assert!(
                !home.fake.children().is_empty(),
                "{mode}: no child recorded"
            );
        }
        let start = Instant::now();
        while let Some(pid) = pids.iter().find(|&&pid| !gone(pid)) {
            assert!(
                start.elapsed() < WAIT,
                "{mode}: process {pid} outlived the worker"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            !home.spool("s1").join("board.json").exists(),
            "{mode}: a board was recorded from no answer"
        );
    }
}

// ---- the clock jumping back ----------------------------------------------------------------

/// The clock went back a day after a prompt and a board reading were stamped: a new reading
/// still replaces the stamped one (the count does not freeze until the clock catches up), the
/// turn is recorded and sent, the session is not left "in a turn" after its Stop, and the
/// next prompt hears of the new mail.
#[test]
fn the_clock_jumping_back_freezes_no_count_and_strands_no_turn() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(&["session-hooks/1"]);
    let payload = |event| home.payload("s1", event);
    assert!(
        home.hook("session-start", "claude", &payload("SessionStart"))
            .status
            .success()
    );
    assert!(
        home.hook("user-prompt-submit", "claude", &payload("UserPromptSubmit"))
            .status
            .success()
    );
    let spool = home.spool("s1");
    let tomorrow = "2999-01-01T00:00:00.000Z";
    std::fs::write(spool.join("prompt.at"), format!("{tomorrow}\n")).unwrap();
    std::fs::write(
        spool.join("board.json"),
        format!(r#"{{"unread":0,"state":"ready","observedAt":"{tomorrow}"}}"#),
    )
    .unwrap();
    std::fs::write(spool.join("board.shown"), "0\n").unwrap();

    home.fake.set_unread(4);
    assert!(
        home.hook("stop", "claude", &payload("Stop"))
            .status
            .success()
    );
    let start = Instant::now();
    loop {
        let log = home.log_text();
        if log.contains(" status claude s1 ") || log.contains("outcome=unknown") {
            break;
        }
        assert!(start.elapsed() < WAIT, "the worker never reported:\n{log}");
        std::thread::sleep(Duration::from_millis(20));
    }
    wait_for_workers(home.path());
    let board: serde_json::Value =
        serde_json::from_slice(&std::fs::read(spool.join("board.json")).unwrap()).unwrap();
    assert_eq!(board["unread"], 4, "the new reading was dropped: {board}");

    let status = home.command(&["status", "--json"]).output().unwrap();
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    let session = &status["sessions"][0];
    assert_eq!(session["id"], "s1", "{status}");
    assert_eq!(session["inTurn"], false, "stranded in a turn: {session}");

    let out = home.hook("user-prompt-submit", "claude", &payload("UserPromptSubmit"));
    let context = claude_context(&out, "UserPromptSubmit");
    assert!(context.contains('4'), "the new mail is not said: {context}");
}

// ---- Fabric's pid alive, its hub not answering ---------------------------------------------

/// A process standing for Fabric: alive as long as the test, killed and reaped after.
struct FabricPid(std::process::Child);

impl FabricPid {
    fn start() -> FabricPid {
        FabricPid(Command::new("sleep").arg("600").spawn().unwrap())
    }
    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for FabricPid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Fabric's hub on 127.0.0.1 that accepts every connection and never answers (the
/// connections are held open until the test ends).
struct SilentHub {
    origin: String,
    accepted: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl SilentHub {
    fn start() -> SilentHub {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = accepted.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming().flatten() {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                held.push(stream);
            }
        });
        SilentHub { origin, accepted }
    }
    fn accepted(&self) -> usize {
        self.accepted.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A home where Fabric "runs": `hub.json` names a live process (not the test) and a hub that
/// never answers, with session hooks; `fabric-mcp` is the stand-in in `hub-silent` mode (it
/// takes its stdin, asks that hub and answers nothing), leaving a child in its process group.
fn silent_fabric_home() -> (Home, FabricPid, SilentHub) {
    let home = Home::new();
    home.register("claude");
    let fabric = FabricPid::start();
    let hub = SilentHub::start();
    let mut written = fabric_fake::files::Hub::new(fabric.pid());
    written.origin = hub.origin.clone();
    written.features = vec!["session-hooks/1".into()];
    written.write(&home.fabric_dir()).unwrap();
    home.fake.set_mode("hub-silent");
    home.fake.set_leave_child();
    (home, fabric, hub)
}

/// Far below the worker's Fabric budget (7 s) and the hosts' hook timeouts (5 s): a hook or
/// `status` that waited on Fabric in any way is killed here and fails the test. A watchdog,
/// not a measure of speed (that is `bench/hooks.sh`).
const NO_WAIT_ON_FABRIC: Duration = Duration::from_secs(3);

/// Runs `command` with `stdin` under [`NO_WAIT_ON_FABRIC`]; kills it and fails past it.
fn run_without_waiting(mut command: Command, stdin: &[u8], what: &str) -> std::process::Output {
    use std::process::Stdio;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let payload = stdin.to_vec();
    std::thread::spawn(move || {
        use std::io::Write;
        let _ = pipe.write_all(&payload);
    });
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > NO_WAIT_ON_FABRIC {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{what} waited on a Fabric that does not answer (killed after {NO_WAIT_ON_FABRIC:?})"
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn hook_without_waiting(home: &Home, event: &str, name: &str) -> std::process::Output {
    let out = run_without_waiting(
        home.command(&["hook", event, "--host", "claude"]),
        &home.payload("s1", name),
        event,
    );
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{event}: {out:?}"
    );
    out
}

/// Every live process whose process group is `pgid` (zombies count: not reaped).
fn group_members(pgid: u64) -> Vec<u64> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After "(comm) ": state, ppid, pgrp.
        let pgrp = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.split(' ').nth(2))
            .and_then(|p| p.parse::<u64>().ok());
        if pgrp == Some(pgid) {
            members.push(pid);
        }
    }
    members
}

/// Waits (a watchdog, `limit`) until `starts` stand-ins have started in all, no worker of
/// `home` runs and the process group of every stand-in is empty: no `fabric-mcp`, no child of
/// it, not even a zombie.
fn assert_no_fabric_process_left(home: &Home, starts: usize, limit: Duration, what: &str) {
    let start = Instant::now();
    loop {
        let groups: Vec<u64> = home
            .fake
            .starts()
            .iter()
            .filter_map(|s| s["pid"].as_u64())
            .collect();
        assert!(
            groups.len() >= starts || start.elapsed() < limit,
            "{what}: no fabric-mcp was started"
        );
        if groups.len() < starts {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        let workers = workers_in(home.path());
        let left: Vec<u64> = groups.iter().flat_map(|&g| group_members(g)).collect();
        if workers.is_empty() && left.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "{what}: after {limit:?} workers {workers:?} and fabric-mcp processes {left:?} remain"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Fabric's pid is alive but its hub never answers, so `fabric-mcp` takes the requests and
/// answers nothing. Every hook exits 0 without waiting on Fabric; the Stop's worker gives up
/// at its deadline, logs the turn as unknown and leaves no process (the stand-in's whole
/// process group, its child included, is gone); the turn stays pending (`observed.seq` not
/// advanced, no board recorded) and the next worker, once Fabric answers, sends it with the
/// same idempotency key; `status` answers at once with what it can know (Fabric running as
/// `hub.json` says, that pid, no count for the session).
#[test]
fn fabric_alive_but_its_hub_silent_stops_no_hook_and_loses_no_turn() {
    use fabric_client::worker::{FABRIC_BUDGET, GIT_BUDGET, idempotency_key};
    // The worker's own deadline (git, then Fabric's budget) and some room for a busy machine.
    let worker_deadline = GIT_BUDGET + FABRIC_BUDGET + Duration::from_secs(3);
    let (home, fabric, hub) = silent_fabric_home();

    let out = hook_without_waiting(&home, "session-start", "SessionStart");
    let context = claude_context(&out, "SessionStart");
    assert!(context.starts_with("Fabric is running"), "{context}");
    hook_without_waiting(&home, "user-prompt-submit", "UserPromptSubmit");
    hook_without_waiting(&home, "stop", "Stop");
    let stopped = Instant::now();

    // The worker started fabric-mcp, which asked the silent hub; the worker gave up at its
    // deadline and left nothing behind.
    assert_no_fabric_process_left(&home, 1, worker_deadline, "the Stop's worker");
    let took = stopped.elapsed();
    assert!(
        hub.accepted() >= 1 && home.fake.hub_asks().iter().all(|a| a["connected"] == true),
        "the stand-in never reached the hub: {:?}",
        home.fake.hub_asks()
    );
    assert!(!home.fake.children().is_empty(), "no child was left to end");
    let log = home.log_text();
    assert!(
        log.contains(" observe-turn claude s1 outcome=unknown")
            || log.contains(" worker claude s1 outcome=unknown"),
        "the turn's outcome is not logged as unknown:\n{log}"
    );
    assert!(home.fake.tool_calls("fabric_session_observe").is_empty());
    let spool = companion_sessions::spool::Spool::at(home.spool("s1"));
    assert_eq!(
        spool.observed_seq(),
        0,
        "a turn Fabric never answered was marked sent"
    );
    let turns: Vec<u64> = spool.read_turns().iter().map(|t| t.seq).collect();
    assert_eq!(turns, [1], "the turn is kept to be sent again");
    assert!(
        !home.spool("s1").join("board.json").exists(),
        "a board from no answer"
    );

    // status, both forms, answers at once and says what is true.
    let text = run_without_waiting(home.command(&["status"]), b"", "status");
    assert!(text.status.success(), "{text:?}");
    let text = stdout(&text);
    assert!(text.contains("Fabric: running"), "{text}");
    assert!(
        text.contains(" · unread unknown · "),
        "a count Fabric never gave: {text}"
    );
    let json = run_without_waiting(home.command(&["status", "--json"]), b"", "status --json");
    assert!(json.status.success(), "{json:?}");
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["fabric"]["state"], "running", "{json}");
    assert_eq!(json["fabric"]["pid"], fabric.pid(), "{json}");
    assert_eq!(json["fabric"]["origin"], hub.origin.as_str(), "{json}");
    assert_eq!(json["sessionHooks"], "active", "{json}");
    let session = &json["sessions"][0];
    assert_eq!(session["id"], "s1", "{json}");
    assert_eq!(session["inTurn"], false, "{session}");
    assert_eq!(session["lastTurn"]["seq"], 1, "{session}");
    assert!(
        session["board"].is_null(),
        "a count Fabric never gave: {session}"
    );

    // Fabric answers again: the next Stop's worker sends the kept turn and the new one.
    home.fake.set_mode("ready");
    hook_without_waiting(&home, "user-prompt-submit", "UserPromptSubmit");
    hook_without_waiting(&home, "stop", "Stop");
    common::wait_until("both turns sent", Duration::from_secs(30), || {
        spool.observed_seq() == 2
    });
    let session = companion_sessions::spool::SessionId::new("s1").unwrap();
    let keys: Vec<String> = home
        .fake
        .tool_calls("fabric_session_observe")
        .iter()
        .map(|c| {
            c["arguments"]["idempotencyKey"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        keys,
        [
            idempotency_key(&session, "turn", 1),
            idempotency_key(&session, "turn", 2)
        ],
        "the kept turn is sent once, before the new one"
    );

    // And the end, while the hub is silent again: the hook does not wait, its worker ends.
    home.fake.set_mode("hub-silent");
    hook_without_waiting(&home, "session-end", "SessionEnd");
    assert_no_fabric_process_left(&home, 3, worker_deadline, "the SessionEnd's worker");
    eprintln!(
        "hub silent: the Stop's worker and its fabric-mcp were gone {:.1} s after the Stop",
        took.as_secs_f64()
    );
}

/// `watch-mail` against a live Fabric whose hub never answers: its look ends at the look
/// deadline (10 s) with one line saying the board is unreadable because `fabric-mcp` did not
/// answer in time and when it looks again, the stand-in's process group is gone, and it
/// still exits 0 on the end of its stdin (the seed's way to stop it).
#[test]
fn watch_mail_against_a_silent_hub_says_so_at_its_deadline_and_leaves_nothing() {
    use fabric_client::watch::engine::LOOK_DEADLINE;
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let (home, _fabric, hub) = silent_fabric_home();
    let mut child = home
        .command(&["watch-mail", "--session-id", "s1", "--interval", "10"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (send, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    let started = Instant::now();
    let line = lines
        .recv_timeout(LOOK_DEADLINE + Duration::from_secs(5))
        .unwrap_or_else(|e| {
            let _ = child.kill();
            panic!("no line from watch-mail by its look deadline: {e}")
        });
    let took = started.elapsed();
    assert_eq!(
        line,
        "The project board is unreadable (fabric-mcp did not answer in time); watching again in 20s."
    );
    assert!(
        took >= LOOK_DEADLINE - Duration::from_millis(500),
        "gave up after {took:?}"
    );
    assert!(hub.accepted() >= 1, "the stand-in never reached the hub");
    assert_no_fabric_process_left(&home, 1, Duration::from_secs(5), "watch-mail's look");

    drop(stdin);
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(2) {
            let _ = child.kill();
            panic!("watch-mail did not exit on the end of its stdin");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(0));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.is_empty(), "{stderr}");
    assert!(lines.try_iter().next().is_none(), "a second line");
    assert!(
        home.log_text()
            .contains(" watch-mail claude s1 outcome=unknown unreadable"),
        "{}",
        home.log_text()
    );
}
