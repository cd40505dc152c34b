//! Peers that misbehave: a silent watcher and notification server, a menu that changes before a
//! click comes back; and the signals that end the tray and every child.

use super::bus::{group_of, parent_of};
use super::*;

#[test]
fn a_silent_watcher_and_notification_server_never_keep_the_icon_away_or_quit_waiting() {
    let test = "a_silent_watcher_and_notification_server_never_keep_the_icon_away_or_quit_waiting";
    if !available(test) {
        return;
    }
    let mut desktop = Desktop::start_bare("silent-peer");
    let asked = start_silent_peer(&desktop.bus);
    register_fabric_without_hooks(&desktop);
    let tray = start_tray(&mut desktop);
    let client = Client::new(&desktop.bus);
    // The item is served although the watcher never answered its registration and the
    // offer's notification never came back (both took 25 s each before).
    wait_until(
        "the item's menu on the bus",
        Duration::from_secs(12),
        || item_answers(&client, tray),
    );
    wait_until("the registration and the offer asked", WAIT, || {
        let asked = asked.lock().unwrap();
        (asked.iter().any(|a| a.starts_with("register "))
            && asked.iter().any(|a| a.starts_with("notify ")))
        .then_some(())
    });
    let quit = client.id_of(&item_name(&client, tray), "Quit").unwrap();
    client.click(&item_name(&client, tray), quit).unwrap();
    assert!(
        ends_within(tray, Duration::from_secs(5)),
        "Quit waited on a silent peer; log:\n{}",
        log_of(&desktop, "fabric-tray")
    );
}

#[test]
fn a_click_after_the_menu_changed_runs_what_the_person_saw_or_nothing() {
    let test = "a_click_after_the_menu_changed_runs_what_the_person_saw_or_nothing";
    if !available(test) {
        return;
    }
    let mut desktop = Desktop::start("menu-changed", false);
    start_watcher(&mut desktop);
    let tray = start_tray(&mut desktop);
    let fabric = wire_claude_and_fabric(&desktop);
    let client = Client::new(&desktop.bus);
    let item = item_name(&client, tray);
    wait_until("the item's menu", WAIT, || item_answers(&client, tray));
    let project = desktop.home().join("work/alpha");
    std::fs::create_dir_all(&project).unwrap();
    let mut host = Host::start(&desktop);
    host.hook(&desktop, "SessionStart", "menu-session-1", &project);
    let session = wait_until("the session's line", WAIT, || {
        client.id_of(&item, "alpha ·")
    });
    // The host drew this menu: its "Pause 1 hour" and the session's line.
    let pause = client.id_of(&item, "Pause 1 hour").unwrap();
    let before = client.menu(&item).unwrap();
    // A second session appears above the actions before the click comes back.
    let mut other = Host::start(&desktop);
    let beta = desktop.home().join("work/beta");
    std::fs::create_dir_all(&beta).unwrap();
    other.hook(&desktop, "SessionStart", "menu-session-2", &beta);
    wait_until("the second session's line", WAIT, || {
        client.id_of(&item, "beta ·")
    });
    assert_ne!(client.menu(&item).unwrap(), before, "the menu changed");
    client.click(&item, pause).unwrap();
    let settings = wait_until("the pause in settings.json", WAIT, || {
        let text = std::fs::read_to_string(desktop.config_dir().join("settings.json")).ok()?;
        text.contains("notificationsPausedUntil\": \"")
            .then_some(text)
    });
    let until: serde_json::Value = serde_json::from_str(&settings).unwrap();
    let until = until["notificationsPausedUntil"]
        .as_str()
        .unwrap()
        .to_string();
    let paused = fabric_tray::clock::parse_rfc3339(&until).unwrap();
    let now = fabric_tray::clock::now_unix();
    assert!(
        (now + 3500..=now + 3700).contains(&paused),
        "the click ran another item than \"Pause 1 hour\": paused until {until}"
    );
    // The first session ends: a click on its old line does nothing (no jump, no other item).
    drop(host);
    wait_until("the ended session pruned from the menu", WAIT, || {
        // Any change in our folders makes the tray look again (and prune the ended session).
        let poke = desktop.cache_dir().join("sessions/poke");
        let _ = std::fs::write(&poke, b"");
        let _ = std::fs::remove_file(&poke);
        std::thread::sleep(Duration::from_millis(300));
        client.id_of(&item, "alpha ·").is_none().then_some(())
    });
    assert!(
        client.click(&item, session).is_err(),
        "an id no longer in the menu"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert!(!gone(tray), "the tray runs on");
    let log = log_of(&desktop, "fabric-tray");
    assert!(!log.contains("jumped to the session"), "{log}");
    drop(other);
    drop(fabric);
}

#[test]
fn sigterm_sigint_and_sighup_end_the_tray_and_every_child() {
    let test = "sigterm_sigint_and_sighup_end_the_tray_and_every_child";
    if !available(test) {
        return;
    }
    for (signal, name) in [
        (libc::SIGTERM, "sigterm"),
        (libc::SIGINT, "sigint"),
        (libc::SIGHUP, "sighup"),
    ] {
        let mut desktop = Desktop::start(&format!("signal-{name}"), false);
        start_watcher(&mut desktop);
        let tray = start_tray(&mut desktop);
        let fabric = wire_claude_and_fabric(&desktop);
        // Every look at the board hangs, and its stand-in leaves a child in its group.
        desktop.fake.set_mode("hang");
        desktop.fake.set_leave_child();
        let project = desktop.home().join("work/alpha");
        std::fs::create_dir_all(&project).unwrap();
        let mut host = Host::start(&desktop);
        host.hook(
            &desktop,
            "SessionStart",
            &format!("signal-{name}"),
            &project,
        );
        // The tray's watch engine looks at the idle session: a fabric-mcp in flight.
        let (look, child) = wait_until("a look in flight with its child", WAIT, || {
            let starts = desktop.fake.starts();
            let look = starts
                .iter()
                .filter_map(|s| s["pid"].as_u64())
                .map(|p| p as u32)
                .find(|&pid| !gone(pid) && parent_of(pid) == Some(tray))?;
            // Its child: in the look's process group.
            let child = desktop
                .fake
                .children()
                .into_iter()
                .find(|&c| !gone(c) && group_of(c) == Some(look))?;
            Some((look, child))
        });
        // SAFETY: a signal to the tray we started.
        unsafe {
            libc::kill(tray as libc::pid_t, signal);
        }
        assert!(
            ends_within(tray, Duration::from_secs(5)),
            "{name}: the tray did not end; log:\n{}",
            log_of(&desktop, "fabric-tray")
        );
        assert!(
            ends_within(look, Duration::from_secs(3)) && ends_within(child, Duration::from_secs(3)),
            "{name}: the look's fabric-mcp ({look}) or its child ({child}) outlived the tray"
        );
        drop(host);
        drop(fabric);
    }
}
