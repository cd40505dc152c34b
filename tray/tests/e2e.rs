//! End to end, on a real (virtual) desktop: Xvfb, a private D-Bus session bus, `dunst` (the
//! notification daemon), `trayer` (an XEmbed tray), `dbus-monitor`, a temporary HOME, Fabric
//! played by the stand-in, and a session made by running the real hooks from a long-lived
//! "host" process (a `bash` that outlives each hook).
//!
//! What it checks, in order: the icon embeds in trayer, grey while Fabric is down; the stable
//! copy of fabric-session is installed; with Fabric running and Claude Code wired the icon is
//! coloured; Notifications ▸ Pause 1 hour (a real click in the GTK menu) stops the next
//! notification; Resume, then a rise + Stop hook gives a `Notify` with the right text on
//! D-Bus and a changed icon; a fall to zero closes it (`CloseNotification`); Fabric's process
//! dying turns the icon grey (found on the watch-mail schedule, no file event); "Open
//! Dashboard…" starts `$FABRIC_COMPANION_BIN` detached; a second tray exits at once; Quit
//! ends the tray.
//!
//! Menu items are found by keyboard highlight (Down/Right in the real GTK menu), located in
//! a screenshot, and then clicked with the mouse. Screenshots go to `$FABRIC_E2E_SHOTS/tray/<test>`
//! (default `target/e2e-shots/tray/<test>`). Needs: xvfb, x11-utils, xdotool, imagemagick,
//! dbus (dbus-daemon, dbus-monitor, dbus-send), dunst, trayer. Linux only: it drives an X11
//! desktop.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

mod desktop;

use desktop::*;

fn differing(a: &[[u8; 3]], b: &[[u8; 3]]) -> usize {
    a.iter().zip(b).filter(|(p, q)| p != q).count()
}

/// Whether a region has no colour (every pixel r≈g≈b).
fn is_grey(pixels: &[[u8; 3]]) -> bool {
    pixels.iter().all(|[r, g, b]| {
        let (lo, hi) = (r.min(g).min(b), r.max(g).max(b));
        hi - lo <= 12
    })
}

/// Whether a region holds the icon's blue.
fn has_blue(pixels: &[[u8; 3]]) -> bool {
    pixels
        .iter()
        .filter(|[r, g, b]| *b > 180 && *r < 90 && *g < 150)
        .count()
        > 50
}

/// A stand-in for the dashboard that appends how it was started (`pid ppid sid`) to
/// `companion.started`, unless `FABRIC_E2E_COMPANION` names a real one.
fn companion_program(desktop: &Desktop) -> PathBuf {
    if let Some(real) = std::env::var_os("FABRIC_E2E_COMPANION") {
        return PathBuf::from(real);
    }
    let path = desktop.home().join("companion-standin");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho \"$$ $PPID $(ps -o sid= -p $$)\" >> '{}'\nexec sleep 600\n",
            desktop.home().join("companion.started").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The dashboard starts recorded by the stand-in: `(pid, ppid, sid)` each.
fn companion_starts(desktop: &Desktop) -> Vec<(u32, u32, u32)> {
    std::fs::read_to_string(desktop.home().join("companion.started"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let f: Vec<u32> = line
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            (f.len() == 3).then(|| (f[0], f[1], f[2]))
        })
        .collect()
}

/// Waits for start number `n` (1-based) of the dashboard, checks it is detached from the
/// tray (not its child, its own session), then closes it and waits until it has ended. The
/// real dashboard (`FABRIC_E2E_COMPANION`) is closed like a window manager's close button
/// does (WM_DELETE_WINDOW, `bench/wm_delete.py`); the stand-in gets SIGTERM.
fn expect_dashboard_start(desktop: &mut Desktop, n: usize, tray_pid: u32, what: &str) {
    let real = std::env::var_os("FABRIC_E2E_COMPANION").map(PathBuf::from);
    let (pid, ppid, sid) = match &real {
        Some(program) => wait_until(what, WAIT, || {
            processes_of(program, desktop.home()).first().copied()
        }),
        None => wait_until(what, WAIT, || companion_starts(desktop).get(n - 1).copied()),
    };
    desktop.procs.extra_pids.push(pid);
    // What the tray's GTK shell set for itself (GDK_GL=disable) is not passed on.
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    assert!(
        !environ
            .split(|b| *b == 0)
            .any(|var| var.starts_with(b"GDK_GL=") || var.starts_with(b"FABRIC_TRAY_SET_GDK_GL=")),
        "the dashboard inherited the tray's own GDK_GL"
    );
    assert_ne!(ppid, tray_pid, "the dashboard is not the tray's child");
    assert_eq!(sid, pid, "the dashboard leads its own session");
    if real.is_some() {
        let helper = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/wm_delete.py");
        let pid_text = pid.to_string();
        wait_until("the dashboard's window on screen", WAIT, || {
            let out = desktop.run("xdotool", &["search", "--onlyvisible", "--pid", &pid_text]);
            (!String::from_utf8_lossy(&out.stdout).trim().is_empty()).then_some(())
        });
        std::thread::sleep(Duration::from_secs(3));
        let _ = desktop.shot(&format!("dashboard-{n}-open"));
        wait_until(
            "the dashboard's window to take WM_DELETE_WINDOW",
            WAIT,
            || {
                let out = desktop.run("python3", &[helper.to_str().unwrap(), &pid_text]);
                out.status.success().then_some(())
            },
        );
    } else {
        // SAFETY: kill on the stand-in the tray started for us.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGTERM);
        }
    }
    wait_until("the dashboard to end", WAIT, || gone(pid).then_some(()));
}

