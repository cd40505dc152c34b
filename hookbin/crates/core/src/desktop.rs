//! Facts about the person's desktop that the tray, the dashboard and the jump share: which
//! desktop this is (from `XDG_CURRENT_DESKTOP`), and the name of our GNOME Shell extension
//! (the jump on GNOME's Wayland session goes through it; it is shipped in the Linux package
//! and turned on only by the person).

/// Our GNOME Shell extension's UUID: its folder under `gnome-shell/extensions`.
pub const GNOME_FOCUS_EXTENSION: &str = "fabric-companion-focus@passioncode.ai";

/// The command that turns our GNOME Shell extension on (what we tell the person to run).
pub const GNOME_FOCUS_ENABLE_COMMAND: &str =
    "gnome-extensions enable fabric-companion-focus@passioncode.ai";

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
            std::env::var(crate::env_vars::XDG_CURRENT_DESKTOP)
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
}
