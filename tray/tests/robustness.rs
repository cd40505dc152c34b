//! The tray holds up against what other programs do to it on the session bus and through
//! signals (issue 21): a tray host or notification server that takes calls and never
//! answers, a menu that changes between a host drawing it and a click coming back, a NUL
//! from outside, a bus daemon that goes away and comes back, a flood of ids, a huge watch
//! interval, a tmux that hangs, and SIGTERM, SIGINT or SIGHUP with a look in flight.
//!
//! Each test runs the real `fabric-tray` on a private session bus (and Xvfb, where the tray
//! wants a display) and speaks to it over D-Bus as a host would (zbus on a runtime of the
//! test's own). Linux only.
#![cfg(target_os = "linux")]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zbus::{OwnedVariant as OwnedValue, Variant as Value};

mod desktop;

use desktop::*;

/// The programs these tests need besides the virtual desktop's.
const PROGRAMS: [&str; 3] = ["status-notifier-watcher", "openbox", "xterm"];

fn available(test: &str) -> bool {
    desktop_available(test)
        && programs_available(
            test,
            &PROGRAMS,
            "no StatusNotifierWatcher here",
            "haskell-status-notifier-item-utils, openbox, xterm",
        )
}

/// Runs `future` on a runtime of its own (the test's D-Bus calls).
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// The test's own connection to the desktop's bus, and calls on the tray's menu.
struct Client {
    runtime: tokio::runtime::Runtime,
    bus: zbus::Connection,
}

impl Client {
    fn new(address: &str) -> Client {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let bus = runtime.block_on(async {
            zbus::connection::Builder::address(address)
                .method_timeout(Duration::from_secs(10))
                .build()
                .await
                .unwrap()
        });
        Client { runtime, bus }
    }

    fn call<B, R>(
        &self,
        dest: &str,
        path: &str,
        iface: &str,
        method: &str,
        body: &B,
    ) -> zbus::Result<R>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
        R: for<'d> zbus::zvariant::DynamicDeserialize<'d>,
    {
        self.runtime.block_on(async {
            let reply = self
                .bus
                .call_method(Some(dest), path, Some(iface), method, body)
                .await?;
            reply.body().deserialize::<R>()
        })
    }

    /// The menu's items as a host reads them: `(id, label)` of every labelled item.
    fn menu(&self, item: &str) -> zbus::Result<Vec<(i32, String)>> {
        let all: Vec<(i32, HashMap<String, OwnedValue>)> = self.call(
            item,
            "/MenuBar",
            "com.canonical.dbusmenu",
            "GetGroupProperties",
            &(Vec::<i32>::new(), vec!["label".to_string()]),
        )?;
        Ok(all
            .into_iter()
            .filter_map(|(id, props)| {
                let label = props.get("label")?;
                Some((id, String::try_from(label.try_clone().ok()?).ok()?))
            })
            .collect())
    }

    /// The id of the first item whose label starts with `label`.
    fn id_of(&self, item: &str, label: &str) -> Option<i32> {
        self.menu(item)
            .ok()?
            .into_iter()
            .find(|(_, l)| l.starts_with(label))
            .map(|(id, _)| id)
    }

    /// A click on item `id`, as a host sends it.
    fn click(&self, item: &str, id: i32) -> zbus::Result<()> {
        self.call::<_, ()>(
            item,
            "/MenuBar",
            "com.canonical.dbusmenu",
            "Event",
            &(id, "clicked", Value::from(0i32), 0u32),
        )
    }

    fn owner(&self, name: &str) -> Option<String> {
        self.call::<_, String>(
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "GetNameOwner",
            &(name,),
        )
        .ok()
    }
}

/// The tray's item on the bus: the unique name of process `pid`'s connection (the item
/// registers by its path on that name and owns no well-known one), once it is there.
fn item_name(client: &Client, pid: u32) -> String {
    wait_until("the tray's connection on the bus", WAIT, || {
        tray_connection(client, pid)
    })
}

/// The unique name of process `pid`'s connection, if it has one now.
fn tray_connection(client: &Client, pid: u32) -> Option<String> {
    let names: Vec<String> = client
        .call(
            "org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus",
            "ListNames",
            &(),
        )
        .unwrap_or_default();
    names
        .into_iter()
        .filter(|name| name.starts_with(':'))
        .find(|name| {
            client
                .call::<_, u32>(
                    "org.freedesktop.DBus",
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus",
                    "GetConnectionUnixProcessID",
                    &(name.as_str(),),
                )
                .is_ok_and(|p| p == pid)
        })
}

