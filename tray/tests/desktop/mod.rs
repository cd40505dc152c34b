//! The virtual desktop the tray's end-to-end tests run on (`e2e.rs`, `load.rs`): Xvfb, a
//! private D-Bus session bus, `dunst` (the notification daemon), `trayer` (an XEmbed tray),
//! `dbus-monitor` recording every notification call, a temporary HOME, Fabric played by the
//! stand-in; plus the tray's own helpers on it (screenshots, clicks in its menu, the `Notify`
//! calls recorded, wiring Claude Code and Fabric as a person does). Every process started is
//! killed and reaped when the desktop is dropped. What every desktop suite makes the same way
//! (the skip-or-fail rule, Xvfb, a bus's address, the runtime and artefacts folders, waits,
//! screenshots' pixels) is `test_support`'s. Never used outside tests; Linux only.
#![allow(dead_code)] // each test file uses its own part

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use fabric_fake::FakeFabric;

pub const TRAY: &str = env!("CARGO_BIN_EXE_fabric-tray");
pub use test_support::picture::{Picture as Shot, Rect};
pub use test_support::wait::wait_until;
/// The programs the virtual desktop is made of.
pub const DESKTOP_PROGRAMS: [&str; 9] = [
    "Xvfb",
    "xwininfo",
    "xdotool",
    "import",
    "dbus-daemon",
    "dbus-monitor",
    "dbus-send",
    "dunst",
    "trayer",
];

/// Whether this machine can make the virtual desktop. Without it the test says it is skipped
/// and why (a plain `cargo test --workspace` on a machine without a display passes), unless
/// `$FABRIC_REQUIRE_DESKTOP_TESTS` is `1`, as in `scripts/test.sh`: then it fails.
pub fn desktop_available(test: &str) -> bool {
    programs_available(
        test,
        &DESKTOP_PROGRAMS,
        "no virtual desktop here",
        "xvfb, x11-utils, xdotool, imagemagick, dbus, dunst, trayer",
    )
}

/// Whether `programs` are all on `PATH`; if not, a skip that says what is missing (`what`)
/// and from which `packages`, or a failure under `$FABRIC_REQUIRE_DESKTOP_TESTS=1`.
pub fn programs_available(test: &str, programs: &[&str], what: &str, packages: &str) -> bool {
    let missing = test_support::desktop::missing_programs(programs);
    missing.is_empty()
        || test_support::desktop::cannot_run(
            test,
            &format!(
                "{what}: {} not found on PATH (packages {packages})",
                missing.join(", ")
            ),
        )
}
pub const WAIT: Duration = Duration::from_secs(90);

/// Every process the test started; all are killed and reaped on drop, whatever happens.
pub struct Procs {
    pub children: Vec<(String, Child)>,
    pub extra_pids: Vec<u32>,
}

impl Procs {
    pub fn push(&mut self, name: &str, child: Child) -> u32 {
        let pid = child.id();
        self.children.push((name.to_string(), child));
        pid
    }
}

impl Drop for Procs {
    fn drop(&mut self) {
        for pid in &self.extra_pids {
            // SAFETY: kill on a pid we started (detached programs); errors ignored.
            unsafe {
                libc::kill(*pid as libc::pid_t, libc::SIGKILL);
            }
        }
        for (_, child) in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub fn decode_png(path: &Path) -> Shot {
    Shot::load(path)
}

pub struct Desktop {
    pub dir: tempfile::TempDir,
    pub display: String,
    pub bus: String,
    pub shots: PathBuf,
    pub procs: Procs,
    pub notify_log: PathBuf,
    pub fake: FakeFabric,
}

impl Desktop {
    pub fn home(&self) -> &Path {
        self.dir.path()
    }
    pub fn data_dir(&self) -> PathBuf {
        self.home().join(".local/share")
    }
    pub fn fabric_dir(&self) -> PathBuf {
        self.data_dir().join("passioncode-fabric")
    }
    pub fn cache_dir(&self) -> PathBuf {
        self.home().join(".cache/fabric-companion")
    }
    pub fn config_dir(&self) -> PathBuf {
        self.home().join(".config/fabric-companion")
    }
    pub fn stable_binary(&self) -> PathBuf {
        self.data_dir().join("fabric-companion/bin/fabric-session")
    }

    /// A command with this desktop's environment only.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("LANG", "C.UTF-8")
            .env("HOME", self.home())
            .env("XDG_CACHE_HOME", self.home().join(".cache"))
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .env("XDG_DATA_HOME", self.data_dir())
            .env("XDG_RUNTIME_DIR", self.home().join("run"))
            .env("DISPLAY", &self.display)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus)
            .current_dir(self.home())
            .stdin(Stdio::null());
        for (key, value) in self.fake.env() {
            command.env(key, value);
        }
        command
    }

