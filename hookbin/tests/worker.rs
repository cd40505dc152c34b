//! The detached worker's guarantees, run as the real binary against the Fabric stand-in: a
//! repository's own config runs no program in it; a slow git never costs Fabric its time; a
//! turn is marked sent only once Fabric answered it; and `fabric-mcp`'s own children end
//! with it.
#![cfg(unix)] // a temporary HOME given by HOME and XDG variables (Windows reads neither), process groups, scripts run as programs

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Home, wait_until, write};
use companion_sessions::spool::Spool;

const SESSION_HOOKS: &[&str] = &["session-hooks/1"];
const WORKER_WAIT: Duration = Duration::from_secs(40);

fn git(home: &Home, dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .current_dir(dir)
        .env("HOME", home.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A repository with one commit, one modified file and one untracked file.
fn repository(home: &Home, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(home, dir, &["init", "-q"]);
    write(&dir.join("a.txt"), "one\ntwo\n");
    git(home, dir, &["add", "a.txt"]);
    git(home, dir, &["commit", "-q", "-m", "first"]);
    write(&dir.join("a.txt"), "one\nTWO\nthree\n");
    write(&dir.join("new.txt"), "fresh\n");
}

/// A Stop payload for a session working in `cwd`.
fn stop_in(session: &str, cwd: &Path) -> Vec<u8> {
    serde_json::json!({
        "session_id": session,
        "cwd": cwd,
        "hook_event_name": "Stop",
    })
    .to_string()
    .into_bytes()
}

fn observed_seq(home: &Home, session: &str) -> Option<u64> {
    let text = std::fs::read_to_string(home.spool(session).join("observed.seq")).ok()?;
    text.trim().parse().ok()
}

/// Waits until the worker for `session` has finished its Stop: the `status` line or an
/// `outcome=unknown` line is logged, then the worker lets go of the spool's worker lock.
fn wait_for_worker(home: &Home, session: &str, what: &str) {
    wait_until(what, WORKER_WAIT, || {
        home.log_text().lines().any(|line| {
            line.contains(&format!(" {session} "))
                && (line.contains(" status ") || line.contains("outcome=unknown"))
        })
    });
    wait_for_worker_lock(home, session);
}

/// Waits until no worker holds `session`'s worker lock.
fn wait_for_worker_lock(home: &Home, session: &str) {
    let spool = Spool::at(home.spool(session));
    wait_until("the worker to let go of its lock", WORKER_WAIT, || {
        matches!(spool.try_worker_lock(), Ok(Some(_)))
    });
}

fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // A zombie no one reaped yet is dead too.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => true,
    }
}

// ---- git runs no program a repository names ---------------------------------------------

