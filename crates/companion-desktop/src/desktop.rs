//! Facts about the person's desktop that the tray, the dashboard and the jump share: which
//! desktop this is (from `XDG_CURRENT_DESKTOP`), whether a StatusNotifierWatcher (a tray
//! host) is on the session bus, what GNOME needs for a tray icon (its AppIndicator
//! extension) and the name of our own GNOME Shell extension (the jump on GNOME's Wayland
//! session goes through it; it is shipped in the Linux package and turned on only by the
//! person).
//!
//! The bus is asked with `dbus-send` within a deadline (no D-Bus stack here: the hook binary
//! links this crate).

/// Our GNOME Shell extension's UUID: its folder under `gnome-shell/extensions`.
pub const GNOME_FOCUS_EXTENSION: &str = "fabric-companion-focus@passioncode.ai";

/// The command that turns our GNOME Shell extension on (what we tell the person to run).
pub const GNOME_FOCUS_ENABLE_COMMAND: &str =
    "gnome-extensions enable fabric-companion-focus@passioncode.ai";

/// The AppIndicator extension's UUIDs: Debian's and Ubuntu's package
/// (`gnome-shell-extension-appindicator`), then extensions.gnome.org's.
pub const APPINDICATOR_EXTENSIONS: [&str; 2] = [
    "ubuntu-appindicators@ubuntu.com",
    "appindicatorsupport@rgcjonas.gmail.com",
];

/// The StatusNotifierWatcher's bus name (a tray host for StatusNotifierItems).
pub const SNI_WATCHER: &str = "org.kde.StatusNotifierWatcher";

/// The desktops whose tray and jump we know apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Desktop {
    Gnome,
    Kde,
    Other,
}

impl Desktop {
    /// This session's desktop, from `XDG_CURRENT_DESKTOP` (`ubuntu:GNOME`, `KDE`, …).
    pub fn current() -> Desktop {
        Self::from_xdg(
            std::env::var(companion_platform::env_vars::XDG_CURRENT_DESKTOP)
                .ok()
                .as_deref()
                .unwrap_or(""),
        )
    }

    pub fn from_xdg(value: &str) -> Desktop {
        let mut names = value.split(':').map(str::trim);
        if names.clone().any(|n| n.eq_ignore_ascii_case("GNOME")) {
            Desktop::Gnome
        } else if names.any(|n| n.eq_ignore_ascii_case("KDE")) {
            Desktop::Kde
        } else {
            Desktop::Other
        }
    }
}

/// Whether `name` has an owner on the session bus (`dbus-send`, at most two seconds; false
/// without a bus).
pub fn name_on_session_bus(name: &str) -> bool {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none_or(|a| a.is_empty()) {
        return false;
    }
    let mut command = std::process::Command::new("dbus-send");
    command
        .args([
            "--session",
            "--print-reply",
            "--reply-timeout=2000",
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner",
        ])
        .arg(format!("string:{name}"))
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    match command.output() {
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

/// Whether a StatusNotifierWatcher owns its name on the session bus.
pub fn sni_watcher_present() -> bool {
    name_on_session_bus(SNI_WATCHER)
}

/// Whether this is a GNOME session: `XDG_CURRENT_DESKTOP` says so, or GNOME Shell is on the
/// session bus.
pub fn is_gnome() -> bool {
    Desktop::current() == Desktop::Gnome || name_on_session_bus("org.gnome.Shell")
}

/// The AppIndicator extension installed on this machine (system-wide or the person's), if
/// any: its UUID.
pub fn installed_appindicator_extension(
    data_home: Option<&std::path::Path>,
) -> Option<&'static str> {
    let mut roots: Vec<std::path::PathBuf> = data_home
        .map(|d| d.join("gnome-shell/extensions"))
        .into_iter()
        .collect();
    roots.push("/usr/share/gnome-shell/extensions".into());
    roots.push("/usr/local/share/gnome-shell/extensions".into());
    APPINDICATOR_EXTENSIONS.into_iter().find(|uuid| {
        roots
            .iter()
            .any(|root| root.join(uuid).join("metadata.json").is_file())
    })
}

/// What a person on GNOME without a tray host is told: what to turn on (or install), and
/// that notifications and the jump work without it.
pub fn gnome_tray_help(installed: Option<&str>) -> String {
    let how = match installed {
        Some(uuid) => format!(
            "turn on its \"AppIndicator and KStatusNotifierItem Support\" extension (in \
             Extensions, or `gnome-extensions enable {uuid}`)"
        ),
        None => "install its \"AppIndicator and KStatusNotifierItem Support\" extension \
                 (package gnome-shell-extension-appindicator, or from extensions.gnome.org) \
                 and turn it on"
            .to_string(),
    };
    format!(
        "GNOME shows no tray icons by itself: to see Fabric Companion's icon and unread \
         count in the top bar, {how}, then log out and in. Notifications and jumping to a \
         session work without it."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_desktop_from_xdg_current_desktop() {
        assert_eq!(Desktop::from_xdg("ubuntu:GNOME"), Desktop::Gnome);
        assert_eq!(Desktop::from_xdg("GNOME-Classic:GNOME"), Desktop::Gnome);
        assert_eq!(Desktop::from_xdg("KDE"), Desktop::Kde);
        assert_eq!(Desktop::from_xdg("XFCE"), Desktop::Other);
        assert_eq!(Desktop::from_xdg(""), Desktop::Other);
        assert!(GNOME_FOCUS_ENABLE_COMMAND.ends_with(GNOME_FOCUS_EXTENSION));
    }

    #[test]
    fn name_has_owner_replies() {
        let yes = "method return time=1.2 sender=org.freedesktop.DBus -> destination=:1.3 serial=3 reply_serial=2\n   boolean true\n";
        let no = "method return time=1.2 sender=org.freedesktop.DBus -> destination=:1.3 serial=3 reply_serial=2\n   boolean false\n";
        assert!(parse_name_has_owner(yes));
        assert!(!parse_name_has_owner(no));
        assert!(!parse_name_has_owner(""));
    }

    #[test]
    fn gnome_without_a_tray_is_told_what_to_turn_on_and_what_still_works() {
        let installed = gnome_tray_help(Some("ubuntu-appindicators@ubuntu.com"));
        assert!(installed.contains("gnome-extensions enable ubuntu-appindicators@ubuntu.com"));
        assert!(installed.contains("Notifications and jumping to a session work without it"));
        let missing = gnome_tray_help(None);
        assert!(missing.contains("gnome-shell-extension-appindicator"));
        assert!(!missing.contains("gnome-extensions enable"));
        let dir = tempfile::tempdir().unwrap();
        let ext = dir
            .path()
            .join("gnome-shell/extensions/appindicatorsupport@rgcjonas.gmail.com");
        std::fs::create_dir_all(&ext).unwrap();
        std::fs::write(ext.join("metadata.json"), "{}").unwrap();
        let found = installed_appindicator_extension(Some(dir.path()));
        assert!(found.is_some());
    }
}