    pub fn run(&self, program: &str, args: &[&str]) -> Output {
        self.command(program)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
    }

    pub fn spawn_logged(&mut self, name: &str, mut command: Command) -> u32 {
        let log = std::fs::File::create(self.shots.join(format!("{name}.log"))).unwrap();
        command.stdout(log.try_clone().unwrap()).stderr(log);
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        self.procs.push(name, child)
    }

    /// A desktop for test `name` (screenshots and logs in a folder of that name), with
    /// trayer running or not.
    pub fn start(name: &str, with_trayer: bool) -> Desktop {
        let mut desktop = Desktop::start_bare(name);
        desktop.start_dunst();
        if with_trayer {
            desktop.start_trayer();
        }
        desktop
    }

    /// Xvfb, the session bus and dbus-monitor only: no notification daemon, no tray.
    pub fn start_bare(name: &str) -> Desktop {
        let dir = tempfile::tempdir().unwrap();
        test_support::desktop::runtime_dir(dir.path());
        let shots = test_support::desktop::artefacts_path("tray", name);
        std::fs::create_dir_all(&shots).unwrap();
        let fake = FakeFabric::new(dir.path());
        let mut procs = Procs {
            children: Vec::new(),
            extra_pids: Vec::new(),
        };

        let (xvfb, display) = test_support::desktop::start_xvfb();
        procs.push("Xvfb", xvfb);

        let mut dbus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon (package dbus)");
        let bus = test_support::desktop::bus_address(&mut dbus, "the session bus");
        procs.push("dbus-daemon", dbus);

        let notify_log = shots.join("dbus-monitor.log");
        let mut desktop = Desktop {
            dir,
            display,
            bus,
            shots,
            procs,
            notify_log,
            fake,
        };
        let mut monitor = desktop.command("dbus-monitor");
        monitor.args(["--session", "interface=org.freedesktop.Notifications"]);
        let log = std::fs::File::create(&desktop.notify_log).unwrap();
        monitor.stdout(log).stderr(Stdio::null());
        let child = monitor.spawn().expect("dbus-monitor");
        desktop.procs.push("dbus-monitor", child);
        desktop
    }

    /// dunst, the notification daemon, once it owns its name.
    pub fn start_dunst(&mut self) {
        let dunst = self.command("dunst");
        self.spawn_logged("dunst", dunst);
        wait_until("dunst on the bus", WAIT, || {
            let out = self.run(
                "dbus-send",
                &[
                    "--session",
                    "--print-reply",
                    "--dest=org.freedesktop.DBus",
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.NameHasOwner",
                    "string:org.freedesktop.Notifications",
                ],
            );
            String::from_utf8_lossy(&out.stdout)
                .contains("boolean true")
                .then_some(())
        });
    }

    pub fn start_trayer(&mut self) {
        let mut trayer = self.command("trayer");
        trayer.args([
            "--edge",
            "bottom",
            "--align",
            "right",
            "--widthtype",
            "request",
            "--height",
            "32",
            "--SetDockType",
            "true",
            "--transparent",
            "false",
        ]);
        self.spawn_logged("trayer", trayer);
        wait_until("trayer's panel", WAIT, || {
            self.tree().contains("(\"panel\" \"trayer\")").then_some(())
        });
    }

    pub fn tree(&self) -> String {
        String::from_utf8_lossy(&self.run("xwininfo", &["-root", "-tree"]).stdout).into_owned()
    }

