//! Every way the command exits: the end of a piped stdin, signals, its parent killed, a look
//! hanging, a huge interval.

use super::*;

/// A watcher that has said its first line (Fabric down: no child), so it is fully running.
fn settled_watcher(home: &Home, stdin: Stdio) -> Running {
    let running = Running::start_with(home, &["--session-id", "s1", "--interval", "10"], stdin);
    assert!(
        running
            .line(FIRST_LINE)
            .starts_with("Fabric is not running")
    );
    running
}

fn registered_home() -> Home {
    let home = Home::new();
    home.register("claude");
    home
}

#[test]
fn exits_at_the_end_of_a_piped_stdin() {
    let home = registered_home();
    let mut running = settled_watcher(&home, Stdio::piped());
    // Input is read and ignored; only its end stops the watcher.
    running
        .stdin
        .as_mut()
        .unwrap()
        .write_all(b"anything\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(running.child.try_wait().unwrap().is_none());
    running.close_stdin();
    assert!(running.exits_within(EXIT_LIMIT).success());
    assert!(home.log_text().contains("stop reason=stdin-closed"));
}

#[test]
fn a_stdin_that_is_not_a_pipe_is_not_an_end() {
    let home = registered_home();
    let mut running = settled_watcher(&home, Stdio::null());
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        running.child.try_wait().unwrap().is_none(),
        "/dev/null's end stopped it"
    );
    running.signal(libc::SIGTERM);
    assert!(running.exits_within(EXIT_LIMIT).success());
}

#[test]
fn exits_cleanly_on_sigterm_sigint_and_sighup() {
    for (signal, word) in [
        (libc::SIGTERM, "sigterm"),
        (libc::SIGINT, "sigint"),
        (libc::SIGHUP, "sighup"),
    ] {
        let home = registered_home();
        let mut running = settled_watcher(&home, Stdio::piped());
        running.signal(signal);
        let status = running.exits_within(EXIT_LIMIT);
        assert_eq!(status.code(), Some(0), "{word}: {status:?}");
        assert!(
            home.log_text().contains(&format!("stop reason={word}")),
            "{word}"
        );
    }
}

#[test]
fn exits_within_a_second_while_a_look_hangs_and_leaves_no_fabric_mcp_running() {
    let home = ready_home(1);
    home.fake.set_mode("hang");
    let running = Running::start(&home, &["--session-id", "s1", "--interval", "10"]);
    common::wait_until("the hanging com.status", FIRST_LINE, || {
        !home.fake.tool_calls("com.status").is_empty()
    });
    let mut running = running;
    running.signal(libc::SIGTERM);
    assert_eq!(running.exits_within(EXIT_LIMIT).code(), Some(0));
    // Killed with the watcher: gone, or a zombie left to whoever adopted it.
    for pid in fake_pids(&home) {
        common::wait_until("the hung fabric-mcp to die", EXIT_LIMIT, || {
            matches!(process_state(pid), None | Some('Z'))
        });
    }
}

#[test]
fn exits_when_its_parent_is_killed() {
    let home = registered_home();
    // The watcher runs under a shell; the shell is then killed outright.
    let template = home.command(&[]);
    let mut shell = Command::new("sh");
    shell.env_clear();
    for (key, value) in template.get_envs() {
        if let Some(value) = value {
            shell.env(key, value);
        }
    }
    shell
        .current_dir(home.path())
        .arg("-c")
        .arg(r#""$0" watch-mail --session-id s1 --interval 10 & echo "$!"; wait"#)
        .arg(common::BIN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut shell = shell.spawn().unwrap();
    let lines = read_lines(shell.stdout.take().unwrap());
    let pid: u32 = lines
        .recv_timeout(FIRST_LINE)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let first = lines.recv_timeout(FIRST_LINE).unwrap();
    assert!(first.starts_with("Fabric is not running"), "{first}");
    shell.kill().unwrap();
    shell.wait().unwrap();
    let killed = StdInstant::now();
    // Gone, or exited and waiting for whoever adopted it to reap it.
    while matches!(process_state(pid), Some(state) if state != 'Z') {
        assert!(
            killed.elapsed() < EXIT_LIMIT,
            "watch-mail {pid} outlived its parent"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    common::wait_until("the stop line", Duration::from_secs(5), || {
        home.log_text()
            .contains(" watch-mail claude s1 ok stop reason=")
    });
}

/// Issue 21: `--interval 18446744073709551615` (2^64-1) panicked with "overflow when adding
/// duration to instant" once the first look was answered. The interval is clamped to its
/// documented range (10 s to 24 hours): the first look is said, the next is a day away, and
/// the end of stdin ends it cleanly (exit 0, no panic on stderr); with Fabric down the wait
/// said is a day.
#[test]
fn a_huge_interval_is_clamped_to_a_day_and_exits_cleanly() {
    let home = ready_home(3);
    let huge = u64::MAX.to_string();
    let run = |home: &Home| {
        let mut command = home.command(&["watch-mail", "--session-id", "s1", "--interval", &huge]);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = read_lines(child.stdout.take().unwrap());
        let first = lines.recv_timeout(FIRST_LINE).expect("a first line");
        // The look's answer is handled (the next look scheduled) before stdin closes.
        common::wait_until("the look's log line", FIRST_LINE, || {
            let log = home.log_text();
            log.contains(" watch-mail claude s1 ok unread=") || log.contains("down")
        });
        std::thread::sleep(Duration::from_millis(300));
        drop(stdin);
        let started = StdInstant::now();
        while child.try_wait().unwrap().is_none() {
            assert!(started.elapsed() < Duration::from_secs(5), "never exited");
            std::thread::sleep(Duration::from_millis(10));
        }
        let out = child.wait_with_output().unwrap();
        (first, out)
    };
    let (first, out) = run(&home);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(first, "3 unread on the project board — com.list");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let log = home.log_text();
    assert!(
        log.contains(" watch-mail claude s1 ok start interval=86400"),
        "{log}"
    );
    assert!(log.contains(" stop reason=stdin-closed"), "{log}");

    let home = registered_home();
    let (first, out) = run(&home);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(first, "Fabric is not running; watching again in 24h.");
}