/// Starts the tray with the watch interval at its floor (10 s: fast pid checks), the
/// dashboard's stand-in (or the real one) and fabric-session beside it as the app bundles it;
/// returns its pid and that fabric-session.
fn start_tray(desktop: &mut Desktop) -> (u32, PathBuf) {
    let companion = companion_program(desktop);
    std::fs::create_dir_all(desktop.config_dir()).unwrap();
    std::fs::write(
        desktop.config_dir().join("settings.json"),
        r#"{"watchIntervalSecs": 10}"#,
    )
    .unwrap();
    let session_bin = session_binary();
    let mut tray = desktop.command(TRAY);
    tray.env("FABRIC_COMPANION_BIN", &companion)
        .env("FABRIC_SESSION_BIN", &session_bin)
        .env(
            "FABRIC_TRAY_LOG",
            "info,rmcp=warn,notify=warn,fabric_tray=debug",
        );
    (desktop.spawn_logged("fabric-tray", tray), session_bin)
}

#[test]
fn the_tray_on_a_real_desktop() {
    if !desktop_available("the_tray_on_a_real_desktop") {
        return;
    }
    let mut desktop = Desktop::start("on-a-real-desktop", true);
    let shots = desktop.shots.clone();
    eprintln!("screenshots and logs in {}", shots.display());

    let (tray_pid, session_bin) = start_tray(&mut desktop);

    // 1. The icon embeds, grey: Fabric is down and no host is wired.
    let icon = wait_until("the tray icon to embed in trayer", WAIT, || {
        desktop.icon_rect()
    });
    eprintln!("icon at {icon:?}");
    let grey_start = desktop.shot_until("1-grey-fabric-down", icon, |px| {
        is_grey(px) && !px.is_empty()
    });
    wait_until("the stable copy of fabric-session", WAIT, || {
        (std::fs::read(desktop.stable_binary()).ok()? == std::fs::read(&session_bin).ok()?)
            .then_some(())
    });

    // A second tray exits at once, saying so.
    let second = desktop.command(TRAY).output().unwrap();
    assert!(second.status.success());
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("already running"),
        "{second:?}"
    );

    // 2. Claude Code wired (fabric registered, hooks installed by the real installer) and
    //    Fabric running with session hooks: the icon gets its colour.
    std::fs::write(
        desktop.home().join(".claude.json"),
        r#"{"mcpServers": {"fabric": {"command": "fabric-mcp", "args": ["--runner", "claude-code"]}}}"#,
    )
    .unwrap();
    // As a person does: the dry run shows the plan and its digest; the apply names that digest.
    let plan = desktop.run(
        desktop.stable_binary().to_str().unwrap(),
        &["install-host-hooks", "--host", "claude", "--json"],
    );
    assert!(
        plan.status.success(),
        "install-host-hooks dry run: {plan:?}"
    );
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    let digest = plan["digest"].as_str().unwrap().to_string();
    let install = desktop.run(
        desktop.stable_binary().to_str().unwrap(),
        &[
            "install-host-hooks",
            "--host",
            "claude",
            "--apply",
            "--expect-sha256",
            &digest,
        ],
    );
    assert!(install.status.success(), "install-host-hooks: {install:?}");
    // Fabric's process: a `sleep` we reap ourselves when it dies (a zombie still has a pid).
    let mut fabric = Command::new("sleep")
        .arg("3600")
        // Never the test's own output: a process left by a failed test must not hold the
        // pipe a runner reads (the run would wait for it for an hour).
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let fabric_pid = fabric.id();
    desktop.fake.set_unread(0);
    fabric_fake::write_hub(&desktop.fabric_dir(), &["session-hooks/1"], fabric_pid).unwrap();
    let running = desktop.shot_until("2-running-no-unread", icon, has_blue);
    assert!(differing(&grey_start.region(icon), &running.region(icon)) > 20);

    // 3. A session from the real hooks, run by a long-lived host process.
    let project = desktop.home().join("work/alpha");
    std::fs::create_dir_all(&project).unwrap();
    let mut host = Host::start(&desktop);
    let session = "e2e-session-1";
    host.hook(&desktop, "SessionStart", session, &project);
    wait_until("session.json", WAIT, || {
        desktop
            .cache_dir()
            .join("sessions")
            .join(session)
            .join("session.json")
            .is_file()
            .then_some(())
    });
    host.hook(&desktop, "Stop", session, &project);
    wait_until("the first board reading", WAIT, || {
        (board_unread(&desktop, session)? == 0).then_some(())
    });

    // 4. Pause through the real menu (the session's line comes first: it is a choice, it
    // jumps to the session); a rise then says nothing.
    desktop.choose(icon, &["Down", "Down", "Right"], "3-menu-pause-1-hour");
    wait_until("the pause in settings.json", WAIT, || {
        std::fs::read_to_string(desktop.config_dir().join("settings.json"))
            .ok()?
            .contains("notificationsPausedUntil\": \"")
            .then_some(())
    });
    desktop.fake.set_unread(2);
    host.hook(&desktop, "Stop", session, &project);
    let paused = desktop.shot_until("4-paused-two-unread", icon, |px| {
        differing(px, &running.region(icon)) > 20 && has_blue(px)
    });
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        !desktop
            .notify_text()
            .contains("unread on the project board"),
        "a notification was raised while paused:\n{}",
        desktop.notify_text()
    );

    // 5. Resume through the menu (Notifications ▸ third item); the next rise notifies.
    desktop.choose(
        icon,
        &["Down", "Down", "Right", "Down", "Down"],
        "5-menu-resume",
    );
    wait_until("the pause removed from settings.json", WAIT, || {
        let text = std::fs::read_to_string(desktop.config_dir().join("settings.json")).ok()?;
        (!text.contains("notificationsPausedUntil\": \"")).then_some(())
    });
    desktop.fake.set_unread(4);
    host.hook(&desktop, "Stop", session, &project);
    wait_until("a Notify call with the right text", WAIT, || {
        let text = desktop.notify_text();
        (text.contains("member=Notify")
            && text.contains("string \"4 unread on the project board\"")
            && text.contains("string \"alpha\""))
        .then_some(())
    });
    let four = desktop.shot_until("6-notified-four-unread", icon, |px| {
        differing(px, &paused.region(icon)) > 20
    });
    // Clicking the notification (dunst's default action) jumps to the session; its "host"
    // here has no window (and this desktop no window manager), so the tray says where the
    // session is and opens the dashboard.
    let out = desktop.run("dunstctl", &["action", "0"]);
    assert!(out.status.success(), "dunstctl action: {out:?}");
    expect_dashboard_start(
        &mut desktop,
        1,
        tray_pid,
        "the dashboard from a notification click",
    );
    assert!(has_blue(&four.region(icon)));
    assert_eq!(
        desktop
            .notify_text()
            .matches("unread on the project board")
            .count(),
        1,
        "exactly one notification"
    );

    // 6. The count falls to zero: the notification is withdrawn.
    desktop.fake.set_unread(0);
    host.hook(&desktop, "Stop", session, &project);
    wait_until("CloseNotification", WAIT, || {
        desktop
            .notify_text()
            .contains("member=CloseNotification")
            .then_some(())
    });
    desktop.shot_until("7-back-to-zero", icon, |px| {
        differing(px, &running.region(icon)) < 10
    });

    // The dashboard's "Send a test notification" drops a request file; the tray (the only
    // one that notifies) raises it once and takes the file.
    let request = desktop.cache_dir().join("requests/test-notification.json");
    std::fs::create_dir_all(request.parent().unwrap()).unwrap();
    std::fs::write(&request, "{}").unwrap();
    wait_until("the test notification", WAIT, || {
        desktop
            .notify_text()
            .contains("Test notification: unread mail on the project board")
            .then_some(())
    });
    assert!(!request.exists(), "the request is taken");

    // 7. Fabric's process dies (no file changes): grey on the watch-mail schedule.
    fabric.kill().unwrap();
    fabric.wait().unwrap();
    desktop.shot_until("8-grey-fabric-died", icon, is_grey);

    // A hook failure logged now puts the amber warning mark on the (grey) icon.
    {
        use std::io::Write;
        let now = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap();
        let mut log = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(desktop.cache_dir().join("hooks.log"))
            .unwrap();
        writeln!(log, "{now} stop claude {session} refused fenced").unwrap();
    }
    desktop.shot_until("8b-grey-with-warning", icon, |px| {
        px.iter()
            .filter(|[r, g, b]| *r > 200 && *g > 120 && *g < 200 && *b < 60)
            .count()
            > 20
    });

    // 8. Open Dashboard… starts the dashboard, detached.
    desktop.choose(icon, &["Down", "Down", "Down"], "9-menu-open-dashboard");
    expect_dashboard_start(&mut desktop, 2, tray_pid, "the dashboard from the menu");

    // 9. Quit ends the tray.
    desktop.choose(icon, &["Up"], "10-menu-quit");
    wait_until("the tray to quit", WAIT, || {
        let alive = Path::new(&format!("/proc/{tray_pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{tray_pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ");
        (!alive).then_some(())
    });
    drop(host);
}

