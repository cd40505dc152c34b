//! End to end, on a real (virtual) desktop: Xvfb, a private D-Bus session bus, `dunst` (the
//! notification daemon), `trayer` (an XEmbed tray), `dbus-monitor`, a temporary HOME, Fabric
//! played by the stand-in, and a session made by running the real hooks from a long-lived
//! "host" process (a `bash` that outlives each hook).
//!
//! What it checks, in order: the icon embeds in trayer, grey while Fabric is down; the stable
//! copy of fabric-session is installed; with Fabric running and Claude Code wired the icon is
//! coloured; Notifications ▸ Pause 1 hour (a real click in the GTK menu) stops the next
//! notification; Resume, then a rise + Stop hook gives a `Notify` with the right text on
//! D-Bus and a changed icon; a fall to zero closes it (`CloseNotification`); Fabric's process
//! dying turns the icon grey (found on the watch-mail schedule, no file event); "Open
//! Dashboard…" starts `$FABRIC_COMPANION_BIN` detached; a second tray exits at once; Quit
//! ends the tray.
//!
//! Menu items are found by keyboard highlight (Down/Right in the real GTK menu), located in
//! a screenshot, and then clicked with the mouse. Screenshots go to `$FABRIC_E2E_SHOTS/tray/<test>`
//! (default `target/e2e-shots/tray/<test>`). Needs: xvfb, x11-utils, xdotool, imagemagick,
//! dbus (dbus-daemon, dbus-monitor, dbus-send), dunst, trayer. Linux only: it drives an X11
//! desktop.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

#[path = "../desktop/mod.rs"]
mod desktop;

use desktop::*;

mod sni;
mod xembed;

fn differing(a: &[[u8; 3]], b: &[[u8; 3]]) -> usize {
    a.iter().zip(b).filter(|(p, q)| p != q).count()
}

/// Whether a region has no colour (every pixel r≈g≈b).
fn is_grey(pixels: &[[u8; 3]]) -> bool {
    pixels.iter().all(|[r, g, b]| {
        let (lo, hi) = (r.min(g).min(b), r.max(g).max(b));
        hi - lo <= 12
    })
}

/// Whether a region holds the icon's blue.
fn has_blue(pixels: &[[u8; 3]]) -> bool {
    pixels
        .iter()
        .filter(|[r, g, b]| *b > 180 && *r < 90 && *g < 150)
        .count()
        > 50
}

/// A stand-in for the dashboard that appends how it was started (`pid ppid sid`) to
/// `companion.started`, unless `FABRIC_E2E_COMPANION` names a real one.
fn companion_program(desktop: &Desktop) -> PathBuf {
    if let Some(real) = std::env::var_os("FABRIC_E2E_COMPANION") {
        return PathBuf::from(real);
    }
    let path = desktop.home().join("companion-standin");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho \"$$ $PPID $(ps -o sid= -p $$)\" >> '{}'\nexec sleep 600\n",
            desktop.home().join("companion.started").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The dashboard starts recorded by the stand-in: `(pid, ppid, sid)` each.
fn companion_starts(desktop: &Desktop) -> Vec<(u32, u32, u32)> {
    std::fs::read_to_string(desktop.home().join("companion.started"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let f: Vec<u32> = line
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            (f.len() == 3).then(|| (f[0], f[1], f[2]))
        })
        .collect()
}

/// Waits for start number `n` (1-based) of the dashboard, checks it is detached from the
/// tray (not its child, its own session), then closes it and waits until it has ended. The
/// real dashboard (`FABRIC_E2E_COMPANION`) is closed like a window manager's close button
/// does (WM_DELETE_WINDOW, `bench/wm_delete.py`); the stand-in gets SIGTERM.
fn expect_dashboard_start(desktop: &mut Desktop, n: usize, tray_pid: u32, what: &str) {
    let real = std::env::var_os("FABRIC_E2E_COMPANION").map(PathBuf::from);
    let (pid, ppid, sid) = match &real {
        Some(program) => wait_until(what, WAIT, || {
            processes_of(program, desktop.home()).first().copied()
        }),
        None => wait_until(what, WAIT, || companion_starts(desktop).get(n - 1).copied()),
    };
    desktop.procs.extra_pids.push(pid);
    // What the tray's GTK shell set for itself (GDK_GL=disable) is not passed on.
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    assert!(
        !environ
            .split(|b| *b == 0)
            .any(|var| var.starts_with(b"GDK_GL=") || var.starts_with(b"FABRIC_TRAY_SET_GDK_GL=")),
        "the dashboard inherited the tray's own GDK_GL"
    );
    assert_ne!(ppid, tray_pid, "the dashboard is not the tray's child");
    assert_eq!(sid, pid, "the dashboard leads its own session");
    if real.is_some() {
        let helper = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/wm_delete.py");
        let pid_text = pid.to_string();
        wait_until("the dashboard's window on screen", WAIT, || {
            let out = desktop.run("xdotool", &["search", "--onlyvisible", "--pid", &pid_text]);
            (!String::from_utf8_lossy(&out.stdout).trim().is_empty()).then_some(())
        });
        std::thread::sleep(Duration::from_secs(3));
        let _ = desktop.shot(&format!("dashboard-{n}-open"));
        wait_until(
            "the dashboard's window to take WM_DELETE_WINDOW",
            WAIT,
            || {
                let out = desktop.run("python3", &[helper.to_str().unwrap(), &pid_text]);
                out.status.success().then_some(())
            },
        );
    } else {
        // SAFETY: kill on the stand-in the tray started for us.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGTERM);
        }
    }
    wait_until("the dashboard to end", WAIT, || gone(pid).then_some(()));
}

/// Starts the tray with the watch interval at its floor (10 s: fast pid checks), the
/// dashboard's stand-in (or the real one) and fabric-session beside it as the app bundles it;
/// returns its pid and that fabric-session.
fn start_tray(desktop: &mut Desktop) -> (u32, PathBuf) {
    let companion = companion_program(desktop);
    std::fs::create_dir_all(desktop.config_dir()).unwrap();
    std::fs::write(
        desktop.config_dir().join("settings.json"),
        r#"{"watchIntervalSecs": 10}"#,
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
    (desktop.spawn_logged("fabric-tray", tray), session_bin)
}
