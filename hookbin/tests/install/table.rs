//! The table of real-world config files for each host (Claude Code's settings.json, Codex's
//! hooks.json, Kimi Code's config.toml), each case installed, applied twice, refused on a stale
//! digest, removed, and checked for the round trip back to the original.

use super::*;

/// How the file is there before the install.
#[derive(Clone, Copy, Debug)]
pub(super) enum Setup {
    /// The host's folder exists, the file does not.
    MissingFile,
    /// Neither the folder nor the file exists.
    MissingFolder,
    /// The file holds this text (mode 0640, to check modes are kept).
    Text(&'static str),
    /// The config path is a symlink to a file elsewhere holding this text.
    Symlink(&'static str),
    /// The file holds this text with mode 0400.
    ReadOnly(&'static str),
}

/// What must come back after install then remove.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// The very same bytes.
    SameBytes,
    /// The same data (JSON re-indented).
    SameData,
    /// This text (for files that were empty).
    Becomes(&'static str),
    /// No file, and no backup left by the removal (for files that did not exist).
    Absent,
    /// Every step refused with this error code, the file untouched.
    Refused(&'static str),
}

struct Case {
    name: &'static str,
    setup: Setup,
    expect: Expect,
}

pub(super) const SECRET: &str = "sk-live-never-print-me";

pub(super) const CLAUDE_SETTINGS: &str = r#"{
  "env": {
    "ANTHROPIC_API_KEY": "sk-live-never-print-me"
  },
  "permissions": {
    "allow": [
      "Bash(git status)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/guard.sh"
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          {
            "type": "command",
            "command": "echo hello",
            "timeout": 10
          }
        ]
      }
    ]
  },
  "enabledMcpjsonServers": [
    "github"
  ],
  "model": "opus"
}
"#;

pub(super) const CODEX_HOOKS: &str = r#"{
    "hooks": {
        "Stop": [
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": "notify-send 'Codex is done'",
                        "timeout": 30
                    }
                ]
            }
        ],
        "SessionStart": [
            {
                "matcher": "startup",
                "hooks": [
                    {
                        "type": "command",
                        "command": "echo sk-live-never-print-me"
                    }
                ]
            }
        ]
    }
}
"#;

pub(super) const KIMI_CONFIG: &str = r#"# Kimi Code settings
default_model = "kimi-k2"   # the fast one
api_key = "sk-live-never-print-me"

[models.kimi-k2]
provider = "moonshot"
max_context_size = 262144

[[hooks]]
event = "Stop"
matcher = ""
command = "notify-send 'Kimi is done'"
timeout = 10
"#;

const KIMI_ODD: &str = "#comment first\n\n\n  default_model='k2'#tight comment\n[ mcp . servers ]\n\tx = { url = \"http://127.0.0.1:1\" }   \n# a last comment, no final newline";

