//! The tray on GNOME Shell (headless GNOME Shell 43 on Wayland, Debian's AppIndicator
//! extension v46), read back through the shell itself (the test-only probe extension: what
//! the top bar holds, what the message tray holds, which window has the focus):
//!
//! - the item shows in the top bar on every one of many starts, some under CPU load, some
//!   with the extension turned on after the tray started, one dropped by the shell and
//!   registered again;
//! - its count reaches the top bar within 200 ms of a board change, the exact pixels we drew;
//! - its menu's items work when the shell's menu activates them;
//! - notifications reach GNOME Shell's own daemon with our app name and icon, a rise that
//!   joins one on screen replaces it in place, a session back to zero withdraws it, and
//!   clicking one jumps to its session's window (through our GNOME Shell extension);
//! - without the AppIndicator extension (Debian's default) the tray says so once, in a
//!   notification and the dashboard, and notifications still work.
//!
//! A screenshot of the top bar with our icon is kept in `target/e2e-shots/gnome-tray/`.
#![cfg(target_os = "linux")]

use std::time::{Duration, Instant};

use desktop_shells::gnome::{self, APPINDICATOR, FOCUS, GnomeShell};
use desktop_shells::session::now_micros;
use desktop_shells::{WAIT, require, terminal, wait_until};
use fabric_tray::model::IconState;
use serde_json::Value;
use sha2::Digest;

/// The settings the tests' trays run with: the watch engine looks once per session at
/// start, then not for an hour (the test writes the board readings itself).
const SETTINGS: &str = r#"{"watchIntervalSecs": 3600}"#;

fn available(test: &str) -> bool {
    gnome::available(test) && require(test, &["foot"], "foot")
}

