//! The Windows package (`packaging/windows/fabric-companion.nsi`, made by
//! `scripts/build-windows-installer.sh --debug` with Debian's makensis) installed silently
//! under Wine as a person without administrator rights would: the programs in
//! `%LOCALAPPDATA%\Programs\fabric-companion`, the Start menu entry, the tray's `Run` value
//! (read back with Wine's `reg query`), the uninstall record; our hooks installed by the
//! package's own `fabric-session.exe` (guarded) and run by each host's shell; an upgrade over
//! it while a hook program runs keeps the hooks' command text (Codex's approval holds); the
//! uninstaller leaves nothing of ours, and every host's config still works (the guard).
//! The installer and the uninstaller end the package's own running programs only, never a
//! program of the same name in another folder (issue 30).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use wine_bench::host::{Host, Job, Shell};
use wine_bench::{Prefix, payload, wait_until};

use crate::common::{HOSTS, Person};

const WAIT: Duration = Duration::from_secs(120);
const RUN_KEY: &str = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run";
const UNINSTALL_KEY: &str =
    r"HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\FabricCompanion";

/// The installer: `$FABRIC_WINE_INSTALLER`, else where the build script puts it.
fn installer(prefix: &Prefix) -> Option<PathBuf> {
    let path = std::env::var_os("FABRIC_WINE_INSTALLER")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let conf =
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../src-tauri/tauri.conf.json");
            let version = serde_json::from_str::<serde_json::Value>(&wine_bench::read_text(&conf))
                .ok()
                .and_then(|c| c["version"].as_str().map(str::to_owned))
                .unwrap_or_default();
            prefix
                .bench()
                .bin_dir
                .join(format!("package/fabric-companion_{version}_x64-setup.exe"))
        });
    if path.is_file() {
        Some(path)
    } else {
        wine_bench::skip(
            "the_windows_package",
            &format!(
                "{} is missing: make it with scripts/build-windows-installer.sh --debug",
                path.display()
            ),
        );
        None
    }
}