fn cases(host: &str) -> Vec<Case> {
    use Expect::*;
    use Setup::*;
    let mut cases = vec![
        Case {
            name: "missing file",
            setup: MissingFile,
            expect: Absent,
        },
        Case {
            name: "missing folder",
            setup: MissingFolder,
            expect: Absent,
        },
        Case {
            name: "empty file",
            setup: Text(""),
            expect: if host == "kimi" {
                SameBytes
            } else {
                Becomes("{}\n")
            },
        },
    ];
    let more = match host {
        "claude" => vec![
            Case {
                name: "other hooks, MCP servers and a secret",
                setup: Text(CLAUDE_SETTINGS),
                expect: SameBytes,
            },
            Case {
                name: "CRLF, no final newline",
                setup: Text("{\r\n  \"model\": \"opus\"\r\n}"),
                expect: SameBytes,
            },
            Case {
                name: "odd formatting (one line)",
                setup: Text(
                    r#"{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"true"}]}]}}"#,
                ),
                expect: SameData,
            },
            Case {
                name: "tabs",
                setup: Text("{\n\t\"model\": \"opus\"\n}\n"),
                expect: SameBytes,
            },
            Case {
                name: "does not parse",
                setup: Text("{\"model\": \"opus\",\n"),
                expect: Refused("not-parseable"),
            },
            Case {
                name: "wrong shape",
                setup: Text("{\"hooks\": [\"SessionStart\"]}\n"),
                expect: Refused("wrong-shape"),
            },
            Case {
                name: "symlinked file",
                setup: Symlink(CLAUDE_SETTINGS),
                expect: SameBytes,
            },
            Case {
                name: "read-only file",
                setup: ReadOnly(CLAUDE_SETTINGS),
                expect: Refused("read-only"),
            },
        ],
        "codex" => vec![
            Case {
                name: "other hooks (four spaces) and a secret",
                setup: Text(CODEX_HOOKS),
                expect: SameBytes,
            },
            Case {
                name: "CRLF",
                // An event we do not install: an empty list of one we do goes with our last
                // entry in it (we cannot tell it from one we made).
                setup: Text("{\r\n  \"hooks\": {\r\n    \"PreToolUse\": []\r\n  }\r\n}\r\n"),
                expect: SameBytes,
            },
            Case {
                name: "odd formatting (one line)",
                setup: Text("{ \"hooks\" : { \"PreToolUse\" : [ ] } }"),
                expect: SameData,
            },
            Case {
                name: "does not parse",
                setup: Text("{\"hooks\": {\"SessionStart\": [}}"),
                expect: Refused("not-parseable"),
            },
            Case {
                name: "wrong shape",
                setup: Text("{\"hooks\": {\"SessionStart\": {\"command\": \"x\"}}}"),
                expect: Refused("wrong-shape"),
            },
            Case {
                name: "symlinked file",
                setup: Symlink(CODEX_HOOKS),
                expect: SameBytes,
            },
            Case {
                name: "read-only file",
                setup: ReadOnly(CODEX_HOOKS),
                expect: Refused("read-only"),
            },
        ],
        _ => vec![
            Case {
                name: "other hooks, other settings and a secret",
                setup: Text(KIMI_CONFIG),
                expect: SameBytes,
            },
            Case {
                name: "comments and odd formatting",
                setup: Text(KIMI_ODD),
                expect: SameBytes,
            },
            Case {
                name: "CRLF",
                setup: Text(
                    "# kimi\r\ndefault_model = \"k2\"\r\n\r\n[models.k2]\r\nprovider = \"moonshot\"\r\n",
                ),
                expect: SameBytes,
            },
            Case {
                name: "does not parse",
                setup: Text("default_model = \"k2\napi_key = \"sk-live-never-print-me\"\n"),
                expect: Refused("not-parseable"),
            },
            Case {
                name: "wrong shape ([hooks] table)",
                setup: Text("[hooks]\nevent = \"SessionStart\"\n"),
                expect: Refused("wrong-shape"),
            },
            Case {
                name: "wrong shape (inline array)",
                setup: Text(
                    "hooks = [{ event = \"Stop\", matcher = \"\", command = \"x\", timeout = 1 }]\n",
                ),
                expect: Refused("wrong-shape"),
            },
            Case {
                name: "symlinked file",
                setup: Symlink(KIMI_CONFIG),
                expect: SameBytes,
            },
            Case {
                name: "read-only file",
                setup: ReadOnly(KIMI_CONFIG),
                expect: Refused("read-only"),
            },
        ],
    };
    cases.extend(more);
    cases
}

