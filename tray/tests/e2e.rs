//! End to end, on a real (virtual) desktop: Xvfb, a private D-Bus session bus, `dunst` (the
//! notification daemon), `trayer` (an XEmbed tray), `dbus-monitor`, a temporary HOME, Fabric
//! played by the stand-in, and a session made by running the real hooks from a long-lived
//! "host" process (a `bash` that outlives each hook).
//!
//! What it checks, in order: the icon embeds in trayer, grey while Fabric is down; the stable
//! copy of fabric-session is installed; with Fabric running and Claude Code wired the icon is
//! coloured; Notifications ▸ Pause 1 hour (a real click in the GTK menu) stops the next
//! notification; Resume, then a rise + Stop hook gives a `Notify` with the right text on
//! D-Bus and a changed icon; a fall to zero closes it (`CloseNotification`); Fabric's process
//! dying turns the icon grey (found on the watch-mail schedule, no file event); "Open
//! Dashboard…" starts `$FABRIC_COMPANION_BIN` detached; a second tray exits at once; Quit
//! ends the tray.
//!
//! Menu items are found by keyboard highlight (Down/Right in the real GTK menu), located in
//! a screenshot, and then clicked with the mouse. Screenshots go to `$FABRIC_E2E_SHOTS`
//! (default `target/e2e-shots/tray/`). Needs: xvfb, x11-utils, xdotool, imagemagick,
//! dbus (dbus-daemon, dbus-monitor, dbus-send), dunst, trayer. Linux only: it drives an X11
//! desktop.
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use fabric_fake::FakeFabric;

