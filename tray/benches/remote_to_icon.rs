//! Remote state to the tray's icon, over a real sshd on loopback: a session at the remote (our
//! hooks run by a long-lived shell of the remote user, standing for its host process) asks for
//! permission, then goes on; each change is timed from the hook's start there to the moment
//! the real tray here (on Xvfb, registered with a real StatusNotifierWatcher) signals a new
//! icon whose pixels, as a tray host reads them (`IconPixmap`), gain or lose the "needs you"
//! mark. Prints the median, the 90th percentile and the worst of `RUNS` changes (default 40),
//! and the tray's resident memory before the remote is followed and with it up.
//!
//! Needs root (test-support's `ssh_remote` makes a user and starts sshd), Xvfb, dbus-daemon
//! and `status-notifier-watcher`, and a built `fabric-session` (`FABRIC_SESSION_BIN`, else
//! `target/<profile>/fabric-session` beside this bench).
//! `cargo build --release -p fabric-session && cargo bench -p fabric-tray --bench remote_to_icon`.

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("remote_to_icon: Linux only (a real sshd and a user made for it)");
}

#[cfg(target_os = "linux")]
fn main() {
    bench::run();
}

#[cfg(target_os = "linux")]
mod bench {
    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::process::{Child, Command, Stdio};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use futures_util::StreamExt;
    use test_support::desktop::{bus_address, runtime_dir, start_xvfb};
    use test_support::picture::needs_you_mark;
    use test_support::ssh_remote::{SshRemote, write_as_remote};
    use zbus::OwnedVariant as OwnedValue;

    const TRAY: &str = env!("CARGO_BIN_EXE_fabric-tray");
    /// The longest one change may take before the bench gives up.
    const LIMIT: Duration = Duration::from_secs(30);

    fn session_binary() -> PathBuf {
        if let Some(path) = std::env::var_os("FABRIC_SESSION_BIN") {
            return path.into();
        }
        // target/<profile>/deps/remote_to_icon-… → target/<profile>/fabric-session
        let me = std::env::current_exe().unwrap();
        let path = me
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("fabric-session");
        assert!(
            path.exists(),
            "no {}: build fabric-session first (or set FABRIC_SESSION_BIN)",
            path.display()
        );
        path
    }

    /// Everything started here, killed on drop (the tray first).
    struct Started(Vec<Child>);

    impl Drop for Started {
        fn drop(&mut self) {
            for child in self.0.iter_mut().rev() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }

    /// One icon the tray announced: when its `NewIcon` arrived, and whether it has the mark.
    type Seen = (Instant, bool);

