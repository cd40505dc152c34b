//! The desktop a person runs the tray on, made of real parts for one test HOME: Xvfb, a
//! private D-Bus session bus, a real notification daemon (`dunst`) with `dbus-monitor`
//! recording every call and signal of `org.freedesktop.Notifications`, a real
//! StatusNotifierWatcher with a real StatusNotifierItem host (`status-notifier-watcher`,
//! `gtk-sni-tray-standalone`), and the real `fabric-tray` as its item. Everything started is
//! killed and reaped when the desktop is dropped.
//!
//! What the tests read of it: the item's icon as the host gets it (its `IconPixmap` over
//! D-Bus), and the notifications the daemon was asked to show and to close.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::binaries;
use crate::home::TestHome;

/// The programs this desktop is made of, and the Debian packages they come in.
pub const PROGRAMS: [(&str, &str); 8] = [
    ("Xvfb", "xvfb"),
    ("xdpyinfo", "x11-utils"),
    ("dbus-daemon", "dbus"),
    ("dbus-monitor", "dbus"),
    ("dbus-send", "dbus"),
    ("dunst", "dunst"),
    (
        "status-notifier-watcher",
        "haskell-status-notifier-item-utils",
    ),
    ("gtk-sni-tray-standalone", "haskell-gtk-sni-tray-utils"),
];

/// The longest the desktop's parts may take to come up.
const START_LIMIT: Duration = Duration::from_secs(60);

/// What is missing to make the desktop here (empty: nothing).
pub fn missing_programs() -> Vec<String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    PROGRAMS
        .iter()
        .filter(|(program, _)| !std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
        .map(|(program, package)| format!("{program} (package {package})"))
        .collect()
}

/// A running desktop with the tray on it.
pub struct Desktop {
    pub display: String,
    pub bus: String,
    /// `dbus-monitor`'s record of the notification daemon's traffic.
    pub notify_log: PathBuf,
    /// The tray's pid.
    pub tray_pid: u32,
    /// The tray's connection on the bus (its unique name, `:1.N`): the item registers by its
    /// object path on it and owns no well-known name.
    pub item_bus: String,
    children: Vec<(String, Child)>,
    env: Vec<(String, String)>,
}

