//! KWin (KDE Plasma's compositor, 5.27), headless: `kwin_wayland --virtual` on the session's
//! buses. Debian's `/usr/bin/kwin_wayland` carries a file capability (`cap_sys_resource`)
//! and executing such a file is refused in this kind of container ("Operation not
//! permitted"), so a plain copy of it runs instead (the same program without the
//! capability). Read-back: a KWin script (loaded over `org.kde.kwin.Scripting`) calls the
//! test back on its own connection with what KWin holds (windows, their pids, the active
//! one); screenshots through KWin's own `org.kde.KWin.ScreenShot2` (its permission check off
//! for this KWin: `KWIN_SCREENSHOT_NO_PERMISSION_CHECKS`).
//!
//! Plasma on top ([`Kwin::start_plasma`]): `kactivitymanagerd`, `kded5` (Plasma 6: `kded6`) with its
//! StatusNotifierWatcher module, and `plasmashell` (Debian's plasma-desktop shell package),
//! whose panel holds the system tray (a StatusNotifierHost) and whose notifications applet
//! is the notification server.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::session::{Session, WAIT, require, wait_until};

/// What the KWin tests need on `PATH`.
pub const PROGRAMS: [&str; 3] = ["kwin_wayland", "konsole", "dbus-daemon"];

pub fn available(test: &str) -> bool {
    require(test, &PROGRAMS, "kwin-wayland, konsole, dbus")
}

const REPLY_PATH: &str = "/ai/passioncode/FabricCompanion/TestReply";

struct Replies {
    sender: mpsc::UnboundedSender<String>,
}

#[zbus::interface(name = "ai.passioncode.FabricCompanion.TestReply")]
impl Replies {
    fn done(&self, result: String) {
        let _ = self.sender.send(result);
    }
}

/// The one copy of `kwin_wayland` (without its file capability) every test of this process
/// starts. Made once, by `install` (a copy, mode 0755, no capability) in a child process: a file this process opened for writing can
/// be inherited by a child another test thread forks at that moment, and executing the file
/// while such a child still holds it fails with "Text file busy" (ETXTBSY). `install` has closed
/// the file when it exits, and no descriptor of ours ever pointed at it.
fn kwin_copy() -> &'static Path {
    static COPY: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    COPY.get_or_init(|| {
        let original = which("kwin_wayland").expect("kwin_wayland");
        let dir = std::env::temp_dir().join(format!("fabric-kwin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let copy = dir.join("kwin_wayland");
        let status = std::process::Command::new("install")
            .args(["-m", "0755"])
            .arg(&original)
            .arg(&copy)
            .status()
            .expect("install");
        assert!(
            status.success(),
            "install {} failed: {status}",
            original.display()
        );
        copy
    })
}

/// A running headless KWin.
pub struct Kwin {
    pub session: Session,
    pub pid: u32,
    replies: tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>,
    scripts: std::sync::atomic::AtomicU32,
}

impl std::ops::Deref for Kwin {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.session
    }
}

impl std::ops::DerefMut for Kwin {
    fn deref_mut(&mut self) -> &mut Session {
        &mut self.session
    }
}

impl Kwin {
    pub fn start(suite: &str, test: &str) -> Kwin {
        Self::start_with_session_bus_policy(suite, test, None)
    }