/// `reg query <key> [/v <value>]`: its output, or `None` when the key or value is not there.
fn reg_query(prefix: &Prefix, key: &str, value: Option<&str>) -> Option<String> {
    let mut command = prefix.wine("reg");
    command.args(["query", key]);
    if let Some(value) = value {
        command.args(["/v", value]);
    }
    let out = wine_bench::run_watched(command, b"", "reg query");
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs the installer or the uninstaller silently (`<exe> /S`) to its end under the watchdog,
/// its output not kept: it is a GUI program and writes none, and Wine starts the desktop
/// (`explorer.exe /desktop`, which lives as long as the prefix) with the standard error of the
/// first program that needs it, which in a fresh prefix can be the installer: a piped standard
/// error would then never reach its end.
fn run_silently(prefix: &Prefix, exe: &Path, what: &str) -> std::process::Output {
    let child = prefix
        .wine(exe)
        .arg("/S")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    wine_bench::wait_watched(child, what)
}

/// Every file and folder under `dir`, relative.
fn listing(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            found.push(path.strip_prefix(dir).unwrap().display().to_string());
            if path.is_dir() && !path.is_symlink() {
                stack.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
fn the_windows_package_installs_upgrades_and_uninstalls_per_person() {
    let Some(mut person) = Person::new("the_windows_package") else {
        return;
    };
    let Some(setup) = installer(&person.prefix) else {
        return;
    };
    for host in HOSTS {
        person.register(host);
    }
    person.fabric_running(&["session-hooks/1"]);
    let prefix = &person.prefix;
    let before_local = listing(&prefix.local_appdata());
    let before_roaming = listing(&prefix.appdata());

    // Installed silently, as this person (no administrator rights asked: per-person).
    let out = run_silently(prefix, &setup, "setup /S");
    assert_eq!(out.status.code(), Some(0), "setup /S: {out:?}");
    let install_dir = prefix.local_appdata().join("Programs/fabric-companion");
    for file in [
        "fabric-companion.exe",
        "fabric-tray.exe",
        "fabric-session.exe",
        "WebView2Loader.dll",
        "uninstall.exe",
        "LICENSE-MIT.txt",
        "LICENSE-APACHE.txt",
    ] {
        assert!(install_dir.join(file).is_file(), "{file} is not installed");
    }
    let shortcut = prefix
        .appdata()
        .join("Microsoft/Windows/Start Menu/Programs/Fabric Companion.lnk");
    assert!(shortcut.is_file(), "no Start menu entry");
    let install_win = prefix.win(&install_dir);
    let run = reg_query(prefix, RUN_KEY, Some("Fabric Companion")).expect("the Run value");
    assert!(
        run.contains(&format!("\"{install_win}\\fabric-tray.exe\"")),
        "the tray does not start at login: {run}"
    );
    let record = reg_query(prefix, UNINSTALL_KEY, None).expect("the uninstall record");
    assert!(
        record.contains(&format!("InstallLocation    REG_SZ    {install_win}")),
        "{record}"
    );

    // Our hooks, installed by the package's own program: it runs itself, guarded.
    let session_exe = install_dir.join("fabric-session.exe");
    let program = prefix.win(&session_exe);
    for host in HOSTS {
        person.install_hooks_with(&session_exe, host, &[]);
    }
    let installed: Vec<_> = HOSTS.iter().map(|host| person.commands(host)).collect();
    for (host, commands) in HOSTS.iter().zip(&installed) {
        let expected = match *host {
            "claude" => {
                let forward = program.replace('\\', "/");
                format!("[ ! -x {forward} ] || {forward} hook session-start")
            }
            other => format!("if exist {program} {program} hook session-start --host {other}"),
        };
        assert_eq!(commands["SessionStart"], expected, "{host}");
    }
    let cwd = person.project_win();
    let run_all = |person: &Person, label: &str, answered: bool| {
        for (host, commands) in HOSTS.iter().zip(person_commands(person)) {
            let mut agent = Host::start(&person.prefix, Shell::of(host), Job::None, &person.env());
            for (event, command) in &commands {
                let session = format!("pkg-{label}-{host}");
                let ran = agent.run(command, &payload::input(host, event, &session, &cwd));
                assert_eq!(ran.code, Some(0), "{label} {host} {event}: {ran:?}");
                assert_eq!(ran.stderr, "", "{label} {host} {event}: {ran:?}");
                if event == "SessionStart" && *host != "kimi" {
                    assert_eq!(
                        ran.stdout.contains("Fabric is running"),
                        answered,
                        "{label} {host}: {ran:?}"
                    );
                }
                if !answered {
                    assert_eq!(
                        ran.stdout, "",
                        "{label} {host} {event}: the guard said something"
                    );
                }
            }
            agent.end();
        }
    };
    run_all(&person, "installed", true);

    // An upgrade over it, with the package's tray and a hook program running: the programs
    // are replaced in place, the hooks' command text (and so Codex's approval) is unchanged.
    let mut tray = prefix
        .wine(install_dir.join("fabric-tray.exe"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut busy = prefix
        .wine(&session_exe)
        .args(["watch-mail", "--session-id", "busy-1", "--host", "codex"])
        .envs(person.env())
        .current_dir(person.project())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the package's tray running", WAIT, || {
        !prefix.processes_of("fabric-tray.exe").is_empty()
    });
    let out = run_silently(prefix, &setup, "upgrade /S");
    assert_eq!(out.status.code(), Some(0), "upgrade: {out:?}");
    assert!(session_exe.is_file() && install_dir.join("fabric-tray.exe").is_file());
    wait_until("the old tray ended by the upgrade", WAIT, || {
        tray.try_wait().ok().flatten().is_some()
    });
    for (host, before) in HOSTS.iter().zip(&installed) {
        assert_eq!(
            &person.commands(host),
            before,
            "{host}: the upgrade changed the hooks"
        );
    }
    drop(busy.stdin.take());
    let _ = wine_bench::wait_watched(busy, "watch-mail after the upgrade");
    run_all(&person, "upgraded", true);

    // Uninstalled: nothing of ours is left, and every host's config still works, silently.
    let out = run_silently(prefix, &install_dir.join("uninstall.exe"), "uninstall /S");
    assert_eq!(out.status.code(), Some(0), "uninstall: {out:?}");
    wait_until("the programs removed", WAIT, || !install_dir.exists());
    wait_until("the uninstaller's copy done", WAIT, || {
        prefix.processes_of("~nsu").is_empty() && prefix.processes_of("un_a.exe").is_empty()
    });
    assert!(!shortcut.exists(), "the Start menu entry is left");
    assert_eq!(
        reg_query(prefix, RUN_KEY, Some("Fabric Companion")),
        None,
        "the Run value is left"
    );
    assert_eq!(
        reg_query(prefix, UNINSTALL_KEY, None),
        None,
        "the uninstall record is left"
    );
    assert_eq!(
        reg_query(
            prefix,
            r"HKCU\Software\Classes\AppUserModelId\ai.passioncode.fabric-companion.dashboard",
            None
        ),
        None,
        "the AppUserModelID is left"
    );
    // What is in the profile's AppData now that was not before: the person's own data only
    // (the hook log, sessions), as on Linux, never a file of the package.
    let new_local: Vec<String> = listing(&prefix.local_appdata())
        .into_iter()
        .filter(|p| !before_local.contains(p))
        .filter(|p| !p.starts_with("fabric-companion") && !p.starts_with("Temp"))
        .collect();
    assert!(
        new_local.is_empty(),
        "left in %LOCALAPPDATA%: {new_local:?}"
    );
    let new_roaming: Vec<String> = listing(&prefix.appdata())
        .into_iter()
        .filter(|p| !before_roaming.contains(p))
        .collect();
    assert!(new_roaming.is_empty(), "left in %APPDATA%: {new_roaming:?}");
    let ours_in_cache = listing(&prefix.cache_dir());
    assert!(
        !ours_in_cache.iter().any(|p| p.ends_with(".exe")),
        "a program of ours is left: {ours_in_cache:?}"
    );
    for (host, before) in HOSTS.iter().zip(&installed) {
        assert_eq!(
            &person.commands(host),
            before,
            "{host}: the uninstaller touched the config"
        );
    }
    run_all(&person, "removed", false);
}

/// Our commands of each host, in `HOSTS` order.
fn person_commands(person: &Person) -> Vec<std::collections::BTreeMap<String, String>> {
    HOSTS.iter().map(|host| person.commands(host)).collect()
}

/// A program named like one of ours that is not the package's: `host-stand-in.exe` copied
/// into `dir` as `name` and started by that path; it waits on its stdin and exits 0 when
/// that closes. Returned once it has said it runs (its first line, `{"pid": …}`).
fn namesake(prefix: &Prefix, dir: &Path, name: &str) -> Child {
    std::fs::create_dir_all(dir).unwrap();
    let exe = dir.join(name);
    std::fs::copy(prefix.bench().exe("host-stand-in"), &exe).unwrap();
    let mut child = prefix
        .wine(prefix.win(&exe))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", exe.display()));
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(WAIT).unwrap_or_default();
    assert!(
        line.contains("\"pid\""),
        "{} did not start: {line:?}",
        exe.display()
    );
    child
}

/// Whether `child` still runs.
fn alive(child: &mut Child) -> bool {
    child.try_wait().expect("try_wait").is_none()
}

/// The package's tray, started as the Run value starts it (its Windows path), once running.
fn start_our_tray(prefix: &Prefix, install_dir: &Path) -> Child {
    let tray = prefix
        .wine(prefix.win(&install_dir.join("fabric-tray.exe")))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the package's tray");
    // Ours and the namesake in the other folder.
    wait_until("the package's tray running", WAIT, || {
        prefix.processes_of("fabric-tray.exe").len() >= 2
    });
    tray
}

#[test]
fn the_windows_package_ends_only_its_own_programs() {
    let Some(mut person) = Person::new("the_windows_package_ends_only_its_own_programs") else {
        return;
    };
    let Some(setup) = installer(&person.prefix) else {
        return;
    };
    person.fabric_running(&["session-hooks/1"]);
    let prefix = &person.prefix;
    let out = run_silently(prefix, &setup, "setup /S");
    assert_eq!(out.status.code(), Some(0), "setup /S: {out:?}");
    let install_dir = prefix.local_appdata().join("Programs/fabric-companion");
    assert!(install_dir.join("fabric-tray.exe").is_file());

    // Same names, another folder: a folder whose path begins with the install folder's, so
    // that a match by name or by the start of the path would end them too.
    let elsewhere = prefix.local_appdata().join("Programs/fabric-companion-dev");
    let mut others = [
        namesake(prefix, &elsewhere, "fabric-tray.exe"),
        namesake(prefix, &elsewhere, "fabric-companion.exe"),
    ];

    // An upgrade ends the package's tray, and only it.
    let mut tray = start_our_tray(prefix, &install_dir);
    assert!(alive(&mut tray), "the package's tray did not stay up");
    let out = run_silently(prefix, &setup, "upgrade /S");
    assert_eq!(out.status.code(), Some(0), "upgrade: {out:?}");
    wait_until("the package's tray ended by the upgrade", WAIT, || {
        !alive(&mut tray)
    });
    std::thread::sleep(Duration::from_millis(500));
    for (other, name) in others
        .iter_mut()
        .zip(["fabric-tray.exe", "fabric-companion.exe"])
    {
        assert!(
            alive(other),
            "the upgrade ended {name} in another folder, not the package's"
        );
    }

    // So does the uninstaller (its copy in the temporary folder does the work).
    let mut tray = start_our_tray(prefix, &install_dir);
    let out = run_silently(prefix, &install_dir.join("uninstall.exe"), "uninstall /S");
    assert_eq!(out.status.code(), Some(0), "uninstall: {out:?}");
    wait_until("the package's tray ended by the uninstaller", WAIT, || {
        !alive(&mut tray)
    });
    wait_until("the programs removed", WAIT, || !install_dir.exists());
    wait_until("the uninstaller's copy done", WAIT, || {
        prefix.processes_of("~nsu").is_empty() && prefix.processes_of("un_a.exe").is_empty()
    });
    for (other, name) in others
        .iter_mut()
        .zip(["fabric-tray.exe", "fabric-companion.exe"])
    {
        assert!(
            alive(other),
            "the uninstaller ended {name} in another folder, not the package's"
        );
    }

    // They ran on until asked to end, and ended on their own (status 0, not a kill's).
    for (mut other, name) in others
        .into_iter()
        .zip(["fabric-tray.exe", "fabric-companion.exe"])
    {
        drop(other.stdin.take());
        let out = wine_bench::wait_watched(other, name);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name} in another folder: {out:?}"
        );
    }
}