fn wait<T>(what: &str, limit: Duration, mut check: impl FnMut() -> Option<T>) -> Result<T, String> {
    let start = Instant::now();
    loop {
        if let Some(value) = check() {
            return Ok(value);
        }
        if start.elapsed() > limit {
            return Err(format!("gave up waiting for {what}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A display number no other process (or test of this process) uses.
fn free_display() -> u32 {
    static TAKEN: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());
    let mut taken = TAKEN.lock().unwrap_or_else(|e| e.into_inner());
    let n = (600..900)
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
    /// Starts the desktop for `home` (logs in `logs`), then the tray.
    pub fn start(home: &TestHome, logs: &Path) -> Result<Desktop, String> {
        Desktop::start_with(home, logs, &[])
    }

    /// As [`Desktop::start`], every process of it also given `extra` (the person's
    /// `FABRIC_SSH_CONFIG`, say).
    pub fn start_with(
        home: &TestHome,
        logs: &Path,
        extra: &[(String, String)],
    ) -> Result<Desktop, String> {
        std::fs::create_dir_all(logs).map_err(|e| e.to_string())?;
        let run_dir = home.home.join(".run");
        std::fs::create_dir_all(&run_dir).map_err(|e| e.to_string())?;
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&run_dir, std::fs::Permissions::from_mode(0o700));
        }
        let mut desktop = Desktop {
            display: format!(":{}", free_display()),
            bus: String::new(),
            notify_log: logs.join("dbus-monitor.log"),
            tray_pid: 0,
            item_bus: String::new(),
            children: Vec::new(),
            env: Vec::new(),
        };
        let log = |name: &str| -> Stdio {
            std::fs::File::create(logs.join(format!("{name}.log")))
                .map(Stdio::from)
                .unwrap_or_else(|_| Stdio::null())
        };
        let xvfb = Command::new("Xvfb")
            .args([
                desktop.display.as_str(),
                "-screen",
                "0",
                "1024x768x24",
                "-nolisten",
                "tcp",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log("Xvfb"))
            .spawn()
            .map_err(|e| format!("cannot start Xvfb: {e}"))?;
        desktop.children.push(("Xvfb".into(), xvfb));
        let display = desktop.display.clone();
        wait("Xvfb", START_LIMIT, || {
            Command::new("xdpyinfo")
                .args(["-display", &display])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .ok()
                .filter(|s| s.success())
        })?;
        let mut dbus = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start dbus-daemon: {e}"))?;
        let mut line = String::new();
        BufReader::new(dbus.stdout.take().expect("piped"))
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        desktop.children.push(("dbus-daemon".into(), dbus));
        desktop.bus = line.trim().to_owned();
        if desktop.bus.is_empty() {
            return Err("dbus-daemon printed no address".into());
        }
        desktop.env = home.env();
        desktop.env.retain(|(k, _)| k != "TERM");
        desktop.env.extend([
            ("DISPLAY".to_owned(), desktop.display.clone()),
            ("DBUS_SESSION_BUS_ADDRESS".to_owned(), desktop.bus.clone()),
            ("XDG_RUNTIME_DIR".to_owned(), crate::hosts::text(&run_dir)),
        ]);
        desktop.env.extend(extra.iter().cloned());
        let monitor_log = std::fs::File::create(&desktop.notify_log).map_err(|e| e.to_string())?;
        let monitor = desktop
            .command("dbus-monitor")
            .args(["--session", "interface=org.freedesktop.Notifications"])
            .stdout(monitor_log)
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start dbus-monitor: {e}"))?;
        desktop.children.push(("dbus-monitor".into(), monitor));
        desktop.spawn("dunst", &[], log("dunst"))?;
        wait("dunst on the bus", START_LIMIT, || {
            desktop
                .name_owner("org.freedesktop.Notifications")
                .map(|_| ())
        })?;
        desktop.spawn(
            "status-notifier-watcher",
            &[],
            log("status-notifier-watcher"),
        )?;
        wait("the StatusNotifierWatcher", START_LIMIT, || {
            desktop
                .name_owner("org.kde.StatusNotifierWatcher")
                .map(|_| ())
        })?;
        desktop.spawn(
            "gtk-sni-tray-standalone",
            &["--bottom", "--end", "--size", "32"],
            log("gtk-sni-tray-standalone"),
        )?;
        let tray = binaries::fabric_tray();
        let child = desktop
            .command(&crate::hosts::text(&tray))
            .stdout(log("fabric-tray"))
            .stderr(log("fabric-tray.stderr"))
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", tray.display()))?;
        desktop.tray_pid = child.id();
        desktop.children.push(("fabric-tray".into(), child));
        desktop.item_bus = wait("the tray's item registered", START_LIMIT, || {
            desktop.registered_item_of(desktop.tray_pid)
        })?;
        Ok(desktop)
    }

    /// The whole screen (the tray host's window with our icon, the daemon's notifications)
    /// as a PNG at `file` (ImageMagick's `import`); a screenshot that cannot be taken is said.
    pub fn screenshot(&self, file: &Path) {
        if let Some(dir) = file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let taken = self
            .command("import")
            .args(["-window", "root"])
            .arg(file)
            .status()
            .is_ok_and(|s| s.success());
        if !taken {
            eprintln!("no screenshot at {} (ImageMagick's import)", file.display());
        }
    }

    /// A command with the desktop's environment only.
    pub fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .envs(self.env.iter().cloned())
            .stdin(Stdio::null());
        command
    }

    /// Starts `command` (made by [`Desktop::command`]) as part of the desktop: killed with it.
    pub fn keep(&mut self, name: &str, mut command: Command) -> Result<u32, String> {
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        let pid = child.id();
        self.children.push((name.to_owned(), child));
        Ok(pid)
    }

    fn spawn(&mut self, program: &str, args: &[&str], log: Stdio) -> Result<(), String> {
        let child = self
            .command(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        self.children.push((program.to_owned(), child));
        Ok(())
    }

    fn send(&self, args: &[&str]) -> String {
        self.command("dbus-send")
            .args(["--session", "--print-reply"])
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// Who owns `name` on the bus.
    pub fn name_owner(&self, name: &str) -> Option<String> {
        let text = self.send(&[
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.GetNameOwner",
            &format!("string:{name}"),
        ]);
        let owner = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("string \""))?;
        Some(owner.trim_end_matches('"').to_owned())
    }

    /// The bus name of the item the watcher lists for the process `pid`: each entry of
    /// `RegisteredStatusNotifierItems` (`:1.7/StatusNotifierItem`, or a name alone) names a
    /// connection; the bus says whose process it is.
    fn registered_item_of(&self, pid: u32) -> Option<String> {
        let text = self.send(&[
            "--dest=org.kde.StatusNotifierWatcher",
            "/StatusNotifierWatcher",
            "org.freedesktop.DBus.Properties.Get",
            "string:org.kde.StatusNotifierWatcher",
            "string:RegisteredStatusNotifierItems",
        ]);
        text.lines()
            .filter_map(|l| l.trim().strip_prefix("string \""))
            .map(|entry| {
                let entry = entry.trim_end_matches('"');
                entry[..entry.find(['/', '@']).unwrap_or(entry.len())].to_owned()
            })
            .find(|name| self.pid_of(name) == Some(pid))
    }

    /// The process behind the bus name `name`.
    fn pid_of(&self, name: &str) -> Option<u32> {
        let text = self.send(&[
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.GetConnectionUnixProcessID",
            &format!("string:{name}"),
        ]);
        text.lines()
            .find_map(|l| l.trim().strip_prefix("uint32 "))
            .and_then(|v| v.trim().parse().ok())
    }

    /// The item's largest icon as the host reads it (`IconPixmap`): width, height, ARGB.
    pub fn icon_pixmap(&self) -> Option<(u32, u32, Vec<u8>)> {
        let text = self.send(&[
            &format!("--dest={}", self.item_bus),
            "/StatusNotifierItem",
            "org.freedesktop.DBus.Properties.Get",
            "string:org.kde.StatusNotifierItem",
            "string:IconPixmap",
        ]);
        parse_pixmaps(&text).into_iter().max_by_key(|(w, _, _)| *w)
    }

    /// Whether the item's icon shows the "needs you" mark: the red disc, bottom right.
    pub fn icon_has_mark(&self) -> Option<bool> {
        let (w, h, argb) = self.icon_pixmap()?;
        Some(test_support::picture::needs_you_mark(w, h, &argb))
    }

    /// The tray's menu as a host reads it: `(id, label)` of every labelled item
    /// (`com.canonical.dbusmenu.GetLayout` of the whole tree).
    pub fn menu(&self) -> Vec<(i32, String)> {
        let text = self.send(&[
            &format!("--dest={}", self.item_bus),
            "/MenuBar",
            "com.canonical.dbusmenu.GetLayout",
            "int32:0",
            "int32:-1",
            "array:string:label",
        ]);
        parse_menu(&text)
    }

    /// A click on the menu's item `id`, as a host sends it.
    pub fn click(&self, id: i32) {
        self.send(&[
            &format!("--dest={}", self.item_bus),
            "/MenuBar",
            "com.canonical.dbusmenu.Event",
            &format!("int32:{id}"),
            "string:clicked",
            "variant:int32:0",
            "uint32:0",
        ]);
    }

    /// What `dbus-monitor` recorded so far.
    pub fn notify_text(&self) -> String {
        std::fs::read_to_string(&self.notify_log).unwrap_or_default()
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        for (_, child) in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The `(id, label)` pairs of a `dbus-send --print-reply` of dbusmenu's `GetLayout` asked for
/// the label only: each item is `struct { int32 <id> array [ dict entry( string "label"
/// variant string "<label>" ) ] array [ <children> ] }`, so a label belongs to the last id
/// printed before it.
pub fn parse_menu(text: &str) -> Vec<(i32, String)> {
    let mut out = Vec::new();
    let mut id = None;
    let mut lines = text.lines().map(str::trim).peekable();
    while let Some(line) = lines.next() {
        if let Some(n) = line.strip_prefix("int32 ") {
            id = n.trim().parse().ok();
        } else if line == "string \"label\""
            && let Some(value) = lines.peek().and_then(|l| l.strip_prefix("variant "))
            && let Some(label) = value.trim().strip_prefix("string \"")
            && let Some(id) = id
        {
            out.push((id, label.strip_suffix('"').unwrap_or(label).to_owned()));
        }
    }
    out
}

/// The pixmaps of a `dbus-send --print-reply` of an `a(iiay)` property.
pub fn parse_pixmaps(text: &str) -> Vec<(u32, u32, Vec<u8>)> {
    let mut out = Vec::new();
    let mut lines = text.lines().map(str::trim).peekable();
    while let Some(line) = lines.next() {
        let Some(w) = line
            .strip_prefix("int32 ")
            .and_then(|v| v.parse::<u32>().ok())
        else {
            continue;
        };
        let Some(h) = lines
            .next()
            .and_then(|l| l.strip_prefix("int32 "))
            .and_then(|v| v.parse::<u32>().ok())
        else {
            continue;
        };
        if lines
            .next()
            .is_none_or(|l| !l.starts_with("array of bytes"))
        {
            continue;
        }
        let mut bytes = Vec::new();
        while let Some(l) = lines.peek() {
            if l.starts_with(']') {
                lines.next();
                break;
            }
            bytes.extend(
                l.split_whitespace()
                    .filter_map(|b| u8::from_str_radix(b, 16).ok()),
            );
            lines.next();
        }
        if bytes.len() == (w * h * 4) as usize {
            out.push((w, h, bytes));
        }
    }
    out
}

/// One call or signal of the notification daemon's interface, as `dbus-monitor` printed it.
#[derive(Debug, Clone, PartialEq)]
pub enum Traffic {
    /// `Notify` and the id the daemon answered with (when its reply was recorded).
    Notify {
        at: f64,
        summary: String,
        body: String,
        id: Option<u32>,
    },
    /// `CloseNotification(id)`: the tray withdrew it.
    Close { at: f64, id: u32 },
    /// `NotificationClosed(id, reason)`.
    Closed { at: f64, id: u32 },
}

/// Every `Notify`, `CloseNotification` and `NotificationClosed` in the record, in order.
pub fn traffic(log: &str) -> Vec<Traffic> {
    let lines: Vec<&str> = log.lines().collect();
    let field = |line: &str, name: &str| -> Option<String> {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(name))
            .map(str::to_owned)
    };
    let quoted = |line: &str| -> Option<String> {
        Some(
            line.trim()
                .strip_prefix("string \"")?
                .strip_suffix('"')?
                .to_owned(),
        )
    };
    let uint =
        |line: Option<&&str>| -> Option<u32> { line?.trim().strip_prefix("uint32 ")?.parse().ok() };
    // Replies: serial of the call → the id answered.
    let mut replies = std::collections::HashMap::new();
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with("method return ")
            && let (Some(serial), Some(id)) = (field(line, "reply_serial="), uint(lines.get(i + 1)))
        {
            replies.insert(serial, id);
        }
    }
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let at = field(line, "time=")
            .and_then(|t| t.parse().ok())
            .unwrap_or(0.0);
        if line.starts_with("method call ") && line.ends_with("member=Notify") {
            let (Some(summary), Some(body)) = (
                lines.get(i + 4).and_then(|l| quoted(l)),
                lines.get(i + 5).and_then(|l| quoted(l)),
            ) else {
                continue;
            };
            let id = field(line, "serial=").and_then(|s| replies.get(&s).copied());
            out.push(Traffic::Notify {
                at,
                summary,
                body,
                id,
            });
        } else if line.starts_with("method call ")
            && line.ends_with("member=CloseNotification")
            && let Some(id) = uint(lines.get(i + 1))
        {
            out.push(Traffic::Close { at, id });
        } else if line.starts_with("signal ")
            && line.ends_with("member=NotificationClosed")
            && let Some(id) = uint(lines.get(i + 1))
        {
            out.push(Traffic::Closed { at, id });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_menu_is_read_from_dbus_s_own_print() {
        // What dbus-send printed for the tray's GetLayout (trimmed to two items).
        let text = r#"method return time=1 sender=:1.5 -> destination=:1.9 serial=40 reply_serial=2
   uint32 12
   struct {
      int32 0
      array [
      ]
      array [
         variant             struct {
               int32 3
               array [
                  dict entry(
                     string "label"
                     variant                         string "proj · Claude Code on fabric-remote · needs you (permission, just now)"
                  )
               ]
               array [
               ]
            }
         variant             struct {
               int32 7
               array [
                  dict entry(
                     string "label"
                     variant                         string "fabric-remote: connected, 1 session"
                  )
               ]
               array [
               ]
            }
      ]
   }
"#;
        assert_eq!(
            parse_menu(text),
            [
                (
                    3,
                    "proj · Claude Code on fabric-remote · needs you (permission, just now)"
                        .to_owned()
                ),
                (7, "fabric-remote: connected, 1 session".to_owned())
            ]
        );
    }

    #[test]
    fn pixmaps_and_traffic_are_read_from_dbus_s_own_print() {
        let text = "method return time=1.0 sender=:1.2 -> destination=:1.3 serial=4 reply_serial=2\n   variant       array [\n         struct {\n            int32 1\n            int32 1\n            array of bytes [\n               ff e0 1e 37\n            ]\n         }\n      ]\n";
        assert_eq!(parse_pixmaps(text), [(1, 1, vec![0xff, 0xe0, 0x1e, 0x37])]);
        let log = "method call time=10.5 sender=:1.7 -> destination=org.freedesktop.Notifications serial=9 path=/org/freedesktop/Notifications; interface=org.freedesktop.Notifications; member=Notify\n   string \"Fabric Companion\"\n   uint32 0\n   string \"\"\n   string \"web needs you\"\n   string \"Codex is waiting for your permission.\"\n   array [\n   ]\nmethod return time=10.6 sender=:1.5 -> destination=:1.7 serial=30 reply_serial=9\n   uint32 4\nmethod call time=12.0 sender=:1.7 -> destination=org.freedesktop.Notifications serial=10 path=/org/freedesktop/Notifications; interface=org.freedesktop.Notifications; member=CloseNotification\n   uint32 4\nsignal time=12.1 sender=:1.5 -> destination=(null destination) serial=31 path=/org/freedesktop/Notifications; interface=org.freedesktop.Notifications; member=NotificationClosed\n   uint32 4\n   uint32 3\n";
        assert_eq!(
            traffic(log),
            [
                Traffic::Notify {
                    at: 10.5,
                    summary: "web needs you".into(),
                    body: "Codex is waiting for your permission.".into(),
                    id: Some(4)
                },
                Traffic::Close { at: 12.0, id: 4 },
                Traffic::Closed { at: 12.1, id: 4 }
            ]
        );
    }
}