#[test]
fn without_a_tray_host_the_dashboard_opens_once_saying_why() {
    if !desktop_available("without_a_tray_host_the_dashboard_opens_once_saying_why") {
        return;
    }
    let mut desktop = Desktop::start("without-a-tray-host", false);
    let companion = companion_program(&desktop);
    let mut tray = desktop.command(TRAY);
    tray.env("FABRIC_COMPANION_BIN", &companion);
    let tray_pid = desktop.spawn_logged("fabric-tray", tray);
    expect_dashboard_start(
        &mut desktop,
        1,
        tray_pid,
        "the dashboard instead of a tray icon",
    );
    let log = std::fs::read_to_string(desktop.shots.join("fabric-tray.log")).unwrap();
    assert!(log.contains("No system tray was found"), "{log}");
    assert!(log.contains("install a tray"), "{log}");
    // Once: the tray carries on (notifications, watch-mail) without opening it again.
    std::thread::sleep(Duration::from_secs(4));
    match std::env::var_os("FABRIC_E2E_COMPANION") {
        Some(real) => assert!(processes_of(Path::new(&real), desktop.home()).is_empty()),
        None => assert_eq!(companion_starts(&desktop).len(), 1),
    }
    assert!(Path::new(&format!("/proc/{tray_pid}")).exists());
}