/// A script that records that it ran (its first argument names the way in), then exits 0.
fn marker_script(home: &Home) -> (PathBuf, PathBuf) {
    let markers = home.path().join("markers");
    std::fs::create_dir_all(&markers).unwrap();
    let script = home.path().join("evil.sh");
    write(
        &script,
        &format!(
            "#!/bin/sh\necho \"$*\" >> '{}/ran'\nexit 0\n",
            markers.display()
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, markers.join("ran"))
}

/// Every program a repository's config or attributes can name for the commands a turn runs.
fn hostile_config(script: &Path, hooks: &Path) -> String {
    let s = script.display();
    format!(
        "[core]\n\tfsmonitor = {s} fsmonitor\n\thooksPath = {hooks}\n\tpager = {s} pager\n\
         \tsshCommand = {s} ssh\n\taskPass = {s} askpass\n\
         [credential]\n\thelper = !{s} credential\n\
         [diff]\n\texternal = {s} external\n\
         [diff \"x\"]\n\ttextconv = {s} textconv\n\tcommand = {s} diff-command\n\
         [filter \"x\"]\n\tclean = {s} clean\n\tsmudge = {s} smudge\n\
         [filter \"y.clean={s} injected\"]\n\tsmudge = {s} smudge-odd\n\
         [filter \"lfs-like\"]\n\tprocess = {s} process\n\trequired = true\n\
         [pager]\n\tdiff = {s} pager-diff\n",
        hooks = hooks.display()
    )
}

#[test]
fn a_hostile_repository_config_runs_no_program_on_a_stop() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    let (script, ran) = marker_script(&home);
    let project = home.project();
    repository(&home, &project);
    write(&project.join("b.txt"), "b\n");
    write(&project.join("c.txt"), "c\n");
    git(&home, &project, &["add", "b.txt", "c.txt"]);
    git(&home, &project, &["commit", "-q", "-m", "second"]);
    write(&project.join("b.txt"), "b\nB\n");
    write(&project.join("c.txt"), "c\nC\n");
    // Hooks for every event git knows, all recording.
    let hooks = home.path().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in [
        "post-index-change",
        "pre-commit",
        "post-checkout",
        "reference-transaction",
    ] {
        std::os::unix::fs::symlink(&script, hooks.join(hook)).unwrap();
    }
    let config = project.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&hostile_config(&script, &hooks));
    write(&config, &text);
    // A driver named so that a naive `-c filter.<name>.clean=` would set `y`'s clean program.
    write(
        &project.join(".gitattributes"),
        "a.txt diff=x filter=x\nb.txt filter=y\n",
    );
    write(
        &project.join(".git/info/attributes"),
        "c.txt filter=lfs-like\n",
    );
    assert!(!ran.exists(), "setting up ran nothing");

    let out = home.hook("stop", "claude", &stop_in("s1", &project));
    assert!(out.status.success());
    wait_for_worker(&home, "s1", "the worker");
    assert!(
        !ran.exists(),
        "the repository's config ran: {}",
        std::fs::read_to_string(&ran).unwrap_or_default()
    );
    // The numbers are still there, taken from the files as they are.
    let observe = home.fake.tool_calls("fabric_session_observe");
    assert_eq!(observe.len(), 1);
    let args = &observe[0]["arguments"];
    assert_eq!(args["head"].as_str().map(str::len), Some(40));
    // a.txt, b.txt and c.txt changed; new.txt and .gitattributes are new.
    assert_eq!(args["filesChanged"], 5, "{args}");
    assert_eq!(args["linesAdded"], 4, "{args}");
    assert_eq!(args["linesRemoved"], 1, "{args}");
}

#[test]
fn a_partial_clone_fetches_nothing_and_runs_no_transport_program() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    let (script, ran) = marker_script(&home);
    let project = home.project();
    repository(&home, &project);
    // A promisor remote whose transport is a program, and HEAD's blob missing: a diff that
    // needs it would fetch it lazily, running the transport.
    let blob = String::from_utf8(
        Command::new("git")
            .args(["rev-parse", "HEAD:a.txt"])
            .current_dir(&project)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let blob = blob.trim();
    std::fs::remove_file(project.join(format!(".git/objects/{}/{}", &blob[..2], &blob[2..])))
        .unwrap();
    for (key, value) in [
        ("core.repositoryformatversion", "1".to_string()),
        ("extensions.partialClone", "origin".to_string()),
        ("remote.origin.promisor", "true".to_string()),
        ("protocol.ext.allow", "always".to_string()),
        ("protocol.allow", "always".to_string()),
        (
            "remote.origin.url",
            format!("ext::sh -c {}% lazy-fetch", script.display()),
        ),
    ] {
        git(&home, &project, &["config", key, &value]);
    }
    let out = home.hook("stop", "claude", &stop_in("s1", &project));
    assert!(out.status.success());
    wait_for_worker(&home, "s1", "the worker");
    assert_eq!(home.fake.tool_calls("fabric_session_observe").len(), 1);
    assert!(
        !ran.exists(),
        "a transport ran: {}",
        std::fs::read_to_string(&ran).unwrap_or_default()
    );
}

// ---- a slow git never costs Fabric its time ---------------------------------------------

/// A `git` first on PATH that sleeps `secs` before running the real one.
fn slow_git(home: &mut Home, secs: &str) {
    git_wrapper(home, &format!("sleep {secs}\nexec \"$REAL_GIT\" \"$@\""));
}