    /// The tray icon's rectangle on screen, once it is embedded.
    pub fn icon_rect(&self) -> Option<Rect> {
        let tree = self.tree();
        let line = tree
            .lines()
            .find(|l| l.contains("\"tray-icon tray app fabric-tray\""))?;
        // "... 32x30+0+0  +991+737"
        let words: Vec<&str> = line.split_whitespace().collect();
        let size = words.iter().rev().nth(1)?;
        let abs = words.last()?;
        let (w, rest) = size.split_once('x')?;
        let h = rest.split('+').next()?;
        let mut xy = abs.trim_start_matches('+').split('+');
        let rect = Rect {
            x: xy.next()?.parse().ok()?,
            y: xy.next()?.parse().ok()?,
            w: w.parse().ok()?,
            h: h.parse().ok()?,
        };
        (rect.w >= 16 && rect.h >= 16).then_some(rect)
    }

    pub fn shot(&self, name: &str) -> Shot {
        let path = self.shots.join(format!("{name}.png"));
        let out = self.run("import", &["-window", "root", path.to_str().unwrap()]);
        assert!(out.status.success(), "import failed: {out:?}");
        decode_png(&path)
    }

    /// Takes screenshots until `check` accepts the icon region; keeps the last as `name`.
    pub fn shot_until(&self, name: &str, icon: Rect, check: impl Fn(&[[u8; 3]]) -> bool) -> Shot {
        wait_until(name, WAIT, || {
            let shot = self.shot(name);
            check(&shot.region(icon)).then_some(shot)
        })
    }

    pub fn xdotool(&self, args: &[&str]) {
        let out = self.run("xdotool", args);
        assert!(out.status.success(), "xdotool {args:?} failed: {out:?}");
    }

    pub fn click(&self, x: u32, y: u32) {
        self.xdotool(&["mousemove", &x.to_string(), &y.to_string()]);
        std::thread::sleep(Duration::from_millis(200));
        self.xdotool(&["click", "1"]);
    }

    /// The visible popup windows of the tray (its menus), topmost first.
    pub fn menu_windows(&self) -> Vec<Rect> {
        let visible: BTreeSet<u64> = String::from_utf8_lossy(
            &self
                .run(
                    "xdotool",
                    &["search", "--onlyvisible", "--class", "Fabric-tray"],
                )
                .stdout,
        )
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
        let tree = self.tree();
        let mut rects = Vec::new();
        for line in tree.lines() {
            // Top-level children are indented by five spaces.
            if !line.starts_with("     0x") || !line.contains("(\"fabric-tray\" \"Fabric-tray\")") {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let Some(id) = u64::from_str_radix(words[0].trim_start_matches("0x"), 16).ok() else {
                continue;
            };
            if !visible.contains(&id) {
                continue;
            }
            let size = words[words.len() - 2];
            let abs = words[words.len() - 1];
            let (Some((w, rest)), mut xy) =
                (size.split_once('x'), abs.trim_start_matches('+').split('+'))
            else {
                continue;
            };
            let h = rest.split('+').next().unwrap_or("0");
            let rect = Rect {
                x: xy.next().and_then(|v| v.parse().ok()).unwrap_or(0),
                y: xy.next().and_then(|v| v.parse().ok()).unwrap_or(0),
                w: w.parse().unwrap_or(0),
                h: h.parse().unwrap_or(0),
            };
            if rect.w > 40 && rect.h > 20 {
                rects.push(rect);
            }
        }
        rects
    }

    /// The highlighted row (GTK's selection blue) inside `menu`, as its centre.
    pub fn highlighted(&self, shot: &Shot, menu: Rect) -> Option<(u32, u32)> {
        let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0, 0);
        let mut count = 0;
        for y in menu.y..menu.y + menu.h {
            for x in menu.x..menu.x + menu.w {
                let [r, g, b] = shot.px(x, y);
                if (30..=80).contains(&r) && (110..=160).contains(&g) && b >= 200 {
                    count += 1;
                    x0 = x0.min(x);
                    y0 = y0.min(y);
                    x1 = x1.max(x);
                    y1 = y1.max(y);
                }
            }
        }
        (count > 200).then(|| ((x0 + x1) / 2, (y0 + y1) / 2))
    }