/// Lays the case's file out; returns the original bytes (`None`: no file).
pub(super) fn set_up(sandbox: &Sandbox, host: &str, setup: Setup) -> Option<Vec<u8>> {
    let config = sandbox.config(host);
    let dir = sandbox.host_dir(host);
    match setup {
        Setup::MissingFolder => None,
        Setup::MissingFile => {
            fs::create_dir_all(&dir).unwrap();
            None
        }
        Setup::Text(text) | Setup::ReadOnly(text) => {
            fs::create_dir_all(&dir).unwrap();
            fs::write(&config, text).unwrap();
            let mode = if matches!(setup, Setup::ReadOnly(_)) {
                0o400
            } else {
                0o640
            };
            fs::set_permissions(&config, fs::Permissions::from_mode(mode)).unwrap();
            Some(text.as_bytes().to_vec())
        }
        Setup::Symlink(text) => {
            fs::create_dir_all(&dir).unwrap();
            let dotfiles = sandbox.home.join("dotfiles");
            fs::create_dir_all(&dotfiles).unwrap();
            let target = dotfiles.join(config.file_name().unwrap());
            fs::write(&target, text).unwrap();
            fs::set_permissions(&target, fs::Permissions::from_mode(0o644)).unwrap();
            symlink(&target, &config).unwrap();
            Some(text.as_bytes().to_vec())
        }
    }
}

fn read(sandbox: &Sandbox, host: &str) -> Option<Vec<u8>> {
    fs::read(sandbox.config(host)).ok()
}

fn same_data(host: &str, a: &[u8], b: &[u8]) -> bool {
    let (a, b) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    if host == "kimi" {
        a.parse::<toml::Table>().unwrap() == b.parse::<toml::Table>().unwrap()
    } else {
        serde_json::from_str::<Value>(&a).unwrap() == serde_json::from_str::<Value>(&b).unwrap()
    }
}

fn check_table(host: &str) {
    for case in cases(host) {
        match case.expect {
            Expect::Refused(code) => check_refused(host, &case, code),
            _ => check_round_trip(host, &case),
        }
    }
}

#[test]
fn claude_code_settings_table() {
    check_table("claude");
}

#[test]
fn codex_hooks_table() {
    check_table("codex");
}

#[test]
fn kimi_code_config_table() {
    check_table("kimi");
}