    /// [`Kwin::start`] with `policy` added to the session bus's configuration.
    pub fn start_with_session_bus_policy(suite: &str, test: &str, policy: Option<&str>) -> Kwin {
        let mut session = Session::with_session_bus_policy(suite, test, "KDE", policy);
        let copy = kwin_copy();
        let socket = "wayland-kwin";
        let mut kwin = session.command(copy);
        kwin.args([
            "--virtual",
            "--width",
            "1280",
            "--height",
            "800",
            "--no-lockscreen",
            "--socket",
            socket,
        ])
        .env("QT_QPA_PLATFORM", "offscreen")
        .env("KWIN_SCREENSHOT_NO_PERMISSION_CHECKS", "1")
        .env("QT_LOGGING_RULES", "kwin_scripting=true");
        let pid = session.spawn("kwin_wayland", kwin);
        wait_until("KWin on the session bus", WAIT, || {
            session.name_owner("org.kde.KWin")
        });
        wait_until("KWin's Wayland socket", WAIT, || {
            session.runtime_dir().join(socket).exists().then_some(())
        });
        session.wayland_display = Some(socket.into());
        let (sender, receiver) = mpsc::unbounded_channel();
        let bus = session.bus().clone();
        session.block_on(async move {
            bus.object_server()
                .at(REPLY_PATH, Replies { sender })
                .await
                .unwrap();
        });
        Kwin {
            session,
            pid,
            replies: tokio::sync::Mutex::new(receiver),
            scripts: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// Runs a KWin script whose `body` computes a value `result`; that value, as JSON.
    pub fn script(&self, body: &str) -> Value {
        let n = self
            .scripts
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let name = format!("fabric-test-{n}");
        let unique = self.bus().unique_name().unwrap().to_string();
        let source = format!(
            "(function () {{\n const windows = workspace.stackingOrder || (workspace.windowList ? workspace.windowList() : workspace.clientList());\n const activeWindow = () => (workspace.activeWindow !== undefined ? workspace.activeWindow : workspace.activeClient);\n let result = null;\n {body}\n callDBus({unique:?}, {REPLY_PATH:?}, \"ai.passioncode.FabricCompanion.TestReply\", \"Done\", JSON.stringify(result));\n}})();\n"
        );
        let file = self.home().join(format!("{name}.js"));
        std::fs::write(&file, source).unwrap();
        let bus = self.bus().clone();
        let text = self.block_on(async {
            let call = |method: &'static str, body: Vec<String>| {
                let bus = bus.clone();
                async move {
                    let args: Vec<&str> = body.iter().map(String::as_str).collect();
                    let result = match args.len() {
                        0 => {
                            bus.call_method(
                                Some("org.kde.KWin"),
                                "/Scripting",
                                Some("org.kde.kwin.Scripting"),
                                method,
                                &(),
                            )
                            .await
                        }
                        1 => {
                            bus.call_method(
                                Some("org.kde.KWin"),
                                "/Scripting",
                                Some("org.kde.kwin.Scripting"),
                                method,
                                &(args[0],),
                            )
                            .await
                        }
                        _ => {
                            bus.call_method(
                                Some("org.kde.KWin"),
                                "/Scripting",
                                Some("org.kde.kwin.Scripting"),
                                method,
                                &(args[0], args[1]),
                            )
                            .await
                        }
                    };
                    result.unwrap_or_else(|e| panic!("KWin {method}: {e}"))
                }
            };
            call(
                "loadScript",
                vec![file.to_str().unwrap().to_string(), name.clone()],
            )
            .await;
            call("start", vec![]).await;
            let mut replies = self.replies.lock().await;
            let text = tokio::time::timeout(Duration::from_secs(20), replies.recv())
                .await
                .expect("the KWin script's answer")
                .unwrap();
            call("unloadScript", vec![name.clone()]).await;
            text
        });
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("KWin script: {e}: {text}"))
    }

