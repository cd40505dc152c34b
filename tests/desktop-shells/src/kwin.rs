//! KWin (KDE Plasma's compositor, 5.27), headless: `kwin_wayland --virtual` on the session's
//! buses. Debian's `/usr/bin/kwin_wayland` carries a file capability (`cap_sys_resource`)
//! and executing such a file is refused in this kind of container ("Operation not
//! permitted"), so a plain copy of it runs instead (the same program without the
//! capability). Read-back: a KWin script (loaded over `org.kde.kwin.Scripting`) calls the
//! test back on its own connection with what KWin holds (windows, their pids, the active one).

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
        let mut session = Session::new(suite, test, "KDE");
        let bin = session.home().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let copy = bin.join("kwin_wayland");
        let original = which("kwin_wayland").expect("kwin_wayland");
        std::fs::copy(&original, &copy).unwrap();
        let socket = "wayland-kwin";
        let mut kwin = session.command(&copy);
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
        .env("KWIN_COMPOSE", "Q");
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
            "(function () {{\n const windows = workspace.stackingOrder || (workspace.windowList ? workspace.windowList() : workspace.clientList());\n const activeWindow = () => (workspace.activeWindow !== undefined ? workspace.activeWindow : workspace.activeClient);\n let result = null;\n {body}\n callDBus({unique:?}, {REPLY_PATH:?}, \"ai.passioncode.FabricCompanion.TestReply\", \"done\", JSON.stringify(result));\n}})();\n"
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

    /// Waits for a normal window of process `pid`.
    pub fn wait_for_window(&self, pid: u32) {
        wait_until(&format!("the window of process {pid}"), WAIT, || {
            self.windows().iter().any(|(p, _)| *p == pid).then_some(())
        });
    }
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| Path::new(p).is_file())
}