    /// Follows the tray's item: every `NewIcon` it sends, read back as the host reads it.
    fn follow_icon(bus: String, tray: u32, seen: mpsc::Sender<Seen>) {
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let conn = zbus::connection::Builder::address(bus.as_str())
                    .build()
                    .await
                    .unwrap();
                let item = loop {
                    if let Some(item) = item_of(&conn, tray).await {
                        break item;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                };
                let rule = zbus::MatchRule::builder()
                    .msg_type(zbus::message::Type::Signal)
                    .sender(item.as_str())
                    .interface("org.kde.StatusNotifierItem")
                    .member("NewIcon")
                    .build()
                    .unwrap();
                let mut signals = zbus::MessageStream::for_match_rule(rule, &conn, None)
                    .await
                    .unwrap();
                // The icon as it is now, then every change.
                let _ = seen.send((Instant::now(), has_mark(&conn, &item).await));
                while let Some(Ok(_)) = signals.next().await {
                    let at = Instant::now();
                    if seen.send((at, has_mark(&conn, &item).await)).is_err() {
                        return;
                    }
                }
            });
        });
    }

    /// The bus name of the item the watcher lists for the process `pid`.
    async fn item_of(conn: &zbus::Connection, pid: u32) -> Option<String> {
        let reply = conn
            .call_method(
                Some("org.kde.StatusNotifierWatcher"),
                "/StatusNotifierWatcher",
                Some("org.freedesktop.DBus.Properties"),
                "Get",
                &(
                    "org.kde.StatusNotifierWatcher",
                    "RegisteredStatusNotifierItems",
                ),
            )
            .await
            .ok()?;
        let items: Vec<String> = reply
            .body()
            .deserialize::<OwnedValue>()
            .ok()?
            .try_into()
            .ok()?;
        for entry in items {
            let name = entry[..entry.find(['/', '@']).unwrap_or(entry.len())].to_string();
            let owner: Option<u32> = conn
                .call_method(
                    Some("org.freedesktop.DBus"),
                    "/org/freedesktop/DBus",
                    Some("org.freedesktop.DBus"),
                    "GetConnectionUnixProcessID",
                    &(name.as_str(),),
                )
                .await
                .ok()
                .and_then(|r| r.body().deserialize::<u32>().ok());
            if owner == Some(pid) {
                return Some(name);
            }
        }
        None
    }

    /// Whether the item's largest icon (`IconPixmap`) has the mark.
    async fn has_mark(conn: &zbus::Connection, item: &str) -> bool {
        let Ok(reply) = conn
            .call_method(
                Some(item),
                "/StatusNotifierItem",
                Some("org.freedesktop.DBus.Properties"),
                "Get",
                &("org.kde.StatusNotifierItem", "IconPixmap"),
            )
            .await
        else {
            return false;
        };
        let Ok(value) = reply.body().deserialize::<OwnedValue>() else {
            return false;
        };
        let Ok(pixmaps) = Vec::<(i32, i32, Vec<u8>)>::try_from(value) else {
            return false;
        };
        pixmaps
            .iter()
            .max_by_key(|(w, _, _)| *w)
            .is_some_and(|(w, h, argb)| needs_you_mark(*w as u32, *h as u32, argb))
    }

    fn rss_kib(pid: u32) -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    pub fn run() {
        let runs: usize = std::env::var("RUNS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(40);
        let Some(remote) = SshRemote::start("remote_to_icon") else {
            eprintln!("remote_to_icon: cannot run here (see above)");
            return;
        };
        // Our program at its stable path there, Fabric "running" there, fabric registered.
        remote.put_program(&std::fs::read(session_binary()).unwrap());
        write_as_remote(
            &remote,
            ".claude.json",
            r#"{"mcpServers": {"fabric": {"command": "fabric-mcp"}}}"#,
        );
        remote.fabric_running(|pid, fabric_dir| {
            fabric_fake::files::hub_text(fabric_dir, &["session-hooks/1"], pid)
        });

        // Here: a HOME of its own, Xvfb, a session bus, a StatusNotifierWatcher, the tray.
        let home = tempfile::tempdir().unwrap();
        let config = home.path().join(".config/fabric-companion");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(config.join("settings.json"), r#"{"needsYouGraceSecs": 0}"#).unwrap();
        let (xvfb, display) = start_xvfb();
        let mut started = Started(vec![xvfb]);
        // The bus starts the notification daemon on demand (dunst, where installed): on Xvfb.
        let mut dbus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address"])
            .env("DISPLAY", &display)
            .stdout(Stdio::piped())
            .spawn()
            .expect("dbus-daemon (package dbus)");
        let bus = bus_address(&mut dbus, "remote_to_icon");
        started.0.push(dbus);
        let env: HashMap<&str, String> = HashMap::from([
            ("HOME", home.path().display().to_string()),
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("DISPLAY", display.clone()),
            ("DBUS_SESSION_BUS_ADDRESS", bus.clone()),
            (
                "XDG_RUNTIME_DIR",
                runtime_dir(home.path()).display().to_string(),
            ),
            ("FABRIC_SSH_CONFIG", remote.config().display().to_string()),
            ("FABRIC_SESSION_BIN", session_binary().display().to_string()),
            ("FABRIC_COMPANION_BIN", "/bin/true".to_string()),
        ]);
        let mut watcher = Command::new("status-notifier-watcher");
        watcher.env_clear().envs(&env).stdout(Stdio::null());
        started.0.push(
            watcher
                .spawn()
                .expect("status-notifier-watcher (package haskell-status-notifier-item-utils)"),
        );
        std::thread::sleep(Duration::from_millis(500));
        let mut tray = Command::new(TRAY);
        tray.env_clear()
            .envs(&env)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let tray = tray.spawn().unwrap();
        let tray_pid = tray.id();
        started.0.push(tray);
        let (seen_tx, seen) = mpsc::channel();
        follow_icon(bus, tray_pid, seen_tx);
        let first = seen
            .recv_timeout(LIMIT)
            .expect("the tray's item on the bus");
        assert!(!first.1, "the mark before anything waits");
        // Settled before the remote is followed.
        std::thread::sleep(Duration::from_secs(2));
        let rss_before = rss_kib(tray_pid);

        // The session's host process there: a shell of the remote user that runs the hooks.
        let mut shell = remote.hook_shell("bench-1");
        shell.hook("session-start");
        shell.hook("user-prompt-submit");
        std::fs::write(
            config.join("settings.json"),
            r#"{"needsYouGraceSecs": 0, "remotes": ["fabric-remote"]}"#,
        )
        .unwrap();
        // The link up and the session known: one wait and its end, untimed.
        let wait_for = |want: bool| -> Instant {
            let deadline = Instant::now() + LIMIT;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let (at, mark) = seen
                    .recv_timeout(left)
                    .unwrap_or_else(|_| panic!("the icon never showed mark = {want}"));
                if mark == want {
                    return at;
                }
            }
        };
        let mut took = Vec::new();
        for round in 0..=runs {
            for (cli_event, mark) in [("permission-request", true), ("post-tool-use", false)] {
                std::thread::sleep(Duration::from_millis(300));
                while seen.try_recv().is_ok() {}
                let started = Instant::now();
                shell.hook(cli_event);
                let at = wait_for(mark);
                if round > 0 {
                    took.push(at - started);
                }
            }
        }
        let rss_up = rss_kib(tray_pid);
        drop(shell);
        drop(started);
        took.sort();
        let at = |q: f64| took[((took.len() - 1) as f64 * q).round() as usize];
        println!(
            "remote state to the tray's icon over ssh on loopback, {} changes: median {:.0} ms, p90 {:.0} ms, worst {:.0} ms",
            took.len(),
            at(0.5).as_secs_f64() * 1e3,
            at(0.9).as_secs_f64() * 1e3,
            took.last().unwrap().as_secs_f64() * 1e3
        );
        println!(
            "the tray's resident memory: {rss_before} KiB before the remote, {rss_up} KiB following it (+{} KiB)",
            rss_up.saturating_sub(rss_before)
        );
    }
}
