//! Every environment variable this crate reads, declared once, with what it means.
//!
//! Only the names in [`LAUNCHED_MARKERS`] are ever looked at for presence; their values
//! are never read (two of them carry a session's credential).

/// Fabric's own folder override is not a thing; these are the host and tool overrides we honour.
pub const CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
/// Codex's home folder (default `~/.codex`).
pub const CODEX_HOME: &str = "CODEX_HOME";
/// Kimi Code's home folder (default `~/.kimi-code`).
pub const KIMI_CODE_HOME: &str = "KIMI_CODE_HOME";
/// Where Fabric's service descriptors live, instead of `<Fabric's folder>/services`.
pub const FABRIC_SERVICES_DIR: &str = "FABRIC_SERVICES_DIR";
/// The `fabric-mcp` program to run; else `fabric-mcp` on `PATH`.
pub const FABRIC_MCP: &str = "FABRIC_MCP";
/// Claude Code's session id, given to MCP servers and Bash commands (used by `watch-mail`).
pub const CLAUDE_CODE_SESSION_ID: &str = "CLAUDE_CODE_SESSION_ID";
/// The Claude Code process's pid, set by Claude Code in its hooks' environment.
pub const CLAUDE_PID: &str = "CLAUDE_PID";
/// The program search path (to find a host's program and read its version from files).
pub const PATH: &str = "PATH";
/// Set by Claude Code for its background jobs: not the person's session.
pub const CLAUDE_CODE_SESSION_KIND: &str = "CLAUDE_CODE_SESSION_KIND";
/// The marker Fabric sets in sessions it launched (`1` only; `0` or empty is not the marker).
pub const FABRIC_LAUNCHED_SESSION: &str = "FABRIC_LAUNCHED_SESSION";
/// Set (any value) in sessions Fabric launched through its ACP adapter, stdio bridge or Kilo.
pub const LAUNCHED_MARKERS: [&str; 3] = [
    "FABRIC_ACP_SESSION",
    "FABRIC_BRIDGE_URL",
    "KILO_CONFIG_CONTENT",
];
/// The `fabric-session` program to use instead of the one beside us or on `PATH`.
pub const FABRIC_SESSION_BIN: &str = "FABRIC_SESSION_BIN";
/// The `fabric-tray` program to use instead of the one beside us or on `PATH`.
pub const FABRIC_TRAY_BIN: &str = "FABRIC_TRAY_BIN";
/// The `fabric-companion` (dashboard) program to use instead of the one beside us or on `PATH`.
pub const FABRIC_COMPANION_BIN: &str = "FABRIC_COMPANION_BIN";
/// The runtime folder the tray's lock goes in when it is set (Linux and other XDG desktops).
pub const XDG_RUNTIME_DIR: &str = "XDG_RUNTIME_DIR";
/// `tracing` filter for the worker and the long-running commands (never the hook fast path).
pub const FABRIC_SESSION_LOG: &str = "FABRIC_SESSION_LOG";

/// (tests only, hidden) `status --json --follow`'s heartbeat interval in milliseconds, instead
/// of 30 s; clamped to 100 ms – 30 s.
pub const FABRIC_SESSION_FOLLOW_HEARTBEAT_MS: &str = "FABRIC_SESSION_FOLLOW_HEARTBEAT_MS";

/// The terminal's own ids, read by the session-start hook (`terminal_ids`; only id-shaped
/// values are kept). tmux's pane of the session (`%N`).
pub const TMUX_PANE: &str = "TMUX_PANE";
/// kitty's window id (`N`) and the socket its remote control listens on (`unix:…`).
pub const KITTY_WINDOW_ID: &str = "KITTY_WINDOW_ID";
pub const KITTY_LISTEN_ON: &str = "KITTY_LISTEN_ON";
/// WezTerm's pane id and the socket of its instance.
pub const WEZTERM_PANE: &str = "WEZTERM_PANE";
pub const WEZTERM_UNIX_SOCKET: &str = "WEZTERM_UNIX_SOCKET";
/// Konsole's bus name, window object and tab session object.
pub const KONSOLE_DBUS_SERVICE: &str = "KONSOLE_DBUS_SERVICE";
pub const KONSOLE_DBUS_WINDOW: &str = "KONSOLE_DBUS_WINDOW";
pub const KONSOLE_DBUS_SESSION: &str = "KONSOLE_DBUS_SESSION";
/// GNOME Terminal's server on the session bus (its unique name, `:1.N`) and the tab's screen
/// object (`/org/gnome/Terminal/screen/<uuid with _ for ->`).
pub const GNOME_TERMINAL_SERVICE: &str = "GNOME_TERMINAL_SERVICE";
pub const GNOME_TERMINAL_SCREEN: &str = "GNOME_TERMINAL_SCREEN";
/// The X11 window of the terminal (`N`: xterm, kitty, Konsole, Alacritty on X11 set it).
pub const WINDOWID: &str = "WINDOWID";
/// Windows Terminal's, iTerm2's and Apple Terminal's session ids.
pub const WT_SESSION: &str = "WT_SESSION";
pub const ITERM_SESSION_ID: &str = "ITERM_SESSION_ID";
pub const TERM_SESSION_ID: &str = "TERM_SESSION_ID";
/// The terminal program's name (`vscode` in VS Code's integrated terminal); JetBrains IDEs set
/// `TERMINAL_EMULATOR` instead. Only these known values are kept.
pub const TERM_PROGRAM: &str = "TERM_PROGRAM";
pub const TERMINAL_EMULATOR: &str = "TERMINAL_EMULATOR";

/// The desktop of this session (`GNOME`, `KDE`, `ubuntu:GNOME`, …).
pub const XDG_CURRENT_DESKTOP: &str = "XDG_CURRENT_DESKTOP";

/// Reads a variable as a path, treating an empty value as unset.
pub fn path_var(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os(name)
        .filter(|value| !value.is_empty())
        .map(std::path::PathBuf::from)
}
/// The `ssh` program a remote's link runs (default `ssh` on `PATH`).
pub const FABRIC_SSH: &str = "FABRIC_SSH";
/// An `ssh` config file the remotes' links use instead of `~/.ssh/config` (`ssh -F`).
pub const FABRIC_SSH_CONFIG: &str = "FABRIC_SSH_CONFIG";
