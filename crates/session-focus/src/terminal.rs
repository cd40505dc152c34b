//! The exact tab or pane: the terminal the session runs in (the first terminal among its
//! ancestors) is asked, through its own remote-control interface, to show the session's
//! tab, by the ids the session-start hook recorded ([`TerminalIds`]):
//!
//! - kitty: `kitty @ --to <its socket> focus-window --match id:<N>` (needs kitty's remote
//!   control on a socket: `--listen-on unix:…` with `allow_remote_control socket-only`);
//! - WezTerm: `wezterm cli activate-pane --pane-id <N>` on the instance's socket;
//! - Konsole: its D-Bus `org.kde.konsole.Window.setCurrentSession` (Linux);
//! - iTerm2: AppleScript `select` of the session with that unique id (macOS, compiled only);
//! - Windows Terminal, VS Code, JetBrains IDEs and Apple Terminal offer no way to pick a tab
//!   from outside: the window is raised and [`Tab::NotSelectable`] says which tab it is.
//!
//! Only ids go to the terminal; nothing is read from it. A terminal's command-line client is
//! run through the core's [`process_group::output`] (bounded in time and output; past
//! either it and anything it started are killed and reaped).

use std::fmt;
use std::process::Command;
use std::time::Duration;

use companion_platform::process_group;
use companion_sessions::terminal_ids::{Editor, KittyWindow, TerminalIds, WeztermPane};

use crate::ancestry::Ancestor;

/// The tab or pane of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tab {
    /// The terminal now shows it.
    Selected(String),
    /// The terminal was not (or could not be) asked: which tab it is and why.
    NotSelectable { tab: String, why: &'static str },
}

impl fmt::Display for Tab {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tab::Selected(tab) => write!(f, "{tab} selected"),
            Tab::NotSelectable { tab, why } => write!(f, "{tab} (not selected: {why})"),
        }
    }
}

/// How long a terminal's client may take.
const DEADLINE: Duration = Duration::from_secs(2);
/// The most a terminal's client may print (we read nothing of it but success).
const OUTPUT_LIMIT: u64 = 64 * 1024;

/// Runs a terminal's client; its output when it succeeded in time.
fn run(program: &str, args: &[&str], env: &[(&str, &str)]) -> Option<String> {
    let mut command = Command::new(program);
    command.args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    match process_group::output(&mut command, DEADLINE, OUTPUT_LIMIT) {
        Ok(out) if out.status.success() => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(_) => None,
        Err(error) => {
            tracing::debug!(%error, program, "a terminal's client");
            None
        }
    }
}

/// Which terminal's ids apply: the first terminal among the ancestors, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Kitty,
    Wezterm,
    Konsole,
    WindowsTerminal,
    Iterm2,
    AppleTerminal,
    Editor,
}

fn kind_of(name: &str) -> Option<Kind> {
    let name = name.trim_end_matches(".exe");
    Some(match name {
        "kitty" => Kind::Kitty,
        "wezterm-gui" | "wezterm" => Kind::Wezterm,
        "konsole" => Kind::Konsole,
        "WindowsTerminal" | "OpenConsole" => Kind::WindowsTerminal,
        "iTerm2" => Kind::Iterm2,
        "Terminal" => Kind::AppleTerminal,
        "code" | "code-oss" | "codium" | "cursor" | "windsurf" | "Code" | "Cursor" => Kind::Editor,
        "idea" | "pycharm" | "goland" | "clion" | "webstorm" | "rustrover" | "rider"
        | "phpstorm" => Kind::Editor,
        _ => return None,
    })
}

/// Shows the session's tab in its terminal, when one of the recorded terminals is among the
/// ancestors (or, when no terminal is recognised by name, the only one recorded); `None`
/// when no tab is known.
pub fn select(ids: &TerminalIds, chain: &[Ancestor]) -> Option<Tab> {
    let kind = chain
        .iter()
        .find_map(|a| kind_of(&a.name))
        .or_else(|| only_recorded(ids))?;
    match kind {
        Kind::Kitty => ids.kitty.as_ref().map(kitty),
        Kind::Wezterm => ids.wezterm.as_ref().map(wezterm),
        Kind::Konsole => ids.konsole.as_ref().map(|k| {
            let tab = format!("Konsole tab (session {})", k.session);
            if konsole::select(k) {
                Tab::Selected(tab)
            } else {
                Tab::NotSelectable {
                    tab,
                    why: "Konsole did not answer on D-Bus",
                }
            }
        }),
        Kind::WindowsTerminal => ids.windows_terminal.as_ref().map(|_| Tab::NotSelectable {
            tab: "a Windows Terminal tab".into(),
            why: "Windows Terminal has no way for another program to pick a tab",
        }),
        Kind::Iterm2 => ids.iterm2.as_deref().map(iterm2),
        Kind::AppleTerminal => ids.apple_terminal.as_ref().map(|_| Tab::NotSelectable {
            tab: "a Terminal tab".into(),
            why: "Terminal has no way for another program to pick a tab by its session",
        }),
        Kind::Editor => ids.editor.map(|editor| Tab::NotSelectable {
            tab: format!("{}'s integrated terminal", editor.display_name()),
            why: match editor {
                Editor::VsCode => "VS Code has no way for another program to pick its terminal",
                Editor::JetBrains => "the IDE has no way for another program to pick its terminal",
            },
        }),
    }
}

