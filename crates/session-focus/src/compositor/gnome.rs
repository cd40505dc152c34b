//! GNOME Shell: our extension (`packaging/linux/gnome-shell-extension/`) serves
//! `ai.passioncode.FabricCompanion.Focus1` on the shell's own connection. Without it the shell
//! offers no way to raise a window, and the refusal says why, from the shell's own
//! `GetExtensionInfo` read as an [`ExtensionState`]: not installed, off (and how to turn it
//! on), out of date for this shell, or failed to load (with the shell's error, bounded).
//! Turning it on ([`enable_extension`]) reads the state back before saying it worked.

use std::collections::HashMap;

use zbus::OwnedVariant;

use super::Activated;
use crate::Refusal;
use crate::gnome_extension::ExtensionState;

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

/// How long the state is read back after turning the extension on, while it is changing.
const READ_BACK_FOR: std::time::Duration = std::time::Duration::from_secs(2);
/// Between two reads.
const READ_BACK_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

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

/// Our extension's state in the shell, as it reports it.
pub async fn state(bus: &zbus::Connection) -> ExtensionState {
    let Ok(shell) = ShellExtensionsProxy::new(bus).await else {
        return ExtensionState::NotInstalled;
    };
    match shell.get_extension_info(EXTENSION_UUID).await {
        Ok(info) => {
            let state = info.get("state").and_then(|v| f64::try_from(v).ok());
            let error = info.get("error").and_then(|v| <&str>::try_from(v).ok());
            ExtensionState::from_info(!info.is_empty(), state, error)
        }
        Err(error) => {
            tracing::debug!(%error, "GNOME Shell did not say our extension's state");
            ExtensionState::NotInstalled
        }
    }
}

/// What a state means for the jump: `Ok(())` on, else why not.
pub fn refusal_of(state: ExtensionState) -> Result<(), Refusal> {
    match state {
        ExtensionState::On => Ok(()),
        ExtensionState::NotInstalled => Err(Refusal::GnomeExtensionMissing),
        ExtensionState::Off | ExtensionState::Changing => Err(Refusal::GnomeExtensionOff),
        ExtensionState::OutOfDate => Err(Refusal::GnomeExtensionOutOfDate),
        ExtensionState::Failed(error) => Err(Refusal::GnomeExtensionFailed(error)),
    }
}

/// Our extension's state in the shell: `Ok(())` on, else why not.
pub async fn extension_state(bus: &zbus::Connection) -> Result<(), Refusal> {
    refusal_of(state(bus).await)
}

/// Turns our extension on (the person asked for it, in the dashboard), then reads its state
/// back (the shell's `true` only says it took the request: an out-of-date or failing
/// extension is "enabled" and not on). While it is changing, read again, for at most
/// [`READ_BACK_FOR`].
pub async fn enable_extension(bus: &zbus::Connection) -> ExtensionState {
    match ShellExtensionsProxy::new(bus).await {
        Ok(shell) => match shell.enable_extension(EXTENSION_UUID).await {
            Ok(took) => tracing::debug!(took, "GNOME Shell was asked to turn our extension on"),
            Err(error) => tracing::warn!(%error, "GNOME Shell refused to turn our extension on"),
        },
        Err(error) => tracing::warn!(%error, "no GNOME Shell to turn our extension on"),
    }
    let until = tokio::time::Instant::now() + READ_BACK_FOR;
    loop {
        let now = state(bus).await;
        let settled = !matches!(now, ExtensionState::Changing | ExtensionState::Off);
        if settled || tokio::time::Instant::now() >= until {
            tracing::info!(state = now.label(), "our GNOME Shell extension, read back");
            return now;
        }
        tokio::time::sleep(READ_BACK_EVERY).await;
    }
}

/// Why the extension did not answer: not installed, off, out of date or failed (on, yet
/// silent: the shell refused).
async fn extension_refusal(bus: &zbus::Connection) -> Refusal {
    extension_state(bus).await.err().unwrap_or(Refusal::Refused)
}