#[test]
fn a_slow_git_sends_the_turn_with_null_numbers_and_marks_it_sent() {
    let mut home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    home.fake.set_unread(2);
    let project = home.project();
    repository(&home, &project);
    slow_git(&mut home, "2.9");
    let out = home.hook("stop", "claude", &stop_in("s1", &project));
    assert!(out.status.success());
    wait_for_worker(&home, "s1", "the worker");
    let observe = home.fake.tool_calls("fabric_session_observe");
    assert_eq!(
        observe.len(),
        1,
        "the turn reached Fabric: {}",
        home.log_text()
    );
    let args = &observe[0]["arguments"];
    for field in ["filesChanged", "linesAdded", "linesRemoved"] {
        assert!(args[field].is_null(), "{field}: {args}");
    }
    let log = home.log_text();
    assert!(log.contains(" observe-turn claude s1 ok turn=1"), "{log}");
    assert!(log.contains(" status claude s1 ok unread=2"), "{log}");
    assert_eq!(observed_seq(&home, "s1"), Some(1));
}

// ---- git and everything it started end at the deadline -----------------------------------

/// A `git` first on PATH: a shell script (`body`) that can start children; `$PIDS` names a
/// file where it writes the process ids it wants checked. Returns that file.
fn git_wrapper(home: &mut Home, body: &str) -> PathBuf {
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let bin = home.path().join("wrapped-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let pids = home.path().join("git-pids");
    write(
        &bin.join("git"),
        &format!(
            "#!/bin/sh\nPIDS='{}'\nREAL_GIT='{}'\necho $$ >> \"$PIDS\"\n{body}\n",
            pids.display(),
            real.trim()
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    home.extra_env
        .push(("PATH".into(), path.to_string_lossy().into_owned()));
    pids
}

fn recorded_pids(file: &Path) -> Vec<u32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Every live process whose process group is one of `groups` (zombies count as gone).
fn members_of(groups: &[u32]) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let fields: Vec<&str> = rest.split(' ').collect();
        // state, ppid, pgrp
        if fields[0] != "Z" && fields[2].parse().is_ok_and(|g: u32| groups.contains(&g)) {
            out.push(pid);
        }
    }
    out
}

/// Issue 21: the worker's git was killed alone at its deadline (tokio's kill-on-drop); what it
/// started (here `sleep 1000` in the background, as a hook, a credential helper or a wrapper
/// would) outlived it. git now runs in its own process group, ended whole at the deadline.
#[test]
fn a_hung_git_and_everything_it_started_end_at_the_deadline() {
    let mut home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    home.fake.set_unread(1);
    let project = home.project();
    repository(&home, &project);
    let pids = git_wrapper(&mut home, "sleep 1000 &\necho $! >> \"$PIDS\"\nsleep 1000");
    let out = home.hook("stop", "claude", &stop_in("s1", &project));
    assert!(out.status.success());
    wait_for_worker(&home, "s1", "the worker");
    let started = recorded_pids(&pids);
    assert!(started.len() >= 2, "the wrapper ran: {started:?}");
    // The wrapper was its group's leader: the group is git's own, not the worker's.
    let groups = vec![started[0]];
    wait_until(
        "no process of git's group left",
        Duration::from_secs(5),
        || members_of(&groups).is_empty() && started.iter().all(|&pid| gone(pid)),
    );
    let observe = home.fake.tool_calls("fabric_session_observe");
    assert_eq!(observe.len(), 1, "{}", home.log_text());
    assert!(observe[0]["arguments"]["filesChanged"].is_null());
}

/// A git that exits in time but leaves a child holding its output open: the child is ended
/// when git exits (not left to the deadline), so the numbers still arrive.
#[test]
fn a_child_git_leaves_behind_ends_with_it_and_the_numbers_still_come() {
    let mut home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    home.fake.set_unread(1);
    let project = home.project();
    repository(&home, &project);
    let pids = git_wrapper(
        &mut home,
        "sleep 1000 &\necho $! >> \"$PIDS\"\nexec \"$REAL_GIT\" \"$@\"",
    );
    let out = home.hook("stop", "claude", &stop_in("s1", &project));
    assert!(out.status.success());
    wait_for_worker(&home, "s1", "the worker");
    let started = recorded_pids(&pids);
    assert!(started.len() >= 2, "the wrapper ran: {started:?}");
    wait_until("no child of git left", Duration::from_secs(5), || {
        started.iter().all(|&pid| gone(pid))
    });
    let observe = home.fake.tool_calls("fabric_session_observe");
    assert_eq!(observe.len(), 1, "{}", home.log_text());
    let args = &observe[0]["arguments"];
    assert_eq!(args["filesChanged"], 2, "{args}");
    assert_eq!(args["linesAdded"], 2, "{args}");
    assert_eq!(args["linesRemoved"], 1, "{args}");
}

// ---- a turn is sent once Fabric answered it ----------------------------------------------

#[test]
fn a_turn_fabric_never_answered_is_sent_again_by_the_next_worker() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    home.fake.set_mode("hang");
    let project = home.project();
    std::fs::create_dir_all(&project).unwrap();
    home.hook("stop", "claude", &stop_in("s1", &project));
    wait_until("outcome=unknown", WORKER_WAIT, || {
        home.log_text()
            .contains(" observe-turn claude s1 outcome=unknown")
    });
    wait_for_worker_lock(&home, "s1");
    assert_eq!(
        observed_seq(&home, "s1").unwrap_or(0),
        0,
        "nothing was answered"
    );

    home.fake.set_mode("ready");
    home.hook("stop", "claude", &stop_in("s1", &project));
    wait_until("the second worker's status", WORKER_WAIT, || {
        home.log_text().contains(" status claude s1 ok")
    });
    wait_for_worker_lock(&home, "s1");
    let keys: Vec<String> = home
        .fake
        .tool_calls("fabric_session_observe")
        .iter()
        .skip(1)
        .map(|c| {
            c["arguments"]["idempotencyKey"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(keys[0].starts_with("fs-turn-1-"), "{keys:?}");
    assert!(keys[1].starts_with("fs-turn-2-"), "{keys:?}");
    assert_eq!(observed_seq(&home, "s1"), Some(2));
}

#[test]
fn a_refused_turn_is_answered_and_not_sent_again() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    home.fake.set_mode("refusal");
    let project = home.project();
    std::fs::create_dir_all(&project).unwrap();
    home.hook("stop", "claude", &stop_in("s1", &project));
    wait_for_worker(&home, "s1", "the worker");
    assert_eq!(observed_seq(&home, "s1"), Some(1));
    home.fake.set_mode("ready");
    home.hook("stop", "claude", &stop_in("s1", &project));
    wait_until("the second turn", WORKER_WAIT, || {
        home.fake.tool_calls("fabric_session_observe").len() >= 2
    });
    wait_for_worker(&home, "s1", "the second worker");
    let calls = home.fake.tool_calls("fabric_session_observe");
    assert_eq!(calls.len(), 2);
    assert!(
        calls[1]["arguments"]["idempotencyKey"]
            .as_str()
            .unwrap()
            .starts_with("fs-turn-2-")
    );
}

// ---- fabric-mcp's children end with it ----------------------------------------------------

#[test]
fn fabric_mcps_own_children_end_with_it_even_when_it_exits_in_time() {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(SESSION_HOOKS);
    home.fake.set_leave_child();
    let project = home.project();
    std::fs::create_dir_all(&project).unwrap();
    home.hook("stop", "claude", &stop_in("s1", &project));
    wait_for_worker(&home, "s1", "the worker");
    let log = home.log_text();
    assert!(log.contains(" status claude s1 ok"), "{log}");
    let children = home.fake.children();
    assert_eq!(children.len(), 1);
    // The stand-in exited by itself within its grace; its child must not outlive the worker.
    wait_until("the worker to end", WORKER_WAIT, || {
        home.fake
            .starts()
            .iter()
            .all(|start| gone(start["pid"].as_u64().unwrap() as u32))
    });
    wait_until("its child to be gone", Duration::from_secs(5), || {
        gone(children[0])
    });
}
