//! KWin (KDE Plasma) on Wayland: a short KWin script, loaded over D-Bus
//! (`org.kde.kwin.Scripting.loadScript`) and started, finds the window of the first given
//! process (topmost first), makes it the active window (KWin switches to its virtual desktop
//! and restores it) and calls us back on our own connection with what it did; then it is
//! unloaded and its file removed. Works with KWin 5 (`clientList`, `activeClient`) and 6
//! (`windowList`, `activeWindow`).
//!
//! The script is unloaded and its file removed on every path: KWin's answer is awaited only
//! until [`CALLBACK_WITHIN`] (past it the jump says KWin did not answer,
//! [`Refusal::CompositorSilent`]), inside the compositor's deadline; a run cut off anyway
//! leaves its script's name for [`unload_left`], which the compositor call runs last.

use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

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

/// How long KWin has to call back once the script is started. With [`VERIFY_FOR`] it stays
/// well inside the compositor's [`super::DEADLINE`], so the script is always unloaded here.
const CALLBACK_WITHIN: Duration = Duration::from_millis(1200);
/// How long unloading a script may take.
const UNLOAD_WITHIN: Duration = Duration::from_millis(500);

/// Why the script gave no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NoAnswer {
    /// KWin took the script and did not call back by the deadline.
    Silent,
    /// The script could not be written, loaded or started, or its answer was not read.
    Failed,
}