/// Starts the tray with the watch interval at its floor; its log is `fabric-tray.log` in the
/// test's folder.
fn start_tray(desktop: &mut Desktop) -> u32 {
    start_tray_with(desktop, r#"{"watchIntervalSecs": 10}"#, &[])
}

fn start_tray_with(desktop: &mut Desktop, settings: &str, env: &[(&str, &str)]) -> u32 {
    std::fs::create_dir_all(desktop.config_dir()).unwrap();
    std::fs::write(desktop.config_dir().join("settings.json"), settings).unwrap();
    let mut tray = desktop.command(TRAY);
    tray.env("FABRIC_COMPANION_BIN", "/bin/true")
        .env("RUST_BACKTRACE", "1")
        .env("FABRIC_SESSION_BIN", session_binary())
        .env(
            "FABRIC_TRAY_LOG",
            "info,rmcp=warn,notify=warn,fabric_tray=debug",
        );
    for (key, value) in env {
        tray.env(key, value);
    }
    let pid = desktop.spawn_logged("fabric-tray", tray);
    // Hooks run the stable copy the tray installs as it starts.
    wait_until("the stable copy of fabric-session", WAIT, || {
        desktop.stable_binary().is_file().then_some(())
    });
    pid
}

fn start_watcher(desktop: &mut Desktop) -> u32 {
    let watcher = desktop.command("status-notifier-watcher");
    let pid = desktop.spawn_logged("status-notifier-watcher", watcher);
    let client = Client::new(&desktop.bus);
    wait_until("the StatusNotifierWatcher on the bus", WAIT, || {
        client.owner("org.kde.StatusNotifierWatcher")
    });
    pid
}

/// The tray's item is on the bus and answers for its menu.
fn item_answers(client: &Client, pid: u32) -> Option<()> {
    client.id_of(&item_name(client, pid), "Quit").map(drop)
}

/// Waits at most `limit` for `pid` to end (a bound on a liveness promise, not a speed
/// measure: the promise is "a second or two", the bound is generous).
fn ends_within(pid: u32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    gone(pid)
}

fn log_of(desktop: &Desktop, name: &str) -> String {
    std::fs::read_to_string(desktop.shots.join(format!("{name}.log"))).unwrap_or_default()
}

/// What the silent peer was asked.
type Asked = Arc<Mutex<Vec<String>>>;

struct SilentWatcher(Asked);

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl SilentWatcher {
    async fn register_status_notifier_item(&self, service: String) {
        self.0.lock().unwrap().push(format!("register {service}"));
        std::future::pending::<()>().await
    }
}

struct SilentNotifications(Asked);

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl SilentNotifications {
    #[allow(clippy::too_many_arguments)]
    async fn notify(
        &self,
        _app: String,
        _replaces: u32,
        _icon: String,
        summary: String,
        _body: String,
        _actions: Vec<String>,
        _hints: HashMap<String, OwnedValue>,
        _timeout: i32,
    ) -> u32 {
        self.0.lock().unwrap().push(format!("notify {summary}"));
        std::future::pending::<u32>().await
    }

    async fn close_notification(&self, _id: u32) {
        self.0.lock().unwrap().push("close".into());
        std::future::pending::<()>().await
    }
}

/// A peer that owns the watcher's and the notification server's names, takes every call and
/// never answers one. Lives on a thread of its own until the test ends.
fn start_silent_peer(address: &str) -> Asked {
    let asked: Asked = Arc::default();
    let theirs = Arc::clone(&asked);
    let address = address.to_string();
    let (ready_tx, ready) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        block_on(async move {
            let bus = zbus::connection::Builder::address(address.as_str())
                .serve_at("/StatusNotifierWatcher", SilentWatcher(Arc::clone(&theirs)))
                .serve_at(
                    "/org/freedesktop/Notifications",
                    SilentNotifications(Arc::clone(&theirs)),
                )
                .name("org.kde.StatusNotifierWatcher")
                .name("org.freedesktop.Notifications")
                .build()
                .await
                .unwrap();
            ready_tx.send(()).unwrap();
            let _keep = bus;
            std::future::pending::<()>().await
        })
    });
    ready
        .recv_timeout(WAIT)
        .expect("the silent peer on the bus");
    asked
}

