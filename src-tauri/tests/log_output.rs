//! The dashboard's log on stderr, as a person finds it in a file (`fabric-companion 2>
//! dashboard.log`, a desktop session's journal): plain text, no colour escapes (issue 21).
//! Colour is only for a terminal. The real binary starts without a display (its log is set
//! up, and its first line written, before any window): the tray it would start is named
//! missing, which it logs.

#![cfg(unix)] // a temporary HOME given by HOME and XDG variables

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn the_dashboards_log_in_a_file_has_no_colour_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let runtime = home.join("run");
    std::fs::create_dir_all(&runtime).unwrap();
    let file = dir.path().join("dashboard.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fabric-companion"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("FABRIC_TRAY_BIN", home.join("no-such-tray"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(&file).unwrap()))
        .spawn()
        .unwrap();
    let started = Instant::now();
    let bytes = loop {
        let bytes = std::fs::read(&file).unwrap_or_default();
        if String::from_utf8_lossy(&bytes).contains("not starting a tray") {
            break bytes;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the dashboard logged nothing: {}",
                String::from_utf8_lossy(&bytes)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        !bytes.contains(&0x1b),
        "colour escapes in the log: {:?}",
        String::from_utf8_lossy(&bytes)
    );
}