thread_local! {
    /// Scripts loaded on this thread whose run was cut off before it unloaded them (the
    /// compositor's deadline dropped the work): [`unload_left`] unloads them.
    static LEFT_LOADED: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A script KWin holds: unloaded by [`run_script`] on every path it finishes; when its run is
/// dropped midway, its name is kept for [`unload_left`].
struct Loaded {
    name: Option<String>,
}

impl Drop for Loaded {
    fn drop(&mut self) {
        if let Some(name) = self.name.take() {
            LEFT_LOADED.with(|left| left.borrow_mut().push(name));
        }
    }
}

/// Unloads the scripts a cut-off run left loaded (see [`Loaded`]), within [`UNLOAD_WITHIN`].
pub async fn unload_left(bus: &zbus::Connection) {
    let names: Vec<String> = LEFT_LOADED.with(|left| left.borrow_mut().drain(..).collect());
    if names.is_empty() {
        return;
    }
    let unload = async {
        let scripting = ScriptingProxy::new(bus).await.ok()?;
        for name in &names {
            let _ = scripting.unload_script(name).await;
        }
        Some(())
    };
    if tokio::time::timeout(UNLOAD_WITHIN, unload).await.is_err() {
        tracing::debug!("KWin did not take the unload of a script in time");
    }
}

/// Runs the script with `pids` (activate) or none (only say which window is active); KWin
/// must call back by `by`. The script is unloaded and its file removed on every path.
async fn run_script(
    bus: &zbus::Connection,
    pids: Option<&[u32]>,
    by: Instant,
) -> Result<Answer, NoAnswer> {
    let unique = bus.unique_name().ok_or(NoAnswer::Failed)?.to_string();
    let (sender, receiver) = oneshot::channel();
    let reply = Reply {
        sender: Mutex::new(Some(sender)),
    };
    // A reply object left by an earlier run on this connection would take this run's answer.
    let _ = bus.object_server().remove::<Reply, _>(REPLY_PATH).await;
    bus.object_server()
        .at(REPLY_PATH, reply)
        .await
        .map_err(|_| NoAnswer::Failed)?;
    let answer = load_and_wait(bus, &unique, pids, receiver, by).await;
    let _ = bus.object_server().remove::<Reply, _>(REPLY_PATH).await;
    answer
}

async fn load_and_wait(
    bus: &zbus::Connection,
    unique: &str,
    pids: Option<&[u32]>,
    receiver: oneshot::Receiver<String>,
    by: Instant,
) -> Result<Answer, NoAnswer> {
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
    let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
    let file = ScriptFile::write(runtime_dir.as_deref(), &std::env::temp_dir(), &script)
        .inspect_err(|error| tracing::debug!(%error, "cannot write the KWin script"))
        .map_err(|_| NoAnswer::Failed)?;
    let scripting = ScriptingProxy::new(bus)
        .await
        .map_err(|_| NoAnswer::Failed)?;
    let mut loaded = Loaded { name: None };
    let run = async {
        let id = scripting
            .load_script(file.path.to_str().ok_or(NoAnswer::Failed)?, &name)
            .await
            .map_err(|_| NoAnswer::Failed)?;
        // KWin holds it from here (even when it says no, unloading is harmless).
        loaded.name = Some(name.clone());
        if id < 0 {
            return Err(NoAnswer::Failed);
        }
        scripting.start().await.map_err(|_| NoAnswer::Failed)?;
        let text = receiver.await.map_err(|_| NoAnswer::Failed)?;
        serde_json::from_str::<Answer>(&text).map_err(|_| NoAnswer::Failed)
    };
    let answer = match tokio::time::timeout_at(by, run).await {
        Ok(answer) => answer,
        Err(_) => {
            tracing::debug!("KWin took the script and did not call back in time");
            Err(NoAnswer::Silent)
        }
    };
    if let Some(name) = loaded.name.take() {
        let unloaded = tokio::time::timeout(UNLOAD_WITHIN, scripting.unload_script(&name)).await;
        if !matches!(unloaded, Ok(Ok(_))) {
            // Tried again at the end of the compositor call.
            loaded.name = Some(name);
        }
    }
    drop(loaded);
    drop(file);
    answer
}

/// The script's file, written where no one else can put anything: an unpredictable name,
/// created exclusively (`O_EXCL`, never through a link, mode 0600) in a folder only we own
/// and only we may write (`$XDG_RUNTIME_DIR` when it is such a folder, else a new private
/// folder made by `mkdtemp` in the temp folder). Removed (with its private folder) on drop.
struct ScriptFile {
    path: PathBuf,
    /// The private folder made for it, removed with it.
    made_dir: Option<PathBuf>,
}

impl ScriptFile {
    fn write(runtime_dir: Option<&Path>, temp_dir: &Path, script: &str) -> io::Result<ScriptFile> {
        let (dir, made_dir) = match runtime_dir.filter(|d| only_ours(d)) {
            Some(dir) => (dir.to_path_buf(), None),
            None => {
                let made = private_dir_in(temp_dir)?;
                (made.clone(), Some(made))
            }
        };
        let path = dir.join(format!("fabric-companion-focus-{}.js", random_hex()?));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .and_then(|mut f| f.write_all(script.as_bytes()));
        let file = ScriptFile { path, made_dir };
        written.map(|()| file)
    }
}

impl Drop for ScriptFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        if let Some(dir) = &self.made_dir {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Whether `dir` is a real folder (not a link) of ours that no one else may write.
fn only_ours(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir).is_ok_and(|m| {
        // SAFETY: geteuid has no preconditions.
        m.is_dir() && m.uid() == unsafe { libc::geteuid() } && m.mode() & 0o077 == 0
    })
}

/// A new folder of ours, mode 0700, with an unpredictable name in `parent` (`mkdtemp`).
fn private_dir_in(parent: &Path) -> io::Result<PathBuf> {
    let template = parent.join("fabric-companion-XXXXXX");
    let mut bytes = std::ffi::CString::new(template.into_os_string().into_vec())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in the temp folder"))?
        .into_bytes_with_nul();
    // SAFETY: a NUL-terminated, writable template ending in XXXXXX, as mkdtemp requires.
    let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
    if made.is_null() {
        return Err(io::Error::last_os_error());
    }
    bytes.pop();
    Ok(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

/// 16 random bytes from the kernel, in hex.
fn random_hex() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// How long KWin has to make the window active when it did not at once (a Wayland window
/// becomes active once its client takes the focus).
const VERIFY_FOR: Duration = Duration::from_millis(1500);

pub async fn activate(bus: &zbus::Connection, pids: &[u32]) -> Result<Activated, Refusal> {
    match run_script(bus, Some(pids), Instant::now() + CALLBACK_WITHIN).await {
        Err(NoAnswer::Silent) => Err(Refusal::CompositorSilent),
        Err(NoAnswer::Failed) => Err(Refusal::Refused),
        Ok(Answer { pid: 0, .. }) => Err(Refusal::NoWindow),
        Ok(Answer {
            pid,
            program,
            active: true,
        }) => Ok((program, pid)),
        Ok(Answer { pid, program, .. }) => {
            // Read back until it is active, or refused; every read back within the same bound.
            let deadline = Instant::now() + VERIFY_FOR;
            while Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(100)).await;
                if let Ok(answer) = run_script(bus, None, deadline).await
                    && answer.pid == pid
                {
                    return Ok((program, pid));
                }
            }
            Err(Refusal::Refused)
        }
    }
}

pub async fn focused_pid(bus: &zbus::Connection) -> Option<u32> {
    run_script(bus, None, Instant::now() + CALLBACK_WITHIN)
        .await
        .ok()
        .map(|a| a.pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 22, item 3: without `XDG_RUNTIME_DIR` the script went to the temp folder under a
    /// predictable name through a write that follows links, so a link planted there (another
    /// local user, `fs.protected_symlinks` 0) had the jump overwrite the link's target. Now
    /// the name is unpredictable, created exclusively, in a folder only we own.
    #[test]
    fn the_script_is_never_written_through_a_planted_link() {
        let temp = tempfile::tempdir().unwrap();
        let victim = temp.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        // The names the old code picked: pid, then the bus's unique name.
        for unique in ["1-1", "1-2", "1-3", "1-42"] {
            let planted = temp.path().join(format!(
                "fabric-companion-focus-{}-{unique}.js",
                std::process::id()
            ));
            std::os::unix::fs::symlink(&victim, planted).unwrap();
        }
        // A runtime folder others may write is not used either.
        let shared = temp.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        use std::os::unix::fs::PermissionsExt;
        for runtime in [None, Some(shared.as_path())] {
            let file = ScriptFile::write(runtime, temp.path(), "the script").unwrap();
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
            let meta = std::fs::symlink_metadata(&file.path).unwrap();
            assert!(meta.is_file());
            assert_eq!(meta.mode() & 0o777, 0o600);
            assert_eq!(std::fs::read_to_string(&file.path).unwrap(), "the script");
            let dir = file.path.parent().unwrap().to_path_buf();
            assert_ne!(dir, temp.path(), "never straight in the shared temp folder");
            assert_ne!(dir, shared);
            assert!(only_ours(&dir), "{}", dir.display());
            drop(file);
            assert!(!dir.exists(), "the private folder goes with the file");
        }
        // A runtime folder of our own, 0700, is used as it is, under a new name each time.
        let own = temp.path().join("own");
        std::fs::create_dir(&own).unwrap();
        std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o700)).unwrap();
        let a = ScriptFile::write(Some(&own), temp.path(), "a").unwrap();
        let b = ScriptFile::write(Some(&own), temp.path(), "b").unwrap();
        assert_eq!(a.path.parent(), Some(own.as_path()));
        assert_ne!(a.path, b.path);
        let (a_path, b_path) = (a.path.clone(), b.path.clone());
        drop((a, b));
        assert!(!a_path.exists() && !b_path.exists());
        assert!(own.is_dir(), "the runtime folder itself stays");
    }
}
