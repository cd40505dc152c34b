//! The hook fast path reads only what it needs: a config it does not need is never opened.
//! A file that would block whoever opens it (a FIFO with no writer) stands in for any config
//! that is slow, huge or on a dead network mount.

mod common;

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Home, stdout};

/// Far longer than a hook ever takes; a hook still running then is blocked on a FIFO.
const BLOCKED: Duration = Duration::from_secs(10);

fn make_fifo(path: &std::path::Path) {
    let _ = std::fs::remove_file(path);
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Runs a hook; `None` when it was still running after [`BLOCKED`] (it is then killed).
fn hook_unless_blocked(home: &Home, event: &str, host: &str, stdin: &[u8]) -> Option<String> {
    let mut child = home
        .command(&["hook", event, "--host", host])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > BLOCKED {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(stdout(&child.wait_with_output().unwrap()))
}

#[test]
fn kimi_prompts_after_the_preamble_read_no_config() {
    let home = Home::new();
    home.register("kimi");
    home.fabric_running(&[]);
    let payload = home.payload("k1", "UserPromptSubmit");
    let first = hook_unless_blocked(&home, "user-prompt-submit", "kimi", &payload).unwrap();
    assert!(first.starts_with("Fabric is running"), "{first}");
    // From now on the registration, hub.json and the services folder would block a reader.
    make_fifo(&home.path().join(".kimi-code/mcp.json"));
    make_fifo(&home.fabric_dir().join("hub.json"));
    std::fs::create_dir_all(home.services_dir()).unwrap();
    make_fifo(&home.services_dir().join("svc.main.json"));
    for _ in 0..2 {
        let next = hook_unless_blocked(&home, "user-prompt-submit", "kimi", &payload);
        assert_eq!(
            next.as_deref(),
            Some(""),
            "a prompt after the preamble opened a config it did not need"
        );
    }
}
