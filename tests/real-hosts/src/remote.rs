//! A real Claude Code on another machine (issue 29), as a person runs one: a real OpenSSH
//! server on loopback as a second Unix user with its own home (test-support's `ssh_remote`),
//! set up from here with `fabric-session remote add` (program copied, the hook plan shown
//! there, applied with its digest), Claude Code's TUI in that user's tmux against the model
//! stand-in, and the real tray here on a real StatusNotifierItem host with a real notification
//! daemon and a window manager ([`crate::desktop`]), following the remote over the person's
//! `ssh`.
//!
//! In one session: the remote session in the tray's menu, with its link's line; a permission
//! prompt there marks the icon and notifies here within 2 s; the jump selects its tmux window
//! there and raises the local terminal whose `ssh` reaches the remote; the approval ends the
//! wait here; nothing of the prompt is in any file of ours at either end.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::json;
use test_support::ssh_remote::{ALIAS, PROGRAM, SshRemote, write_as_remote};

use crate::desktop::{self, Desktop, Traffic};
use crate::home::{API_KEY, SESSION_HOOKS_FEATURE, TestHome};
use crate::hosts::{HostProgram, say, text};
use crate::needs_you::{WITHIN, files_holding_in, wait_until};
use crate::tui::Tui;

/// The longest Claude Code may take to start, to show a prompt, to end a turn.
const SLOW: Duration = Duration::from_secs(90);
/// The project's folder under the remote user's home, and so its name in the menu.
const PROJECT: &str = "proj";
/// The remote's tmux session holding Claude Code (window 0) and a person's other window.
const TMUX_SESSION: &str = "agents";

/// What one run measured.
#[derive(Debug, Clone)]
pub struct Measured {
    /// Prompt on the remote's screen → the mark on the icon here.
    pub to_mark: Duration,
    /// Prompt on the remote's screen → the "needs you" notification here.
    pub to_notification: Duration,
}

fn out_text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn checked(out: Output, what: &str) -> Result<Output, String> {
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!("{what} failed: {}", out_text(&out)))
    }
}

/// Claude Code's install, readable by the remote user (the test's own lives under root's
/// home): hard links when the folders share a file system, a copy otherwise. Its program.
fn claude_for_remote(program: &HostProgram, remote: &SshRemote) -> Result<PathBuf, String> {
    // `<install>/node_modules/.bin/claude`
    let install = program
        .path
        .ancestors()
        .nth(3)
        .ok_or("Claude Code's install folder")?;
    let there = remote.home().join("claude-code");
    let linked = Command::new("cp")
        .arg("-al")
        .arg(install)
        .arg(&there)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !linked {
        let _ = std::fs::remove_dir_all(&there);
        checked(
            Command::new("cp")
                .arg("-a")
                .arg(install)
                .arg(&there)
                .output()
                .map_err(|e| e.to_string())?,
            "copying Claude Code",
        )?;
    }
    let relative = program
        .path
        .strip_prefix(install)
        .map_err(|e| e.to_string())?;
    Ok(there.join(relative))
}

/// The remote user's side before anything of ours: a project under git; Claude Code as a
/// person who used it before has it (onboarding done, the project trusted, the key accepted,
/// asking before a command); Fabric running there (a live process of that user named by
/// `hub.json`) and registered in Claude Code.
fn remote_person(remote: &SshRemote) -> Result<(), String> {
    checked(
        remote.run_as_remote(&format!(
            "mkdir -p ~/{PROJECT} && cd ~/{PROJECT} && git init -q && \
             git -c user.name=T -c user.email=t@example.invalid commit -q --allow-empty -m start"
        )),
        "the remote's project",
    )?;
    let project = remote.home().join(PROJECT);
    write_as_remote(
        remote,
        ".claude/settings.json",
        r#"{"permissions": {"defaultMode": "default", "disableAutoMode": "disable"}}"#,
    );
    write_as_remote(
        remote,
        ".claude.json",
        &json!({
            "hasCompletedOnboarding": true,
            "theme": "dark",
            "customApiKeyResponses": {"approved": [API_KEY], "rejected": []},
            "projects": {text(&project): {"hasTrustDialogAccepted": true, "allowedTools": []}},
            "mcpServers": {"fabric": {"command": "fabric-mcp", "args": ["--runner", "claude-code"]}},
        })
        .to_string(),
    );
    remote.fabric_running(|pid, fabric_dir| {
        fabric_fake::files::hub_text(fabric_dir, &[SESSION_HOOKS_FEATURE], pid)
    });
    Ok(())
}

/// `fabric-session remote …` as the person runs it here.
fn remote_cmd(home: &TestHome, ssh_config: &Path, args: &[&str]) -> Result<Output, String> {
    Command::new(crate::binaries::fabric_session())
        .arg("remote")
        .args(args)
        .env_clear()
        .envs(home.env())
        .env("FABRIC_SSH_CONFIG", ssh_config)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("fabric-session remote: {e}"))
}