fn check_round_trip(host: &str, case: &Case) {
    let what = format!("{host} / {}", case.name);
    let sandbox = Sandbox::new();
    let stable = sandbox.install_stable_binary();
    let original = set_up(&sandbox, host, case.setup);
    let original_mode = original.as_ref().map(|_| mode(&sandbox.config(host)));
    let digest = original
        .as_deref()
        .map(sha256_of)
        .unwrap_or_else(|| "absent".into());
    let config = sandbox.config(host);

    // Dry run, for a person: the file, its digest, our entries, the command; nothing else.
    let dry = sandbox.install(host, &[]);
    dry.ok();
    assert!(
        dry.stdout.contains(&config.display().to_string()),
        "{what}: {}",
        dry.stdout
    );
    match &original {
        Some(_) => assert!(dry.stdout.contains(&format!("sha256: {digest}")), "{what}"),
        None => assert!(dry.stdout.contains("does not exist yet"), "{what}"),
    }
    let expected_command = format!("{} hook session-start", stable.display());
    assert!(
        dry.stdout.contains(&expected_command),
        "{what}: {}",
        dry.stdout
    );
    // The command applies exactly this plan: its digest covers the file and the entries.
    let plan = sandbox.plan(host, &[]);
    let plan_digest = plan["digest"].as_str().unwrap().to_string();
    assert_eq!(plan_digest.len(), 64, "{what}");
    assert_ne!(
        plan_digest, digest,
        "{what}: the plan digest is not the file's"
    );
    assert!(
        dry.stdout.contains(&format!(
            "install-host-hooks --host {host} --apply --expect-sha256 {plan_digest}"
        )),
        "{what}: {}",
        dry.stdout
    );
    assert!(
        !dry.stdout.contains(SECRET),
        "{what}: a value from the file was printed"
    );
    assert_eq!(read(&sandbox, host), original, "{what}: the dry run wrote");

    // The same plan as data.
    match &original {
        Some(_) => assert_eq!(plan["sha256"], digest.as_str(), "{what}"),
        None => assert_eq!(plan["sha256"], Value::Null, "{what}"),
    }
    assert_eq!(plan["action"]["kind"], "install", "{what}");
    assert_eq!(plan["exists"], original.is_some(), "{what}");
    assert_eq!(
        plan["add"].as_array().unwrap().len(),
        our_events(host).len(),
        "{what}"
    );
    assert!(
        !plan.to_string().contains(SECRET),
        "{what}: a value from the file was in --json"
    );

    // The file's own digest is not the plan's: refused, nothing written.
    let file_only = sandbox.install(host, &["--apply", "--expect-sha256", &digest]);
    file_only.refused();
    assert_eq!(
        read(&sandbox, host),
        original,
        "{what}: applied on a file digest"
    );

    // Apply.
    let applied = sandbox.install(host, &["--apply", "--expect-sha256", &plan_digest]);
    applied.ok();
    let installed = read(&sandbox, host).expect("the file exists after an install");
    let mut events: Vec<String> = our_commands(host, &String::from_utf8_lossy(&installed))
        .into_iter()
        .map(|(event, command)| {
            assert!(
                command.starts_with(&stable.display().to_string()),
                "{what}: {command}"
            );
            event
        })
        .collect();
    let mut expected_events = our_events(host);
    events.sort();
    expected_events.sort();
    assert_eq!(events, expected_events, "{what}: one entry per event");
    match original_mode {
        Some(mode_before) => {
            let real = fs::canonicalize(&config).unwrap();
            assert_eq!(mode(&real), mode_before, "{what}: mode kept");
        }
        None => {
            assert_eq!(mode(&config), 0o600, "{what}: a new file is private");
            if matches!(case.setup, Setup::MissingFolder) {
                assert_eq!(
                    mode(&sandbox.host_dir(host)),
                    0o700,
                    "{what}: a new folder is private"
                );
            }
        }
    }
    if matches!(case.setup, Setup::Symlink(_)) {
        let meta = fs::symlink_metadata(&config).unwrap();
        assert!(meta.file_type().is_symlink(), "{what}: still a symlink");
        assert_eq!(
            fs::read_link(&config).unwrap(),
            sandbox
                .home
                .join("dotfiles")
                .join(config.file_name().unwrap()),
            "{what}: same target"
        );
    }
    let backups = sandbox.backups(host);
    match &original {
        Some(bytes) => {
            assert_eq!(backups.len(), 1, "{what}: one backup");
            assert_eq!(
                &fs::read(&backups[0]).unwrap(),
                bytes,
                "{what}: backup holds the original"
            );
            assert!(
                applied.stdout.contains(&backups[0].display().to_string()),
                "{what}"
            );
        }
        None => assert!(backups.is_empty(), "{what}: nothing to back up"),
    }

    // A second apply finds nothing to do and writes nothing.
    let again = sandbox.plan(host, &[]);
    assert_eq!(again["action"]["kind"], "nothing-to-do", "{what}");
    assert_eq!(again["apply_command"], Value::Null, "{what}");
    let second = sandbox.apply(host, &[]);
    second.ok();
    assert!(
        second.stdout.contains("nothing to do"),
        "{what}: {}",
        second.stdout
    );
    assert_eq!(
        read(&sandbox, host).as_deref(),
        Some(&installed[..]),
        "{what}: idempotent"
    );
    assert_eq!(
        sandbox.backups(host).len(),
        backups.len(),
        "{what}: no backup for nothing"
    );

    // The digest from before the install is stale now: refused, file untouched.
    let stale = sandbox.install(host, &["--remove", "--apply", "--expect-sha256", &digest]);
    stale.refused();
    assert!(
        stale.stderr.contains("changed since the dry run"),
        "{what}: {}",
        stale.stderr
    );
    assert_eq!(
        read(&sandbox, host).as_deref(),
        Some(&installed[..]),
        "{what}: untouched"
    );

    // Remove: back to the original.
    let removal = sandbox.plan(host, &["--remove"]);
    assert_eq!(removal["action"]["kind"], "remove", "{what}");
    assert_eq!(
        removal["remove"].as_array().unwrap().len(),
        our_events(host).len(),
        "{what}"
    );
    assert_eq!(
        removal["removes_file"],
        matches!(case.expect, Expect::Absent),
        "{what}"
    );
    if matches!(case.expect, Expect::Absent) {
        let dry = sandbox.install(host, &["--remove"]);
        dry.ok();
        assert!(
            dry.stdout.contains("it would be deleted (no backup)"),
            "{what}: {}",
            dry.stdout
        );
    }
    let removed = sandbox.apply(host, &["--remove"]);
    removed.ok();
    if matches!(case.expect, Expect::Absent) {
        assert_eq!(
            read(&sandbox, host),
            None,
            "{what}: no file, as before the install"
        );
        assert!(
            sandbox.backups(host).is_empty(),
            "{what}: no backup of our own entries: {:?}",
            sandbox.backups(host)
        );
        let dry = sandbox.install(host, &["--remove"]);
        dry.ok();
        assert!(
            dry.stdout.contains("Not installed"),
            "{what}: {}",
            dry.stdout
        );
        return;
    }
    let after = read(&sandbox, host).expect("the file stays after a removal");
    match (case.expect, &original) {
        (Expect::SameBytes, Some(bytes)) => assert_eq!(
            String::from_utf8_lossy(&after),
            String::from_utf8_lossy(bytes),
            "{what}: byte-identical round trip"
        ),
        (Expect::SameData, Some(bytes)) => {
            assert!(
                same_data(host, &after, bytes),
                "{what}: same data after the round trip"
            )
        }
        (Expect::Becomes(text), _) => {
            assert_eq!(String::from_utf8_lossy(&after), text, "{what}: round trip")
        }
        (expect, original) => panic!("{what}: bad case {expect:?} for {original:?}"),
    }
    if let Some(mode_before) = original_mode {
        assert_eq!(
            mode(&fs::canonicalize(&config).unwrap()),
            mode_before,
            "{what}: mode kept"
        );
    }
    let backups_now = sandbox.backups(host);
    assert_eq!(
        backups_now.len(),
        backups.len() + 1,
        "{what}: one more backup"
    );
    if let Some(bytes) = &original {
        assert_eq!(
            &fs::read(&backups_now[0]).unwrap(),
            bytes,
            "{what}: never overwritten"
        );
    }

    // Removing again: nothing to do.
    let nothing = sandbox.install(host, &["--remove"]);
    nothing.ok();
    assert!(
        nothing.stdout.contains("Not installed"),
        "{what}: {}",
        nothing.stdout
    );
}

