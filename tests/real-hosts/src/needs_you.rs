//! Which session needs you, proven with the real hosts run as a person runs them: the host's
//! TUI in tmux ([`crate::tui`]) against the model stand-in, which asks for a shell command that
//! needs the person's permission; our hooks installed by our installer; the real tray on a
//! real StatusNotifierItem host and a real notification daemon ([`crate::desktop`]).
//!
//! For each host, in one session:
//! 1. approved: within 2 s of the prompt on screen, `status --json` says `needs-you` and the
//!    item's icon has the mark; after the grace the daemon got exactly one notification; the
//!    approving keys; within 2 s the state is `working` and the notification withdrawn; the
//!    turn ends: `finished`;
//! 2. refused at once: no notification, and within 2 s nothing says "needs you" any more;
//! 3. interrupted while a command runs: `finished`, interrupted;
//! 4. a subagent asks: the session needs you (`subagent`), until it is answered;
//! 5. (Claude Code) two subagents at once: one asks, the other ends meanwhile; the session
//!    still needs you, until the person answers the first;
//!
//! and nothing of the prompts or the commands is in any file of ours. The time from the prompt
//! on screen to the mark on the icon is measured and said (`MEASURED …`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::desktop::{self, Desktop, Traffic};
use crate::home::TestHome;
use crate::hosts::{Host, HostProgram, say, text};
use crate::tui::Tui;
use crate::{codex_trust, install};

/// Within this of the prompt on screen, the state and the mark must say so; within this of
/// the answer, they must not any more.
pub const WITHIN: Duration = Duration::from_secs(2);
/// The tray's grace before a "needs you" notification (its default).
pub const GRACE: Duration = Duration::from_secs(5);
/// The longest a host may take to start, to show a prompt, to end a turn.
const SLOW: Duration = Duration::from_secs(90);

/// How a host's TUI is driven.
struct Driver {
    args: &'static [&'static str],
    /// Text on screen once it takes a prompt.
    ready: &'static str,
    /// Text on screen while its permission prompt is shown.
    prompt: &'static str,
    approve: &'static [&'static str],
    refuse: &'static [&'static str],
    interrupt: &'static [&'static str],
}

fn driver(host: Host) -> Driver {
    match host {
        Host::Claude => Driver {
            args: &[],
            ready: "? for shortcuts",
            prompt: "Do you want to proceed?",
            approve: &["Enter"],
            refuse: &["3"],
            interrupt: &["Escape"],
        },
        Host::Codex => Driver {
            args: &[],
            ready: "? for shortcuts",
            prompt: "Would you like to run the following command?",
            approve: &["y"],
            // "No, and tell Codex what to do differently (esc)".
            refuse: &["Escape"],
            interrupt: &["Escape"],
        },
        Host::Kimi => Driver {
            args: &[],
            ready: "context:",
            prompt: "Run this command?",
            approve: &["1"],
            refuse: &["3"],
            interrupt: &["Escape"],
        },
    }
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Prompt on screen → `status --json` says needs-you.
    pub to_state: Duration,
    /// Prompt on screen → the mark on the item's icon.
    pub to_mark: Duration,
}

/// A word no file of ours may ever hold: in every prompt and command of the run.
fn secret() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("zq{nanos:x}")
}

/// The host's own settings for an interactive session against the stand-in, as a person
/// who uses it would have them, before our install.
/// Where the screenshots go: `$FABRIC_E2E_SHOTS/real-hosts`, else the repository's
/// `target/e2e-shots/real-hosts` (as the other suites').
fn shots_dir() -> PathBuf {
    std::env::var_os("FABRIC_E2E_SHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/e2e-shots"))
        .join("real-hosts")
}