/// Notifications that never nag, seen on a real desktop with a real notification daemon
/// (dunst) and D-Bus recorded by dbus-monitor: rises in two sessions within seconds make one
/// notification, replaced in place ("2 sessions · 4 unread"), never two stacked; a muted
/// project never notifies; in the quiet hours nothing is notified while the icon still
/// counts, and once they are over the next rise is. (The rule for the session being looked at needs a window manager and a terminal:
/// `hookbin/tests/focus.rs` checks what it reads, the model's tests the rule.)
#[test]
fn notifications_never_nag_on_a_real_desktop() {
    if !desktop_available("notifications_never_nag_on_a_real_desktop") {
        return;
    }
    let mut desktop = Desktop::start("never-nag", true);
    eprintln!("screenshots and logs in {}", desktop.shots.display());
    let companion = companion_program(&desktop);
    std::fs::create_dir_all(desktop.config_dir()).unwrap();
    let settings = desktop.config_dir().join("settings.json");
    std::fs::write(
        &settings,
        r#"{"watchIntervalSecs": 10, "mutedProjects": ["gamma"]}"#,
    )
    .unwrap();
    let session_bin = session_binary();
    let mut tray = desktop.command(TRAY);
    tray.env("FABRIC_COMPANION_BIN", &companion)
        .env("FABRIC_SESSION_BIN", &session_bin)
        .env(
            "FABRIC_TRAY_LOG",
            "info,rmcp=warn,notify=warn,fabric_tray=debug",
        );
    desktop.spawn_logged("fabric-tray", tray);
    let icon = wait_until("the tray icon to embed in trayer", WAIT, || {
        desktop.icon_rect()
    });
    wait_until("the stable copy of fabric-session", WAIT, || {
        desktop.stable_binary().is_file().then_some(())
    });
    let mut fabric = wire_claude_and_fabric(&desktop);

    // Four sessions, four projects, each run by its own long-lived host; a first Stop
    // reads the board at 0 for each (the baseline).
    let mut hosts = Vec::new();
    for name in ["alpha", "beta", "gamma", "delta"] {
        let project = desktop.home().join("work").join(name);
        std::fs::create_dir_all(&project).unwrap();
        let mut host = Host::start(&desktop);
        let session = format!("nag-{name}");
        host.hook(&desktop, "SessionStart", &session, &project);
        wait_until("session.json", WAIT, || {
            desktop
                .cache_dir()
                .join("sessions")
                .join(&session)
                .join("session.json")
                .is_file()
                .then_some(())
        });
        host.hook(&desktop, "Stop", &session, &project);
        wait_until("the first board reading", WAIT, || {
            (board_unread(&desktop, &session)? == 0).then_some(())
        });
        hosts.push((host, session, project));
    }
    let zero = desktop.shot_until("1-four-sessions-no-unread", icon, has_blue);

    // Mail for everyone. alpha's turn ends: its own notification. beta's ends a moment later
    // (within the 5 s): the same notification is replaced by one for both.
    desktop.fake.set_unread(2);
    {
        let (host, session, project) = &mut hosts[0];
        host.hook(&desktop, "Stop", session, project);
    }
    wait_until("alpha's notification", WAIT, || {
        notifies(&desktop.notify_text())
            .iter()
            .any(|(_, summary, body)| summary == "alpha" && body == "2 unread on the project board")
            .then_some(())
    });
    {
        let (host, session, project) = &mut hosts[1];
        host.hook(&desktop, "Stop", session, project);
    }
    wait_until("one notification for both sessions", WAIT, || {
        notifies(&desktop.notify_text())
            .last()
            .is_some_and(|(_, summary, body)| {
                summary == "2 sessions · 4 unread" && body == "alpha, beta"
            })
            .then_some(())
    });
    let calls = notifies(&desktop.notify_text());
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].0, 0, "the first is a new notification");
    assert_ne!(calls[1].0, 0, "the second replaces it in place: {calls:?}");
    let displayed = desktop.run("dunstctl", &["count", "displayed"]);
    assert_eq!(
        String::from_utf8_lossy(&displayed.stdout).trim(),
        "1",
        "dunst shows one notification"
    );
    let two_each = desktop.shot_until("2-coalesced", icon, |px| {
        differing(px, &zero.region(icon)) > 20
    });

    // gamma's project is muted: its rise is counted on the icon, never notified.
    let before = notifies(&desktop.notify_text()).len();
    {
        let (host, session, project) = &mut hosts[2];
        host.hook(&desktop, "Stop", session, project);
        wait_until("gamma's board at 2", WAIT, || {
            (board_unread(&desktop, session)? == 2).then_some(())
        });
    }
    let with_gamma = desktop.shot_until("3-muted-project-counted", icon, |px| {
        differing(px, &two_each.region(icon)) > 20
    });
    std::thread::sleep(Duration::from_secs(2));
    let after: Vec<_> = notifies(&desktop.notify_text());
    assert_eq!(after.len(), before, "a muted project notified: {after:?}");

    // Quiet hours around now (local time, an hour either side): delta's rise (delta has
    // never notified: no rate limit applies) is counted on the icon and not notified.
    let now = desktop.run("date", &["+%H:%M"]);
    let now = String::from_utf8_lossy(&now.stdout).trim().to_string();
    let (h, m) = now.split_once(':').unwrap();
    let minute: u32 = h.parse::<u32>().unwrap() * 60 + m.parse::<u32>().unwrap();
    let hhmm = |mins: u32| format!("{:02}:{:02}", (mins / 60) % 24, mins % 60);
    std::fs::write(
        &settings,
        format!(
            r#"{{"watchIntervalSecs": 10, "mutedProjects": ["gamma"], "quietHours": {{"start": "{}", "end": "{}"}}}}"#,
            hhmm((minute + 1440 - 60) % 1440),
            hhmm((minute + 60) % 1440)
        ),
    )
    .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    desktop.fake.set_unread(7);
    {
        let (host, session, project) = &mut hosts[3];
        host.hook(&desktop, "Stop", session, project);
        wait_until("delta's board at 7", WAIT, || {
            (board_unread(&desktop, session)? == 7).then_some(())
        });
    }
    desktop.shot_until("4-quiet-hours-counted", icon, |px| {
        differing(px, &with_gamma.region(icon)) > 20
    });
    std::thread::sleep(Duration::from_secs(2));
    let quiet: Vec<_> = notifies(&desktop.notify_text());
    assert_eq!(
        quiet.len(),
        before,
        "notified in the quiet hours: {quiet:?}"
    );

    // The quiet hours over (taken out of the settings), delta's next rise is notified: it was
    // the quiet hours that kept it silent.
    std::fs::write(
        &settings,
        r#"{"watchIntervalSecs": 10, "mutedProjects": ["gamma"]}"#,
    )
    .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    desktop.fake.set_unread(9);
    {
        let (host, session, project) = &mut hosts[3];
        host.hook(&desktop, "Stop", session, project);
    }
    wait_until("delta's notification after the quiet hours", WAIT, || {
        notifies(&desktop.notify_text())
            .iter()
            .any(|(_, summary, body)| summary == "delta" && body == "9 unread on the project board")
            .then_some(())
    });

    fabric.kill().unwrap();
    fabric.wait().unwrap();
    drop(hosts);
}

