//! Wayland: a program may not raise another's window there, but the compositor may. We ask
//! the one that runs this session, over the session bus:
//!
//! - GNOME Shell, through Fabric Companion's own GNOME Shell extension (`gnome`; shipped in
//!   the Linux package, turned on only by the person);
//! - KWin (KDE Plasma), through its scripting interface (`kwin`; nothing to install).
//!
//! Each call runs on a thread of its own with a private current-thread runtime, so callers
//! inside a runtime (the tray, the dashboard) and outside one (`fabric-session focus`) use it
//! alike, and all of it is bounded by [`DEADLINE`].

pub mod gnome;
mod kwin;

use std::future::Future;
use std::time::Duration;

use crate::Refusal;
use crate::ancestry::Ancestor;

/// How long asking the compositor may take in all.
const DEADLINE: Duration = Duration::from_secs(4);

/// The compositor found on the session bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compositor {
    GnomeShell,
    KWin,
}

/// What the compositor raised: its program (WM class), pid.
pub type Activated = (String, u32);

/// Runs `work` on a private runtime on its own thread, within [`DEADLINE`] (then whatever a
/// cut-off KWin run left loaded is unloaded, within half a second); `None` when it did not
/// finish (or no session bus could be reached).
pub(crate) fn on_session_bus<T, F>(
    work: impl FnOnce(zbus::Connection) -> F + Send + 'static,
) -> Option<T>
where
    T: Send + 'static,
    F: Future<Output = Option<T>>,
{
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        runtime.block_on(async move {
            let deadline = tokio::time::Instant::now() + DEADLINE;
            let bus = tokio::time::timeout_at(deadline, zbus::Connection::session())
                .await
                .ok()?
                .ok()?;
            let result = tokio::time::timeout_at(deadline, work(bus.clone()))
                .await
                .ok()
                .flatten();
            // A KWin script whose run the deadline cut off is unloaded now (bounded).
            kwin::unload_left(&bus).await;
            result
        })
    })
    .join()
    .ok()
    .flatten()
}

/// Which compositor owns its name on the session bus.
async fn which(bus: &zbus::Connection) -> Option<Compositor> {
    let dbus = zbus::fdo::DBusProxy::new(bus).await.ok()?;
    let has = |name: &'static str| {
        let dbus = dbus.clone();
        async move {
            match zbus::names::BusName::try_from(name) {
                Ok(name) => dbus.name_has_owner(name).await.unwrap_or(false),
                Err(_) => false,
            }
        }
    };
    if has("org.gnome.Shell").await {
        Some(Compositor::GnomeShell)
    } else if has("org.kde.KWin").await {
        Some(Compositor::KWin)
    } else {
        None
    }
}

/// Activates the window of the first process in `chain` that owns one, through the
/// compositor. `None`: no compositor we know runs here (the caller may still try XWayland).
pub fn raise_first(chain: &[Ancestor]) -> Option<Result<Activated, Refusal>> {
    let pids: Vec<u32> = chain.iter().map(|a| a.pid).collect();
    // `None` too when there is no bus, or the compositor did not answer in time.
    on_session_bus(move |bus| async move {
        let result = match which(&bus).await? {
            Compositor::GnomeShell => gnome::activate(&bus, &pids).await,
            Compositor::KWin => kwin::activate(&bus, &pids).await,
        };
        Some(result)
    })
}

/// The process owning the focused window, as the compositor says (GNOME Shell with our
/// extension on, KWin); `None` where it cannot be told.
pub fn focused_pid() -> Option<u32> {
    let pid = on_session_bus(|bus| async move {
        match which(&bus).await? {
            Compositor::GnomeShell => gnome::focused_pid(&bus).await,
            Compositor::KWin => kwin::focused_pid(&bus).await,
        }
    })
    .filter(|pid| *pid > 0);
    tracing::debug!(?pid, "the compositor's focused window");
    pid
}

/// Whether the jump works on this Wayland desktop: `Ok(())`, or why not (GNOME Shell
/// without our extension on; a compositor we do not know).
pub fn support() -> Result<(), Refusal> {
    on_session_bus(|bus| async move {
        Some(match which(&bus).await {
            Some(Compositor::GnomeShell) => gnome::extension_state(&bus).await,
            Some(Compositor::KWin) => Ok(()),
            None => Err(Refusal::Wayland),
        })
    })
    .unwrap_or(Err(Refusal::Wayland))
}

/// Turns our GNOME Shell extension on (only ever on the person's request) and reads its
/// state back: `Ok(())` when it is on, else why not.
pub fn enable_gnome_extension() -> Result<(), Refusal> {
    on_session_bus(
        |bus| async move { Some(gnome::refusal_of(gnome::enable_extension(&bus).await)) },
    )
    .unwrap_or(Err(Refusal::Wayland))
}
