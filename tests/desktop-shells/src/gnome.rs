//! GNOME Shell, headless, as a Wayland compositor with no GPU (Debian 12's gnome-shell 43;
//! 48 and 50 in tests/desktop-roots' Debian roots, told apart by [`shell_major`]: the
//! extensions in the format that shell loads, `--no-x11` only where X11 is still built in):
//! `gnome-shell --headless --wayland --no-x11 --virtual-monitor 1280x800` in a private mount
//! namespace with a tmpfs over `/run/systemd` (where `/run/systemd/seats` exists the shell
//! asks logind, finds no session of ours and aborts), on the session's private buses, with
//! the extensions the test asks for enabled before it starts (the AppIndicator extension,
//! ours, and the test-only probe that reads back what the shell holds). GNOME's own
//! notification daemon (`org.gnome.Shell.Notifications`, gjs) owns
//! `org.freedesktop.Notifications`.
//!
//! The shell crashes when it is ended (core dumps are off) and then leaves
//! `gnome-shell-disable-extensions` in the runtime folder, which would turn every extension
//! off at its next start: each start removes it.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::programs::ExtensionFormat;
use crate::session::{Session, WAIT, cannot_run, require, wait_until};

/// The running system's GNOME Shell major version (`gnome-shell --version`: "GNOME Shell
/// 48.7"); 0 when it cannot be told.
pub fn shell_major() -> u32 {
    static MAJOR: OnceLock<u32> = OnceLock::new();
    *MAJOR.get_or_init(|| {
        std::process::Command::new("gnome-shell")
            .arg("--version")
            .output()
            .ok()
            .and_then(|out| {
                let text = String::from_utf8_lossy(&out.stdout).into_owned();
                text.trim()
                    .strip_prefix("GNOME Shell ")?
                    .split('.')
                    .next()?
                    .parse()
                    .ok()
            })
            .unwrap_or(0)
    })
}

/// The extension format this machine's GNOME Shell loads.
pub fn extension_format() -> ExtensionFormat {
    ExtensionFormat::for_shell(shell_major())
}

/// Debian's AppIndicator extension (gnome-shell-extension-appindicator).
pub const APPINDICATOR: &str = "ubuntu-appindicators@ubuntu.com";
/// The test-only probe (`tests/desktop-shells/gnome-extension/`).
pub const PROBE: &str = "fabric-test-probe@passioncode.ai";
/// Our shipped extension.
pub const FOCUS: &str = companion_desktop::desktop::GNOME_FOCUS_EXTENSION;

const PROBE_PATH: &str = "/ai/passioncode/FabricCompanion/TestProbe";
const PROBE_INTERFACE: &str = "ai.passioncode.FabricCompanion.TestProbe";

/// Everything GNOME Shell's tests need on `PATH`.
pub const PROGRAMS: [&str; 5] = ["gnome-shell", "gjs", "dbus-daemon", "gsettings", "unshare"];

/// Whether the headless GNOME Shell can run here (a skip or a failure says why not).
pub fn available(test: &str) -> bool {
    if !require(
        test,
        &PROGRAMS,
        "gnome-shell, gjs, dbus, libglib2.0-bin, util-linux",
    ) {
        return false;
    }
    if !Path::new("/usr/share/gnome-shell/extensions")
        .join(APPINDICATOR)
        .is_dir()
    {
        return cannot_run(
            test,
            "the AppIndicator extension is not installed (package gnome-shell-extension-appindicator)",
        );
    }
    // SAFETY: getuid has no preconditions.
    if Path::new("/run/systemd/seats").exists() && unsafe { libc::getuid() } != 0 {
        return cannot_run(
            test,
            "GNOME Shell must not see this machine's logind seats: hiding /run/systemd needs a \
             private mount namespace, which needs root (as CI runs)",
        );
    }
    true
}

/// A running headless GNOME Shell.
pub struct GnomeShell {
    pub session: Session,
    pub pid: u32,
}

impl std::ops::Deref for GnomeShell {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.session
    }
}

impl std::ops::DerefMut for GnomeShell {
    fn deref_mut(&mut self) -> &mut Session {
        &mut self.session
    }
}