/// The programs of the StatusNotifierItem desktop, beside the virtual desktop's.
const SNI_PROGRAMS: [&str; 2] = ["status-notifier-watcher", "gtk-sni-tray-standalone"];

/// Whether the StatusNotifierItem host can run here (a skip says why, as for the desktop).
fn sni_host_available(test: &str) -> bool {
    desktop_available(test)
        && programs_available(
            test,
            &SNI_PROGRAMS,
            "no StatusNotifierItem host here",
            "haskell-status-notifier-item-utils, haskell-gtk-sni-tray-utils",
        )
}

impl Desktop {
    /// A real StatusNotifierWatcher and a real standalone StatusNotifierItem host (a GTK
    /// bar along the bottom edge, icons at its right end); returns the bar's rectangle.
    fn start_sni_host(&mut self) -> Rect {
        let watcher = self.command("status-notifier-watcher");
        self.spawn_logged("status-notifier-watcher", watcher);
        wait_until("the StatusNotifierWatcher on the bus", WAIT, || {
            self.name_owner("org.kde.StatusNotifierWatcher")
        });
        let mut host = self.command("gtk-sni-tray-standalone");
        host.args(["--bottom", "--end", "--size", "32"]);
        self.spawn_logged("gtk-sni-tray-standalone", host);
        wait_until("the SNI host's bar", WAIT, || {
            self.tree().lines().find_map(|line| {
                if !line.starts_with("     0x") || !line.contains("\"Gtk-sni-tray-standalone\")") {
                    return None;
                }
                let words: Vec<&str> = line.split_whitespace().collect();
                let (w, rest) = words[words.len() - 2].split_once('x')?;
                let mut xy = words[words.len() - 1].trim_start_matches('+').split('+');
                let rect = Rect {
                    x: xy.next()?.parse().ok()?,
                    y: xy.next()?.parse().ok()?,
                    w: w.parse().ok()?,
                    h: rest.split('+').next()?.parse().ok()?,
                };
                (rect.w > 500 && rect.h >= 24).then_some(rect)
            })
        })
    }