fn prepare(home: &TestHome) {
    match home.host() {
        Host::Claude => {
            // Ask before running a command (the auto mode would decide by itself).
            let settings = home.home.join(".claude/settings.json");
            std::fs::create_dir_all(settings.parent().expect("a folder")).expect("the folder");
            std::fs::write(
                &settings,
                r#"{"permissions": {"defaultMode": "default", "disableAutoMode": "disable"}}"#,
            )
            .expect("settings.json");
        }
        Host::Codex => {
            // Run commands in the sandbox, ask for anything outside it; the project trusted.
            let config = home.codex_home().join("config.toml");
            let existing = std::fs::read_to_string(&config).unwrap_or_default();
            std::fs::write(
                &config,
                format!(
                    "approval_policy = \"on-request\"\nsandbox_mode = \"workspace-write\"\n{existing}\n[projects.{}]\ntrust_level = \"trusted\"\n",
                    crate::home::toml_string(&text(&home.project))
                ),
            )
            .expect("config.toml");
        }
        Host::Kimi => {}
    }
}

/// What Claude Code keeps of a person who has used it before: onboarding done, the project
/// trusted, the API key accepted (added to the `~/.claude.json` the registration wrote).
fn claude_seen_before(home: &TestHome) {
    let path = home.home.join(".claude.json");
    let mut state: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    state["hasCompletedOnboarding"] = true.into();
    state["theme"] = "dark".into();
    state["customApiKeyResponses"] =
        serde_json::json!({"approved": [crate::home::API_KEY], "rejected": []});
    state["projects"] = serde_json::json!({
        text(&home.project): {"hasTrustDialogAccepted": true, "allowedTools": []}
    });
    std::fs::write(&path, state.to_string()).expect(".claude.json");
}

/// The environment the TUI runs with: the home's, in a real terminal.
fn tui_env(home: &TestHome) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = home
        .env()
        .into_iter()
        .filter(|(k, _)| k != "TERM")
        .collect();
    env.push(("TERM".into(), "xterm-256color".into()));
    env.push(("COLORTERM".into(), "truecolor".into()));
    env
}

/// The one live session of the home, from `status --json`.
fn session(home: &TestHome) -> Option<Value> {
    let status = install::status_json(home);
    status["sessions"].as_array()?.first().cloned()
}

fn state_of(home: &TestHome) -> Option<String> {
    Some(session(home)?["state"].as_str()?.to_owned())
}

pub(crate) fn wait_until<T>(
    what: &str,
    limit: Duration,
    mut check: impl FnMut() -> Option<T>,
) -> Result<T, String> {
    let start = Instant::now();
    loop {
        if let Some(value) = check() {
            return Ok(value);
        }
        if start.elapsed() > limit {
            return Err(format!(
                "gave up after {} ms waiting for {what}",
                limit.as_millis()
            ));
        }
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// The "needs you" notifications asked for so far: when, and what they said.
fn needs_you_notifies(desktop: &Desktop) -> Vec<(f64, String)> {
    desktop::traffic(&desktop.notify_text())
        .into_iter()
        .filter_map(|t| match t {
            Traffic::Notify {
                summary, body, at, ..
            } if summary.contains("need") => Some((at, format!("{summary} {body}"))),
            _ => None,
        })
        .collect()
}

/// Whether a notification was withdrawn after `since` (the tray closed it, or the daemon says
/// it closed; dbus-monitor records the tray's calls, not the daemon's answers with their ids,
/// and this desktop shows no other notification meanwhile).
fn withdrawn(desktop: &Desktop, since: f64) -> bool {
    desktop::traffic(&desktop.notify_text())
        .iter()
        .any(|t| matches!(t, Traffic::Close { at, .. } | Traffic::Closed { at, .. } if *at > since))
}

/// For a failure's message: the session as we recorded it, and Claude Code's own records.
fn host_records(home: &TestHome) -> String {
    let mut out = format!("status: {:?}", session(home));
    for entry in std::fs::read_dir(home.home.join(".claude/sessions"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".json") {
            let record: Value = std::fs::read_to_string(entry.path())
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default();
            out.push_str(&format!(
                "; Claude Code's {name}: status {} at {}, session {}",
                record["status"], record["statusUpdatedAt"], record["sessionId"]
            ));
        }
    }
    out
}

/// Every file under our folders holding `word`.
fn files_holding(home: &TestHome, word: &str) -> Vec<PathBuf> {
    files_holding_in(&home.our_dirs(), word)
}

/// Every file under `dirs` holding `word`.
pub(crate) fn files_holding_in(dirs: &[PathBuf], word: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, word: &str, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.is_symlink() {
                walk(&path, word, out);
            } else if std::fs::read(&path)
                .is_ok_and(|bytes| bytes.windows(word.len()).any(|w| w == word.as_bytes()))
            {
                out.push(path);
            }
        }
    }
    let mut found = Vec::new();
    for dir in dirs {
        walk(dir, word, &mut found);
    }
    found
}

