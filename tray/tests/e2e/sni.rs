//! The tray as a StatusNotifierItem (a real watcher and standalone host), and project names
//! reaching a markup notification server as written.

use super::*;

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