/// `remote add`: the plan first, then applied with the digest it printed.
fn remote_add(home: &TestHome, remote: &SshRemote) -> Result<(), String> {
    let plan = checked(
        remote_cmd(home, remote.config(), &["add", ALIAS])?,
        "remote add",
    )?;
    let said = String::from_utf8_lossy(&plan.stdout).into_owned();
    let digest = said
        .lines()
        .find_map(|l| l.trim().strip_prefix("Plan digest: "))
        .ok_or_else(|| format!("remote add printed no plan digest:\n{said}"))?
        .to_owned();
    let settings = remote.home().join(".claude/settings.json");
    let before = std::fs::read_to_string(&settings).unwrap_or_default();
    if before.contains("hook session-start") {
        return Err(format!("applied without consent: {before}"));
    }
    checked(
        remote_cmd(
            home,
            remote.config(),
            &["add", ALIAS, "--apply", "--expect-sha256", &digest],
        )?,
        "remote add --apply",
    )?;
    let after = std::fs::read_to_string(&settings).unwrap_or_default();
    let hook = format!(
        "{} hook session-start",
        remote.home().join(PROGRAM).display()
    );
    if !after.contains(&hook) {
        return Err(format!("no `{hook}` in the remote's settings: {after}"));
    }
    say(&format!("remote add: applied plan {digest} on {ALIAS}"));
    Ok(())
}