/// The terminal of the ids when exactly one terminal was recorded.
fn only_recorded(ids: &TerminalIds) -> Option<Kind> {
    let present = [
        (ids.kitty.is_some(), Kind::Kitty),
        (ids.wezterm.is_some(), Kind::Wezterm),
        (ids.konsole.is_some(), Kind::Konsole),
        (ids.windows_terminal.is_some(), Kind::WindowsTerminal),
        (ids.iterm2.is_some(), Kind::Iterm2),
        (ids.apple_terminal.is_some(), Kind::AppleTerminal),
        (ids.editor.is_some(), Kind::Editor),
    ];
    let mut found = present
        .iter()
        .filter(|(yes, _)| *yes)
        .map(|(_, kind)| *kind);
    match (found.next(), found.next()) {
        (Some(kind), None) => Some(kind),
        _ => None,
    }
}

fn kitty(window: &KittyWindow) -> Tab {
    let tab = format!("kitty window {}", window.window_id);
    // A local socket only (the record's ids are checked when read; checked here too).
    let Some(socket) = window.listen_on.as_ref().filter(|s| s.starts_with("unix:")) else {
        return Tab::NotSelectable {
            tab,
            why: "kitty's remote control is off (start kitty with --listen-on unix:<path> and \
                  allow_remote_control socket-only)",
        };
    };
    let matched = format!("id:{}", window.window_id);
    let done = run(
        "kitty",
        &["@", "--to", socket, "focus-window", "--match", &matched],
        &[],
    );
    match done {
        Some(_) => Tab::Selected(tab),
        None => Tab::NotSelectable {
            tab,
            why: "kitty did not take the request (is that window still open?)",
        },
    }
}

fn wezterm(pane: &WeztermPane) -> Tab {
    let tab = format!("WezTerm pane {}", pane.pane_id);
    let id = pane.pane_id.to_string();
    let env: Vec<(&str, &str)> = pane
        .socket
        .as_deref()
        .map(|s| vec![("WEZTERM_UNIX_SOCKET", s)])
        .unwrap_or_default();
    match run("wezterm", &["cli", "activate-pane", "--pane-id", &id], &env) {
        Some(_) => Tab::Selected(tab),
        None => Tab::NotSelectable {
            tab,
            why: "wezterm cli did not take the request",
        },
    }
}

fn iterm2(session: &str) -> Tab {
    let tab = "an iTerm2 tab".to_string();
    #[cfg(target_os = "macos")]
    {
        // `w0t1p0:<GUID>`: the GUID is the session's unique id in AppleScript.
        let guid = session.rsplit(':').next().unwrap_or(session);
        let script = format!(
            "tell application \"iTerm2\"\n repeat with w in windows\n  repeat with t in tabs of w\n   \
             repeat with s in sessions of t\n    if unique id of s is \"{guid}\" then\n     \
             select w\n     select t\n     select s\n     return \"ok\"\n    end if\n   end repeat\n  \
             end repeat\n end repeat\nend tell"
        );
        if run("osascript", &["-e", &script], &[]).is_some_and(|out| out.trim() == "ok") {
            return Tab::Selected(tab);
        }
        Tab::NotSelectable {
            tab,
            why: "iTerm2 did not find that session (or Automation is not allowed)",
        }
    }
    #[cfg(not(target_os = "macos"))]
    {
        let _ = session;
        Tab::NotSelectable {
            tab,
            why: "iTerm2 runs on macOS only",
        }
    }
}

#[cfg(all(unix, not(target_os = "macos")))]
mod konsole {
    use companion_sessions::terminal_ids::KonsoleSession;

    #[zbus::proxy(interface = "org.kde.konsole.Window")]
    trait Window {
        #[zbus(name = "setCurrentSession")]
        fn set_current_session(&self, session_id: i32) -> zbus::Result<()>;
    }

    /// Asks the Konsole window to show the session's tab.
    pub fn select(session: &KonsoleSession) -> bool {
        let session = session.clone();
        crate::compositor::on_session_bus(move |bus| async move {
            let proxy = WindowProxy::builder(&bus)
                .destination(session.service.clone())
                .path(session.window.clone())
                .build()
                .await
                .ok()?;
            proxy.set_current_session(session.session as i32).await.ok()
        })
        .is_some()
    }
}

#[cfg(not(all(unix, not(target_os = "macos"))))]
mod konsole {
    pub fn select(_session: &companion_sessions::terminal_ids::KonsoleSession) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_terminal_among_the_ancestors_picks_its_ids() {
        let ids = TerminalIds {
            windows_terminal: Some("guid".into()),
            editor: Some(Editor::VsCode),
            ..TerminalIds::default()
        };
        assert_eq!(
            select(&ids, &chain(&["claude", "bash", "code"])),
            Some(Tab::NotSelectable {
                tab: "VS Code's integrated terminal".into(),
                why: "VS Code has no way for another program to pick its terminal"
            })
        );
        assert!(matches!(
            select(&ids, &chain(&["codex.exe", "pwsh.exe", "WindowsTerminal.exe"])),
            Some(Tab::NotSelectable { ref tab, .. }) if tab == "a Windows Terminal tab"
        ));
        // A terminal among the ancestors whose ids were not recorded: no tab is known.
        assert_eq!(select(&ids, &chain(&["claude", "bash", "kitty"])), None);
        // No terminal recognised and two recorded: which one is unknown.
        assert_eq!(select(&ids, &chain(&["claude", "sshd"])), None);
    }

    #[test]
    fn kitty_without_its_socket_says_how_to_turn_remote_control_on() {
        let ids = TerminalIds {
            kitty: Some(KittyWindow {
                window_id: 4,
                listen_on: None,
            }),
            ..TerminalIds::default()
        };
        let tab = select(&ids, &chain(&["claude", "zsh"])).unwrap();
        assert!(
            tab.to_string()
                .starts_with("kitty window 4 (not selected: kitty's remote control is off"),
            "{tab}"
        );
    }
}
