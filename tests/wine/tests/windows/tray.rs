//! `fabric-tray.exe` under Wine on a virtual display, docked by Wine's notification area
//! (`explorer.exe`) into `trayer`, an XEmbed tray: the icon (grey while Fabric is down, then in
//! colour, then with the count drawn in), its menu opened by a click (Wine's
//! `Shell_NotifyIconGetRect` is a stub: the menu shows at the click), its items (Open
//! Dashboard… starts the dashboard, here a stand-in since Wine has no WebView2; Quit), a
//! second tray refusing, a rise of the unread count reaching the desktop as the icon's balloon
//! (toasts fail under Wine with `0x80040154`), and Quit ending the tray and the `fabric-mcp` it
//! had running. Screenshots are kept in `$FABRIC_WINE_SHOTS` when it is set.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;
use wine_bench::display::{Display, XWindow};
use wine_bench::host::{Host, Job, Shell};
use wine_bench::{payload, wait_until, write};

use crate::common::Person;

const WAIT: Duration = Duration::from_secs(90);

/// Where screenshots go: `$FABRIC_WINE_SHOTS`, else the prefix's home (removed with it).
fn shots(person: &Person) -> PathBuf {
    let dir = std::env::var_os("FABRIC_WINE_SHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| person.prefix.home.join("shots"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn is_grey(pixels: &[[u8; 3]]) -> bool {
    let lit: Vec<&[u8; 3]> = pixels
        .iter()
        .filter(|p| p.iter().any(|&c| c > 60))
        .collect();
    !lit.is_empty()
        && lit.iter().all(|p| {
            let (max, min) = (p.iter().max().unwrap(), p.iter().min().unwrap());
            max - min < 40
        })
}

fn has_blue(pixels: &[[u8; 3]]) -> bool {
    pixels
        .iter()
        .any(|p| p[2] > 120 && p[2] > p[0].saturating_add(40) && p[2] > p[1].saturating_add(10))
}

fn differing(a: &[[u8; 3]], b: &[[u8; 3]]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x != y).count()
}

fn tray_running(person: &Person) -> bool {
    !person.prefix.processes_of("fabric-tray.exe").is_empty()
}

/// Waits until the docked icon looks as `looks` wants, read where the icon is at each look
/// (it is placed by trayer after it docks); the screen is saved as `shot`. Its place and
/// pixels at that look.
fn wait_for_icon(
    display: &Display,
    what: &str,
    shot: &Path,
    looks: impl Fn(&[[u8; 3]]) -> bool,
) -> (XWindow, Vec<[u8; 3]>) {
    let mut seen = None;
    wait_until(what, WAIT, || {
        seen = display
            .icon_pixels(shot, "explorer.exe")
            .filter(|(_, pixels)| looks(pixels));
        seen.is_some()
    });
    seen.unwrap()
}

fn board_unread(person: &Person, session: &str) -> Option<u64> {
    let text = wine_bench::read_text(&person.prefix.spool(session).join("board.json"));
    serde_json::from_str::<Value>(&text).ok()?["unread"].as_u64()
}

