//! The tray's log on stderr, as a person finds it in a file or a pipe (a login session's
//! journal, `fabric-tray 2> tray.log`): plain text, no colour escapes (issue 21). Colour is
//! only for a terminal. The real binary runs without a display or a session bus, its stderr
//! into a file and into a pipe, until it has logged a few lines.

#![cfg(unix)] // a temporary HOME given by HOME and XDG variables

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(20);

fn tray(home: &Path, stderr: Stdio) -> Child {
    let runtime = home.join("run");
    std::fs::create_dir_all(&runtime).unwrap();
    Command::new(env!("CARGO_BIN_EXE_fabric-tray"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("FABRIC_TRAY_LOG", "debug")
        // Without a tray host the tray would start the dashboard: there is none to start.
        .env("FABRIC_COMPANION_BIN", home.join("no-such-dashboard"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Waits until `read()` holds a tracing line the tray logs early (the file watcher starting).
fn logged(what: &str, mut read: impl FnMut() -> Vec<u8>) -> Vec<u8> {
    let started = Instant::now();
    loop {
        let bytes = read();
        if String::from_utf8_lossy(&bytes).contains("DEBUG") {
            return bytes;
        }
        assert!(
            started.elapsed() < WAIT,
            "{what}: nothing logged: {}",
            String::from_utf8_lossy(&bytes)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assert_plain(what: &str, bytes: &[u8]) {
    assert!(
        !bytes.contains(&0x1b),
        "{what}: colour escapes in the log: {:?}",
        String::from_utf8_lossy(bytes)
    );
}

#[test]
fn the_trays_log_in_a_file_or_a_pipe_has_no_colour_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tray.log");
    let child = tray(
        &dir.path().join("home-file"),
        Stdio::from(std::fs::File::create(&file).unwrap()),
    );
    let bytes = logged("a file", || std::fs::read(&file).unwrap_or_default());
    stop(child);
    assert_plain("a file", &bytes);

    let mut child = tray(&dir.path().join("home-pipe"), Stdio::piped());
    let mut stderr = child.stderr.take().unwrap();
    let (sent, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut chunk) {
            if n == 0 || sent.send(chunk[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut all = Vec::new();
    let bytes = logged("a pipe", || {
        all.extend(received.try_iter().flatten());
        all.clone()
    });
    stop(child);
    assert_plain("a pipe", &bytes);
}