    /// Opens the tray menu with a real click on the icon, walks to an item with the keyboard
    /// (`keys`), finds the highlighted row in the topmost menu and clicks it with the mouse.
    pub fn choose(&self, icon: Rect, keys: &[&str], name: &str) {
        let (cx, cy) = icon.center();
        let menus_before = self.menu_windows().len();
        self.click(cx, cy);
        wait_until("the tray menu", WAIT, || {
            (self.menu_windows().len() > menus_before).then_some(())
        });
        std::thread::sleep(Duration::from_millis(500));
        let expected_menus = menus_before + 1 + keys.iter().filter(|k| **k == "Right").count();
        for key in keys {
            self.xdotool(&["key", key]);
            std::thread::sleep(Duration::from_millis(400));
        }
        let (x, y) = wait_until(&format!("a highlighted item for {name}"), WAIT, || {
            let menus = self.menu_windows();
            if menus.len() < expected_menus {
                return None;
            }
            let shot = self.shot(name);
            self.highlighted(&shot, menus[0])
        });
        self.click(x, y);
        wait_until("the menu to close", WAIT, || {
            (self.menu_windows().len() <= menus_before).then_some(())
        });
    }

    pub fn notify_text(&self) -> String {
        std::fs::read_to_string(&self.notify_log).unwrap_or_default()
    }
}

/// `(pid, ppid, sid)` of every live process running `program` with `HOME` = `home`.
pub fn processes_of(program: &Path, home: &Path) -> Vec<(u32, u32, u32)> {
    let mut home_var = b"HOME=".to_vec();
    home_var.extend_from_slice(home.as_os_str().as_encoded_bytes());
    let wanted = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if std::fs::read_link(entry.path().join("exe")).ok().as_deref() != Some(wanted.as_path()) {
            continue;
        }
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if !environ
            .split(|b| *b == 0)
            .any(|var| var == home_var.as_slice())
        {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        let ppid = fields.get(1).and_then(|v| v.parse().ok()).unwrap_or(0);
        let sid = fields.get(3).and_then(|v| v.parse().ok()).unwrap_or(0);
        found.push((pid, ppid, sid));
    }
    found
}

pub fn gone(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.is_empty() || stat.contains(") Z ")
}

/// `fabric-session` beside the tray's executable, built for this profile when needed
/// (test-support's, shared with the dashboard's remote tests).
pub fn session_binary() -> PathBuf {
    test_support::programs::session_binary()
}

pub fn board_unread(desktop: &Desktop, session: &str) -> Option<u64> {
    let text = std::fs::read_to_string(
        desktop
            .cache_dir()
            .join("sessions")
            .join(session)
            .join("board.json"),
    )
    .ok()?;
    serde_json::from_str::<serde_json::Value>(&text).ok()?["unread"].as_u64()
}

/// Each `Notify` call dbus-monitor recorded: (replaces_id, summary, body).
pub fn notifies(log: &str) -> Vec<(u32, String, String)> {
    log.split("member=Notify")
        .skip(1)
        .filter_map(|call| {
            let mut lines = call.lines().map(str::trim).skip(1);
            let quoted = |line: Option<&str>| -> Option<String> {
                let line = line?;
                Some(
                    line.strip_prefix("string \"")?
                        .strip_suffix('"')?
                        .to_string(),
                )
            };
            let _app = quoted(lines.next())?;
            let replaces = lines.next()?.strip_prefix("uint32 ")?.parse().ok()?;
            let _icon = quoted(lines.next())?;
            Some((replaces, quoted(lines.next())?, quoted(lines.next())?))
        })
        .collect()
}