/// The sha256 of the 32-pixel pixmap we draw for `state` (what the shell must hold).
fn pixmap_digest(state: &IconState) -> String {
    let pixmaps = fabric_tray::sni::item::pixmaps(state);
    let (_, _, bytes) = pixmaps.iter().find(|(w, _, _)| *w == 32).unwrap();
    hex(&sha2::Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn counted(count: &str) -> IconState {
    IconState {
        count_text: count.into(),
        greyed: false,
        warning: false,
        needs_you: false,
    }
}

/// Our item in the top bar, once the shell shows it: ready, visible, mapped, with an icon.
fn shown_item(shell: &GnomeShell, unique: Option<&str>) -> Option<Value> {
    shell.panel_items().into_iter().find(|item| {
        item["id"] == "fabric-tray"
            && item["ready"] == true
            && item["visible"] == true
            && item["mapped"] == true
            && item["hasIcon"] == true
            && item["width"].as_f64().unwrap_or(0.0) > 0.0
            && unique.is_none_or(|u| item["busName"] == u)
    })
}

/// The unique name of process `pid`'s connection to the session bus.
fn connection_of(shell: &GnomeShell, pid: u32) -> Option<String> {
    let bus = shell.bus().clone();
    shell.block_on(async move {
        let dbus = zbus::fdo::DBusProxy::new(&bus).await.ok()?;
        for name in dbus.list_names().await.ok()? {
            if !name.starts_with(':') {
                continue;
            }
            let bus_name = zbus::names::BusName::try_from(name.as_str()).ok()?;
            if dbus
                .get_connection_unix_process_id(bus_name)
                .await
                .is_ok_and(|p| p == pid)
            {
                return Some(name.to_string());
            }
        }
        None
    })
}

/// Our notifications in GNOME's message tray: (source title, source icon, notifications).
fn our_notifications(shell: &GnomeShell) -> Vec<Value> {
    shell
        .probe("Notifications", &())
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|source| source["title"] == "Fabric Companion")
        .collect()
}

/// Keeps two CPUs busy while it lives (a load on the shell and the tray).
struct Load {
    pids: Vec<u32>,
}

impl Load {
    fn start(shell: &mut GnomeShell, n: usize) -> Load {
        let pids = (0..n)
            .map(|i| {
                let mut hog = shell.command("sh");
                hog.args(["-c", "while :; do :; done"]);
                shell.spawn(&format!("load-{i}"), hog)
            })
            .collect();
        Load { pids }
    }

    fn stop(self, shell: &mut GnomeShell) {
        for pid in self.pids {
            shell.kill(pid);
        }
    }
}

/// Many starts of the tray in one shell session: each shows in the top bar (read back from
/// the shell), under load too; the extension turned on after the tray started; an item the
/// shell drops is registered again. Prints the figures.
#[test]
fn the_tray_icon_shows_in_gnomes_top_bar_on_every_start() {
    let test = "the_tray_icon_shows_in_gnomes_top_bar_on_every_start";
    if !gnome::available(test) {
        return;
    }
    let starts: usize = std::env::var("FABRIC_GNOME_STARTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(24);
    let mut shell = GnomeShell::start("gnome-tray", "many-starts", &[APPINDICATOR]);
    shell.wire_claude_and_fabric();
    let mut shown = 0;
    let mut times = Vec::new();
    let mut registrations_seen = Vec::new();
    for start in 0..starts {
        // A third of the starts under load (two busy CPUs), a third with the extension
        // turned on only after the tray started (the watcher appears late).
        let load = (start % 3 == 1).then(|| Load::start(&mut shell, 2));
        let late_watcher = start % 3 == 2;
        if late_watcher {
            shell.set_extension(APPINDICATOR, false);
            wait_until("the watcher gone", WAIT, || {
                shell
                    .name_owner("org.kde.StatusNotifierWatcher")
                    .is_none()
                    .then_some(())
            });
        }
        let began = Instant::now();
        let tray = shell.start_tray(&format!("fabric-tray-{start}"), SETTINGS);
        if late_watcher {
            std::thread::sleep(Duration::from_millis(700));
            shell.set_extension(APPINDICATOR, true);
            wait_until("the watcher back", WAIT, || {
                shell.name_owner("org.kde.StatusNotifierWatcher")
            });
        }
        let unique = wait_until("the tray's connection", WAIT, || {
            connection_of(&shell, tray)
        });
        let item = wait_until(
            &format!("start {start}: the icon in the top bar"),
            Duration::from_secs(30),
            || shown_item(&shell, Some(&unique)),
        );
        times.push(began.elapsed());
        shown += 1;
        // Registered by its path: the extension has no name of ours to watch (#386).
        assert_eq!(item["nameWatcher"], false, "{item}");
        assert_eq!(
            item["uniqueId"].as_str(),
            Some(format!("{unique}@/StatusNotifierItem").as_str())
        );
        if let Some(load) = load {
            load.stop(&mut shell);
        }
        // Registered once and left so (no needless registration again: on GNOME 50 the
        // watcher lists the item as the bare path `/StatusNotifierItem`, which the tray must
        // take as its own), when the watcher was there from the start and kept the item.
        if start % 3 == 0 && start != 0 {
            std::thread::sleep(Duration::from_millis(2500));
            let log =
                std::fs::read_to_string(shell.artefacts.join(format!("fabric-tray-{start}.log")))
                    .unwrap_or_default();
            let registrations = log
                .lines()
                .filter(|l| l.contains("registering the tray item with the StatusNotifierWatcher"))
                .count();
            registrations_seen.push(registrations);
            assert_eq!(
                registrations, 1,
                "start {start}: registrations; log:\n{log}"
            );
        }
        if start == 0 {
            // The shell drops our item (as the extension does when it fails on one): the
            // tray sees it go and registers again.
            shell.eval(&format!(
                "Main.panel.statusArea['{}']._indicator.destroy(); 0",
                item["key"].as_str().unwrap()
            ));
            wait_until("the dropped item shown again", WAIT, || {
                shown_item(&shell, Some(&unique))
            });
        }
        assert!(
            shell.terminate(tray, Duration::from_secs(10)),
            "the tray ended on SIGTERM"
        );
        wait_until("the item gone from the top bar", WAIT, || {
            shell
                .panel_items()
                .iter()
                .all(|i| i["busName"] != unique.as_str())
                .then_some(())
        });
    }
    times.sort();
    eprintln!(
        "GNOME Shell {} top bar: {starts} starts, {shown} shown; time to shown: median {:?}, max {:?}; registrations per start (watcher there from the start): {registrations_seen:?}",
        gnome::shell_major(),
        times[times.len() / 2],
        times[times.len() - 1]
    );
    assert_eq!(shown, starts);
}

/// The tray in GNOME's top bar as a person uses it: the count (read back as the exact
/// pixels, timed), the menu, notifications (app name, icon, replaced in place, withdrawn,
/// a click jumps), and a screenshot of the top bar.
#[test]
fn the_tray_on_gnome_shell_end_to_end() {
    let test = "the_tray_on_gnome_shell_end_to_end";
    if !available(test) {
        return;
    }
    let mut shell = GnomeShell::start("gnome-tray", "end-to-end", &[APPINDICATOR, FOCUS]);
    shell.wire_claude_and_fabric();
    // Three sessions, each in a foot window of its own.
    let mut windows = Vec::new();
    for name in ["alpha", "beta", "gamma"] {
        let script = shell.host_script(name, name);
        let foot = terminal::foot(&mut shell, &format!("foot-{name}"), &script);
        shell.wait_for_window(foot);
        shell.recorded_host(name);
        windows.push(foot);
    }
    let (foot_alpha, _foot_beta, foot_gamma) = (windows[0], windows[1], windows[2]);
    let tray = shell.start_tray("fabric-tray", SETTINGS);
    let unique = wait_until("the tray's connection", WAIT, || {
        connection_of(&shell, tray)
    });
    let item = wait_until("the icon in the top bar", WAIT, || {
        shown_item(&shell, Some(&unique))
    });
    let key = item["key"].as_str().unwrap().to_string();
    // The watch engine's first look at each session (Fabric's stand-in says 0 unread).
    wait_until("the sessions in the menu", WAIT, || {
        let menu = shell.probe("MenuItems", &(key.as_str(),));
        let text = menu.to_string();
        ["alpha ·", "beta ·", "gamma ·"]
            .iter()
            .all(|s| text.contains(s))
            .then_some(())
    });
    std::thread::sleep(Duration::from_secs(2));

    // 1. The count: each board change reaches the top bar as the pixels we drew, timed from
    //    the moment board.json changed to the moment the shell's icon actor took them. The
    //    person looks at foot-beta (a session that is not notified is the one looked at).
    shell.activate_window_of(_foot_beta);
    let mut latencies = Vec::new();
    for (step, unread) in [(0, 2u64), (1, 5), (2, 9), (3, 4), (4, 11), (5, 3), (6, 7)] {
        let expected = pixmap_digest(&counted(&unread.to_string()));
        let written = shell.write_board("beta", unread);
        let change = wait_until(
            &format!("step {step}: {unread} in the top bar"),
            WAIT,
            || {
                shell
                    .probe("IconChanges", &())
                    .as_array()?
                    .iter()
                    .find(|c| {
                        c["key"] == key.as_str()
                            && c["at"].as_i64().unwrap_or(0) >= written
                            && c["digests"].as_array().is_some_and(|d| {
                                d.iter().any(|e| e[0] == 32 && e[2] == expected.as_str())
                            })
                    })
                    .cloned()
            },
        );
        latencies.push(Duration::from_micros(
            (change["at"].as_i64().unwrap() - written) as u64,
        ));
    }
    // The extension asked for every property it reads on each new icon, and the item had
    // them all (it once logged "Unknown property 'IconAccessibleDesc'" on each update).
    let shell_log =
        std::fs::read_to_string(shell.artefacts.join("gnome-shell.log")).unwrap_or_default();
    let unknown: Vec<&str> = shell_log
        .lines()
        .filter(|l| l.contains("Unknown property"))
        .collect();
    assert!(unknown.is_empty(), "{unknown:?}");
    let top_bar = shell.screenshot("top-bar-with-icon", 0, 0, 1280, 32);
    assert!(top_bar.is_file());
    let item = shown_item(&shell, Some(&unique)).unwrap();
    assert!(
        item["pixmaps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p[2] == pixmap_digest(&counted("7")).as_str()),
        "the shell holds the pixels of 7: {item}"
    );
    eprintln!("GNOME Shell top bar: board change to icon, in order: {latencies:?}");
    latencies.sort();
    eprintln!(
        "GNOME Shell top bar: board change to icon: {:?} (median {:?}, max {:?})",
        latencies,
        latencies[latencies.len() / 2],
        latencies[latencies.len() - 1]
    );
    // A measure, not a timer: the middle of seven (one slow sample on a busy machine does
    // not decide). Without `PropertiesChanged` the extension's own 100 ms gathering of
    // `NewIcon` comes on top of the file watcher's 100 ms, and this fails.
    assert!(
        latencies[latencies.len() / 2] <= Duration::from_millis(200),
        "the count reached the top bar later than 200 ms after the board changed: {latencies:?}"
    );
    shell.write_board("beta", 0);

    // 2. Notifications in GNOME Shell's own message tray: alpha rises, the person looking at
    //    gamma's window (a session looked at is not notified).
    shell.activate_window_of(foot_gamma);
    let alpha_written = shell.write_board("alpha", 3);
    let source = wait_until("alpha's notification in GNOME's message tray", WAIT, || {
        our_notifications(&shell).into_iter().find(|s| {
            s["notifications"]
                .as_array()
                .is_some_and(|n| n.iter().any(|n| n["title"] == "alpha"))
        })
    });
    let _ = alpha_written;
    let notification = &source["notifications"][0];
    assert_eq!(
        notification["body"], "3 unread on the project board",
        "{source}"
    );
    // Our app icon, exactly (image-data), as the notification's and the source's icon.
    let app_icon = fabric_tray::icon::render(&IconState::default(), 64);
    let icon_digest = hex(&sha2::Sha256::digest(&app_icon.pixels));
    assert_eq!(notification["gicon"]["width"], 64, "{source}");
    assert_eq!(
        notification["gicon"]["sha256"],
        icon_digest.as_str(),
        "{source}"
    );
    // beta rises within the coalescing window: one notification, replaced in place.
    shell.write_board("beta", 2);
    let source = wait_until("the notification replaced in place", WAIT, || {
        our_notifications(&shell).into_iter().find(|s| {
            s["notifications"]
                .as_array()
                .is_some_and(|n| n.len() == 1 && n[0]["title"] == "2 sessions · 5 unread")
        })
    });
    assert_eq!(our_notifications(&shell).len(), 1, "{source}");
    // Both back to zero: withdrawn.
    shell.write_board("alpha", 0);
    shell.write_board("beta", 0);
    wait_until("the notification withdrawn", WAIT, || {
        our_notifications(&shell)
            .iter()
            .all(|s| s["notifications"].as_array().is_none_or(|n| n.is_empty()))
            .then_some(())
    });

    // 3. A click on gamma's notification jumps to gamma's window.
    shell.activate_window_of(foot_alpha);
    shell.write_board("gamma", 4);
    wait_until("gamma's notification", WAIT, || {
        our_notifications(&shell)
            .iter()
            .any(|s| {
                s["notifications"]
                    .to_string()
                    .contains("\"title\":\"gamma\"")
            })
            .then_some(())
    });
    let clicked = shell.probe("ActivateNotification", &("gamma",));
    assert_eq!(clicked["ok"], true, "{clicked}");
    wait_until("gamma's window in front", WAIT, || {
        (shell.focused()?.0 == foot_gamma).then_some(())
    });

    // 4. The menu, as the shell's menu activates its items.
    let choose = |label: &str| {
        let answer = shell.probe("ActivateMenuItem", &(key.as_str(), label));
        assert_eq!(answer["ok"], true, "{label}: {answer}");
    };
    let settings = shell.config_dir().join("fabric-companion/settings.json");
    choose("Pause 1 hour");
    wait_until("the pause saved", WAIT, || {
        std::fs::read_to_string(&settings)
            .ok()?
            .contains("notificationsPausedUntil\": \"")
            .then_some(())
    });
    // The shell's menu takes the change: Resume turns on (its item kept, its state sent).
    wait_until("Resume enabled in the shell's menu", WAIT, || {
        let menu = shell.probe("MenuItems", &(key.as_str(),));
        menu.as_array()?
            .iter()
            .flat_map(|i| i["submenu"].as_array().cloned().unwrap_or_default())
            .any(|s| s["label"] == "Resume" && s["sensitive"] == true)
            .then_some(())
    });
    choose("Resume");
    wait_until("the pause lifted", WAIT, || {
        (!std::fs::read_to_string(&settings)
            .ok()?
            .contains("notificationsPausedUntil\": \""))
        .then_some(())
    });
    let alpha_line = shell
        .probe("MenuItems", &(key.as_str(),))
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["label"].as_str())
        .find(|l| l.starts_with("alpha ·"))
        .unwrap()
        .to_string();
    choose(&alpha_line);
    wait_until("alpha's window in front (its menu line)", WAIT, || {
        (shell.focused()?.0 == foot_alpha).then_some(())
    });
    choose("Open Dashboard…");
    wait_until("the dashboard started", WAIT, || {
        (!shell.dashboard_starts().is_empty()).then_some(())
    });
    choose("Quit");
    wait_until("the tray to quit", WAIT, || {
        (!shell.running(tray)).then_some(())
    });
    wait_until("the item gone from the top bar", WAIT, || {
        shell
            .panel_items()
            .iter()
            .all(|i| i["busName"] != unique.as_str())
            .then_some(())
    });
    let _ = now_micros();
}

/// GNOME without the AppIndicator extension (Debian's default): no tray at all. The tray
/// says so once — a notification in GNOME's own message tray and the dashboard — with what
/// to turn on and that notifications and the jump still work; a second start says nothing
/// again; notifications still come. Without our extension the jump says it is not
/// installed (exit 4) and where the session is.
#[test]
fn gnome_without_the_appindicator_extension_says_so_once() {
    let test = "gnome_without_the_appindicator_extension_says_so_once";
    if !available(test) {
        return;
    }
    let mut shell = GnomeShell::start("gnome-tray", "without-appindicator", &[]);
    shell.wire_claude_and_fabric();
    let script = shell.host_script("solo", "solo");
    let foot = terminal::foot(&mut shell, "foot-solo", &script);
    shell.wait_for_window(foot);
    shell.recorded_host("solo");
    let tray = shell.start_tray("fabric-tray", SETTINGS);
    let notice = wait_until("the notice in GNOME's message tray", WAIT, || {
        our_notifications(&shell)
            .into_iter()
            .flat_map(|s| s["notifications"].as_array().cloned().unwrap_or_default())
            .find(|n| n["title"] == "No tray icon on GNOME")
    });
    let body = notice["body"].as_str().unwrap_or_default();
    assert!(
        body.contains("gnome-extensions enable ubuntu-appindicators@ubuntu.com"),
        "{body}"
    );
    assert!(
        body.contains("Notifications and jumping to a session work without it"),
        "{body}"
    );
    wait_until("the dashboard opened once", WAIT, || {
        (shell.dashboard_starts().len() == 1).then_some(())
    });
    assert!(shell.panel_items().is_empty());
    // Notifications still work: a rise (the session's window is not the one in front).
    shell.write_board("solo", 2);
    wait_until("the rise notified without a tray", WAIT, || {
        our_notifications(&shell)
            .iter()
            .any(|s| {
                s["notifications"]
                    .to_string()
                    .contains("\"title\":\"solo\"")
            })
            .then_some(())
    });
    // The jump without our extension: exit 4, not installed (or, with the package
    // installed, installed and off), where the session is.
    let (code, out, err) = shell.focus("solo");
    assert_eq!(code, Some(4), "{out}{err}");
    if desktop_shells::programs::installed() {
        assert!(err.contains("installed but off"), "{err}");
    } else {
        assert!(err.contains("is not installed"), "{err}");
    }
    assert!(err.contains("solo (Claude Code)"), "{err}");
    // A second start: told already, nothing said again.
    assert!(shell.terminate(tray, Duration::from_secs(10)));
    let notices_before = our_notifications(&shell)
        .iter()
        .flat_map(|s| s["notifications"].as_array().cloned().unwrap_or_default())
        .filter(|n| n["title"] == "No tray icon on GNOME")
        .count();
    let again = shell.start_tray("fabric-tray-again", SETTINGS);
    std::thread::sleep(Duration::from_secs(12));
    assert!(shell.running(again));
    let notices_after = our_notifications(&shell)
        .iter()
        .flat_map(|s| s["notifications"].as_array().cloned().unwrap_or_default())
        .filter(|n| n["title"] == "No tray icon on GNOME")
        .count();
    assert!(notices_after <= notices_before, "told again");
    assert_eq!(
        shell.dashboard_starts().len(),
        1,
        "the dashboard opened again"
    );
}