/// Types a prompt and makes sure the host took it: its UserPromptSubmit started a new turn.
/// A host still starting (Codex while its MCP servers come up) leaves an Enter in the
/// composer; a person presses it again.
fn submit(home: &TestHome, tui: &Tui, line: &str) -> Result<(), String> {
    let turn = |home: &TestHome| session(home).map(|s| s["turnStartedAt"].clone());
    let before = turn(home);
    tui.type_line(line);
    let start = Instant::now();
    let mut pressed = Instant::now();
    loop {
        let now = turn(home);
        if now.is_some() && now != before {
            return Ok(());
        }
        if start.elapsed() > SLOW {
            return Err(format!(
                "the host never took the prompt; the screen:\n{}",
                tui.screen()
            ));
        }
        if pressed.elapsed() > Duration::from_secs(5) && tui.screen().contains(line) {
            tui.keys(&["Enter"]);
            pressed = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits for the permission prompt on screen, then for the state and the mark; returns when
/// the prompt showed and what was measured.
fn prompt_to_mark(
    home: &TestHome,
    desktop: &Desktop,
    tui: &Tui,
    driver: &Driver,
) -> Result<(Instant, Measured), String> {
    let shown = tui.wait_for("the permission prompt", SLOW, |s| s.contains(driver.prompt))?;
    let mut to_state = None;
    let mut to_mark = None;
    while to_state.is_none() || to_mark.is_none() {
        if to_state.is_none() && state_of(home).as_deref() == Some("needs-you") {
            to_state = Some(shown.elapsed());
        }
        if to_mark.is_none() && desktop.icon_has_mark() == Some(true) {
            to_mark = Some(shown.elapsed());
        }
        if shown.elapsed() > WITHIN {
            return Err(format!(
                "{WITHIN:?} after the prompt showed: state {:?} (needs-you after {to_state:?}), mark after {to_mark:?}; the screen:\n{}",
                state_of(home),
                tui.screen()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((
        shown,
        Measured {
            to_state: to_state.expect("set"),
            to_mark: to_mark.expect("set"),
        },
    ))
}

/// What one run is made of (kept until the end, or longer when held), in the order it goes:
/// the TUI, then every process left with the home's HOME (Codex leaves its app-server daemon
/// running), the desktop, the home, the stand-in.
type Parts = (Tui, Reaper, Desktop, TestHome, model_stand_in::StandIn);

/// On drop, kills every process whose environment has `HOME` = this home (what the host
/// started and left behind: Codex's app-server daemon and its MCP servers).
pub struct Reaper(PathBuf);

impl Drop for Reaper {
    fn drop(&mut self) {
        let mut wanted = b"HOME=".to_vec();
        wanted.extend_from_slice(self.0.as_os_str().as_encoded_bytes());
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
            if environ
                .split(|b| *b == 0)
                .any(|var| var == wanted.as_slice())
            {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .stderr(std::process::Stdio::null())
                    .status();
            }
        }
    }
}

/// The whole proof for one host; gives the prompt-to-mark times of its waits. With
/// `FABRIC_NEEDS_YOU_HOLD=<seconds>` a failure leaves the TUI and the desktop up that long
/// (to look at them: `tmux -S <socket> attach`).
pub fn prove(program: &HostProgram, base: &Path) -> Result<Vec<Measured>, String> {
    let mut held = None;
    let result = prove_holding(program, base, &mut held);
    if result.is_err()
        && let Some(secs) = std::env::var("FABRIC_NEEDS_YOU_HOLD")
            .ok()
            .and_then(|v| v.parse().ok())
    {
        say(&format!("holding the failed run for {secs} s"));
        std::thread::sleep(Duration::from_secs(secs));
    }
    drop(held);
    result
}

fn prove_holding(
    program: &HostProgram,
    base: &Path,
    held: &mut Option<Parts>,
) -> Result<Vec<Measured>, String> {
    let host = program.host;
    let drive = driver(host);
    let stand_in = model_stand_in::StandIn::start(model_stand_in::Options::default())
        .map_err(|e| format!("the model stand-in: {e}"))?;
    let home = TestHome::new(base, program, &stand_in.url());
    prepare(&home);
    home.register_fabric();
    home.fabric_running();
    install::install_hooks(&home);
    if host == Host::Codex {
        codex_trust::grant_ours(&home, companion_hosts::hook_command::is_ours)?;
    }
    if host == Host::Claude {
        claude_seen_before(&home);
    }
    let logs = base.join(format!("needs-you-logs/{}", host.cli_name()));
    let _ = std::fs::remove_dir_all(&logs);
    let desktop = Desktop::start(&home, &logs)?;
    let socket = home.home.join("../tmux.sock");
    let tui = Tui::start(
        &socket,
        host.display_name(),
        &program.path,
        drive.args,
        &tui_env(&home),
        &home.project,
    )?;
    let reaper = Reaper(home.home.clone());
    let (tui, _, desktop, home, stand_in) = held.insert((tui, reaper, desktop, home, stand_in));
    let (home, desktop, tui, stand_in) = (&*home, &*desktop, &*tui, &*stand_in);
    say(&format!(
        "{host}: TUI in tmux -S {}, desktop {} (logs in {})",
        socket.display(),
        desktop.display,
        logs.display()
    ));
    if host == Host::Kimi {
        tui.wait_for("Kimi Code's folder trust", SLOW, |s| {
            s.contains("Trust this folder?")
        })?;
        tui.keys(&["Enter"]);
    }
    let word = secret();
    let mut measured = Vec::new();
    let run = |what: &str| format!("stand-in: run touch {word}-{what}");

    // 1. Approved after the grace: one notification, withdrawn once answered.
    tui.wait_for("the TUI's input", SLOW, |s| s.contains(drive.ready))?;
    std::thread::sleep(Duration::from_secs(1));
    submit(home, tui, &run("approved"))?;
    let (shown, m) = prompt_to_mark(home, desktop, tui, &drive)?;
    say(&format!(
        "MEASURED {host}: prompt on screen -> status needs-you {} ms, -> the icon's mark {} ms",
        m.to_state.as_millis(),
        m.to_mark.as_millis()
    ));
    measured.push(m);
    let session_id = session(home)
        .and_then(|s| s["id"].as_str().map(str::to_owned))
        .ok_or("no session listed")?;
    let waiting = session(home).ok_or("no session")?;
    if waiting["reason"] != "permission" {
        return Err(format!("not waiting for permission: {waiting}"));
    }
    let notified = wait_until(
        "the needs-you notification",
        GRACE + Duration::from_secs(5),
        || {
            let found = needs_you_notifies(desktop);
            (!found.is_empty()).then_some(found)
        },
    )?;
    let since = waiting["stateSince"]
        .as_str()
        .and_then(companion_sessions::session_state::millis)
        .ok_or("no stateSince")? as f64
        / 1000.0;
    if notified[0].0 < since + GRACE.as_secs_f64() - 0.05 {
        return Err(format!(
            "notified {:.3} s after the wait began, before the grace",
            notified[0].0 - since
        ));
    }
    let _ = shown;
    std::thread::sleep(Duration::from_secs(2));
    let notified_all = needs_you_notifies(desktop);
    if notified_all.len() != 1 {
        return Err(format!("not exactly one notification: {notified_all:?}"));
    }
    // The icon with its mark and the notification, as the person sees them (docs/images).
    desktop.screenshot(&shots_dir().join(format!("needs-you-{}.png", host.cli_name())));
    let notified_at = notified[0].0;
    let answered = Instant::now();
    tui.keys(drive.approve);
    wait_until("the state after the approval", WITHIN, || {
        let log = home.hook_log_text();
        let worked = log.lines().any(|l| {
            l.contains(&format!(
                " {} {session_id} ok state=working",
                host.cli_name()
            )) && (l.contains("post-tool-use") || l.contains("permission-result"))
        });
        (worked && state_of(home).as_deref() != Some("needs-you")).then_some(())
    })
    .map_err(|e| {
        format!(
            "{e}: state {:?}, log:\n{}",
            state_of(home),
            home.hook_log_text()
        )
    })?;
    wait_until(
        "the notification withdrawn",
        WITHIN - answered.elapsed().min(WITHIN),
        || withdrawn(desktop, notified_at).then_some(()),
    )
    .map_err(|e| format!("{e}: {:?}", desktop::traffic(&desktop.notify_text())))?;
    wait_until("the mark gone", WITHIN, || {
        (desktop.icon_has_mark() == Some(false)).then_some(())
    })?;
    wait_until("the turn finished", SLOW, || {
        (state_of(home).as_deref() == Some("finished")).then_some(())
    })
    .map_err(|e| {
        format!(
            "{e}: state {:?}; the screen:\n{}",
            state_of(home),
            tui.screen()
        )
    })?;

    // 2. Refused at once: nothing notified, nothing waits any more.
    std::thread::sleep(Duration::from_secs(1));
    submit(home, tui, &run("refused"))?;
    let (_, m) = prompt_to_mark(home, desktop, tui, &drive)?;
    measured.push(m);
    let before = needs_you_notifies(desktop).len();
    // A person reads the prompt for a moment (a TUI may not take keys while it draws it).
    std::thread::sleep(Duration::from_millis(700));
    tui.keys(drive.refuse);
    wait_until("the wait over after the refusal", WITHIN, || {
        (state_of(home).as_deref() != Some("needs-you")).then_some(())
    })
    .map_err(|e| format!("{e}; {}; the screen:\n{}", host_records(home), tui.screen()))?;
    wait_until("the mark gone", WITHIN, || {
        (desktop.icon_has_mark() == Some(false)).then_some(())
    })?;
    wait_until("the refused turn finished", SLOW, || {
        (state_of(home).as_deref() == Some("finished")).then_some(())
    })
    .map_err(|e| {
        format!(
            "{e}: state {:?}; the screen:\n{}",
            state_of(home),
            tui.screen()
        )
    })?;
    std::thread::sleep(GRACE);
    let after = needs_you_notifies(desktop);
    if after.len() != before {
        return Err(format!("a refusal given at once was notified: {after:?}"));
    }

    // 3. Interrupted while a command runs.
    std::thread::sleep(Duration::from_secs(1));
    submit(
        home,
        tui,
        &format!("stand-in: run-here timeout 30 tail -f /dev/null # {word}-interrupted"),
    )?;
    // The host may ask first (a person approves), then the command runs.
    if tui
        .wait_for("a prompt for the command", Duration::from_secs(8), |s| {
            s.contains(drive.prompt)
        })
        .is_ok()
    {
        std::thread::sleep(Duration::from_millis(700));
        tui.keys(drive.approve);
        tui.wait_for("the prompt answered", SLOW, |s| !s.contains(drive.prompt))?;
    }
    wait_until("working while the command runs", WITHIN, || {
        (state_of(home).as_deref() == Some("working")).then_some(())
    })
    .map_err(|e| format!("{e}: {}; the screen:\n{}", host_records(home), tui.screen()))?;
    std::thread::sleep(Duration::from_secs(2));
    tui.keys(drive.interrupt);
    let interrupted = wait_until("the interrupted turn", Duration::from_secs(10), || {
        let s = session(home)?;
        (s["state"] == "finished").then_some(s)
    })
    .map_err(|e| {
        format!(
            "{e}: state {:?}; the screen:\n{}",
            session(home),
            tui.screen()
        )
    })?;
    if interrupted["interrupted"] != true {
        return Err(format!("not marked interrupted: {interrupted}"));
    }

    // 4. A subagent asks.
    std::thread::sleep(Duration::from_secs(1));
    submit(home, tui, &format!("stand-in: agent run touch {word}-sub"))?;
    let (_, m) = prompt_to_mark(home, desktop, tui, &drive)?;
    measured.push(m);
    let waiting = session(home).ok_or("no session")?;
    if waiting["subagent"] != true {
        return Err(format!("the wait is not marked a subagent's: {waiting}"));
    }
    std::thread::sleep(Duration::from_millis(700));
    tui.keys(drive.approve);
    wait_until("the subagent's wait over", WITHIN, || {
        (state_of(home).as_deref() != Some("needs-you")).then_some(())
    })?;
    wait_until("the session settled", SLOW, || {
        (state_of(home).as_deref() == Some("finished")).then_some(())
    })
    .map_err(|e| {
        format!(
            "{e}: state {:?}; the screen:\n{}",
            session(home),
            tui.screen()
        )
    })?;

    // 5. Two subagents at once: one asks for permission, the other ends while it waits; the
    //    session needs you until the person answers. Claude Code 2.1.328 runs both in the
    //    background (its Agent results and the main turn's Stop come first, each subagent's
    //    permission prompt after), and the one answered late runs no hook of its own while
    //    the first waits: `hookbin/tests/agent_waits.rs` drives the events that do.
    if host == Host::Claude {
        std::thread::sleep(Duration::from_secs(1));
        submit(
            home,
            tui,
            &format!(
                "{}touch {word}-parallel",
                model_stand_in::script::AGENTS_RUN
            ),
        )?;
        let (_, m) = prompt_to_mark(home, desktop, tui, &drive)?;
        measured.push(m);
        // The other subagent's model answers after PARALLEL_WAIT_SECS (the stand-in records a
        // request once it answered); then that subagent ends, while the first still waits.
        let late = format!(
            "{}{}",
            model_stand_in::script::WAIT,
            model_stand_in::script::PARALLEL_WAIT_SECS
        );
        let other_ends = Duration::from_secs(model_stand_in::script::PARALLEL_WAIT_SECS) + SLOW;
        wait_until("the other subagent's answer", other_ends, || {
            stand_in
                .requests_to("/v1/messages")
                .iter()
                .any(|r| r.body.to_string().contains(&late))
                .then_some(())
        })?;
        std::thread::sleep(Duration::from_secs(3));
        std::thread::sleep(Duration::from_millis(500));
        let waiting = session(home).ok_or("no session")?;
        if waiting["state"] != "needs-you" || desktop.icon_has_mark() != Some(true) {
            return Err(format!(
                "another subagent's end ended the wait: {waiting}; log:\n{}",
                home.hook_log_text()
            ));
        }
        tui.keys(drive.approve);
        wait_until("the parallel subagent's wait over", WITHIN, || {
            (state_of(home).as_deref() != Some("needs-you")).then_some(())
        })?;
        wait_until("the session settled after the subagents", SLOW, || {
            (state_of(home).as_deref() == Some("finished")).then_some(())
        })
        .map_err(|e| {
            format!(
                "{e}: state {:?}; the screen:\n{}",
                session(home),
                tui.screen()
            )
        })?;
    }

    // Nothing of the prompts or the commands in any file of ours.
    for what in [word.as_str(), "stand-in: "] {
        let found = files_holding(home, what);
        if !found.is_empty() {
            return Err(format!("{what:?} is in {found:?}"));
        }
    }
    Ok(measured)
}
