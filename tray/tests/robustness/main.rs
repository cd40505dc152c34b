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

#[path = "../desktop/mod.rs"]
mod desktop;

use desktop::*;

mod bus;
mod containers;
mod hangs;
mod peers;
mod remotes;

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

/// Clicks Quit in the tray's menu and waits (10 s at most) for the tray to end.
fn quit_and_wait(client: &Client, item: &str, tray: u32, desktop: &Desktop) {
    let quit = client.id_of(item, "Quit").unwrap();
    client.click(item, quit).unwrap();
    assert!(
        ends_within(tray, Duration::from_secs(10)),
        "{}",
        log_of(desktop, "fabric-tray")
    );
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
