//! Is there anything on this Linux desktop that can show a tray icon? Either a
//! StatusNotifierItem host (`org.kde.StatusNotifierWatcher` owned on the session bus) or an
//! XEmbed tray manager (an owner of the X selection `_NET_SYSTEM_TRAY_S<screen>`).
//!
//! The bus is asked with `dbus-send` through the core (`companion_desktop::desktop`; no second
//! D-Bus stack in the process); X through `session-focus`'s x11rb connection, every wait on
//! it bounded. On GNOME, where no tray host runs until its AppIndicator extension is
//! on, the person is told exactly that ([`NoTray`]).

/// What to tell a person who has no tray.
pub const NO_TRAY_HELP: &str = "No system tray was found (no StatusNotifierWatcher on the \
session bus and no XEmbed tray manager). Fabric Companion opens its dashboard instead. To get \
the tray icon, install a tray: on GNOME the \"AppIndicator and KStatusNotifierItem Support\" \
extension (gnome-shell-extension-appindicator), elsewhere a panel with a system tray or a \
standalone one such as trayer or stalonetray.";

/// Why no tray icon can show here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoTray {
    /// GNOME without its AppIndicator extension (Debian's default): what to turn on, and
    /// that notifications and the jump work without it.
    Gnome { help: String },
    /// Any other desktop without a tray.
    Other,
}

impl NoTray {
    /// Which case this desktop is (GNOME: which AppIndicator extension is installed, if any).
    pub fn detect(data_home: Option<&std::path::Path>) -> NoTray {
        if companion_desktop::desktop::is_gnome() {
            let installed = companion_desktop::desktop::installed_appindicator_extension(data_home);
            NoTray::Gnome {
                help: companion_desktop::desktop::gnome_tray_help(installed),
            }
        } else {
            NoTray::Other
        }
    }
}

/// The summary of the one notification that says GNOME shows no tray icon.
pub const NO_TRAY_ON_GNOME: &str = "No tray icon on GNOME";

/// Whether a StatusNotifierWatcher owns its name on the session bus.
pub fn sni_watcher_present() -> bool {
    companion_desktop::desktop::sni_watcher_present()
}

/// Whether an XEmbed tray manager owns `_NET_SYSTEM_TRAY_S<default screen>` (asked through
/// `session-focus`'s bounded X connection: a display that never answers means no tray, never
/// a frozen tray).
#[cfg(target_os = "linux")]
pub fn xembed_tray_present() -> bool {
    session_focus::xembed_tray_present()
}

#[cfg(not(target_os = "linux"))]
pub fn xembed_tray_present() -> bool {
    false
}

/// Whether any tray host is present (always true off Linux).
pub fn tray_host_present() -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    sni_watcher_present() || xembed_tray_present()
}