/// Registers `fabric` for Claude Code, installs our hooks as a person does (dry run, then the
/// apply naming its digest), and starts "Fabric" (a process the hub names) with session hooks.
pub fn wire_claude_and_fabric(desktop: &Desktop) -> Child {
    std::fs::write(
        desktop.home().join(".claude.json"),
        r#"{"mcpServers": {"fabric": {"command": "fabric-mcp", "args": ["--runner", "claude-code"]}}}"#,
    )
    .unwrap();
    let binary = desktop.stable_binary();
    let plan = desktop.run(
        binary.to_str().unwrap(),
        &["install-host-hooks", "--host", "claude", "--json"],
    );
    assert!(plan.status.success(), "{plan:?}");
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    let digest = plan["digest"].as_str().unwrap().to_string();
    let install = desktop.run(
        binary.to_str().unwrap(),
        &[
            "install-host-hooks",
            "--host",
            "claude",
            "--apply",
            "--expect-sha256",
            &digest,
        ],
    );
    assert!(install.status.success(), "{install:?}");
    let fabric = Command::new("sleep")
        .arg("3600")
        // Never the test's own output: a process left by a failed test must not hold the
        // pipe a runner reads (the run would wait for it for an hour).
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    desktop.fake.set_unread(0);
    fabric_fake::write_hub(&desktop.fabric_dir(), &["session-hooks/1"], fabric.id()).unwrap();
    fabric
}

/// One `Notify` call as dbus-monitor recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct NotifyCall {
    /// When the bus saw it (seconds since the epoch, dbus-monitor's `time=`).
    pub at: f64,
    /// The notification it replaces (0: a new one).
    pub replaces: u32,
    pub summary: String,
    pub body: String,
}

/// Each `Notify` call in dbus-monitor's record, with its time, in order.
pub fn notify_calls(log: &str) -> Vec<NotifyCall> {
    let quoted = |line: &str| -> Option<String> {
        Some(
            line.trim()
                .strip_prefix("string \"")?
                .strip_suffix('"')?
                .to_string(),
        )
    };
    let lines: Vec<&str> = log.lines().collect();
    let mut calls = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.starts_with("method call ") || !line.ends_with("member=Notify") {
            continue;
        }
        let parsed = (|| {
            let at = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix("time="))?
                .parse()
                .ok()?;
            let args = lines.get(i + 1..i + 6)?;
            Some(NotifyCall {
                at,
                replaces: args[1].trim().strip_prefix("uint32 ")?.parse().ok()?,
                summary: quoted(args[3])?,
                body: quoted(args[4])?,
            })
        })();
        calls.extend(parsed);
    }
    calls
}

/// The long-lived "host": a bash that runs each hook as its child, so the session's host pid
/// stays alive between hooks.
pub struct Host {
    child: Child,
    stdin: std::process::ChildStdin,
}

impl Host {
    pub fn start(desktop: &Desktop) -> Host {
        Host::start_with_env(desktop, &[])
    }

    /// A host whose environment also has `env` (a terminal's variables, say).
    pub fn start_with_env(desktop: &Desktop, env: &[(&str, &str)]) -> Host {
        let mut command = desktop.command("bash");
        command.envs(env.iter().copied());
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        Host { child, stdin }
    }

    pub fn hook(&mut self, desktop: &Desktop, event: &str, session: &str, cwd: &Path) {
        use std::io::Write;
        let payload = serde_json::json!({
            "session_id": session,
            "transcript_path": desktop.home().join("t.jsonl"),
            "cwd": cwd,
            "hook_event_name": event,
            "source": "startup",
        });
        let file = desktop
            .home()
            .join(format!("payload-{session}-{event}-{}.json", fastrand_ish()));
        std::fs::write(&file, payload.to_string()).unwrap();
        let cli_event = match event {
            "SessionStart" => "session-start",
            "Stop" => "stop",
            "PermissionRequest" => "permission-request",
            other => panic!("unknown event {other}"),
        };
        // Exactly the command the installer wrote into ~/.claude/settings.json.
        writeln!(
            self.stdin,
            "cd '{}' && '{}' hook {cli_event} < '{}'",
            cwd.display(),
            desktop.stable_binary().display(),
            file.display()
        )
        .unwrap();
        self.stdin.flush().unwrap();
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn fastrand_ish() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}
