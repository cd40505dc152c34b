//! Whether the person is looking at a session: its own tab or pane is the one in front, as far
//! as the desktop and the terminal let us know — never a guess. The tray silences a "needs
//! you" notification (and takes that wait as seen) only on [`Front::Yes`].
//!
//! One process often owns every window and tab of a terminal (GNOME Terminal, Ptyxis, Console,
//! Konsole, kitty, WezTerm, VS Code), so the active window's process being the session's
//! ancestor says only that some tab of that terminal is in front. The rest is asked:
//!
//! - tmux: the session's pane is the active pane of the active window of a client whose
//!   terminal owns the active window; then that client's own tab, as below;
//! - X11: the active window is the one in the session's `WINDOWID` (another window of the
//!   same process in front: no);
//! - kitty (remote control on): the session's window is the active one of the active tab of
//!   the focused OS window (`kitty @ ls`); Konsole: the window's current session is the
//!   session's (D-Bus), and the window is the active one (by `WINDOWID`, or it is Konsole's
//!   only window); WezTerm: the focused pane of its clients (`wezterm cli list-clients`);
//! - terminals with one window per process and no tabs (xterm, urxvt, st, foot outside its
//!   server mode; Alacritty when its `WINDOWID` is the active window): yes;
//! - anything else (GNOME Terminal, Ptyxis, Console and other tabbed terminals without a way
//!   to ask, an editor, a terminal that did not answer): [`Front::CannotTell`], so the person
//!   is notified. GNOME Terminal can be asked to show a tab (its search provider) but not
//!   which tab is current: its window's `active-tab` action gives a position, and nothing
//!   maps a session's screen to a position; Ptyxis and Console give a tab's programs no id.

use companion_sessions::terminal_ids::TerminalIds;

use crate::ancestry::{self, Ancestor};
use crate::{terminal, tmux};

/// The desktop's active window: the process owning it and, on X11, its window id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveWindow {
    pub pid: u32,
    /// The X11 window (`None` on Wayland, where the compositor names only the process).
    pub x11: Option<u64>,
}

/// Whether a session's own tab is in front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Front {
    /// Its tab (or pane, or window) is the one on screen in the active window.
    Yes,
    /// Another window or tab is in front.
    No,
    /// Its terminal's window is active, but which of its tabs is in front cannot be told.
    CannotTell,
}

/// Whether the session whose host is `host_pid`, with the terminal ids its session-start hook
/// recorded, is the one in front of `active`.
pub fn session_front(host_pid: u32, ids: &TerminalIds, active: ActiveWindow) -> Front {
    let chain = ancestry::ancestors(host_pid);
    if let Some(pane) = tmux::locate(&chain) {
        // In tmux the recorded ids are the tmux server's; the client's own are its tab's.
        let Some(client) = tmux::shown_by(&pane, active.pid) else {
            return Front::No;
        };
        let client_chain = ancestry::ancestors(client);
        return window_front(&client_chain, &ancestry::terminal_ids_of(client), active);
    }
    window_front(&chain, ids, active)
}

/// The tab rule for a process chain (outside tmux, or a tmux client's).
fn window_front(chain: &[Ancestor], ids: &TerminalIds, active: ActiveWindow) -> Front {
    let Some(owner) = chain.iter().find(|a| a.pid == active.pid) else {
        return Front::No;
    };
    let window = match (active.x11, ids.x11_window) {
        // Another window of the same process is in front.
        (Some(theirs), Some(ours)) if theirs != ours => return Front::No,
        (Some(_), Some(_)) => WindowKnown::Yes,
        _ => WindowKnown::No,
    };
    let verdict = by_terminal(owner, ids, window, active);
    tracing::debug!(terminal = %owner.name, ?verdict, "a session's tab in front");
    verdict
}

/// Whether the session's own window of its terminal is known to be the active one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WindowKnown {
    Yes,
    No,
}

fn by_terminal(
    owner: &Ancestor,
    ids: &TerminalIds,
    window: WindowKnown,
    active: ActiveWindow,
) -> Front {
    match terminal_model(&owner.name) {
        Model::OneWindowNoTabs => Front::Yes,
        Model::Foot => {
            let args = companion_platform::process::command_line(owner.pid).unwrap_or_default();
            if foot_server(&args) {
                // A foot server owns every footclient window.
                if window == WindowKnown::Yes {
                    Front::Yes
                } else {
                    Front::CannotTell
                }
            } else {
                Front::Yes
            }
        }
        Model::WindowsNoTabs => match window {
            WindowKnown::Yes => Front::Yes,
            WindowKnown::No => Front::CannotTell,
        },
        Model::Kitty => ids
            .kitty
            .as_ref()
            .map_or(Front::CannotTell, |k| terminal::kitty_front(k, active.x11)),
        Model::Konsole => ids
            .konsole
            .as_ref()
            .map_or(Front::CannotTell, |k| terminal::konsole_front(k, window)),
        Model::Wezterm => ids
            .wezterm
            .as_ref()
            .map_or(Front::CannotTell, terminal::wezterm_front),
        Model::Unknown => Front::CannotTell,
    }
}

