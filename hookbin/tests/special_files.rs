//! Special files at every path we read (issue 15): a FIFO, `/dev/zero` through a symlink, a
//! folder, a symlink loop and an unreadable file at `hub.json`, `~/.claude.json`, the
//! project's `.mcp.json`, a service descriptor, `hooks.log`, the session's `board.json`,
//! `~/.claude/settings.json`, Codex's `config.toml` and `hooks.json`, Kimi Code's `mcp.json`
//! and `config.toml`. Every hook event of every host and `status` (text and JSON) run as the
//! real binary under a watchdog (a hang is killed and fails the test; nothing is timed), exit
//! 0, and say exactly what they say when that file is simply absent. The detached workers
//! they start end too. The special file is left as it was.

#![cfg(target_os = "linux")] // FIFOs, /dev/zero, symlink loops, and workers found in /proc

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{Home, write};
use test_support::special_files::{Kind, dev_zero_is_a_device, running_as_root};
use test_support::watchdog::run_watched;

/// A hung process is killed after this long (a failure, not a measurement).
const WATCHDOG: Duration = Duration::from_secs(20);
const HOSTS: [&str; 3] = ["claude", "codex", "kimi"];
const EVENTS: [(&str, &str); 4] = [
    ("session-start", "SessionStart"),
    ("user-prompt-submit", "UserPromptSubmit"),
    ("stop", "Stop"),
    ("session-end", "SessionEnd"),
];

/// The word the hook log's skip line names for `kind` (an open error is logged as
/// unreadable).
fn logged(kind: Kind) -> &'static str {
    match kind {
        Kind::Fifo => "fifo",
        Kind::DevZero => "device",
        Kind::Directory => "directory",
        Kind::SymlinkLoop | Kind::Unreadable => "unreadable",
    }
}

/// Who reads a path: whether the hooks do (so their log names the skip).
#[derive(Clone, Copy)]
struct Target {
    name: &'static str,
    path: fn(&Home, &str) -> PathBuf,
    /// Per session (the spool's files): planted for every host's session.
    per_session: bool,
    /// Read by a hook (the skip is logged) as well as by `status`.
    read_by_hooks: bool,
    /// A host's hook config, which our installer would replace: status says it cannot read
    /// or write it (so no one is invited to install over it) instead of "not installed".
    hook_config: bool,
}

fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "hub.json",
            path: |h, _| h.fabric_dir().join("hub.json"),
            per_session: false,
            read_by_hooks: true,
            hook_config: false,
        },
        Target {
            name: ".claude.json",
            path: |h, _| h.path().join(".claude.json"),
            per_session: false,
            read_by_hooks: true,
            hook_config: false,
        },
        Target {
            name: ".mcp.json",
            path: |h, _| h.project().join(".mcp.json"),
            per_session: false,
            read_by_hooks: true,
            hook_config: false,
        },
        Target {
            name: "zz-planted.json",
            path: |h, _| h.services_dir().join("zz-planted.json"),
            per_session: false,
            read_by_hooks: true,
            hook_config: false,
        },
        Target {
            name: "hooks.log",
            path: |h, _| h.log_path(),
            per_session: false,
            read_by_hooks: false,
            hook_config: false,
        },
        Target {
            name: "board.json",
            path: |h, s| h.spool(s).join("board.json"),
            per_session: true,
            read_by_hooks: true,
            hook_config: false,
        },
        Target {
            name: "settings.json",
            path: |h, _| h.path().join(".claude/settings.json"),
            per_session: false,
            read_by_hooks: false,
            hook_config: true,
        },
        Target {
            name: "config.toml",
            path: |h, _| h.path().join(".codex/config.toml"),
            per_session: false,
            read_by_hooks: true,
            hook_config: false,
        },
        Target {
            name: "hooks.json",
            path: |h, _| h.path().join(".codex/hooks.json"),
            per_session: false,
            read_by_hooks: false,
            hook_config: true,
        },
        Target {
            name: "mcp.json",
            path: |h, _| h.path().join(".kimi-code/mcp.json"),
            per_session: false,
            read_by_hooks: true,
            hook_config: false,
        },
        Target {
            name: "config.toml",
            path: |h, _| h.path().join(".kimi-code/config.toml"),
            per_session: false,
            read_by_hooks: false,
            hook_config: true,
        },
    ]
}

