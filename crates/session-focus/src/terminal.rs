//! The exact tab or pane: the terminal the session runs in (the first terminal among its
//! ancestors) is asked, through its own remote-control interface, to show the session's
//! tab, by the ids the session-start hook recorded ([`TerminalIds`]):
//!
//! - kitty: `kitty @ --to <its socket> focus-window --match id:<N>` (needs kitty's remote
//!   control on a socket: `--listen-on unix:…` with `allow_remote_control socket-only`);
//! - WezTerm: `wezterm cli activate-pane --pane-id <N>` on the instance's socket;
//! - Konsole: its D-Bus `org.kde.konsole.Window.setCurrentSession` (Linux);
//! - GNOME Terminal: its GNOME Shell search provider's `ActivateResult` with the tab's screen
//!   uuid, on the server's own unique bus name (`terminal-search-provider.cc`,
//!   `handle_activate_result_cb`: `terminal_window_switch_screen`, then the window is
//!   presented); the provider is there while `shell-integration-enabled` is on (the default);
//! - Ptyxis, GNOME Console and Ghostty give the programs in a tab no id of it (Ptyxis only
//!   `PTYXIS_VERSION` and `PTYXIS_PROFILE`, Console `TERM_PROGRAM=kgx`, Ghostty
//!   `TERM_PROGRAM=ghostty`), while their "focus this tab" actions take an id known only
//!   inside them (`app.focus-tab-by-uuid`, `app.focus-page`, `app.present-surface`): the
//!   window is raised and [`Tab::NotSelectable`] says so;
//! - iTerm2: AppleScript `select` of the session with that unique id (macOS, compiled only);
//! - Windows Terminal, VS Code, JetBrains IDEs and Apple Terminal offer no way to pick a tab
//!   from outside: the window is raised and [`Tab::NotSelectable`] says which tab it is.
//!
//! Whether the session's tab is the one in front ([`crate::in_front`]) is asked the same
//! ways: kitty's `ls` (only its ids and focus flags are read), Konsole's current session and
//! its windows (D-Bus), WezTerm's focused pane (`wezterm cli list-clients`).
//!
//! Only ids go to the terminal, and only ids and focus flags are read back. A terminal's
//! command-line client is run through the core's [`process_group::output`] (bounded in time
//! and output; past either it and anything it started are killed and reaped).

use std::fmt;
use std::process::Command;
use std::time::Duration;

use companion_platform::process_group;
use companion_sessions::terminal_ids::{
    Editor, KittyWindow, KonsoleSession, TerminalIds, WeztermPane,
};

use crate::ancestry::Ancestor;
use crate::in_front::{Front, WindowKnown};

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

/// The most a terminal's listing may print (kitty's `ls` of many tabs).
const LISTING_LIMIT: u64 = 4 * 1024 * 1024;

/// Runs a terminal's client; its output when it succeeded in time.
fn run(program: &str, args: &[&str], env: &[(&str, &str)]) -> Option<String> {
    run_limited(program, args, env, OUTPUT_LIMIT)
}

