//! The tray on an XEmbed desktop (trayer, dunst): its icon, menu, notifications and dashboard;
//! without a tray host; notifications that never nag.

use super::*;

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
