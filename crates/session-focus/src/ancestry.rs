//! A process's ancestors (through `companion_platform::process`), and what we recognise among
//! them: terminals and editors by name, a tmux server, the two tmux variables of a process's
//! environment and (for a tmux client) its terminal's id variables, the same ones the
//! session-start hook records (Linux). Never reads any other variable of another process.

/// One process of a chain, the session's host first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ancestor {
    pub pid: u32,
    pub name: String,
}

/// At most this many ancestors are followed (a loop in odd `/proc` readings cannot hang us).
pub(crate) const MAX_DEPTH: usize = 64;

/// `pid` and its ancestors, nearest first (Windows: from one process-table snapshot).
#[cfg(windows)]
pub fn ancestors(pid: u32) -> Vec<Ancestor> {
    crate::windows::ancestors(pid)
}

/// `pid` and its ancestors up to (not including) pid 1, nearest first.
#[cfg(not(windows))]
pub fn ancestors(pid: u32) -> Vec<Ancestor> {
    let mut chain = Vec::new();
    let mut next = pid;
    while next > 1 && chain.len() < MAX_DEPTH {
        let Some(info) = companion_platform::process::process_info(next) else {
            break;
        };
        chain.push(Ancestor {
            pid: info.pid,
            name: info.name,
        });
        if info.parent == next {
            break;
        }
        next = info.parent;
    }
    chain
}

/// Terminal emulators and editors with an integrated terminal, by process name.
const TERMINALS: &[&str] = &[
    "xterm",
    "uxterm",
    "urxvt",
    "rxvt",
    "st",
    "gnome-terminal-",
    "gnome-terminal-server",
    "ptyxis",
    "kgx",
    "konsole",
    "xfce4-terminal",
    "mate-terminal",
    "lxterminal",
    "terminator",
    "tilix",
    "kitty",
    "alacritty",
    "wezterm-gui",
    "foot",
    "ghostty",
    "Terminal",
    "iTerm2",
    "WindowsTerminal",
    "code",
    "code-oss",
    "codium",
    "cursor",
    "windsurf",
    "idea",
    "pycharm",
    "goland",
    "clion",
    "webstorm",
    "rustrover",
    "rider",
    "phpstorm",
];

/// The name of the first terminal or editor among the ancestors, if any is recognised.
pub fn terminal_name(chain: &[Ancestor]) -> Option<String> {
    chain
        .iter()
        .find(|a| {
            let name = a.name.trim_end_matches(".exe");
            TERMINALS.iter().any(|t| name.eq_ignore_ascii_case(t))
        })
        .map(|a| a.name.clone())
}

/// Whether a process name is a tmux server's (`tmux: server` on Linux) or tmux itself.
pub fn is_tmux(name: &str) -> bool {
    name == "tmux" || name.starts_with("tmux:")
}

/// Whether this desktop session is Wayland's (`XDG_SESSION_TYPE=wayland` or `WAYLAND_DISPLAY`).
pub fn wayland_session() -> bool {
    std::env::var("XDG_SESSION_TYPE").is_ok_and(|t| t == "wayland")
        || std::env::var_os("WAYLAND_DISPLAY").is_some_and(|d| !d.is_empty())
}

/// The tmux variables of a process's environment: `TMUX` (`socket,server pid,session`) and
/// `TMUX_PANE` (`%N`). Linux only (`/proc/<pid>/environ`, readable for our own processes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TmuxEnv {
    pub socket: Option<String>,
    pub pane: Option<String>,
}

/// Reads [`TmuxEnv`] of `pid`.
#[cfg(target_os = "linux")]
pub fn tmux_env(pid: u32) -> TmuxEnv {
    let bytes = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    tmux_env_from(&bytes)
}

#[cfg(not(target_os = "linux"))]
pub fn tmux_env(_pid: u32) -> TmuxEnv {
    TmuxEnv::default()
}

