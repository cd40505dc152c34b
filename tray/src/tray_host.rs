//! Is there anything on this Linux desktop that can show a tray icon? Either a
//! StatusNotifierItem host (`org.kde.StatusNotifierWatcher` owned on the session bus) or an
//! XEmbed tray manager (an owner of the X selection `_NET_SYSTEM_TRAY_S<screen>`).
//!
//! The bus is asked with `dbus-send` (no second D-Bus stack in the process); X through Xlib,
//! loaded at run time by `x11-dl` (already part of the GTK stack).

/// What to tell a person who has no tray.
pub const NO_TRAY_HELP: &str = "No system tray was found (no StatusNotifierWatcher on the \
session bus and no XEmbed tray manager). Fabric Companion opens its dashboard instead. To get \
the tray icon, install a tray: on GNOME the \"AppIndicator and KStatusNotifierItem Support\" \
extension (gnome-shell-extension-appindicator), elsewhere a panel with a system tray or a \
standalone one such as trayer or stalonetray.";

/// Whether a StatusNotifierWatcher owns its name on the session bus.
pub fn sni_watcher_present() -> bool {
    let output = std::process::Command::new("dbus-send")
        .args([
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner",
            "string:org.kde.StatusNotifierWatcher",
        ])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    match output {
        Ok(out) if out.status.success() => {
            parse_name_has_owner(&String::from_utf8_lossy(&out.stdout))
        }
        _ => false,
    }
}

/// Reads `dbus-send --print-reply`'s answer to `NameHasOwner`.
pub fn parse_name_has_owner(reply: &str) -> bool {
    reply
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .any(|w| w == ["boolean", "true"])
}

/// Whether an XEmbed tray manager owns `_NET_SYSTEM_TRAY_S<default screen>`.
#[cfg(target_os = "linux")]
pub fn xembed_tray_present() -> bool {
    use std::ffi::CString;
    let Ok(xlib) = x11_dl::xlib::Xlib::open() else {
        return false;
    };
    // SAFETY: plain Xlib calls on a display we open and close here; null checks on each.
    unsafe {
        let display = (xlib.XOpenDisplay)(std::ptr::null());
        if display.is_null() {
            return false;
        }
        let screen = (xlib.XDefaultScreen)(display);
        let name = CString::new(format!("_NET_SYSTEM_TRAY_S{screen}")).unwrap_or_default();
        let atom = (xlib.XInternAtom)(display, name.as_ptr(), 0);
        let owner = (xlib.XGetSelectionOwner)(display, atom);
        (xlib.XCloseDisplay)(display);
        owner != 0
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_has_owner_replies() {
        let yes = "method return time=1.2 sender=org.freedesktop.DBus -> destination=:1.3 serial=3 reply_serial=2\n   boolean true\n";
        let no = "method return time=1.2 sender=org.freedesktop.DBus -> destination=:1.3 serial=3 reply_serial=2\n   boolean false\n";
        assert!(parse_name_has_owner(yes));
        assert!(!parse_name_has_owner(no));
        assert!(!parse_name_has_owner(""));
    }
}
