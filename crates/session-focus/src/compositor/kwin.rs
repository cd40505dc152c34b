//! KWin (KDE Plasma) on Wayland: a short KWin script, loaded over D-Bus
//! (`org.kde.kwin.Scripting.loadScript`) and started, finds the window of the first given
//! process (topmost first), makes it the active window (KWin switches to its virtual desktop
//! and restores it) and calls us back on our own connection with what it did; then it is
//! unloaded and its file removed. Works with KWin 5 (`clientList`, `activeClient`) and 6
//! (`windowList`, `activeWindow`).

use std::sync::Mutex;

use tokio::sync::oneshot;

use super::Activated;
use crate::Refusal;

#[zbus::proxy(
    interface = "org.kde.kwin.Scripting",
    default_service = "org.kde.KWin",
    default_path = "/Scripting"
)]
trait Scripting {
    #[zbus(name = "loadScript")]
    fn load_script(&self, file_path: &str, plugin_name: &str) -> zbus::Result<i32>;
    #[zbus(name = "start")]
    fn start(&self) -> zbus::Result<()>;
    #[zbus(name = "unloadScript")]
    fn unload_script(&self, plugin_name: &str) -> zbus::Result<bool>;
}

/// Where the script calls us back.
const REPLY_PATH: &str = "/ai/passioncode/FabricCompanion/KWinReply";
const REPLY_INTERFACE: &str = "ai.passioncode.FabricCompanion.KWinReply";

/// The script's answer: one JSON object (`pid`, `program`, `active`).
struct Reply {
    sender: Mutex<Option<oneshot::Sender<String>>>,
}

#[zbus::interface(name = "ai.passioncode.FabricCompanion.KWinReply")]
impl Reply {
    fn done(&self, result: String) {
        if let Some(sender) = self.sender.lock().ok().and_then(|mut s| s.take()) {
            let _ = sender.send(result);
        }
    }
}

/// The script's body: `PIDS` (the chain, nearest first) and `ACTIVATE` are filled in.
const SCRIPT: &str = r#"(function () {
    const pids = __PIDS__;
    const activate = __ACTIVATE__;
    const all = workspace.stackingOrder || (workspace.windowList ? workspace.windowList() : workspace.clientList());
    const active = () => (workspace.activeWindow !== undefined ? workspace.activeWindow : workspace.activeClient);
    let found = null;
    if (activate) {
        for (let i = 0; i < pids.length && !found; i++) {
            for (let j = all.length - 1; j >= 0; j--) {
                const w = all[j];
                if (w && w.pid === pids[i] && w.normalWindow) { found = w; break; }
            }
        }
        if (found) {
            if (workspace.activeWindow !== undefined) workspace.activeWindow = found;
            else workspace.activeClient = found;
        }
    } else {
        found = active();
    }
    const result = {
        pid: found ? found.pid : 0,
        program: found ? String(found.resourceClass) : "",
        active: !!found && active() === found
    };
    callDBus(__SERVICE__, "__PATH__", "__INTERFACE__", "Done", JSON.stringify(result));
})();
"#;

#[derive(serde::Deserialize)]
struct Answer {
    pid: u32,
    program: String,
    active: bool,
}

/// Runs the script with `pids` (activate) or none (only say which window is active).
async fn run_script(bus: &zbus::Connection, pids: Option<&[u32]>) -> Option<Answer> {
    let unique = bus.unique_name()?.to_string();
    let (sender, receiver) = oneshot::channel();
    let reply = Reply {
        sender: Mutex::new(Some(sender)),
    };
    bus.object_server().at(REPLY_PATH, reply).await.ok()?;
    let list = pids
        .map(|p| p.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
        .unwrap_or_default();
    let script = SCRIPT
        .replace("__PIDS__", &format!("[{list}]"))
        .replace(
            "__ACTIVATE__",
            if pids.is_some() { "true" } else { "false" },
        )
        .replace("__SERVICE__", &format!("{unique:?}"))
        .replace("__PATH__", REPLY_PATH)
        .replace("__INTERFACE__", REPLY_INTERFACE);
    let name = format!(
        "fabric-companion-focus-{}-{}",
        std::process::id(),
        unique.trim_start_matches(':').replace('.', "-")
    );
    let dir = std::env::var_os("XDG_RUNTIME_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let file = dir.join(format!("{name}.js"));
    companion_platform::fsutil::write_atomic(
        &file,
        script.as_bytes(),
        companion_platform::fsutil::PRIVATE_FILE_MODE,
    )
    .ok()?;
    let scripting = ScriptingProxy::new(bus).await.ok()?;
    let answer = async {
        scripting
            .load_script(file.to_str()?, &name)
            .await
            .ok()
            .filter(|id| *id >= 0)?;
        scripting.start().await.ok()?;
        let text = receiver.await.ok()?;
        serde_json::from_str::<Answer>(&text).ok()
    }
    .await;
    let _ = scripting.unload_script(&name).await;
    let _ = std::fs::remove_file(&file);
    answer
}

/// How long KWin has to make the window active when it did not at once (a Wayland window
/// becomes active once its client takes the focus).
const VERIFY_FOR: std::time::Duration = std::time::Duration::from_millis(1500);

pub async fn activate(bus: &zbus::Connection, pids: &[u32]) -> Result<Activated, Refusal> {
    match run_script(bus, Some(pids)).await {
        None => Err(Refusal::Refused),
        Some(Answer { pid: 0, .. }) => Err(Refusal::NoWindow),
        Some(Answer {
            pid,
            program,
            active: true,
        }) => Ok((program, pid)),
        Some(Answer { pid, program, .. }) => {
            // Read back until it is active, or refused.
            let deadline = tokio::time::Instant::now() + VERIFY_FOR;
            while tokio::time::Instant::now() < deadline {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                if focused_pid(bus).await == Some(pid) {
                    return Ok((program, pid));
                }
            }
            Err(Refusal::Refused)
        }
    }
}

pub async fn focused_pid(bus: &zbus::Connection) -> Option<u32> {
    run_script(bus, None).await.map(|a| a.pid)
}
