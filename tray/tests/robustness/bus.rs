//! The session bus itself: a NUL from outside, the bus going away and coming back, a flood of
//! ids, a huge watch interval.

use super::*;

/// Field `n` after the command in `/proc/<pid>/stat` (1: the parent, 2: the group).
fn stat_field(pid: u32, n: usize) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    rest.split_whitespace().nth(n)?.parse().ok()
}

pub(super) fn parent_of(pid: u32) -> Option<u32> {
    stat_field(pid, 1)
}

pub(super) fn group_of(pid: u32) -> Option<u32> {
    stat_field(pid, 2)
}

#[test]
fn a_nul_from_outside_never_cuts_the_tray_off_the_bus() {
    let test = "a_nul_from_outside_never_cuts_the_tray_off_the_bus";
    if !available(test) {
        return;
    }
    let mut desktop = Desktop::start("nul-from-outside", false);
    start_watcher(&mut desktop);
    let tray = start_tray(&mut desktop);
    let client = Client::new(&desktop.bus);
    let item = item_name(&client, tray);
    wait_until("the item's menu", WAIT, || item_answers(&client, tray));
    let owner = client.owner(&item).unwrap();
    // hub.json's origin comes from outside; this one carries a NUL and an escape.
    let sleeper = std::process::Command::new("sleep")
        .arg("600")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut hub = fabric_fake::files::Hub::new(sleeper.id());
    hub.origin = "http://127.0.0.1:47070\u{0}\u{1b}[2Jevil".into();
    hub.write(&desktop.fabric_dir()).unwrap();
    let line = wait_until("the Fabric line with the new origin", WAIT, || {
        client
            .menu(&item)
            .ok()?
            .into_iter()
            .map(|(_, label)| label)
            .find(|label| label.contains("evil"))
    });
    assert_eq!(line, "Fabric: running at http://127.0.0.1:47070[2Jevil");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(
        client.owner(&item).as_deref(),
        Some(owner.as_str()),
        "the tray's connection was dropped"
    );
    assert!(item_answers(&client, tray).is_some());
    let mut sleeper = sleeper;
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

#[test]
fn the_tray_connects_again_when_the_bus_comes_back() {
    let test = "the_tray_connects_again_when_the_bus_comes_back";
    if !available(test) {
        return;
    }
    let mut desktop = Desktop::start_bare("bus-comes-back");
    // A bus at a fixed place, as a session's bus is: it can go away and come back there.
    let socket = desktop.home().join("run/bus");
    let address = format!("unix:path={}", socket.display());
    let start_bus = |desktop: &mut Desktop| {
        let mut daemon = desktop.command("dbus-daemon");
        daemon.args(["--session", "--nofork", &format!("--address={address}")]);
        let pid = desktop.spawn_logged("dbus-daemon-fixed", daemon);
        wait_until("the fixed bus", WAIT, || socket.exists().then_some(()));
        pid
    };
    let first = start_bus(&mut desktop);
    desktop.bus = address.clone();
    start_watcher(&mut desktop);
    let tray = start_tray(&mut desktop);
    let registered = |client: &Client| -> Option<()> {
        let item = tray_connection(client, tray)?;
        let items: OwnedValue = client
            .call(
                "org.kde.StatusNotifierWatcher",
                "/StatusNotifierWatcher",
                "org.freedesktop.DBus.Properties",
                "Get",
                &(
                    "org.kde.StatusNotifierWatcher",
                    "RegisteredStatusNotifierItems",
                ),
            )
            .ok()?;
        let items: Vec<String> = items.try_into().ok()?;
        items.iter().any(|i| i.starts_with(&item)).then_some(())
    };
    {
        let client = Client::new(&address);
        wait_until("the item registered", WAIT, || registered(&client));
    }
    // The bus daemon goes away (and with it the watcher), then comes back at the same place.
    // SAFETY: signals to processes this test started.
    unsafe {
        libc::kill(first as libc::pid_t, libc::SIGKILL);
    }
    wait_until("the bus gone", WAIT, || gone(first).then_some(()));
    let _ = std::fs::remove_file(&socket);
    std::thread::sleep(Duration::from_secs(1));
    start_bus(&mut desktop);
    start_watcher(&mut desktop);
    let client = Client::new(&address);
    wait_until(
        "the tray back on the new bus, registered",
        Duration::from_secs(60),
        || registered(&client),
    );
    assert!(item_answers(&client, tray).is_some());
    assert!(!gone(tray));
}

#[test]
fn a_flood_of_ids_is_refused_and_the_tray_stays_small() {
    let test = "a_flood_of_ids_is_refused_and_the_tray_stays_small";
    if !available(test) {
        return;
    }
    let mut desktop = Desktop::start_bare("flood-of-ids");
    start_watcher(&mut desktop);
    let tray = start_tray(&mut desktop);
    let client = Client::new(&desktop.bus);
    let item = item_name(&client, tray);
    wait_until("the item's menu", WAIT, || item_answers(&client, tray));
    let quit = client.id_of(&item, "Quit").unwrap();
    let flood = vec![quit; 4_000_000];
    let answer: zbus::Result<Vec<(i32, HashMap<String, OwnedValue>)>> = client.call(
        &item,
        "/MenuBar",
        "com.canonical.dbusmenu",
        "GetGroupProperties",
        &(flood.clone(), Vec::<String>::new()),
    );
    assert!(answer.is_err(), "a flood of ids is refused");
    let events: Vec<(i32, &str, Value<'_>, u32)> = (0..100_000)
        .map(|_| (quit, "clicked", Value::from(0i32), 0u32))
        .collect();
    let pressed: zbus::Result<Vec<i32>> = client.call(
        &item,
        "/MenuBar",
        "com.canonical.dbusmenu",
        "EventGroup",
        &(events,),
    );
    assert!(pressed.is_err(), "a flood of events is refused");
    assert!(!gone(tray), "nothing was pressed");
    let rss_kb: u64 = std::fs::read_to_string(format!("/proc/{tray}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    assert!(rss_kb < 200 * 1024, "the tray grew to {rss_kb} kB");
    assert!(item_answers(&client, tray).is_some());
}

#[test]
fn a_huge_watch_interval_never_takes_the_icon_away() {
    let test = "a_huge_watch_interval_never_takes_the_icon_away";
    if !available(test) {
        return;
    }
    let mut desktop = Desktop::start("huge-interval", false);
    start_watcher(&mut desktop);
    let tray = start_tray_with(
        &mut desktop,
        r#"{"watchIntervalSecs": 18446744073709551615}"#,
        &[],
    );
    let client = Client::new(&desktop.bus);
    wait_until("the item's menu", WAIT, || item_answers(&client, tray));
    // Fabric running (its pid is checked on the interval) and a session to watch.
    let fabric = wire_claude_and_fabric(&desktop);
    let project = desktop.home().join("work/alpha");
    std::fs::create_dir_all(&project).unwrap();
    let mut host = Host::start(&desktop);
    host.hook(&desktop, "SessionStart", "huge-interval", &project);
    wait_until("the session's line", WAIT, || {
        client.id_of(&item_name(&client, tray), "alpha ·")
    });
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        item_answers(&client, tray).is_some(),
        "the item vanished; log:\n{}",
        log_of(&desktop, "fabric-tray")
    );
    assert!(!log_of(&desktop, "fabric-tray").contains("panicked"));
    drop(host);
    drop(fabric);
}