/// The terminal ids in `pid`'s environment (a tmux client's: the tab it shows in), only the
/// variables [`TerminalIds::from_lookup`] asks for, each kept only with the shape of its id.
/// Linux only (`/proc/<pid>/environ`, readable for our own processes).
pub fn terminal_ids_of(pid: u32) -> companion_sessions::terminal_ids::TerminalIds {
    #[cfg(target_os = "linux")]
    let bytes = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    #[cfg(not(target_os = "linux"))]
    let bytes: Vec<u8> = {
        let _ = pid;
        Vec::new()
    };
    terminal_ids_from(&bytes)
}

/// [`terminal_ids_of`] from a NUL-separated environment block.
pub fn terminal_ids_from(block: &[u8]) -> companion_sessions::terminal_ids::TerminalIds {
    companion_sessions::terminal_ids::TerminalIds::from_lookup(|name| {
        block.split(|b| *b == 0).find_map(|entry| {
            let value = entry.strip_prefix(name.as_bytes())?.strip_prefix(b"=")?;
            std::str::from_utf8(value).ok().map(str::to_string)
        })
    })
}

/// Picks `TMUX` and `TMUX_PANE` out of a NUL-separated environment block; nothing else is
/// kept.
pub fn tmux_env_from(block: &[u8]) -> TmuxEnv {
    let mut env = TmuxEnv::default();
    for entry in block.split(|b| *b == 0) {
        if let Some(value) = entry.strip_prefix(b"TMUX=") {
            let value = String::from_utf8_lossy(value);
            // socket path, server pid, session index; the path may hold commas.
            let mut parts = value.rsplitn(3, ',');
            let (_, _, socket) = (parts.next(), parts.next(), parts.next());
            env.socket = socket.filter(|s| !s.is_empty()).map(str::to_string);
        } else if let Some(value) = entry.strip_prefix(b"TMUX_PANE=") {
            let value = String::from_utf8_lossy(value);
            if value.starts_with('%') {
                env.pane = Some(value.into_owned());
            }
        }
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_chain_starts_with_us_and_goes_up() {
        let me = std::process::id();
        let chain = ancestors(me);
        assert_eq!(chain[0].pid, me);
        assert!(
            chain.len() >= 2,
            "a test runs under cargo at least: {chain:?}"
        );
        assert_eq!(chain[1].pid, companion_platform::process::parent_pid());
        assert!(ancestors(0).is_empty());
    }

    #[test]
    fn terminals_and_tmux_by_name() {
        let chain = |names: &[&str]| -> Vec<Ancestor> {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| Ancestor {
                    pid: 100 + i as u32,
                    name: n.to_string(),
                })
                .collect()
        };
        assert_eq!(
            terminal_name(&chain(&["claude", "bash", "xterm", "openbox"])).as_deref(),
            Some("xterm")
        );
        assert_eq!(
            terminal_name(&chain(&["node", "bash", "code"])).as_deref(),
            Some("code")
        );
        assert_eq!(
            terminal_name(&chain(&["codex", "WindowsTerminal.exe"])).as_deref(),
            Some("WindowsTerminal.exe")
        );
        assert_eq!(terminal_name(&chain(&["claude", "bash", "sshd"])), None);
        assert!(is_tmux("tmux: server"));
        assert!(is_tmux("tmux"));
        assert!(!is_tmux("tmuxinator"));
    }

    #[test]
    fn only_the_tmux_variables_are_taken() {
        let block = b"HOME=/h\0TMUX=/tmp/tmux-1000/my,odd,sock,4242,3\0SECRET=x\0TMUX_PANE=%7\0";
        assert_eq!(
            tmux_env_from(block),
            TmuxEnv {
                socket: Some("/tmp/tmux-1000/my,odd,sock".into()),
                pane: Some("%7".into()),
            }
        );
        assert_eq!(tmux_env_from(b"TMUX=\0TMUX_PANE=7\0"), TmuxEnv::default());
        assert_eq!(tmux_env_from(b""), TmuxEnv::default());
    }
}