const TRAY: &str = env!("CARGO_BIN_EXE_fabric-tray");
/// Set (to `1`) by `scripts/test.sh`: a missing desktop is then a failure, never a skip.
const REQUIRE: &str = "FABRIC_REQUIRE_DESKTOP_TESTS";
/// The programs the virtual desktop is made of.
const DESKTOP_PROGRAMS: [&str; 9] = [
    "Xvfb",
    "xdpyinfo",
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
fn desktop_available(test: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<&str> = DESKTOP_PROGRAMS
        .into_iter()
        .filter(|program| !std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
        .collect();
    if missing.is_empty() {
        return true;
    }
    let why = format!(
        "no virtual desktop here: {} not found on PATH (packages xvfb, x11-utils, xdotool, imagemagick, dbus, dunst, trayer)",
        missing.join(", ")
    );
    if std::env::var_os(REQUIRE).is_some_and(|v| v == "1") {
        panic!("{test}: {why}; ${REQUIRE}=1 says this test must run");
    }
    // Straight to the process's stderr, past the test harness's capture: a skip is seen.
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED {test}: {why}. scripts/test.sh installs them and runs it."
    );
    false
}
const WAIT: Duration = Duration::from_secs(90);

/// Every process the test started; all are killed and reaped on drop, whatever happens.
struct Procs {
    children: Vec<(String, Child)>,
    extra_pids: Vec<u32>,
}

impl Procs {
    fn push(&mut self, name: &str, child: Child) -> u32 {
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

fn wait_until<T>(what: &str, limit: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(start.elapsed() < limit, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(150));
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rect {
    x: u32,
    y: u32,
    w: u32,
    h: u32,
}

impl Rect {
    fn center(&self) -> (u32, u32) {
        (self.x + self.w / 2, self.y + self.h / 2)
    }
}

struct Shot {
    width: u32,
    rgb: Vec<u8>,
}

impl Shot {
    fn px(&self, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * self.width + x) * 3) as usize;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    fn region(&self, r: Rect) -> Vec<[u8; 3]> {
        let mut out = Vec::new();
        for y in r.y..r.y + r.h {
            for x in r.x..r.x + r.w {
                out.push(self.px(x, y));
            }
        }
        out
    }
}

fn decode_png(path: &Path) -> Shot {
    let mut decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let mut rgb = Vec::with_capacity((info.width * info.height * 3) as usize);
    for px in buf[..info.buffer_size()].chunks_exact(channels) {
        match channels {
            1 | 2 => rgb.extend_from_slice(&[px[0], px[0], px[0]]),
            _ => rgb.extend_from_slice(&px[..3]),
        }
    }
    Shot {
        width: info.width,
        rgb,
    }
}

fn differing(a: &[[u8; 3]], b: &[[u8; 3]]) -> usize {
    a.iter().zip(b).filter(|(p, q)| p != q).count()
}

/// Whether a region has no colour (every pixel r≈g≈b).
fn is_grey(pixels: &[[u8; 3]]) -> bool {
    pixels.iter().all(|[r, g, b]| {
        let (lo, hi) = (r.min(g).min(b), r.max(g).max(b));
        hi - lo <= 12
    })
}

/// Whether a region holds the icon's blue.
fn has_blue(pixels: &[[u8; 3]]) -> bool {
    pixels
        .iter()
        .filter(|[r, g, b]| *b > 180 && *r < 90 && *g < 150)
        .count()
        > 50
}

struct Desktop {
    dir: tempfile::TempDir,
    display: String,
    bus: String,
    shots: PathBuf,
    procs: Procs,
    notify_log: PathBuf,
    fake: FakeFabric,
}

fn free_display() -> u32 {
    // Tests in this file run in parallel, and a display's lock file appears only once its
    // Xvfb runs: a number handed out here is never handed out again in this process, so
    // two tests never share a display (stale lock files of killed runs pushed them together).
    static TAKEN: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());
    let mut taken = TAKEN.lock().unwrap_or_else(|e| e.into_inner());
    let n = (90..600)
        .find(|n| {
            !taken.contains(n)
                && !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
                && !Path::new(&format!("/tmp/.X{n}-lock")).exists()
        })
        .expect("a free X display number");
    taken.push(n);
    n
}

impl Desktop {
    fn home(&self) -> &Path {
        self.dir.path()
    }
    fn data_dir(&self) -> PathBuf {
        self.home().join(".local/share")
    }
    fn fabric_dir(&self) -> PathBuf {
        self.data_dir().join("passioncode-fabric")
    }
    fn cache_dir(&self) -> PathBuf {
        self.home().join(".cache/fabric-companion")
    }
    fn config_dir(&self) -> PathBuf {
        self.home().join(".config/fabric-companion")
    }
    fn stable_binary(&self) -> PathBuf {
        self.data_dir().join("fabric-companion/bin/fabric-session")
    }

    /// A command with this desktop's environment only.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
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

    fn run(&self, program: &str, args: &[&str]) -> Output {
        self.command(program)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
    }

    fn spawn_logged(&mut self, name: &str, mut command: Command) -> u32 {
        let log = std::fs::File::create(self.shots.join(format!("{name}.log"))).unwrap();
        command.stdout(log.try_clone().unwrap()).stderr(log);
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        self.procs.push(name, child)
    }

    /// A desktop for test `name` (screenshots and logs in a folder of that name), with
    /// trayer running or not.
    fn start(name: &str, with_trayer: bool) -> Desktop {
        let dir = tempfile::tempdir().unwrap();
        let run_dir = dir.path().join("run");
        std::fs::create_dir_all(&run_dir).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&run_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let shots = std::env::var_os("FABRIC_E2E_SHOTS")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/e2e-shots/tray")
            })
            .join(name);
        std::fs::create_dir_all(&shots).unwrap();
        let fake = FakeFabric::new(dir.path());
        let mut procs = Procs {
            children: Vec::new(),
            extra_pids: Vec::new(),
        };

        let n = free_display();
        let display = format!(":{n}");
        let xvfb = Command::new("Xvfb")
            .args([&display, "-screen", "0", "1024x768x24", "-nolisten", "tcp"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb (package xvfb)");
        procs.push("Xvfb", xvfb);
        wait_until("Xvfb", WAIT, || {
            Command::new("xdpyinfo")
                .args(["-display", &display])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .ok()
                .filter(|s| s.success())
        });

        let mut dbus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon (package dbus)");
        let mut line = String::new();
        BufReader::new(dbus.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        procs.push("dbus-daemon", dbus);
        let bus = line.trim().to_string();
        assert!(!bus.is_empty(), "dbus-daemon printed no address");

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

        let dunst = desktop.command("dunst");
        desktop.spawn_logged("dunst", dunst);
        if with_trayer {
            desktop.start_trayer();
        }
        wait_until("dunst on the bus", WAIT, || {
            let out = desktop.run(
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
        desktop
    }

    fn start_trayer(&mut self) {
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

    fn tree(&self) -> String {
        String::from_utf8_lossy(&self.run("xwininfo", &["-root", "-tree"]).stdout).into_owned()
    }

    /// The tray icon's rectangle on screen, once it is embedded.
    fn icon_rect(&self) -> Option<Rect> {
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

    fn shot(&self, name: &str) -> Shot {
        let path = self.shots.join(format!("{name}.png"));
        let out = self.run("import", &["-window", "root", path.to_str().unwrap()]);
        assert!(out.status.success(), "import failed: {out:?}");
        decode_png(&path)
    }

    /// Takes screenshots until `check` accepts the icon region; keeps the last as `name`.
    fn shot_until(&self, name: &str, icon: Rect, check: impl Fn(&[[u8; 3]]) -> bool) -> Shot {
        wait_until(name, WAIT, || {
            let shot = self.shot(name);
            check(&shot.region(icon)).then_some(shot)
        })
    }

    fn xdotool(&self, args: &[&str]) {
        let out = self.run("xdotool", args);
        assert!(out.status.success(), "xdotool {args:?} failed: {out:?}");
    }

    fn click(&self, x: u32, y: u32) {
        self.xdotool(&["mousemove", &x.to_string(), &y.to_string()]);
        std::thread::sleep(Duration::from_millis(200));
        self.xdotool(&["click", "1"]);
    }

    /// The visible popup windows of the tray (its menus), topmost first.
    fn menu_windows(&self) -> Vec<Rect> {
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
    fn highlighted(&self, shot: &Shot, menu: Rect) -> Option<(u32, u32)> {
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
    fn choose(&self, icon: Rect, keys: &[&str], name: &str) {
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

    fn notify_text(&self) -> String {
        std::fs::read_to_string(&self.notify_log).unwrap_or_default()
    }
}

/// The long-lived "host": a bash that runs each hook as its child, so the session's host pid
/// stays alive between hooks.
struct Host {
    child: Child,
    stdin: std::process::ChildStdin,
}

impl Host {
    fn start(desktop: &Desktop) -> Host {
        let mut child = desktop
            .command("bash")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        Host { child, stdin }
    }

    fn hook(&mut self, desktop: &Desktop, event: &str, session: &str, cwd: &Path) {
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

fn fastrand_ish() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// A stand-in for the dashboard that appends how it was started (`pid ppid sid`) to
/// `companion.started`, unless `FABRIC_E2E_COMPANION` names a real one.
fn companion_program(desktop: &Desktop) -> PathBuf {
    if let Some(real) = std::env::var_os("FABRIC_E2E_COMPANION") {
        return PathBuf::from(real);
    }
    let path = desktop.home().join("companion-standin");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho \"$$ $PPID $(ps -o sid= -p $$)\" >> '{}'\nexec sleep 600\n",
            desktop.home().join("companion.started").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The dashboard starts recorded by the stand-in: `(pid, ppid, sid)` each.
fn companion_starts(desktop: &Desktop) -> Vec<(u32, u32, u32)> {
    std::fs::read_to_string(desktop.home().join("companion.started"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let f: Vec<u32> = line
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            (f.len() == 3).then(|| (f[0], f[1], f[2]))
        })
        .collect()
}

/// `(pid, ppid, sid)` of every live process running `program` with `HOME` = `home`.
fn processes_of(program: &Path, home: &Path) -> Vec<(u32, u32, u32)> {
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

fn gone(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.is_empty() || stat.contains(") Z ")
}

/// Waits for start number `n` (1-based) of the dashboard, checks it is detached from the
/// tray (not its child, its own session), then closes it and waits until it has ended. The
/// real dashboard (`FABRIC_E2E_COMPANION`) is closed like a window manager's close button
/// does (WM_DELETE_WINDOW, `bench/wm_delete.py`); the stand-in gets SIGTERM.
fn expect_dashboard_start(desktop: &mut Desktop, n: usize, tray_pid: u32, what: &str) {
    let real = std::env::var_os("FABRIC_E2E_COMPANION").map(PathBuf::from);
    let (pid, ppid, sid) = match &real {
        Some(program) => wait_until(what, WAIT, || {
            processes_of(program, desktop.home()).first().copied()
        }),
        None => wait_until(what, WAIT, || companion_starts(desktop).get(n - 1).copied()),
    };
    desktop.procs.extra_pids.push(pid);
    assert_ne!(ppid, tray_pid, "the dashboard is not the tray's child");
    assert_eq!(sid, pid, "the dashboard leads its own session");
    if real.is_some() {
        let helper = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/wm_delete.py");
        let pid_text = pid.to_string();
        wait_until("the dashboard's window on screen", WAIT, || {
            let out = desktop.run("xdotool", &["search", "--onlyvisible", "--pid", &pid_text]);
            (!String::from_utf8_lossy(&out.stdout).trim().is_empty()).then_some(())
        });
        std::thread::sleep(Duration::from_secs(3));
        let _ = desktop.shot(&format!("dashboard-{n}-open"));
        wait_until(
            "the dashboard's window to take WM_DELETE_WINDOW",
            WAIT,
            || {
                let out = desktop.run("python3", &[helper.to_str().unwrap(), &pid_text]);
                out.status.success().then_some(())
            },
        );
    } else {
        // SAFETY: kill on the stand-in the tray started for us.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGTERM);
        }
    }
    wait_until("the dashboard to end", WAIT, || gone(pid).then_some(()));
}

/// `fabric-session` beside the tray's executable, built for this profile when needed
/// (Cargo does not build a dependency's binaries for our tests).
fn session_binary() -> PathBuf {
    let path = Path::new(TRAY).with_file_name("fabric-session");
    let profile_dir = Path::new(TRAY).parent().unwrap();
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command
        .args([
            "build",
            "--quiet",
            "-p",
            "fabric-session",
            "--bin",
            "fabric-session",
        ])
        .arg("--manifest-path")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml"));
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        command.arg("--release");
    }
    if let Some(target) = profile_dir.parent() {
        command.arg("--target-dir").arg(target);
    }
    let status = command.status().expect("cargo");
    assert!(
        status.success() && path.is_file(),
        "cannot build fabric-session"
    );
    path
}

fn board_unread(desktop: &Desktop, session: &str) -> Option<u64> {
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

#[test]
fn the_tray_on_a_real_desktop() {
    if !desktop_available("the_tray_on_a_real_desktop") {
        return;
    }
    let mut desktop = Desktop::start("on-a-real-desktop", true);
    let shots = desktop.shots.clone();
    eprintln!("screenshots and logs in {}", shots.display());

    let companion = companion_program(&desktop);

    // Fast pid checks: the watch interval at its floor (10 s).
    std::fs::create_dir_all(desktop.config_dir()).unwrap();
    std::fs::write(
        desktop.config_dir().join("settings.json"),
        r#"{"watchIntervalSecs": 10}"#,
    )
    .unwrap();

    // The tray, with fabric-session beside it as the app bundles it.
    let session_bin = session_binary();
    let mut tray = desktop.command(TRAY);
    tray.env("FABRIC_COMPANION_BIN", &companion)
        .env("FABRIC_SESSION_BIN", &session_bin)
        .env(
            "FABRIC_TRAY_LOG",
            "info,rmcp=warn,notify=warn,fabric_tray=debug",
        );
    let tray_pid = desktop.spawn_logged("fabric-tray", tray);

    // 1. The icon embeds, grey: Fabric is down and no host is wired.
    let icon = wait_until("the tray icon to embed in trayer", WAIT, || {
        desktop.icon_rect()
    });
    eprintln!("icon at {icon:?}");
    let grey_start = desktop.shot_until("1-grey-fabric-down", icon, |px| {
        is_grey(px) && !px.is_empty()
    });
    wait_until("the stable copy of fabric-session", WAIT, || {
        (std::fs::read(desktop.stable_binary()).ok()? == std::fs::read(&session_bin).ok()?)
            .then_some(())
    });

    // A second tray exits at once, saying so.
    let second = desktop.command(TRAY).output().unwrap();
    assert!(second.status.success());
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("already running"),
        "{second:?}"
    );

    // 2. Claude Code wired (fabric registered, hooks installed by the real installer) and
    //    Fabric running with session hooks: the icon gets its colour.
    std::fs::write(
        desktop.home().join(".claude.json"),
        r#"{"mcpServers": {"fabric": {"command": "fabric-mcp", "args": ["--runner", "claude-code"]}}}"#,
    )
    .unwrap();
    // As a person does: the dry run shows the plan and its digest; the apply names that digest.
    let plan = desktop.run(
        desktop.stable_binary().to_str().unwrap(),
        &["install-host-hooks", "--host", "claude", "--json"],
    );
    assert!(
        plan.status.success(),
        "install-host-hooks dry run: {plan:?}"
    );
    let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
    let digest = plan["digest"].as_str().unwrap().to_string();
    let install = desktop.run(
        desktop.stable_binary().to_str().unwrap(),
        &[
            "install-host-hooks",
            "--host",
            "claude",
            "--apply",
            "--expect-sha256",
            &digest,
        ],
    );
    assert!(install.status.success(), "install-host-hooks: {install:?}");
    // Fabric's process: a `sleep` we reap ourselves when it dies (a zombie still has a pid).
    let mut fabric = Command::new("sleep").arg("3600").spawn().unwrap();
    let fabric_pid = fabric.id();
    desktop.fake.set_unread(0);
    fabric_fake::write_hub(&desktop.fabric_dir(), &["session-hooks/1"], fabric_pid).unwrap();
    let running = desktop.shot_until("2-running-no-unread", icon, has_blue);
    assert!(differing(&grey_start.region(icon), &running.region(icon)) > 20);

    // 3. A session from the real hooks, run by a long-lived host process.
    let project = desktop.home().join("work/alpha");
    std::fs::create_dir_all(&project).unwrap();
    let mut host = Host::start(&desktop);
    let session = "e2e-session-1";
    host.hook(&desktop, "SessionStart", session, &project);
    wait_until("session.json", WAIT, || {
        desktop
            .cache_dir()
            .join("sessions")
            .join(session)
            .join("session.json")
            .is_file()
            .then_some(())
    });
    host.hook(&desktop, "Stop", session, &project);
    wait_until("the first board reading", WAIT, || {
        (board_unread(&desktop, session)? == 0).then_some(())
    });

    // 4. Pause through the real menu (the session's line comes first: it is a choice, it
    // jumps to the session); a rise then says nothing.
    desktop.choose(icon, &["Down", "Down", "Right"], "3-menu-pause-1-hour");
    wait_until("the pause in settings.json", WAIT, || {
        std::fs::read_to_string(desktop.config_dir().join("settings.json"))
            .ok()?
            .contains("notificationsPausedUntil\": \"")
            .then_some(())
    });
    desktop.fake.set_unread(2);
    host.hook(&desktop, "Stop", session, &project);
    let paused = desktop.shot_until("4-paused-two-unread", icon, |px| {
        differing(px, &running.region(icon)) > 20 && has_blue(px)
    });
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        !desktop
            .notify_text()
            .contains("unread on the project board"),
        "a notification was raised while paused:\n{}",
        desktop.notify_text()
    );

    // 5. Resume through the menu (Notifications ▸ third item); the next rise notifies.
    desktop.choose(
        icon,
        &["Down", "Down", "Right", "Down", "Down"],
        "5-menu-resume",
    );
    wait_until("the pause removed from settings.json", WAIT, || {
        let text = std::fs::read_to_string(desktop.config_dir().join("settings.json")).ok()?;
        (!text.contains("notificationsPausedUntil\": \"")).then_some(())
    });
    desktop.fake.set_unread(4);
    host.hook(&desktop, "Stop", session, &project);
    wait_until("a Notify call with the right text", WAIT, || {
        let text = desktop.notify_text();
        (text.contains("member=Notify")
            && text.contains("string \"4 unread on the project board\"")
            && text.contains("string \"alpha\""))
        .then_some(())
    });
    let four = desktop.shot_until("6-notified-four-unread", icon, |px| {
        differing(px, &paused.region(icon)) > 20
    });
    // Clicking the notification (dunst's default action) jumps to the session; its "host"
    // here has no window (and this desktop no window manager), so the tray says where the
    // session is and opens the dashboard.
    let out = desktop.run("dunstctl", &["action", "0"]);
    assert!(out.status.success(), "dunstctl action: {out:?}");
    expect_dashboard_start(
        &mut desktop,
        1,
        tray_pid,
        "the dashboard from a notification click",
    );
    assert!(has_blue(&four.region(icon)));
    assert_eq!(
        desktop
            .notify_text()
            .matches("unread on the project board")
            .count(),
        1,
        "exactly one notification"
    );

    // 6. The count falls to zero: the notification is withdrawn.
    desktop.fake.set_unread(0);
    host.hook(&desktop, "Stop", session, &project);
    wait_until("CloseNotification", WAIT, || {
        desktop
            .notify_text()
            .contains("member=CloseNotification")
            .then_some(())
    });
    desktop.shot_until("7-back-to-zero", icon, |px| {
        differing(px, &running.region(icon)) < 10
    });

    // The dashboard's "Send a test notification" drops a request file; the tray (the only
    // one that notifies) raises it once and takes the file.
    let request = desktop.cache_dir().join("requests/test-notification.json");
    std::fs::create_dir_all(request.parent().unwrap()).unwrap();
    std::fs::write(&request, "{}").unwrap();
    wait_until("the test notification", WAIT, || {
        desktop
            .notify_text()
            .contains("Test notification: unread mail on the project board")
            .then_some(())
    });
    assert!(!request.exists(), "the request is taken");

    // 7. Fabric's process dies (no file changes): grey on the watch-mail schedule.
    fabric.kill().unwrap();
    fabric.wait().unwrap();
    desktop.shot_until("8-grey-fabric-died", icon, is_grey);

    // A hook failure logged now puts the amber warning mark on the (grey) icon.
    {
        use std::io::Write;
        let now = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap();
        let mut log = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(desktop.cache_dir().join("hooks.log"))
            .unwrap();
        writeln!(log, "{now} stop claude {session} refused fenced").unwrap();
    }
    desktop.shot_until("8b-grey-with-warning", icon, |px| {
        px.iter()
            .filter(|[r, g, b]| *r > 200 && *g > 120 && *g < 200 && *b < 60)
            .count()
            > 20
    });

    // 8. Open Dashboard… starts the dashboard, detached.
    desktop.choose(icon, &["Down", "Down", "Down"], "9-menu-open-dashboard");
    expect_dashboard_start(&mut desktop, 2, tray_pid, "the dashboard from the menu");

    // 9. Quit ends the tray.
    desktop.choose(icon, &["Up"], "10-menu-quit");
    wait_until("the tray to quit", WAIT, || {
        let alive = Path::new(&format!("/proc/{tray_pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{tray_pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ");
        (!alive).then_some(())
    });
    drop(host);
}

#[test]
fn without_a_tray_host_the_dashboard_opens_once_saying_why() {
    if !desktop_available("without_a_tray_host_the_dashboard_opens_once_saying_why") {
        return;
    }
    let mut desktop = Desktop::start("without-a-tray-host", false);
    let companion = companion_program(&desktop);
    let mut tray = desktop.command(TRAY);
    tray.env("FABRIC_COMPANION_BIN", &companion);
    let tray_pid = desktop.spawn_logged("fabric-tray", tray);
    expect_dashboard_start(
        &mut desktop,
        1,
        tray_pid,
        "the dashboard instead of a tray icon",
    );
    let log = std::fs::read_to_string(desktop.shots.join("fabric-tray.log")).unwrap();
    assert!(log.contains("No system tray was found"), "{log}");
    assert!(log.contains("install a tray"), "{log}");
    // Once: the tray carries on (notifications, watch-mail) without opening it again.
    std::thread::sleep(Duration::from_secs(4));
    match std::env::var_os("FABRIC_E2E_COMPANION") {
        Some(real) => assert!(processes_of(Path::new(&real), desktop.home()).is_empty()),
        None => assert_eq!(companion_starts(&desktop).len(), 1),
    }
    assert!(Path::new(&format!("/proc/{tray_pid}")).exists());
}

/// Each `Notify` call dbus-monitor recorded: (replaces_id, summary, body).
fn notifies(log: &str) -> Vec<(u32, String, String)> {
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
fn wire_claude_and_fabric(desktop: &Desktop) -> Child {
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
    let fabric = Command::new("sleep").arg("3600").spawn().unwrap();
    desktop.fake.set_unread(0);
    fabric_fake::write_hub(&desktop.fabric_dir(), &["session-hooks/1"], fabric.id()).unwrap();
    fabric
}

/// Notifications that never nag, seen on a real desktop with a real notification daemon
/// (dunst) and D-Bus recorded by dbus-monitor: rises in two sessions within seconds make one
/// notification, replaced in place ("2 sessions · 4 unread"), never two stacked; a muted
/// project never notifies; in the quiet hours nothing is notified while the icon still
/// counts, and once they are over the next rise is. (The rule for the session being looked at needs a window manager and a terminal:
/// `hookbin/tests/focus.rs` checks what it reads, the model's tests the rule.)
#[test]
fn notifications_never_nag_on_a_real_desktop() {
    if !desktop_available("notifications_never_nag_on_a_real_desktop") {
        return;
    }
    let mut desktop = Desktop::start("never-nag", true);
    eprintln!("screenshots and logs in {}", desktop.shots.display());
    let companion = companion_program(&desktop);
    std::fs::create_dir_all(desktop.config_dir()).unwrap();
    let settings = desktop.config_dir().join("settings.json");
    std::fs::write(
        &settings,
        r#"{"watchIntervalSecs": 10, "mutedProjects": ["gamma"]}"#,
    )
    .unwrap();
    let session_bin = session_binary();
    let mut tray = desktop.command(TRAY);
    tray.env("FABRIC_COMPANION_BIN", &companion)
        .env("FABRIC_SESSION_BIN", &session_bin)
        .env(
            "FABRIC_TRAY_LOG",
            "info,rmcp=warn,notify=warn,fabric_tray=debug",
        );
    desktop.spawn_logged("fabric-tray", tray);
    let icon = wait_until("the tray icon to embed in trayer", WAIT, || {
        desktop.icon_rect()
    });
    wait_until("the stable copy of fabric-session", WAIT, || {
        desktop.stable_binary().is_file().then_some(())
    });
    let mut fabric = wire_claude_and_fabric(&desktop);

    // Four sessions, four projects, each run by its own long-lived host; a first Stop
    // reads the board at 0 for each (the baseline).
    let mut hosts = Vec::new();
    for name in ["alpha", "beta", "gamma", "delta"] {
        let project = desktop.home().join("work").join(name);
        std::fs::create_dir_all(&project).unwrap();
        let mut host = Host::start(&desktop);
        let session = format!("nag-{name}");
        host.hook(&desktop, "SessionStart", &session, &project);
        wait_until("session.json", WAIT, || {
            desktop
                .cache_dir()
                .join("sessions")
                .join(&session)
                .join("session.json")
                .is_file()
                .then_some(())
        });
        host.hook(&desktop, "Stop", &session, &project);
        wait_until("the first board reading", WAIT, || {
            (board_unread(&desktop, &session)? == 0).then_some(())
        });
        hosts.push((host, session, project));
    }
    let zero = desktop.shot_until("1-four-sessions-no-unread", icon, has_blue);

    // Mail for everyone. alpha's turn ends: its own notification. beta's ends a moment later
    // (within the 5 s): the same notification is replaced by one for both.
    desktop.fake.set_unread(2);
    {
        let (host, session, project) = &mut hosts[0];
        host.hook(&desktop, "Stop", session, project);
    }
    wait_until("alpha's notification", WAIT, || {
        notifies(&desktop.notify_text())
            .iter()
            .any(|(_, summary, body)| summary == "alpha" && body == "2 unread on the project board")
            .then_some(())
    });
    {
        let (host, session, project) = &mut hosts[1];
        host.hook(&desktop, "Stop", session, project);
    }
    wait_until("one notification for both sessions", WAIT, || {
        notifies(&desktop.notify_text())
            .last()
            .is_some_and(|(_, summary, body)| {
                summary == "2 sessions · 4 unread" && body == "alpha, beta"
            })
            .then_some(())
    });
    let calls = notifies(&desktop.notify_text());
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].0, 0, "the first is a new notification");
    assert_ne!(calls[1].0, 0, "the second replaces it in place: {calls:?}");
    let displayed = desktop.run("dunstctl", &["count", "displayed"]);
    assert_eq!(
        String::from_utf8_lossy(&displayed.stdout).trim(),
        "1",
        "dunst shows one notification"
    );
    let two_each = desktop.shot_until("2-coalesced", icon, |px| {
        differing(px, &zero.region(icon)) > 20
    });

    // gamma's project is muted: its rise is counted on the icon, never notified.
    let before = notifies(&desktop.notify_text()).len();
    {
        let (host, session, project) = &mut hosts[2];
        host.hook(&desktop, "Stop", session, project);
        wait_until("gamma's board at 2", WAIT, || {
            (board_unread(&desktop, session)? == 2).then_some(())
        });
    }
    let with_gamma = desktop.shot_until("3-muted-project-counted", icon, |px| {
        differing(px, &two_each.region(icon)) > 20
    });
    std::thread::sleep(Duration::from_secs(2));
    let after: Vec<_> = notifies(&desktop.notify_text());
    assert_eq!(after.len(), before, "a muted project notified: {after:?}");

    // Quiet hours around now (local time, an hour either side): delta's rise (delta has
    // never notified: no rate limit applies) is counted on the icon and not notified.
    let now = desktop.run("date", &["+%H:%M"]);
    let now = String::from_utf8_lossy(&now.stdout).trim().to_string();
    let (h, m) = now.split_once(':').unwrap();
    let minute: u32 = h.parse::<u32>().unwrap() * 60 + m.parse::<u32>().unwrap();
    let hhmm = |mins: u32| format!("{:02}:{:02}", (mins / 60) % 24, mins % 60);
    std::fs::write(
        &settings,
        format!(
            r#"{{"watchIntervalSecs": 10, "mutedProjects": ["gamma"], "quietHours": {{"start": "{}", "end": "{}"}}}}"#,
            hhmm((minute + 1440 - 60) % 1440),
            hhmm((minute + 60) % 1440)
        ),
    )
    .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    desktop.fake.set_unread(7);
    {
        let (host, session, project) = &mut hosts[3];
        host.hook(&desktop, "Stop", session, project);
        wait_until("delta's board at 7", WAIT, || {
            (board_unread(&desktop, session)? == 7).then_some(())
        });
    }
    desktop.shot_until("4-quiet-hours-counted", icon, |px| {
        differing(px, &with_gamma.region(icon)) > 20
    });
    std::thread::sleep(Duration::from_secs(2));
    let quiet: Vec<_> = notifies(&desktop.notify_text());
    assert_eq!(
        quiet.len(),
        before,
        "notified in the quiet hours: {quiet:?}"
    );

    // The quiet hours over (taken out of the settings), delta's next rise is notified: it was
    // the quiet hours that kept it silent.
    std::fs::write(
        &settings,
        r#"{"watchIntervalSecs": 10, "mutedProjects": ["gamma"]}"#,
    )
    .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    desktop.fake.set_unread(9);
    {
        let (host, session, project) = &mut hosts[3];
        host.hook(&desktop, "Stop", session, project);
    }
    wait_until("delta's notification after the quiet hours", WAIT, || {
        notifies(&desktop.notify_text())
            .iter()
            .any(|(_, summary, body)| summary == "delta" && body == "9 unread on the project board")
            .then_some(())
    });

    fabric.kill().unwrap();
    fabric.wait().unwrap();
    drop(hosts);
}