#[test]
fn the_tray_docks_counts_opens_its_menu_notifies_by_balloon_and_quits_with_its_children() {
    let Some(mut display) = Display::start("the_tray_under_wine") else {
        return;
    };
    let Some(mut person) = Person::new("the_tray_under_wine") else {
        return;
    };
    display.start_trayer();
    person.prefix.set_display(&display.name);
    let shots = shots(&person);
    eprintln!("tray screenshots in {}", shots.display());
    // The watch interval at its floor; the dashboard a stand-in that records its starts.
    write(
        &person
            .prefix
            .appdata()
            .join("fabric-companion/settings.json"),
        r#"{"watchIntervalSecs": 10}"#,
    );
    let dashboard_starts = person.prefix.home.join("dashboard-starts.jsonl");
    let bench = person.prefix.bench();
    let mut env = person.env();
    env.push((
        "FABRIC_COMPANION_BIN".into(),
        person.prefix.win(&bench.exe("host-stand-in")),
    ));
    env.push((
        "HOST_STAND_IN_RECORD".into(),
        person.prefix.win(&dashboard_starts),
    ));
    env.push((
        "FABRIC_TRAY_LOG".into(),
        "info,rmcp=warn,notify=warn,fabric_tray=debug".into(),
    ));
    let log = person.prefix.home.join("fabric-tray.log");
    let mut command = person.prefix.program("fabric-tray", &[]);
    command
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::create(log.with_extension("err")).unwrap());
    let mut tray: Child = command.spawn().expect("start fabric-tray.exe");
    let tray_log =
        || wine_bench::read_text(&log) + &wine_bench::read_text(&log.with_extension("err"));

    // 1. Docked in trayer by Wine's notification area, grey: Fabric is down.
    wait_until("the tray icon docked in trayer", WAIT, || {
        display.docked_icon("explorer.exe").is_some()
    });
    let (_, grey) = wait_for_icon(&display, "a grey icon", &shots.join("1-grey.png"), is_grey);

    // A second tray exits at once, saying so.
    let second = person.prefix.run("fabric-tray", &[], &env, b"");
    assert_eq!(second.status.code(), Some(0), "{second:?}");
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("already running"),
        "{second:?}"
    );

    // 2. Claude Code wired (fabric registered, our hooks installed by the real installer,
    //    running the stable copy the tray made) and Fabric running with session hooks: the
    //    icon gets its colour.
    wait_until("the tray's stable copy of fabric-session", WAIT, || {
        person
            .prefix
            .cache_dir()
            .join("bin/fabric-session.exe")
            .is_file()
    });
    person.register("claude");
    person.install_hooks("claude", &[]);
    person.fabric_running(&["session-hooks/1"]);
    person.fake.set_unread(0);
    let (_, running) = wait_for_icon(
        &display,
        "the icon in colour",
        &shots.join("2-running.png"),
        has_blue,
    );
    assert!(differing(&grey, &running) > 20);

    // 3. A session of a live host: its first Stop reads the board at 0 (the baseline); mail
    //    arrives and the next Stop's board rises to 3: the count on the icon, and a
    //    notification, which reaches the desktop as the icon's balloon.
    let cwd = person.project_win();
    let session = "tray-1";
    let commands = person.commands("claude");
    let mut agent = Host::start(&person.prefix, Shell::Direct, Job::None, &person.env());
    for event in ["SessionStart", "Stop"] {
        let ran = agent.run(
            &commands[event],
            &payload::input("claude", event, session, &cwd),
        );
        assert_eq!(ran.code, Some(0), "{event}: {ran:?}");
    }
    wait_until("the first board reading", WAIT, || {
        board_unread(&person, session) == Some(0)
    });
    let balloons_before = display.top_windows("explorer.exe", 40).len();
    person.fake.set_unread(3);
    let ran = agent.run(
        &commands["Stop"],
        &payload::input("claude", "Stop", session, &cwd),
    );
    assert_eq!(ran.code, Some(0));
    wait_until("the board at 3", WAIT, || {
        board_unread(&person, session) == Some(3)
    });
    let (icon, _) = wait_for_icon(
        &display,
        "the count drawn on the icon",
        &shots.join("3-count.png"),
        |pixels| differing(&running, pixels) > 20 && has_blue(pixels),
    );
    let balloon = {
        let mut found = None;
        wait_until("the notification's balloon on the desktop", WAIT, || {
            let windows = display.top_windows("explorer.exe", 40);
            if windows.len() > balloons_before {
                found = windows.into_iter().find(|w| w.w > 100);
            }
            found.is_some()
        });
        found.unwrap()
    };
    display.screenshot(&shots.join("4-balloon.png"));
    eprintln!("balloon: {balloon:?}");
    let said = tray_log();
    assert!(
        said.contains("notifications go to the tray icon's balloon") && said.contains("0x80040154"),
        "the tray did not say toasts were unavailable:\n{said}"
    );
    assert!(
        !said.contains("cannot show a desktop notification"),
        "the balloon failed:\n{said}"
    );

    // 4. A click opens the menu (at the click); Open Dashboard… starts the dashboard.
    let menus_before = display.top_windows("fabric-tray.exe", 40).len();
    let (x, y) = icon.center();
    let click = |display: &Display| {
        let _ = display
            .command("xdotool")
            .args(["mousemove", &x.to_string(), &y.to_string()])
            .status();
        std::thread::sleep(Duration::from_millis(300));
        let _ = display.command("xdotool").args(["click", "1"]).status();
    };
    let open_menu = |display: &Display, name: &str| -> XWindow {
        click(display);
        let mut menu = None;
        wait_until("the tray's menu", WAIT, || {
            let menus = display.top_windows("fabric-tray.exe", 40);
            if menus.len() > menus_before {
                menu = menus.into_iter().max_by_key(|w| w.w * w.h);
            }
            menu.is_some()
        });
        std::thread::sleep(Duration::from_millis(500));
        display.screenshot(&shots.join(name));
        menu.unwrap()
    };
    let key = |display: &Display, keys: &[&str]| {
        for key in keys {
            let _ = display.command("xdotool").args(["key", key]).status();
            std::thread::sleep(Duration::from_millis(300));
        }
    };
    let menu = open_menu(&display, "5-menu.png");
    eprintln!("menu: {menu:?}");
    // From the bottom: Quit, Open hook log, Open Dashboard….
    key(&display, &["Up", "Up", "Up", "Return"]);
    wait_until("the dashboard started", WAIT, || {
        wine_bench::read_text(&dashboard_starts).contains("\"started\":[]")
    });
    wait_until("the menu closed", WAIT, || {
        display.top_windows("fabric-tray.exe", 40).len() <= menus_before
    });

    // 5. Quit, with a look at the board in flight (the stand-in answers slowly): the tray
    //    ends, and so does the fabric-mcp it had started.
    person.fake.set_delay_ms(60_000);
    wait_until("a look in flight", WAIT, || {
        !person
            .prefix
            .processes_of("fabric-fake.exe --runner")
            .is_empty()
    });
    open_menu(&display, "6-menu-before-quit.png");
    key(&display, &["Up", "Return"]);
    let out = wine_bench::wait_watched(
        std::mem::replace(
            &mut tray,
            std::process::Command::new("true").spawn().unwrap(),
        ),
        "fabric-tray after Quit",
    );
    assert_eq!(out.status.code(), Some(0), "{}", tray_log());
    wait_until(
        "no fabric-mcp left after Quit",
        Duration::from_secs(20),
        || {
            person
                .prefix
                .processes_of("fabric-fake.exe --runner")
                .is_empty()
        },
    );
    assert!(!tray_running(&person), "fabric-tray.exe still runs");
    agent.end();
}