/// The environment Claude Code runs with there, on top of the tmux server's (the remote
/// user's `HOME`, `USER`, a plain `PATH`) and tmux's own (`TMUX`, `TMUX_PANE`).
fn claude_env(claude: &Path, model_url: &str) -> Vec<(String, String)> {
    let bin = claude.parent().map(text).unwrap_or_default();
    [
        ("PATH", format!("{bin}:/usr/local/bin:/usr/bin:/bin")),
        ("LANG", "C.UTF-8".into()),
        ("COLORTERM", "truecolor".into()),
        ("ANTHROPIC_BASE_URL", model_url.into()),
        ("ANTHROPIC_API_KEY", API_KEY.into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// The first menu line for which `check` holds, within `limit`.
fn menu_line(
    desktop: &Desktop,
    what: &str,
    limit: Duration,
    check: impl Fn(&str) -> bool,
) -> Result<(i32, String), String> {
    wait_until(what, limit, || {
        desktop.menu().into_iter().find(|(_, l)| check(l))
    })
    .map_err(|e| format!("{e}; the menu: {:#?}", desktop.menu()))
}

/// When the "needs you" notification for the remote's project was asked for, if it was.
fn needs_you_notified(desktop: &Desktop, summary: &str) -> Option<f64> {
    desktop::traffic(&desktop.notify_text())
        .into_iter()
        .find_map(|t| match t {
            Traffic::Notify { summary: s, at, .. } if s == summary => Some(at),
            _ => None,
        })
}

/// The pid of the window in front (xdotool).
fn active_pid(desktop: &Desktop) -> Option<u32> {
    let out = desktop
        .command("xdotool")
        .args(["getactivewindow", "getwindowpid"])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// The whole proof; what it measured. The screenshot of the icon with its mark and the
/// notification goes to `shot`, the one after the jump (the terminal with the remote's tmux
/// in front) beside it (`…-jump.png`).
pub fn prove(
    program: &HostProgram,
    base: &Path,
    remote: &SshRemote,
    shot: &Path,
) -> Result<Measured, String> {
    let stand_in = model_stand_in::StandIn::start(model_stand_in::Options::default())
        .map_err(|e| format!("the model stand-in: {e}"))?;
    // Here: the person's own HOME, with no agent of its own; the tray notifies at once.
    let home = TestHome::new(base, program, &stand_in.url());
    let settings = home.xdg_config().join("fabric-companion/settings.json");
    std::fs::create_dir_all(settings.parent().ok_or("a folder")?).map_err(|e| e.to_string())?;
    std::fs::write(&settings, r#"{"needsYouGraceSecs": 0}"#).map_err(|e| e.to_string())?;

    // There: the person, Claude Code, Fabric; then our side, set up from here.
    let claude = claude_for_remote(program, remote)?;
    remote_person(remote)?;
    remote_add(&home, remote)?;

    let logs = base.join("remote-logs");
    let _ = std::fs::remove_dir_all(&logs);
    let config = text(remote.config());
    let mut desktop = Desktop::start_with(
        &home,
        &logs,
        &[("FABRIC_SSH_CONFIG".to_owned(), config.clone())],
    )?;
    desktop.keep("openbox", desktop.command("openbox"))?;

    let as_remote = remote.as_remote();
    let tui = Tui::start_as(
        Box::new(move || as_remote("tmux")),
        TMUX_SESSION,
        1,
        "Claude Code on the remote",
        &claude,
        &[],
        &claude_env(&claude, &stand_in.url()),
        &remote.home().join(PROJECT),
    )?;
    say(&format!(
        "remote: Claude Code in {}'s tmux ({TMUX_SESSION}), desktop {} (logs in {})",
        remote.user(),
        desktop.display,
        logs.display()
    ));

    // The remote session in the menu, with its link.
    tui.wait_for("Claude Code's input", SLOW, |s| {
        s.contains("? for shortcuts")
    })?;
    let session_line = format!("{PROJECT} · Claude Code on {ALIAS} · ");
    menu_line(&desktop, "the remote session in the menu", SLOW, |l| {
        l.starts_with(&session_line)
    })?;
    menu_line(&desktop, "the remote's link", WITHIN, |l| {
        l == format!("{ALIAS}: connected, 1 session")
    })?;

    // A permission prompt there: the mark and a notification here, within 2 s.
    let word = {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        format!("zq{nanos:x}")
    };
    std::thread::sleep(Duration::from_secs(1));
    tui.type_line(&format!("stand-in: run touch {word}-remote"));
    let prompt = "Do you want to proceed?";
    let shown = tui.wait_for("the permission prompt", SLOW, |s| s.contains(prompt))?;
    let summary = format!("{PROJECT} on {ALIAS} needs you");
    let mut to_mark = None;
    let mut to_notification = None;
    while to_mark.is_none() || to_notification.is_none() {
        if to_mark.is_none() && desktop.icon_has_mark() == Some(true) {
            to_mark = Some(shown.elapsed());
        }
        if to_notification.is_none() && needs_you_notified(&desktop, &summary).is_some() {
            to_notification = Some(shown.elapsed());
        }
        if shown.elapsed() > WITHIN {
            return Err(format!(
                "{WITHIN:?} after the prompt showed there: mark after {to_mark:?}, notification after {to_notification:?}; the menu: {:#?}; the notifications: {:?}",
                desktop.menu(),
                desktop::traffic(&desktop.notify_text())
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let measured = Measured {
        to_mark: to_mark.ok_or("set")?,
        to_notification: to_notification.ok_or("set")?,
    };
    let (session_item, waiting) = menu_line(&desktop, "needs you in the menu", WITHIN, |l| {
        l.starts_with(&format!("{session_line}needs you (permission"))
    })?;
    say(&format!("remote: the menu says {waiting:?}"));
    desktop.screenshot(shot);

    // The jump: a local terminal runs the person's ssh into the remote's tmux; another
    // window is in front, and another tmux window is selected there.
    let mut ssh_term = desktop.command("xterm");
    ssh_term
        .args([
            "-T",
            "ssh-to-remote",
            "-e",
            "ssh",
            "-F",
            &config,
            "-t",
            ALIAS,
        ])
        .args(["tmux", "attach", "-t", TMUX_SESSION]);
    let term_pid = desktop.keep("xterm-ssh", ssh_term)?;
    wait_until("the ssh terminal's window", SLOW, || {
        let out = desktop
            .command("xdotool")
            .args(["search", "--pid", &term_pid.to_string()])
            .output()
            .ok()?;
        (!out.stdout.is_empty()).then_some(())
    })?;
    let mut other = desktop.command("xterm");
    other.args(["-T", "other"]);
    let other_pid = desktop.keep("xterm-other", other)?;
    wait_until("the other terminal in front", SLOW, || {
        (active_pid(&desktop) == Some(other_pid)).then_some(())
    })?;
    checked(
        tui.tmux(&["select-window", "-t", &format!("{TMUX_SESSION}:1")]),
        "selecting another window there",
    )?;
    desktop.click(session_item);
    wait_until("the ssh terminal in front", WITHIN * 5, || {
        (active_pid(&desktop) == Some(term_pid)).then_some(())
    })
    .map_err(|e| format!("{e}: in front: {:?}", active_pid(&desktop)))?;
    let window = tui.tmux(&[
        "display-message",
        "-p",
        "-t",
        TMUX_SESSION,
        "#{window_index}",
    ]);
    let window = String::from_utf8_lossy(&window.stdout).trim().to_owned();
    if window != "0" {
        return Err(format!(
            "Claude Code's tmux window not selected there: {window}"
        ));
    }
    desktop.screenshot(&shot.with_file_name(format!(
        "{}-jump.png",
        shot.file_stem().map(|s| s.to_string_lossy()).unwrap_or_default()
    )));

    // Approved there: the wait over here, the turn finished.
    tui.keys(&["Enter"]);
    wait_until("the mark gone after the approval", WITHIN, || {
        (desktop.icon_has_mark() == Some(false)).then_some(())
    })?;
    let (_, finished) = menu_line(&desktop, "the turn finished", SLOW, |l| {
        l.starts_with(&session_line) && l.ends_with("finished")
    })
    .map_err(|e| format!("{e}; the screen:\n{}", tui.screen()))?;
    say(&format!("remote: the menu says {finished:?}"));

    // Nothing of the prompt in any file of ours, here or there.
    let theirs = [".cache", ".local/share", ".config"]
        .map(|d| remote.home().join(d).join("fabric-companion"));
    let mut ours = home.our_dirs();
    ours.extend(theirs);
    for what in [word.as_str(), "stand-in: "] {
        let found = files_holding_in(&ours, what);
        if !found.is_empty() {
            return Err(format!("{what:?} is in {found:?}"));
        }
    }
    drop(tui);
    Ok(measured)
}