fn check_refused(host: &str, case: &Case, code: &str) {
    let what = format!("{host} / {}", case.name);
    let sandbox = Sandbox::new();
    sandbox.install_stable_binary();
    let original = set_up(&sandbox, host, case.setup).expect("refused cases have a file");
    let config = sandbox.config(host);
    let digest = sha256_of(&original);
    let steps: [&[&str]; 4] = [
        &[],
        &["--remove"],
        &["--apply", "--expect-sha256", &digest],
        &["--remove", "--apply", "--expect-sha256", &digest],
    ];
    for args in steps {
        let run = sandbox.install(host, args);
        // A read-only file with nothing of ours has nothing to remove: no write, no refusal.
        if code == "read-only" && args.contains(&"--remove") {
            run.ok();
            continue;
        }
        run.refused();
        assert_eq!(run.stdout, "", "{what} {args:?}: nothing on stdout");
        assert!(
            run.stderr.contains(&config.display().to_string()),
            "{what}: {}",
            run.stderr
        );
        assert!(
            !run.stderr.contains(SECRET),
            "{what}: a value from the file was printed"
        );
        let mut json_args = args.to_vec();
        json_args.push("--json");
        let json = sandbox.install(host, &json_args);
        json.refused();
        assert_eq!(json.json()["error"]["code"], code, "{what} {args:?}");
    }
    assert_eq!(fs::read(&config).unwrap(), original, "{what}: untouched");
    assert!(sandbox.backups(host).is_empty(), "{what}: no backup");
}
