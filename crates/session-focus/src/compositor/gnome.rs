//! GNOME Shell: our extension (`packaging/linux/gnome-shell-extension/`) serves
//! `ai.passioncode.FabricCompanion.Focus1` on the shell's own connection. Without it (not
//! installed, or installed and not turned on) the shell offers no way to raise a window, and
//! the refusal says which of the two and how to turn it on.

use std::collections::HashMap;

use zbus::OwnedVariant;

use super::Activated;
use crate::Refusal;

/// The extension's UUID (its folder under `gnome-shell/extensions`).
pub const EXTENSION_UUID: &str = companion_desktop::desktop::GNOME_FOCUS_EXTENSION;

#[zbus::proxy(
    interface = "ai.passioncode.FabricCompanion.Focus1",
    default_service = "org.gnome.Shell",
    default_path = "/ai/passioncode/FabricCompanion/Focus"
)]
trait Focus {
    fn activate_process(&self, pids: &[u32]) -> zbus::Result<(u32, String, bool)>;
    fn focused_process(&self) -> zbus::Result<u32>;
}

/// The shell's own extension registry (`org.gnome.Shell`, `/org/gnome/Shell`).
#[zbus::proxy(
    interface = "org.gnome.Shell.Extensions",
    default_service = "org.gnome.Shell",
    default_path = "/org/gnome/Shell"
)]
trait ShellExtensions {
    fn get_extension_info(&self, uuid: &str) -> zbus::Result<HashMap<String, OwnedVariant>>;
    fn enable_extension(&self, uuid: &str) -> zbus::Result<bool>;
}

/// GNOME Shell's `ExtensionState.ENABLED`.
const STATE_ENABLED: f64 = 1.0;

pub async fn activate(bus: &zbus::Connection, pids: &[u32]) -> Result<Activated, Refusal> {
    let proxy = FocusProxy::new(bus).await.map_err(|_| Refusal::Wayland)?;
    match proxy.activate_process(pids).await {
        Ok((0, _, _)) => Err(Refusal::NoWindow),
        Ok((pid, wm_class, true)) => Ok((wm_class, pid)),
        Ok((_, _, false)) => Err(Refusal::Refused),
        Err(error) => {
            tracing::debug!(%error, "the GNOME Shell extension did not answer");
            Err(extension_refusal(bus).await)
        }
    }
}

pub async fn focused_pid(bus: &zbus::Connection) -> Option<u32> {
    match FocusProxy::new(bus).await.ok()?.focused_process().await {
        Ok(pid) => Some(pid),
        Err(error) => {
            tracing::debug!(%error, "GNOME Shell's extension did not say which window is focused");
            None
        }
    }
}

/// Our extension's state in the shell: `Ok(())` on, else why not (missing or off).
pub async fn extension_state(bus: &zbus::Connection) -> Result<(), Refusal> {
    let Ok(shell) = ShellExtensionsProxy::new(bus).await else {
        return Err(Refusal::GnomeExtensionMissing);
    };
    match shell.get_extension_info(EXTENSION_UUID).await {
        Ok(info) if info.is_empty() => Err(Refusal::GnomeExtensionMissing),
        Ok(info) => {
            let state = info
                .get("state")
                .and_then(|v| f64::try_from(v).ok())
                .unwrap_or(0.0);
            if state == STATE_ENABLED {
                Ok(())
            } else {
                Err(Refusal::GnomeExtensionOff)
            }
        }
        Err(_) => Err(Refusal::GnomeExtensionMissing),
    }
}

/// Turns our extension on (the person asked for it, in the dashboard); whether the shell
/// took it.
pub async fn enable_extension(bus: &zbus::Connection) -> bool {
    match ShellExtensionsProxy::new(bus).await {
        Ok(shell) => shell
            .enable_extension(EXTENSION_UUID)
            .await
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// Why the extension did not answer: not installed, or installed and off (on, yet silent:
/// the shell refused).
async fn extension_refusal(bus: &zbus::Connection) -> Refusal {
    extension_state(bus).await.err().unwrap_or(Refusal::Refused)
}