    /// The normal windows (`pid`, resource class), bottom to top.
    pub fn windows(&self) -> Vec<(u32, String)> {
        let value = self.script(
            "result = windows.filter(w => w && w.normalWindow).map(w => [w.pid, String(w.resourceClass)]);",
        );
        value
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| {
                (
                    w[0].as_u64().unwrap_or(0) as u32,
                    w[1].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    /// The active window (`pid`, resource class).
    pub fn active(&self) -> Option<(u32, String)> {
        let value = self.script(
            "const w = activeWindow(); result = w ? [w.pid, String(w.resourceClass)] : null;",
        );
        Some((
            value.get(0)?.as_u64()? as u32,
            value.get(1)?.as_str()?.to_string(),
        ))
    }

    /// Plasma's shell on this KWin: the activity manager, kded's StatusNotifierWatcher and
    /// plasmashell (its panel's system tray, its notification server). `None` when plasmashell
    /// did not come up (its log then says why).
    pub fn start_plasma(&mut self) -> Option<()> {
        let mut activities = self.command("/usr/lib/x86_64-linux-gnu/libexec/kactivitymanagerd");
        activities.env("QT_QPA_PLATFORM", "wayland");
        self.spawn("kactivitymanagerd", activities);
        wait_until("the activity manager", WAIT, || {
            self.name_owner("org.kde.ActivityManager")
        });
        // Plasma 6's kded is kded6 (its name and interface too), Plasma 5's kded5.
        let kded_name = if which("kded6").is_some() {
            "kded6"
        } else {
            "kded5"
        };
        let service = format!("org.kde.{kded_name}");
        let mut kded = self.command(kded_name);
        kded.env("QT_QPA_PLATFORM", "wayland");
        self.spawn(kded_name, kded);
        wait_until("kded", WAIT, || self.name_owner(&service));
        let bus = self.bus().clone();
        self.block_on(async move {
            bus.call_method(
                Some(service.as_str()),
                "/kded",
                Some(service.as_str()),
                "loadModule",
                &("statusnotifierwatcher",),
            )
            .await
            .expect("kded's statusnotifierwatcher module");
        });
        wait_until("kded's StatusNotifierWatcher", WAIT, || {
            self.name_owner("org.kde.StatusNotifierWatcher")
        });
        let mut shell = self.command("plasmashell");
        shell
            .arg("--no-respawn")
            .env("QT_QPA_PLATFORM", "wayland")
            .env("QT_QUICK_BACKEND", "software");
        self.spawn("plasmashell", shell);
        let started = std::time::Instant::now();
        while started.elapsed() < Duration::from_secs(90) {
            let names = self.bus_names();
            if names.iter().any(|n| n == "org.freedesktop.Notifications")
                && names
                    .iter()
                    .any(|n| n.starts_with("org.kde.StatusNotifierHost-"))
            {
                return Some(());
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        None
    }

    /// The names on the session bus.
    pub fn bus_names(&self) -> Vec<String> {
        let bus = self.bus().clone();
        self.block_on(async move {
            let Ok(dbus) = zbus::fdo::DBusProxy::new(&bus).await else {
                return Vec::new();
            };
            dbus.list_names()
                .await
                .unwrap_or_default()
                .into_iter()
                .map(|n| n.to_string())
                .collect()
        })
    }

    /// A screenshot of the whole screen by KWin, kept as `<name>.png`; its pixels (RGB).
    pub fn screenshot(&self, name: &str) -> crate::session::Picture {
        self.try_screenshot(name)
            .unwrap_or_else(|e| panic!("KWin's screenshot: {e}"))
    }

    /// As [`Kwin::screenshot`], or why KWin took none: a headless KWin 6 here draws without
    /// OpenGL and its screenshot effect does not load (no `ScreenShot2` object, or the
    /// capture cancelled); tests then read state back over D-Bus instead.
    pub fn try_screenshot(&self, name: &str) -> Result<crate::session::Picture, String> {
        let (read_end, write_end) = pipe();
        let reader = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let mut file = std::fs::File::from(read_end);
            std::io::Read::read_to_end(&mut file, &mut bytes).map(|_| bytes)
        });
        let bus = self.bus().clone();
        let options: std::collections::HashMap<&str, zbus::Variant<'_>> =
            std::collections::HashMap::new();
        let reply = self.block_on(async move {
            bus.call_method(
                Some("org.kde.KWin"),
                "/org/kde/KWin/ScreenShot2",
                Some("org.kde.KWin.ScreenShot2"),
                "CaptureWorkspace",
                &(options, zbus::Fd::from(write_end)),
            )
            .await
        });
        let reply = match reply {
            Ok(reply) => reply,
            Err(error) => {
                let _ = reader.join();
                return Err(error.to_string());
            }
        };
        let info: std::collections::HashMap<String, zbus::OwnedVariant> =
            reply.body().deserialize().unwrap();
        let number = |key: &str| -> u32 {
            info.get(key)
                .and_then(|v| u32::try_from(v).ok())
                .unwrap_or_else(|| panic!("KWin's screenshot: no {key} in {info:?}"))
        };
        let (width, height, stride) = (number("width"), number("height"), number("stride"));
        let raw = reader.join().unwrap().expect("the screenshot's pixels");
        // QImage's 32-bit formats in memory on a little-endian machine: B, G, R, A.
        let mut rgb = Vec::with_capacity((width * height * 3) as usize);
        for y in 0..height {
            let row = &raw[(y * stride) as usize..];
            for x in 0..width {
                let px = &row[(x * 4) as usize..(x * 4 + 4) as usize];
                rgb.extend_from_slice(&[px[2], px[1], px[0]]);
            }
        }
        let picture = crate::session::Picture { width, height, rgb };
        picture.save(&self.artefacts.join(format!("{name}.png")));
        Ok(picture)
    }

    /// Waits for a normal window of process `pid`.
    pub fn wait_for_window(&self, pid: u32) {
        wait_until(&format!("the window of process {pid}"), WAIT, || {
            self.windows().iter().any(|(p, _)| *p == pid).then_some(())
        });
    }
}

/// A pipe: its read end and its write end.
fn pipe() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors, which we then own.
    let done = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(done, 0, "pipe2");
    // SAFETY: both descriptors were just created and are owned by nothing else.
    unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    }
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| Path::new(p).is_file())
}