/// How a terminal holds its sessions, by its process name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Model {
    /// One window per process, no tabs: the process's window is the session's.
    OneWindowNoTabs,
    /// foot: one window per process, unless it runs as a server for footclient.
    Foot,
    /// Several windows per process, no tabs (Alacritty with `msg create-window`).
    WindowsNoTabs,
    Kitty,
    Konsole,
    Wezterm,
    /// Tabs or panes with no way for another program to ask which is current (GNOME
    /// Terminal, Ptyxis, Console, xfce4-terminal, Tilix, Terminator, Ghostty, editors), or a
    /// program we do not know.
    Unknown,
}

fn terminal_model(name: &str) -> Model {
    match name {
        "xterm" | "uxterm" | "rxvt" | "urxvt" | "st" => Model::OneWindowNoTabs,
        "foot" => Model::Foot,
        "alacritty" => Model::WindowsNoTabs,
        "kitty" => Model::Kitty,
        "konsole" => Model::Konsole,
        "wezterm-gui" | "wezterm" => Model::Wezterm,
        _ => Model::Unknown,
    }
}

/// foot started as a server (`--server`, `-s`): its windows are footclient's, several per
/// process.
fn foot_server(args: &[String]) -> bool {
    args.iter()
        .skip(1)
        .any(|a| a == "-s" || a == "--server" || a.starts_with("--server="))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: u32 = 4242;

    fn chain(names: &[&str]) -> Vec<Ancestor> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| Ancestor {
                pid: 100 + i as u32,
                name: n.to_string(),
            })
            .collect()
    }

    fn active(pid: u32, x11: Option<u64>) -> ActiveWindow {
        ActiveWindow { pid, x11 }
    }

    #[test]
    fn a_window_of_another_process_is_not_the_session_s() {
        let c = chain(&["claude", "bash", "xterm"]);
        assert_eq!(
            window_front(&c, &TerminalIds::default(), active(ME, None)),
            Front::No
        );
    }

    #[test]
    fn a_terminal_with_one_window_and_no_tabs_is_in_front_when_its_window_is() {
        let c = chain(&["claude", "bash", "xterm"]);
        assert_eq!(
            window_front(&c, &TerminalIds::default(), active(102, Some(7))),
            Front::Yes
        );
    }

    #[test]
    fn another_window_of_the_same_process_is_not_the_session_s() {
        let c = chain(&["claude", "bash", "alacritty"]);
        let ids = TerminalIds {
            x11_window: Some(7),
            ..TerminalIds::default()
        };
        assert_eq!(window_front(&c, &ids, active(102, Some(8))), Front::No);
        assert_eq!(window_front(&c, &ids, active(102, Some(7))), Front::Yes);
        // On Wayland the compositor names only the process: which window, unknown.
        assert_eq!(window_front(&c, &ids, active(102, None)), Front::CannotTell);
    }

    #[test]
    fn a_tabbed_terminal_that_cannot_be_asked_never_counts_as_looked_at() {
        for terminal in [
            "gnome-terminal-server",
            "ptyxis",
            "kgx",
            "xfce4-terminal",
            "code",
            "ghostty",
        ] {
            let c = chain(&["claude", "bash", terminal]);
            let ids = TerminalIds {
                x11_window: Some(7),
                ..TerminalIds::default()
            };
            assert_eq!(
                window_front(&c, &ids, active(102, Some(7))),
                Front::CannotTell,
                "{terminal}"
            );
        }
        // kitty or Konsole without their ids recorded (remote control off): cannot tell.
        for terminal in ["kitty", "konsole", "wezterm-gui"] {
            let c = chain(&["claude", "bash", terminal]);
            assert_eq!(
                window_front(&c, &TerminalIds::default(), active(102, None)),
                Front::CannotTell,
                "{terminal}"
            );
        }
    }

    #[test]
    fn foot_s_server_mode_holds_several_windows() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(foot_server(&args(&["foot", "--server"])));
        assert!(foot_server(&args(&["foot", "-s"])));
        assert!(!foot_server(&args(&["foot", "--title", "x", "sh"])));
        assert!(
            !foot_server(&args(&["-s"])),
            "the program's own name is not an option"
        );
    }
}
