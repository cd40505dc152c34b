//! `watch-mail` under Wine, started through `cmd /c` as an agent's background shell starts
//! it: it notices mail (one line when the count rises) and exits 0 when its input closes, as
//! the agent's background watcher ends it.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc::channel;
use std::time::Duration;

use crate::common::Person;

#[test]
fn watch_mail_notices_mail_and_exits_when_its_input_closes() {
    let Some(mut person) = Person::new("watch_mail") else {
        return;
    };
    person.register("codex");
    person.fabric_running(&["session-hooks/1"]);
    person.fake.set_unread(0);
    // As the agent's background shell starts it: a Windows parent that stays while it runs.
    let program = person
        .prefix
        .win(&person.prefix.bench().exe("fabric-session"));
    let mut command = person.prefix.wine("cmd");
    command.args([
        "/c",
        &program,
        "watch-mail",
        "--interval",
        "10",
        "--session-id",
        "watch-1",
        "--host",
        "codex",
    ]);
    command
        .envs(person.env())
        .current_dir(person.project())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("start watch-mail");
    let (send, lines) = channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    // Its first look finds nothing new; then mail arrives.
    wine_bench::wait_until("a first look", Duration::from_secs(40), || {
        !person.fake.tool_calls("com.status").is_empty()
    });
    person.fake.set_unread(2);
    let line = lines
        .recv_timeout(Duration::from_secs(60))
        .expect("watch-mail said nothing after the count rose");
    assert_eq!(line, "2 unread on the project board — com.list");
    // Its input closes: it ends, exit 0.
    drop(child.stdin.take());
    let out = wine_bench::wait_watched(child, "watch-mail after its stdin closed");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let log = person.log();
    assert!(log.contains("watch-mail"), "{log}");
    assert!(log.contains("stdin-closed"), "{log}");
}
