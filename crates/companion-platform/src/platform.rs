//! Which operating system a value is for. Platform tables (where things live, how a host's
//! shell quotes a command, what an autostart entry holds) take an [`Os`] instead of reading
//! `cfg!` inside, so every platform's table is plain data that tests check on any machine.
//! The running build's own OS is [`Os::CURRENT`].

/// An operating system family we build for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Os {
    /// Linux and the other Unix systems that follow the XDG base directories.
    Linux,
    /// macOS.
    MacOs,
    /// Windows.
    Windows,
}

impl Os {
    /// The OS this build runs on.
    pub const CURRENT: Os = if cfg!(windows) {
        Os::Windows
    } else if cfg!(target_os = "macos") {
        Os::MacOs
    } else {
        Os::Linux
    };

    /// A program's file name: `name.exe` on Windows, `name` elsewhere.
    pub fn executable(self, name: &str) -> String {
        match self {
            Os::Windows => format!("{name}.exe"),
            Os::Linux | Os::MacOs => name.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executables_are_named_per_os() {
        assert_eq!(Os::Windows.executable("fabric-tray"), "fabric-tray.exe");
        assert_eq!(Os::MacOs.executable("fabric-tray"), "fabric-tray");
        assert_eq!(Os::Linux.executable("fabric-tray"), "fabric-tray");
        assert_eq!(
            Os::CURRENT,
            if cfg!(windows) {
                Os::Windows
            } else if cfg!(target_os = "macos") {
                Os::MacOs
            } else {
                Os::Linux
            }
        );
    }
}
