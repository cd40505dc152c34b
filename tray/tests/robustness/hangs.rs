//! What hangs: a tmux that never answers, a display that never answers.

use super::*;

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