impl GnomeShell {
    /// A session for `suite`/`test` with GNOME Shell running, `extensions` enabled (the probe
    /// is always installed and enabled), the overview closed.
    pub fn start(suite: &str, test: &str, extensions: &[&str]) -> GnomeShell {
        GnomeShell::start_with(suite, test, extensions, None)
    }

    /// As [`GnomeShell::start`], with our extension taken from `focus_dir` (a variant the
    /// test chose) instead of the one for this shell (the installed package's link, with
    /// `FABRIC_DESKTOP_INSTALLED=1`, else the source of the format this shell loads).
    pub fn start_with(
        suite: &str,
        test: &str,
        extensions: &[&str],
        focus_dir: Option<&Path>,
    ) -> GnomeShell {
        let mut session = Session::new(suite, test, "GNOME");
        let user_extensions = session.data_dir().join("gnome-shell/extensions");
        std::fs::create_dir_all(&user_extensions).unwrap();
        let format = extension_format();
        copy_dir(
            &crate::programs::probe_extension_dir(format),
            &user_extensions.join(PROBE),
        );
        match focus_dir {
            Some(dir) => copy_dir(dir, &user_extensions.join(FOCUS)),
            None if extensions.contains(&FOCUS) && !crate::programs::installed() => copy_dir(
                &crate::programs::focus_extension_dir(format),
                &user_extensions.join(FOCUS),
            ),
            None => {}
        }
        // GNOME's notification daemon for org.freedesktop.Notifications, before any other
        // package's (dunst, Plasma) that also says it provides the name.
        let services = session.data_dir().join("dbus-1/services");
        std::fs::create_dir_all(&services).unwrap();
        std::fs::write(
            services.join("org.freedesktop.Notifications.service"),
            "[D-BUS Service]\nName=org.freedesktop.Notifications\n\
             Exec=/usr/bin/gjs /usr/share/gnome-shell/org.gnome.Shell.Notifications\n",
        )
        .unwrap();
        let mut enabled: Vec<&str> = vec![PROBE];
        enabled.extend(extensions.iter().filter(|e| **e != PROBE));
        let list = format!(
            "[{}]",
            enabled
                .iter()
                .map(|e| format!("'{e}'"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let out = session
            .command("gsettings")
            .args(["set", "org.gnome.shell", "enabled-extensions", &list])
            .output()
            .unwrap();
        assert!(out.status.success(), "gsettings: {out:?}");
        let _ = std::fs::remove_file(session.runtime_dir().join("gnome-shell-disable-extensions"));
        // GNOME Shell 49 and later are built without X11: no `--no-x11` to give.
        let no_x11 = if shell_major() >= 49 { "" } else { " --no-x11" };
        let mut shell = session.command("unshare");
        shell
            .args([
                "-m",
                "sh",
                "-c",
                &format!(
                    "ulimit -c 0; if [ -d /run/systemd ]; then mount -t tmpfs tmpfs /run/systemd || exit 97; fi; \
                     exec gnome-shell --headless --wayland{no_x11} --virtual-monitor 1280x800"
                ),
            ])
            .env("G_MESSAGES_DEBUG", "Ubuntu-AppIndicators")
            .env("GNOME_SHELL_SESSION_MODE", "user");
        let pid = session.spawn("gnome-shell", shell);
        session.wayland_display = Some("wayland-0".into());
        let gnome = GnomeShell { session, pid };
        wait_until("GNOME Shell's probe on the bus", WAIT, || {
            gnome.probe_call("Eval", &("1",)).ok()
        });
        // Start-up first, then the overview closed: hiding the overview during GNOME 48's
        // start-up animation once left `_startingUp` true for good.
        wait_until("GNOME Shell's start-up to complete", WAIT, || {
            (gnome.eval("Main.layoutManager._startingUp") == Value::Bool(false)).then_some(())
        });
        gnome.eval("Main.overview.hide(); 0");
        wait_until("GNOME Shell's overview closed", WAIT, || {
            (gnome.eval("Main.overview.visible") == Value::Bool(false)).then_some(())
        });
        gnome
    }

    /// Calls a probe method; its JSON answer.
    fn probe_call<B>(&self, method: &str, body: &B) -> Result<Value, String>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        let bus = self.bus().clone();
        let reply = self.block_on(async move {
            tokio::time::timeout(
                Duration::from_secs(20),
                bus.call_method(
                    Some("org.gnome.Shell"),
                    PROBE_PATH,
                    Some(PROBE_INTERFACE),
                    method,
                    body,
                ),
            )
            .await
        });
        let reply = reply
            .map_err(|_| format!("{method}: no answer in 20 s"))?
            .map_err(|e| format!("{method}: {e}"))?;
        let text: String = reply
            .body()
            .deserialize()
            .map_err(|e| format!("{method}: {e}"))?;
        serde_json::from_str(&text).map_err(|e| format!("{method}: {e}: {text}"))
    }

    /// A probe method's answer (panics on a D-Bus error).
    pub fn probe<B>(&self, method: &str, body: &B) -> Value
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        self.probe_call(method, body)
            .unwrap_or_else(|e| panic!("the probe: {e}"))
    }

    /// Evaluates JavaScript inside the shell; its value.
    pub fn eval(&self, code: &str) -> Value {
        let answer = self.probe("Eval", &(code,));
        assert_eq!(answer["ok"], Value::Bool(true), "eval {code}: {answer}");
        answer["value"].clone()
    }

    /// The top bar's AppIndicator items as the shell holds them.
    pub fn panel_items(&self) -> Vec<Value> {
        match self.probe("PanelItems", &()) {
            Value::Array(items) => items,
            other => panic!("PanelItems: {other}"),
        }
    }

    /// The focused window: `(pid, WM class)`.
    pub fn focused(&self) -> Option<(u32, String)> {
        let focused = self.probe("Focused", &());
        Some((
            focused["pid"].as_u64()? as u32,
            focused["wmClass"].as_str().unwrap_or_default().to_string(),
        ))
    }

    /// The normal windows, most recently used first: `(pid, WM class)`.
    pub fn windows(&self) -> Vec<(u32, String)> {
        self.probe("Windows", &())
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| {
                (
                    w["pid"].as_u64().unwrap_or(0) as u32,
                    w["wmClass"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    /// A screenshot of an area by the shell itself, kept as `<name>.png` in the artefacts.
    pub fn screenshot(&self, name: &str, x: i32, y: i32, w: i32, h: i32) -> std::path::PathBuf {
        let path = self.artefacts.join(format!("{name}.png"));
        let answer = self.probe("Screenshot", &(x, y, w, h, path.to_str().unwrap()));
        assert_eq!(answer["ok"], Value::Bool(true), "screenshot: {answer}");
        path
    }

    /// Turns an extension on or off, through the shell's own extension registry.
    pub fn set_extension(&self, uuid: &str, enabled: bool) {
        let bus = self.bus().clone();
        let method = if enabled {
            "EnableExtension"
        } else {
            "DisableExtension"
        };
        let uuid = uuid.to_string();
        self.block_on(async move {
            bus.call_method(
                Some("org.gnome.Shell"),
                "/org/gnome/Shell",
                Some("org.gnome.Shell.Extensions"),
                method,
                &(uuid.as_str(),),
            )
            .await
            .unwrap_or_else(|e| panic!("{method} {uuid}: {e}"));
        });
    }

    /// Activates the window of process `pid` as a click would (test set-up, not the jump),
    /// and waits until the focus stays there (mutter may still hand the focus to a window
    /// that was just mapped).
    pub fn activate_window_of(&self, pid: u32) {
        for _ in 0..20 {
            self.eval(&format!(
                "const win = global.display.get_tab_list(Meta.TabList.NORMAL_ALL, null)
                     .find(w => w.get_pid() === {pid});
                 Main.activateWindow(win, global.display.get_current_time_roundtrip()); 0"
            ));
            std::thread::sleep(Duration::from_millis(400));
            let held = (0..3).all(|_| {
                std::thread::sleep(Duration::from_millis(150));
                self.focused().is_some_and(|(p, _)| p == pid)
            });
            if held {
                return;
            }
        }
        panic!("the window of process {pid} does not keep the focus");
    }

    /// Waits until `window_pid`'s window is there, and says it is.
    pub fn wait_for_window(&self, pid: u32) {
        wait_until(&format!("the window of process {pid}"), WAIT, || {
            self.windows().iter().any(|(p, _)| *p == pid).then_some(())
        });
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}