fn run_limited(program: &str, args: &[&str], env: &[(&str, &str)], limit: u64) -> Option<String> {
    let mut command = Command::new(program);
    command.args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    match process_group::output(&mut command, DEADLINE, limit) {
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
    GnomeTerminal,
    Ptyxis,
    Console,
    Ghostty,
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
        // The kernel's name is cut at 15 bytes: `gnome-terminal-` is the server.
        "gnome-terminal-" | "gnome-terminal-server" => Kind::GnomeTerminal,
        "ptyxis" => Kind::Ptyxis,
        "kgx" => Kind::Console,
        "ghostty" => Kind::Ghostty,
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
        Kind::GnomeTerminal => ids.gnome_terminal.as_ref().map(|g| {
            let tab = format!("GNOME Terminal tab (screen {})", g.screen);
            match gnome_terminal::select(g, chain) {
                Ok(()) => Tab::Selected(tab),
                Err(why) => Tab::NotSelectable { tab, why },
            }
        }),
        Kind::Ptyxis => Some(Tab::NotSelectable {
            tab: "a Ptyxis tab".into(),
            why: "Ptyxis gives the programs in a tab no id of it, so none can be asked for",
        }),
        Kind::Console => Some(Tab::NotSelectable {
            tab: "a Console tab".into(),
            why: "Console gives the programs in a tab no id of it, so none can be asked for",
        }),
        Kind::Ghostty => Some(Tab::NotSelectable {
            tab: "a Ghostty tab".into(),
            why: "Ghostty gives the programs in a tab no id of it, so none can be asked for",
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
        (ids.gnome_terminal.is_some(), Kind::GnomeTerminal),
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

/// Whether kitty's window `window` is the one on screen: the active window of the active tab
/// of kitty's focused OS window (or of the OS window that is the X11 active window), from
/// `kitty @ ls` on its socket.
pub(crate) fn kitty_front(window: &KittyWindow, active_x11: Option<u64>) -> Front {
    let Some(socket) = window.listen_on.as_ref().filter(|s| s.starts_with("unix:")) else {
        return Front::CannotTell;
    };
    match run_limited("kitty", &["@", "--to", socket, "ls"], &[], LISTING_LIMIT) {
        Some(listing) => kitty_front_in(&listing, window.window_id, active_x11),
        None => Front::CannotTell,
    }
}

/// [`kitty_front`] from the text of `kitty @ ls`.
pub(crate) fn kitty_front_in(listing: &str, window_id: u64, active_x11: Option<u64>) -> Front {
    let Ok(serde_json::Value::Array(os_windows)) = serde_json::from_str(listing) else {
        return Front::CannotTell;
    };
    let flag = |v: &serde_json::Value, keys: &[&str]| keys.iter().any(|k| v[*k] == true);
    for os in &os_windows {
        let tabs = os["tabs"].as_array().map(Vec::as_slice).unwrap_or_default();
        for tab in tabs {
            let windows = tab["windows"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            let Some(ours) = windows.iter().find(|w| w["id"].as_u64() == Some(window_id)) else {
                continue;
            };
            let os_in_front = flag(os, &["is_focused"])
                || active_x11.is_some_and(|x| os["platform_window_id"].as_u64() == Some(x));
            // kitty 0.26+: `is_active_tab`, `is_active_window`; older: `is_focused` only.
            let tab_in_front = flag(tab, &["is_active_tab", "is_focused"]);
            let window_in_front = flag(ours, &["is_active_window", "is_focused"]);
            return if os_in_front && tab_in_front && window_in_front {
                Front::Yes
            } else {
                Front::No
            };
        }
    }
    // kitty does not list that window (closed, or another kitty's): cannot tell.
    Front::CannotTell
}

/// Whether Konsole shows the session's tab in front: its window's current session is the
/// session's, and that window is the active one (`WINDOWID` matched, or the only window).
pub(crate) fn konsole_front(session: &KonsoleSession, window: WindowKnown) -> Front {
    match konsole::current(session) {
        Some((current, _)) if current != session.session => Front::No,
        Some((_, windows)) if window == WindowKnown::Yes || windows == 1 => Front::Yes,
        _ => Front::CannotTell,
    }
}

/// Whether WezTerm's clients focus the session's pane (`wezterm cli list-clients`).
pub(crate) fn wezterm_front(pane: &WeztermPane) -> Front {
    let env: Vec<(&str, &str)> = pane
        .socket
        .as_deref()
        .map(|s| vec![("WEZTERM_UNIX_SOCKET", s)])
        .unwrap_or_default();
    let Some(listing) = run_limited(
        "wezterm",
        &["cli", "list-clients", "--format", "json"],
        &env,
        LISTING_LIMIT,
    ) else {
        return Front::CannotTell;
    };
    wezterm_front_in(&listing, pane.pane_id)
}

/// [`wezterm_front`] from its listing: the most recently active client's focused pane.
pub(crate) fn wezterm_front_in(listing: &str, pane_id: u64) -> Front {
    let Ok(serde_json::Value::Array(clients)) = serde_json::from_str(listing) else {
        return Front::CannotTell;
    };
    let latest = clients
        .iter()
        .max_by_key(|c| c["idle_time"]["secs"].as_u64().map(|s| u64::MAX - s));
    match latest.and_then(|c| c["focused_pane_id"].as_u64()) {
        Some(focused) if focused == pane_id => Front::Yes,
        Some(_) => Front::No,
        None => Front::CannotTell,
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
        #[zbus(name = "currentSession")]
        fn current_session(&self) -> zbus::Result<i32>;
    }

    /// The window's current session number, and how many windows this Konsole has.
    pub fn current(session: &KonsoleSession) -> Option<(u32, usize)> {
        let session = session.clone();
        crate::compositor::on_session_bus(move |bus| async move {
            let proxy = WindowProxy::builder(&bus)
                .destination(session.service.clone())
                .path(session.window.clone())
                .build()
                .await
                .ok()?;
            let current = u32::try_from(proxy.current_session().await.ok()?).ok()?;
            let windows = zbus::fdo::IntrospectableProxy::builder(&bus)
                .destination(session.service.clone())
                .path("/Windows")
                .build()
                .await
                .ok()?
                .introspect()
                .await
                .ok()?;
            Some((current, windows.matches("<node name=").count()))
        })
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

#[cfg(all(unix, not(target_os = "macos")))]
mod gnome_terminal {
    use companion_sessions::terminal_ids::GnomeTerminalScreen;

    use crate::ancestry::Ancestor;

    /// GNOME Shell's search provider interface, as GNOME Terminal serves it.
    #[zbus::proxy(
        interface = "org.gnome.Shell.SearchProvider2",
        default_path = "/org/gnome/Terminal/SearchProvider"
    )]
    trait SearchProvider {
        fn activate_result(
            &self,
            identifier: &str,
            terms: &[&str],
            timestamp: u32,
        ) -> zbus::Result<()>;
    }

    /// Why the tab could not be asked for.
    enum Failure {
        /// The server's bus name is not one of the session's ancestors (gone, or another
        /// program's).
        NotOurs,
        /// No search provider on the server: `shell-integration-enabled` is off.
        NoProvider,
        /// Anything else (no bus, no answer in time).
        NoAnswer,
    }

    /// Asks the GNOME Terminal server among the session's ancestors, by its unique name, to
    /// show the screen's tab (and present its window).
    pub fn select(screen: &GnomeTerminalScreen, chain: &[Ancestor]) -> Result<(), &'static str> {
        let screen = screen.clone();
        let pids: Vec<u32> = chain.iter().map(|a| a.pid).collect();
        let outcome = crate::compositor::on_session_bus(move |bus| async move {
            Some(activate(&bus, &screen, &pids).await)
        });
        match outcome {
            Some(Ok(())) => Ok(()),
            Some(Err(Failure::NotOurs)) => {
                Err("the GNOME Terminal that recorded this tab is not the session's any more")
            }
            Some(Err(Failure::NoProvider)) => Err(
                "GNOME Terminal's shell integration is off (turn it on: gsettings set \
                 org.gnome.Terminal.Legacy.Settings shell-integration-enabled true, then restart \
                 GNOME Terminal)",
            ),
            Some(Err(Failure::NoAnswer)) | None => Err("GNOME Terminal did not answer on D-Bus"),
        }
    }

    async fn activate(
        bus: &zbus::Connection,
        screen: &GnomeTerminalScreen,
        pids: &[u32],
    ) -> Result<(), Failure> {
        let name = zbus::names::BusName::try_from(screen.service.as_str())
            .map_err(|_| Failure::NotOurs)?;
        // The name must still be the server the session runs in.
        let dbus = zbus::fdo::DBusProxy::new(bus)
            .await
            .map_err(|_| Failure::NoAnswer)?;
        let owner = dbus
            .get_connection_unix_process_id(name.clone())
            .await
            .map_err(|_| Failure::NotOurs)?;
        if !pids.contains(&owner) {
            return Err(Failure::NotOurs);
        }
        let provider = SearchProviderProxy::builder(bus)
            .destination(name)
            .build()
            .await
            .map_err(|_| Failure::NoAnswer)?;
        match provider.activate_result(&screen.screen, &[], 0).await {
            Ok(()) => Ok(()),
            // No such object: GNOME Terminal registers it only with its shell integration on.
            Err(zbus::Error::FDO(error))
                if matches!(
                    *error,
                    zbus::fdo::Error::UnknownMethod(_)
                        | zbus::fdo::Error::UnknownObject(_)
                        | zbus::fdo::Error::UnknownInterface(_)
                ) =>
            {
                Err(Failure::NoProvider)
            }
            Err(error) => {
                tracing::debug!(%error, "GNOME Terminal's search provider");
                Err(Failure::NoAnswer)
            }
        }
    }
}

#[cfg(not(all(unix, not(target_os = "macos"))))]
mod gnome_terminal {
    pub fn select(
        _screen: &companion_sessions::terminal_ids::GnomeTerminalScreen,
        _chain: &[crate::ancestry::Ancestor],
    ) -> Result<(), &'static str> {
        Err("GNOME Terminal runs on Linux and the BSDs only")
    }
}

#[cfg(not(all(unix, not(target_os = "macos"))))]
mod konsole {
    pub fn select(_session: &companion_sessions::terminal_ids::KonsoleSession) -> bool {
        false
    }

    pub fn current(
        _session: &companion_sessions::terminal_ids::KonsoleSession,
    ) -> Option<(u32, usize)> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use companion_sessions::terminal_ids::GnomeTerminalScreen;

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
    fn terminals_that_give_a_tab_no_id_say_so() {
        let none = TerminalIds::default();
        for (terminal, tab) in [
            ("ptyxis", "a Ptyxis tab"),
            ("kgx", "a Console tab"),
            ("ghostty", "a Ghostty tab"),
        ] {
            let chain = chain(&["claude", "bash", "ptyxis-agent", terminal]);
            match select(&none, &chain) {
                Some(Tab::NotSelectable { tab: found, why }) => {
                    assert_eq!(found, tab);
                    assert!(why.contains("no id"), "{why}");
                }
                other => panic!("{terminal}: {other:?}"),
            }
        }
        // GNOME Terminal without its ids recorded: no tab is known.
        assert_eq!(
            select(&none, &chain(&["claude", "bash", "gnome-terminal-"])),
            None
        );
    }

    #[test]
    fn a_gnome_terminal_name_that_is_not_among_the_ancestors_is_not_asked() {
        // The recorded server's bus name is not owned by any ancestor (here: no such name on
        // whatever bus there is, or no bus at all): never selected, and it says why.
        let ids = TerminalIds {
            gnome_terminal: Some(GnomeTerminalScreen {
                service: ":1.999999".into(),
                screen: "4f1a8a36-0a2d-4b7e-9c1e-5d2f3a6b7c8d".into(),
            }),
            ..TerminalIds::default()
        };
        match select(&ids, &chain(&["claude", "bash", "gnome-terminal-"])) {
            Some(Tab::NotSelectable { tab, .. }) => assert_eq!(
                tab,
                "GNOME Terminal tab (screen 4f1a8a36-0a2d-4b7e-9c1e-5d2f3a6b7c8d)"
            ),
            other => panic!("{other:?}"),
        }
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
    /// `kitty @ ls` of kitty 0.26.5 (trimmed): tabs one and two in OS window 1, three in OS
    /// window 2, which is focused.
    const KITTY_LS: &str = r#"[
      {"id": 1, "is_active": false, "is_focused": false, "platform_window_id": 4194316,
       "tabs": [
         {"id": 1, "title": "one", "is_active_tab": true, "is_focused": false,
          "windows": [{"id": 1, "is_active_window": true, "is_focused": false}]},
         {"id": 2, "title": "two", "is_active_tab": false, "is_focused": false,
          "windows": [{"id": 2, "is_active_window": true, "is_focused": false}]}]},
      {"id": 2, "is_active": true, "is_focused": true, "platform_window_id": 4194340,
       "tabs": [
         {"id": 3, "title": "three", "is_active_tab": true, "is_focused": true,
          "windows": [{"id": 3, "is_active_window": true, "is_focused": true}]}]}
    ]"#;

    #[test]
    fn kitty_s_window_is_in_front_only_in_the_active_tab_of_the_focused_os_window() {
        assert_eq!(kitty_front_in(KITTY_LS, 3, None), Front::Yes);
        assert_eq!(kitty_front_in(KITTY_LS, 1, None), Front::No);
        assert_eq!(kitty_front_in(KITTY_LS, 2, None), Front::No);
        // The X11 active window says which OS window is in front when kitty's flag lags.
        assert_eq!(kitty_front_in(KITTY_LS, 1, Some(4194316)), Front::Yes);
        assert_eq!(kitty_front_in(KITTY_LS, 2, Some(4194316)), Front::No);
        // A window kitty does not list, or a listing that is not kitty's: cannot tell.
        assert_eq!(kitty_front_in(KITTY_LS, 9, None), Front::CannotTell);
        assert_eq!(kitty_front_in("not json", 1, None), Front::CannotTell);
        assert_eq!(kitty_front_in("{}", 1, None), Front::CannotTell);
    }

    #[test]
    fn wezterm_s_pane_is_in_front_when_its_latest_client_focuses_it() {
        let listing = r#"[
          {"pid": 1, "idle_time": {"secs": 300, "nanos": 0}, "focused_pane_id": 4},
          {"pid": 2, "idle_time": {"secs": 2, "nanos": 0}, "focused_pane_id": 7}
        ]"#;
        assert_eq!(wezterm_front_in(listing, 7), Front::Yes);
        assert_eq!(wezterm_front_in(listing, 4), Front::No);
        assert_eq!(wezterm_front_in("[]", 4), Front::CannotTell);
        assert_eq!(wezterm_front_in("garbage", 4), Front::CannotTell);
    }
}