    /// The unique name of process `pid`'s connection to the session bus (the tray's item
    /// registers by its path on it and owns no well-known name).
    fn connection_of(&self, pid: u32) -> Option<String> {
        let dbus = |method: &str, arg: Option<&str>| -> String {
            let mut args = vec![
                "--session".to_string(),
                "--print-reply".into(),
                "--dest=org.freedesktop.DBus".into(),
                "/org/freedesktop/DBus".into(),
                format!("org.freedesktop.DBus.{method}"),
            ];
            args.extend(arg.map(|a| format!("string:{a}")));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            String::from_utf8_lossy(&self.run("dbus-send", &args).stdout).into_owned()
        };
        dbus("ListNames", None)
            .lines()
            .filter_map(|l| l.trim().strip_prefix("string \":"))
            .map(|rest| format!(":{}", rest.trim_end_matches('"')))
            .find(|name| {
                dbus("GetConnectionUnixProcessID", Some(name))
                    .split_whitespace()
                    .last()
                    .and_then(|n| n.parse::<u32>().ok())
                    == Some(pid)
            })
    }

    /// Whether the watcher lists the item of connection `unique` (`:1.42`, with its path
    /// or not; never `:1.420`).
    fn lists_item(&self, unique: &str) -> bool {
        self.registered_items().lines().any(|line| {
            line.trim()
                .strip_prefix("string \"")
                .and_then(|entry| entry.strip_prefix(unique))
                .is_some_and(|rest| rest.starts_with(['"', '/', '@']))
        })
    }

    /// Who owns `name` on the session bus (its unique name).
    fn name_owner(&self, name: &str) -> Option<String> {
        let out = self.run(
            "dbus-send",
            &[
                "--session",
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.GetNameOwner",
                &format!("string:{name}"),
            ],
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let owner = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("string \""))?;
        Some(owner.trim_end_matches('"').to_string())
    }