fn session_of(host: &str) -> String {
    format!("sess-{host}")
}

/// A home where every file the targets name exists and matters: all three hosts registered
/// (user scope and the project's `.mcp.json`), Fabric running with session hooks, a local
/// service, each host's hook config present.
fn populated_home() -> Home {
    let home = Home::new();
    for host in HOSTS {
        home.register(host);
    }
    home.fabric_running(&["session-hooks/1"]);
    write(
        &home.project().join(".mcp.json"),
        r#"{"mcpServers": {"fabric": {"command": "fabric-mcp"}}}"#,
    );
    write(
        &home.services_dir().join("aa-notes.json"),
        r#"{"schema": "fabric-service/0.1", "name": "notes", "origin": "http://127.0.0.1:47100"}"#,
    );
    write(
        &home.path().join(".claude/settings.json"),
        r#"{"theme": "dark"}"#,
    );
    write(&home.path().join(".codex/hooks.json"), r#"{"hooks": {}}"#);
    write(
        &home.path().join(".kimi-code/config.toml"),
        "default_model = \"k2\"\n",
    );
    home
}

/// Pids of `fabric-session worker` processes working in this home.
fn workers_in(home: &Home) -> Vec<u32> {
    let needle = home.path().as_os_str().as_encoded_bytes().to_vec();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .ok()
            .and_then(|s| s.rsplit_once(") ").map(|(_, r)| r.starts_with('Z')))
            .unwrap_or(true);
        if !zombie
            && cmdline.split(|&b| b == 0).any(|arg| arg == b"worker")
            && cmdline
                .windows(needle.len())
                .any(|w| w == needle.as_slice())
        {
            pids.push(pid);
        }
    }
    pids
}

/// What one home said: every hook's output and `status`, with the home's path taken out.
#[derive(Debug, PartialEq)]
struct Transcript(Vec<(String, i32, String, String)>);

