//! `install-host-hooks` under Wine for every host: the dry run, the apply it prints, each
//! written command run the way its host runs it on Windows (Codex through `cmd /C`, Kimi Code
//! through `cmd /d /s /c "…"`, Claude Code's directly: Git Bash is not there), a folder with
//! a space through its 8.3 short name, and the removal: a file our install created is given
//! back as no file, with no backup left.

use serde_json::Value;
use wine_bench::host::{Host, Job, Shell};
use wine_bench::payload;

use crate::common::{HOSTS, Person};

#[test]
fn dry_run_apply_and_remove_for_every_host_with_each_command_run_as_its_host_runs_it() {
    let Some(mut person) = Person::new("install_dry_run_apply_remove") else {
        return;
    };
    for host in HOSTS {
        person.register(host);
    }
    person.fabric_running(&[]);
    let stable = person.install_stable_copy();
    let stable_win = person.prefix.win(&stable);
    let cwd = person.project_win();
    for host in HOSTS {
        let config = person.config(host);
        assert!(
            !config.exists(),
            "{host}: a fresh machine has no {}",
            config.display()
        );
        let dry = person.install_hooks(host, &[]);
        assert!(
            dry.starts_with("Dry run: nothing was written."),
            "{host}:\n{dry}"
        );
        assert!(dry.contains(&person.prefix.win(&config)), "{host}:\n{dry}");
        assert!(dry.contains("does not exist yet"), "{host}:\n{dry}");
        let commands = person.commands(host);
        let events: Vec<&str> = commands.keys().map(String::as_str).collect();
        assert_eq!(events, payload::host_events(host), "{host}");
        // The stable copy, written the way the host's shell reads it.
        let (program, suffix) = match host {
            "claude" => (stable_win.replace('\\', "/"), String::new()),
            other => (stable_win.clone(), format!(" --host {other}")),
        };
        assert_eq!(
            commands["SessionStart"],
            format!("{program} hook session-start{suffix}"),
            "{host}"
        );
        // Each command, through the host's shell.
        let mut agent = Host::start(&person.prefix, Shell::of(host), Job::None, &person.env());
        for (event, command) in &commands {
            let ran = agent.run(command, &payload::input(host, event, "install-1", &cwd));
            assert_eq!(ran.code, Some(0), "{host} {event}: {ran:?}");
            assert_eq!(ran.stderr, "", "{host} {event}: {ran:?}");
            if event == "SessionStart" && host != "kimi" {
                assert!(ran.stdout.contains("Fabric is running"), "{host}: {ran:?}");
            }
        }
        agent.end();
        // status sees them installed.
        let status = person.status_json();
        let hooks = status["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| {
                h["host"] == host
                    || h["id"] == host
                    || h["name"]
                        .as_str()
                        .is_some_and(|n| n.to_ascii_lowercase().starts_with(host))
            })
            .cloned()
            .unwrap_or(Value::Null);
        assert!(
            hooks.to_string().contains("installed"),
            "{host}: status does not show the hooks installed: {status}"
        );
        // Remove: our install created the file, so none is left, and no backup.
        let removal = person.session(&["install-host-hooks", "--host", host, "--remove"], b"");
        let text = String::from_utf8_lossy(&removal.stdout).into_owned();
        assert!(
            text.contains("it would be deleted (no backup)"),
            "{host}:\n{text}"
        );
        person.install_hooks(host, &["--remove"]);
        assert!(
            !config.exists(),
            "{host}: {} is left after the removal",
            config.display()
        );
        let folder = config.parent().unwrap();
        let leftovers: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains(".bak"))
            .collect();
        assert!(leftovers.is_empty(), "{host}: backups left: {leftovers:?}");
    }
}

#[test]
fn a_program_in_a_folder_with_a_space_runs_through_cmd_by_its_short_name() {
    let Some(mut person) = Person::new("install_spaced_folder") else {
        return;
    };
    for host in ["codex", "kimi"] {
        person.register(host);
    }
    person.fabric_running(&[]);
    let folder = person.prefix.profile().join("My Tools");
    std::fs::create_dir_all(&folder).unwrap();
    let program = folder.join("fabric-session.exe");
    std::fs::copy(person.prefix.bench().exe("fabric-session"), &program).unwrap();
    let program_win = person.prefix.win(&program);
    let cwd = person.project_win();
    for host in ["codex", "kimi"] {
        person.install_hooks(host, &["--script", &program_win]);
        let command = person.commands(host)["SessionStart"].clone();
        if host == "codex" {
            // Codex's cmd argument cannot be quoted: the folder's 8.3 name stands in.
            assert!(
                !command.contains(' ') || !command.split(" hook ").next().unwrap().contains(' '),
                "{command}"
            );
            assert!(command.contains('~'), "no short name in {command}");
        } else {
            assert!(
                command.starts_with(&format!("\"{program_win}\" hook session-start"))
                    || command.contains('~'),
                "{command}"
            );
        }
        let mut agent = Host::start(&person.prefix, Shell::of(host), Job::None, &person.env());
        let ran = agent.run(
            &command,
            &payload::input(host, "SessionStart", "spaced-1", &cwd),
        );
        assert_eq!(ran.code, Some(0), "{host}: {command}: {ran:?}");
        assert_eq!(ran.stderr, "", "{host}: {ran:?}");
        if host == "codex" {
            assert!(ran.stdout.starts_with("Fabric is running"), "{ran:?}");
        }
        agent.end();
    }
}