    /// The items the watcher has registered.
    fn registered_items(&self) -> String {
        let out = self.run(
            "dbus-send",
            &[
                "--session",
                "--print-reply",
                "--dest=org.kde.StatusNotifierWatcher",
                "/StatusNotifierWatcher",
                "org.freedesktop.DBus.Properties.Get",
                "string:org.kde.StatusNotifierWatcher",
                "string:RegisteredStatusNotifierItems",
            ],
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Opens the item's menu as a person does (a click on the icon in the host's bar), moves
    /// through it with the keyboard (`keys`) and takes the highlighted item with Return.
    fn choose_in_host(&self, icon: Rect, keys: &[&str], name: &str) {
        // The host's visible windows: its bar, and its menus while they are open.
        let popups = |desktop: &Desktop| {
            let out = desktop.run(
                "xdotool",
                &[
                    "search",
                    "--onlyvisible",
                    "--class",
                    "Gtk-sni-tray-standalone",
                ],
            );
            String::from_utf8_lossy(&out.stdout).lines().count()
        };
        let before = popups(self);
        let (cx, cy) = icon.center();
        self.click(cx, cy);
        wait_until("the item's menu", WAIT, || {
            (popups(self) > before).then_some(())
        });
        std::thread::sleep(Duration::from_millis(500));
        for key in keys {
            self.xdotool(&["key", key]);
            std::thread::sleep(Duration::from_millis(300));
        }
        let _ = self.shot(name);
        self.xdotool(&["key", "Return"]);
        wait_until("the menu to close", WAIT, || {
            (popups(self) <= before).then_some(())
        });
    }
}

/// The icon inside the host's bar: the bounding box of what is not the bar's black.
fn icon_in_bar(shot: &Shot, bar: Rect) -> Option<Rect> {
    let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0, 0);
    for y in bar.y..bar.y + bar.h {
        for x in bar.x..bar.x + bar.w {
            if shot.px(x, y).iter().any(|c| *c > 40) {
                x0 = x0.min(x);
                y0 = y0.min(y);
                x1 = x1.max(x);
                y1 = y1.max(y);
            }
        }
    }
    (x0 != u32::MAX && x1 >= x0 + 15 && y1 >= y0 + 15).then(|| Rect {
        x: x0,
        y: y0,
        w: x1 - x0 + 1,
        h: y1 - y0 + 1,
    })
}

/// The GTK-free path (issue 13): where a StatusNotifierWatcher runs, `fabric-tray` is a
/// StatusNotifierItem with a dbusmenu menu on the session bus, drawn by a real SNI host
/// (`gtk-sni-tray-standalone`, with Debian's `status-notifier-watcher`), and loads no GTK.
/// The icon appears grey, turns blue and shows the count as it changes; the notification
/// goes out on the same bus connection as the item; the menu's items work when a person
/// clicks the icon and picks them (Notifications ▸ Pause 1 hour, Open Dashboard…, Quit);
/// after Quit the item is gone from the watcher.
#[test]
fn the_tray_as_a_status_notifier_item() {
    if !sni_host_available("the_tray_as_a_status_notifier_item") {
        return;
    }
    let mut desktop = Desktop::start("as-a-status-notifier-item", false);
    eprintln!("screenshots and logs in {}", desktop.shots.display());
    let bar = desktop.start_sni_host();
    let (tray_pid, session_bin) = start_tray(&mut desktop);

    // 1. The item registers (by its path on the tray's connection); the process is
    //    fabric-tray itself and no GTK is loaded.
    let item_name = wait_until("the tray's connection", WAIT, || {
        desktop.connection_of(tray_pid)
    });
    wait_until("the item registered with the watcher", WAIT, || {
        desktop.lists_item(&item_name).then_some(())
    });
    let exe = std::fs::read_link(format!("/proc/{tray_pid}/exe")).unwrap();
    assert_eq!(exe.file_name().unwrap(), "fabric-tray", "{exe:?}");
    let maps = std::fs::read_to_string(format!("/proc/{tray_pid}/maps")).unwrap();
    for library in [
        "libgtk",
        "libgdk",
        "libwebkit",
        "libappindicator",
        "libayatana",
    ] {
        assert!(
            !maps.contains(library),
            "{library} is loaded on the item path"
        );
    }
    let icon = wait_until("the icon in the host's bar", WAIT, || {
        icon_in_bar(&desktop.shot("1-grey-item"), bar)
    });
    eprintln!("icon at {icon:?}");
    desktop.shot_until("1-grey-item", icon, is_grey);
    wait_until("the stable copy of fabric-session", WAIT, || {
        (std::fs::read(desktop.stable_binary()).ok()? == std::fs::read(&session_bin).ok()?)
            .then_some(())
    });

    // 2. Fabric running, Claude Code wired: blue.
    let mut fabric = wire_claude_and_fabric(&desktop);
    let running = desktop.shot_until("2-blue-no-unread", icon, has_blue);

    // 3. A session; its count rises to 3: the count is drawn and a notification goes out,
    //    from the very connection that owns the item's name.
    let project = desktop.home().join("work/alpha");
    std::fs::create_dir_all(&project).unwrap();
    let mut host = Host::start(&desktop);
    let session = "sni-session-1";
    host.hook(&desktop, "SessionStart", session, &project);
    host.hook(&desktop, "Stop", session, &project);
    wait_until("the first board reading", WAIT, || {
        (board_unread(&desktop, session)? == 0).then_some(())
    });
    desktop.fake.set_unread(3);
    host.hook(&desktop, "Stop", session, &project);
    let three = desktop.shot_until("3-three-unread", icon, |px| {
        differing(px, &running.region(icon)) > 20 && has_blue(px)
    });
    wait_until("a Notify for the rise", WAIT, || {
        notifies(&desktop.notify_text())
            .iter()
            .any(|(_, summary, body)| format!("{summary} {body}").contains("3 unread"))
            .then_some(())
    });
    let owner = &item_name;
    let notify_call = desktop
        .notify_text()
        .lines()
        .find(|l| l.contains("member=Notify"))
        .map(str::to_string)
        .unwrap();
    assert!(
        notify_call.contains(&format!("sender={owner} ")),
        "the notification came from another connection than the item's ({owner}): {notify_call}"
    );
    // A new count changes the pixels again.
    desktop.fake.set_unread(12);
    host.hook(&desktop, "Stop", session, &project);
    desktop.shot_until("4-twelve-unread", icon, |px| {
        differing(px, &three.region(icon)) > 20 && has_blue(px)
    });

    // 4. The menu, as a person uses it. From the bottom: Quit, Open hook log, Open
    //    Dashboard…, Notifications ▸ (disabled lines are skipped by the keyboard).
    desktop.choose_in_host(
        icon,
        &["Up", "Up", "Up", "Up", "Right"],
        "5-menu-pause-1-hour",
    );
    wait_until("the pause in settings.json", WAIT, || {
        std::fs::read_to_string(desktop.config_dir().join("settings.json"))
            .ok()?
            .contains("notificationsPausedUntil\": \"")
            .then_some(())
    });
    desktop.choose_in_host(icon, &["Up", "Up", "Up"], "6-menu-open-dashboard");
    expect_dashboard_start(
        &mut desktop,
        1,
        tray_pid,
        "the dashboard from the item's menu",
    );
    desktop.choose_in_host(icon, &["Up"], "7-menu-quit");
    wait_until("the tray to quit", WAIT, || gone(tray_pid).then_some(()));
    wait_until("the item gone from the watcher", WAIT, || {
        (!desktop.lists_item(&item_name)).then_some(())
    });
    let _ = fabric.kill();
    let _ = fabric.wait();
    drop(host);
}