fn run_everything(home: &Home, label: &str) -> Transcript {
    let mut said = Vec::new();
    let scrub = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes).replace(&home.path().display().to_string(), "$HOME")
    };
    for json in [false, true] {
        let mut command = home.command(if json {
            &["status", "--json"]
        } else {
            &["status"]
        });
        command.current_dir(home.project());
        let what = format!("{label}: status (json {json})");
        let out = run_watched(command, b"", &what, WATCHDOG);
        said.push((
            what,
            out.status.code().unwrap_or(-1),
            scrub(&out.stdout),
            String::new(),
        ));
        if let Some(note) = scrub(&out.stderr)
            .lines()
            .find(|l| !l.contains("read as absent"))
        {
            panic!("{label}: status said on stderr: {note}");
        }
    }
    for host in HOSTS {
        let session = session_of(host);
        for (event, name) in EVENTS {
            let what = format!("{label}: {event} --host {host}");
            let out = run_watched(
                home.command(&["hook", event, "--host", host]),
                &home.payload(&session, name),
                &what,
                WATCHDOG,
            );
            said.push((
                what,
                out.status.code().unwrap_or(-1),
                scrub(&out.stdout),
                scrub(&out.stderr),
            ));
        }
    }
    let start = Instant::now();
    while !workers_in(home).is_empty() {
        assert!(
            start.elapsed() < WATCHDOG,
            "{label}: workers still running: {:?}",
            workers_in(home)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    said.iter_mut().for_each(|(what, ..)| {
        *what = what
            .split_once(": ")
            .map_or(what.clone(), |(_, w)| w.into())
    });
    Transcript(said)
}

/// Status's JSON holds times and the live pid; keep only the fields that do not move. Status
/// tells an unreadable `hub.json` (a loop) from a missing one; both are "Fabric down", so
/// the reason's wording is taken out (the state stays).
fn stable(transcript: &Transcript, hook_config: bool) -> Vec<(String, i32, String, String)> {
    transcript
        .0
        .iter()
        .map(|(what, code, out, err)| {
            let out = if what.contains("status") {
                out.replace("(hub.json unreadable)", "(no hub.json)")
                    .lines()
                    .map(|l| match l.find("hooks unknown (cannot read or write") {
                        Some(at) if hook_config => format!("{}hooks not installed", &l[..at]),
                        _ if hook_config => {
                            l.replace("\"state\": \"unreadable\"", "\"state\": \"not-installed\"")
                        }
                        _ => l.to_string(),
                    })
                    .filter(|l| {
                        !l.contains("_at")
                            && !l.contains("At\"")
                            && !l.contains("\"pid\"")
                            && !l.contains("downReason")
                            && !l.contains("ago")
                            && (!hook_config || !l.contains("\"description\""))
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                out.clone()
            };
            (what.clone(), *code, out, err.clone())
        })
        .collect()
}

fn check_target(target: Target) {
    let running_as_root = running_as_root();
    // The baseline: the same home with the file absent.
    let baseline = {
        let home = populated_home();
        for host in HOSTS {
            let path = (target.path)(&home, &session_of(host));
            let _ = std::fs::remove_file(&path);
            if !target.per_session {
                break;
            }
        }
        stable(
            &run_everything(&home, &format!("{} absent", target.name)),
            target.hook_config,
        )
    };
    for (i, (what, code, _, err)) in baseline.iter().enumerate() {
        assert_eq!(*code, 0, "{what}");
        assert_eq!(err, "", "{what}");
        assert!(i < 2 || !baseline[i].2.contains("PROMPT-CONTENT"));
    }
    for kind in Kind::ALL {
        if kind == Kind::Unreadable && running_as_root {
            eprintln!(
                "special_files: {} unreadable: skipped, running as root (mode 000 is readable to root)",
                target.name
            );
            continue;
        }
        let home = populated_home();
        let label = format!("{} as {kind:?}", target.name);
        let mut planted = Vec::new();
        for host in HOSTS {
            let path = (target.path)(&home, &session_of(host));
            kind.plant(&path);
            planted.push(path);
            if !target.per_session {
                break;
            }
        }
        let said = run_everything(&home, &label);
        // Once a spool write followed a link to /dev/zero and renamed over the device.
        assert!(
            dev_zero_is_a_device(),
            "{label}: /dev/zero is no longer a device"
        );
        if target.hook_config {
            let text = &said.0[0].2;
            assert!(
                text.contains("hooks unknown (cannot read or write"),
                "{label}: status does not say the hook config cannot be read:\n{text}"
            );
        }
        let said = stable(&said, target.hook_config);
        assert_eq!(
            said.len(),
            baseline.len(),
            "{label}: a different set of runs"
        );
        let differences: Vec<String> = said
            .iter()
            .zip(&baseline)
            .filter(|(got, want)| got != want)
            .map(|(got, want)| format!("{label}:\n  got  {got:?}\n  want {want:?}"))
            .collect();
        assert!(
            differences.is_empty(),
            "differs from the file being absent:\n{}",
            differences.join("\n")
        );
        if !target.per_session {
            for path in &planted {
                assert!(
                    kind.still_there(path),
                    "{label}: the special file was replaced"
                );
            }
        }
        if target.read_by_hooks {
            let log = home.log_text();
            let line = format!("skipped={} file={}", logged(kind), target.name);
            assert!(
                log.contains(&line),
                "{label}: no `{line}` in the hook log:\n{log}"
            );
            assert!(!log.contains("PROMPT-CONTENT"), "{label}");
        }
    }
}

#[test]
fn every_hook_and_status_treat_a_special_file_anywhere_as_absent_and_never_hang() {
    let targets = targets();
    // Four at a time: each target runs ~80 processes.
    for chunk in targets.chunks(4) {
        std::thread::scope(|scope| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|&target| scope.spawn(move || check_target(target)))
                .collect();
            for handle in handles {
                if let Err(panic) = handle.join() {
                    std::panic::resume_unwind(panic);
                }
            }
        });
    }
}