/// `fabric` registered for Claude Code and none of our hooks: the tray offers the hooks in a
/// notification as it starts (before the item existed, that notification once kept the icon
/// away).
fn register_fabric_without_hooks(desktop: &Desktop) {
    std::fs::write(
        desktop.home().join(".claude.json"),
        r#"{"mcpServers": {"fabric": {"command": "fabric-mcp", "args": ["--runner", "claude-code"]}}}"#,
    )
    .unwrap();
}

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

/// Field `n` after the command in `/proc/<pid>/stat` (1: the parent, 2: the group).
fn stat_field(pid: u32, n: usize) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    rest.split_whitespace().nth(n)?.parse().ok()
}

fn parent_of(pid: u32) -> Option<u32> {
    stat_field(pid, 1)
}

fn group_of(pid: u32) -> Option<u32> {
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

/// How long the hanging `tmux` sleeps: a number no other process of these tests sleeps.
const HANG: &str = "7777.5";

/// A `tmux` that never answers, first on `PATH`.
fn hanging_tmux(dir: &Path) -> PathBuf {
    let bin = dir.join("hanging-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let tmux = bin.join("tmux");
    std::fs::write(&tmux, format!("#!/bin/sh\nexec sleep {HANG}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tmux, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

#[test]
fn a_hanging_tmux_never_freezes_the_menu() {
    let test = "a_hanging_tmux_never_freezes_the_menu";
    if !available(test) {
        return;
    }
    let mut desktop = Desktop::start("hanging-tmux", false);
    start_watcher(&mut desktop);
    let bin = hanging_tmux(desktop.home());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let tray = start_tray_with(
        &mut desktop,
        r#"{"watchIntervalSecs": 10}"#,
        &[("PATH", &path)],
    );
    let client = Client::new(&desktop.bus);
    let item = item_name(&client, tray);
    wait_until("the item's menu", WAIT, || item_answers(&client, tray));
    let fabric = wire_claude_and_fabric(&desktop);
    // A window manager and a terminal in front: the tray asks who the person is looking at.
    let mut wm = desktop.command("openbox");
    wm.arg("--sm-disable");
    desktop.spawn_logged("openbox", wm);
    wait_until("openbox's EWMH check window", WAIT, || {
        let out = desktop.run("xprop", &["-root", "_NET_SUPPORTING_WM_CHECK"]);
        String::from_utf8_lossy(&out.stdout)
            .contains("window id")
            .then_some(())
    });
    let mut xterm = desktop.command("xterm");
    xterm.args(["-e", "sleep", "600"]);
    let xterm = desktop.spawn_logged("xterm", xterm);
    wait_until("the terminal active", WAIT, || {
        let out = desktop.run(
            "xdotool",
            &["search", "--pid", &xterm.to_string(), "windowactivate"],
        );
        let active = desktop.run("xprop", &["-root", "_NET_ACTIVE_WINDOW"]);
        let text = String::from_utf8_lossy(&active.stdout).into_owned();
        let hex = text
            .rsplit("# ")
            .next()?
            .trim()
            .trim_start_matches("0x")
            .to_string();
        (out.status.success() && u64::from_str_radix(&hex, 16).ok()? != 0).then_some(())
    });
    // A session inside "tmux" with unread mail: the tray asks tmux whether its pane is the
    // one shown (the person looking at it), and tmux takes its whole deadline every time.
    let mut host = Host::start_with_env(
        &desktop,
        &[("TMUX", "/tmp/no-such-tmux,1,0"), ("TMUX_PANE", "%1")],
    );
    let project = desktop.home().join("work/alpha");
    std::fs::create_dir_all(&project).unwrap();
    host.hook(&desktop, "SessionStart", "tmux-session", &project);
    host.hook(&desktop, "Stop", "tmux-session", &project);
    wait_until("the first board reading", WAIT, || {
        (board_unread(&desktop, "tmux-session")? == 0).then_some(())
    });
    desktop.fake.set_unread(3);
    host.hook(&desktop, "Stop", "tmux-session", &project);
    let asked = || {
        std::process::Command::new("pgrep")
            .args(["-f", &format!("sleep {HANG}")])
            .output()
            .is_ok_and(|out| !out.stdout.is_empty())
    };
    wait_until("tmux asked", WAIT, || asked().then_some(()));
    // Our folders keep changing (as they do while sessions work): every change is a
    // refresh, and every refresh asks tmux again. The menu must still take a click at once.
    let poke = desktop.cache_dir().join("sessions/poke");
    let poking = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let still = std::sync::Arc::clone(&poking);
    let poker = std::thread::spawn(move || {
        while still.load(std::sync::atomic::Ordering::Relaxed) {
            let _ = std::fs::write(&poke, b"");
            let _ = std::fs::remove_file(&poke);
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    std::thread::sleep(Duration::from_secs(8));
    let quit = client.id_of(&item, "Quit").expect("the menu answers");
    client.click(&item, quit).unwrap();
    let ended = ends_within(tray, Duration::from_secs(5));
    poking.store(false, std::sync::atomic::Ordering::Relaxed);
    let _ = poker.join();
    let _ = std::process::Command::new("pkill")
        .args(["-f", &format!("sleep {HANG}")])
        .status();
    assert!(
        ended,
        "the tray froze on tmux; log:\n{}",
        log_of(&desktop, "fabric-tray")
    );
    drop(host);
    drop(fabric);
}

/// The tooltip the item shows (its text, as a host reads `ToolTip`).
fn tooltip(client: &Client, item: &str) -> String {
    client
        .call::<_, OwnedValue>(
            item,
            "/StatusNotifierItem",
            "org.freedesktop.DBus.Properties",
            "Get",
            &("org.kde.StatusNotifierItem", "ToolTip"),
        )
        .map(|value| format!("{value:?}"))
        .unwrap_or_default()
}

/// Issue 22, item 1, in the tray: the looked-at check asks the X display who is in front,
/// on the one snapshot thread. With a `DISPLAY` that takes the connection and never answers
/// (127.0.0.1:60NN, nothing read), once a session could notify the thread waited for good:
/// a board change to 7 never reached the icon again. Every wait on the display is bounded
/// now, and a check that runs out of time means "cannot tell".
#[test]
fn a_display_that_never_answers_never_freezes_the_icon() {
    let test = "a_display_that_never_answers_never_freezes_the_icon";
    if !available(test) {
        return;
    }
    let (number, _silent) = (150u16..250)
        .find_map(|n| {
            std::net::TcpListener::bind(("127.0.0.1", 6000 + n))
                .ok()
                .map(|l| (n, l))
        })
        .expect("a free display port");
    let display = format!("127.0.0.1:{number}");
    let mut desktop = Desktop::start("silent-display", false);
    start_watcher(&mut desktop);
    let tray = start_tray_with(
        &mut desktop,
        r#"{"watchIntervalSecs": 10}"#,
        &[("DISPLAY", &display)],
    );
    let client = Client::new(&desktop.bus);
    let item = item_name(&client, tray);
    wait_until("the item's menu", WAIT, || item_answers(&client, tray));
    let fabric = wire_claude_and_fabric(&desktop);
    let mut host = Host::start(&desktop);
    let project = desktop.home().join("work/alpha");
    std::fs::create_dir_all(&project).unwrap();
    host.hook(&desktop, "SessionStart", "silent-display", &project);
    host.hook(&desktop, "Stop", "silent-display", &project);
    wait_until("the first board reading", WAIT, || {
        (board_unread(&desktop, "silent-display")? == 0).then_some(())
    });
    // The session needs the person: it could notify, so the tray asks the display.
    host.hook(&desktop, "PermissionRequest", "silent-display", &project);
    std::thread::sleep(Duration::from_secs(3));
    desktop.fake.set_unread(7);
    host.hook(&desktop, "Stop", "silent-display", &project);
    wait_until("the board at 7", WAIT, || {
        (board_unread(&desktop, "silent-display")? == 7).then_some(())
    });
    let reached = (0..300).any(|_| {
        if tooltip(&client, &item).contains("7 unread") {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
        false
    });
    assert!(
        reached,
        "the icon never showed 7 unread (tooltip {:?}); log:\n{}",
        tooltip(&client, &item),
        log_of(&desktop, "fabric-tray")
    );
    drop(host);
    drop(fabric);
}