/// Issue 22, item 4: dunst reads a notification's body as markup (its capabilities say
/// `body-markup`), and the body of a notification for several sessions names their
/// projects: folders named `a&b` and `<x>` made a body dunst could not parse (shown wrong,
/// or lost). The tray now escapes the body for such a server: what dunst is sent is the
/// escaped text, which it shows as written.
#[test]
fn project_names_reach_a_markup_notification_server_as_written() {
    let test = "project_names_reach_a_markup_notification_server_as_written";
    if !desktop_available(test) {
        return;
    }
    let mut desktop = Desktop::start("markup", true);
    let companion = companion_program(&desktop);
    std::fs::create_dir_all(desktop.config_dir()).unwrap();
    std::fs::write(
        desktop.config_dir().join("settings.json"),
        r#"{"watchIntervalSecs": 10}"#,
    )
    .unwrap();
    let mut tray = desktop.command(TRAY);
    tray.env("FABRIC_COMPANION_BIN", &companion)
        .env("FABRIC_SESSION_BIN", session_binary())
        .env(
            "FABRIC_TRAY_LOG",
            "info,rmcp=warn,notify=warn,fabric_tray=debug",
        );
    desktop.spawn_logged("fabric-tray", tray);
    wait_until("the stable copy of fabric-session", WAIT, || {
        desktop.stable_binary().is_file().then_some(())
    });
    let fabric = wire_claude_and_fabric(&desktop);
    let mut hosts = Vec::new();
    for (name, session) in [("a&b", "markup-amp"), ("<x>", "markup-lt")] {
        let project = desktop.home().join("work").join(name);
        std::fs::create_dir_all(&project).unwrap();
        let mut host = Host::start(&desktop);
        host.hook(&desktop, "SessionStart", session, &project);
        host.hook(&desktop, "Stop", session, &project);
        wait_until("the first board reading", WAIT, || {
            (board_unread(&desktop, session)? == 0).then_some(())
        });
        hosts.push((host, session, project));
    }
    desktop.fake.set_unread(2);
    for (host, session, project) in &mut hosts {
        host.hook(&desktop, "Stop", session, project);
    }
    wait_until("one notification for both sessions", WAIT, || {
        notifies(&desktop.notify_text())
            .iter()
            .any(|(_, summary, _)| summary == "2 sessions · 4 unread")
            .then_some(())
    });
    let calls = notifies(&desktop.notify_text());
    let (_, _, body) = calls
        .iter()
        .rev()
        .find(|(_, summary, _)| summary == "2 sessions · 4 unread")
        .unwrap();
    assert_eq!(body, "a&amp;b, &lt;x&gt;", "{calls:?}");
    drop(hosts);
    drop(fabric);
}
