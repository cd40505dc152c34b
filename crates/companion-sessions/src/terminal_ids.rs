//! The terminal a session runs in, by the terminal's own ids as the session-start hook finds
//! them in its environment (the host inherits them from the tab or pane it was started in):
//! `TMUX_PANE`, the X11 window (`WINDOWID`), kitty's window and socket, WezTerm's pane and socket, Konsole's D-Bus
//! session, GNOME Terminal's server and screen, Windows Terminal's, iTerm2's and Apple Terminal's session ids, an editor's
//! integrated terminal. Only ids, never content: each value is kept only when it has the
//! shape of an id (digits, a GUID, a socket address, a D-Bus name or path), else dropped.
//!
//! Read on the hook's fast path ([`TerminalIds::from_env`]: environment reads only, nothing
//! started, nothing written here), kept in the session's record, and used by the jump
//! (`session-focus`) to ask the terminal for the exact tab or pane.

use serde::{Deserialize, Serialize};

use companion_platform::env_vars;

/// The longest value kept (a socket path, a GUID-carrying session id).
const MAX_LEN: usize = 256;

/// A kitty window (one tab holds one or more): `KITTY_WINDOW_ID`, and the socket kitty's
/// remote control listens on (`KITTY_LISTEN_ON`, set only when kitty was started with
/// `--listen-on` or `listen_on`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KittyWindow {
    pub window_id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen_on: Option<String>,
}

/// A WezTerm pane: `WEZTERM_PANE`, and the socket of the WezTerm instance that runs it
/// (`WEZTERM_UNIX_SOCKET`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WeztermPane {
    pub pane_id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<String>,
}

/// A Konsole tab: the Konsole process's bus name (`KONSOLE_DBUS_SERVICE`), its window's
/// object (`KONSOLE_DBUS_WINDOW`, `/Windows/N`) and the tab's session number
/// (`KONSOLE_DBUS_SESSION`, `/Sessions/N`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KonsoleSession {
    pub service: String,
    pub window: String,
    pub session: u32,
}

/// A GNOME Terminal tab: the server's unique bus name (`GNOME_TERMINAL_SERVICE`, `:1.N`) and
/// the tab's screen uuid, from its object path (`GNOME_TERMINAL_SCREEN`,
/// `/org/gnome/Terminal/screen/<uuid>` with `_` for `-`), kept in the uuid's own form: the
/// one GNOME Terminal's search provider takes (`terminal-app.cc`,
/// `terminal_app_dup_screen_object_path`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GnomeTerminalScreen {
    pub service: String,
    pub screen: String,
}

/// An editor whose integrated terminal runs the session (`TERM_PROGRAM`,
/// `TERMINAL_EMULATOR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Editor {
    /// VS Code and its forks (Cursor, Windsurf, VSCodium): `TERM_PROGRAM=vscode`.
    VsCode,
    /// A JetBrains IDE: `TERMINAL_EMULATOR=JetBrains-JediTerm`.
    JetBrains,
}

impl Editor {
    pub fn display_name(self) -> &'static str {
        match self {
            Editor::VsCode => "VS Code",
            Editor::JetBrains => "JetBrains IDE",
        }
    }
}

/// Every terminal id found at session start. Several can be present at once (a kitty started
/// from a Konsole tab inherits Konsole's variables): the jump uses the ones of the terminal
/// it finds among the session's ancestors.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalIds {
    /// `TMUX_PANE`: `%N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmux_pane: Option<String>,
    /// `WINDOWID`: the terminal's X11 window (tells two windows of one process apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x11_window: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kitty: Option<KittyWindow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wezterm: Option<WeztermPane>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub konsole: Option<KonsoleSession>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gnome_terminal: Option<GnomeTerminalScreen>,
    /// `WT_SESSION`: Windows Terminal's GUID for the tab's session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub windows_terminal: Option<String>,
    /// `ITERM_SESSION_ID`: `w0t1p0:<GUID>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterm2: Option<String>,
    /// `TERM_SESSION_ID`: Apple Terminal's session GUID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apple_terminal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editor: Option<Editor>,
}

impl TerminalIds {
    /// The ids in this process's environment (the hook's, inherited from the host).
    pub fn from_env() -> TerminalIds {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// The ids from any variable lookup (tests give a map).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> TerminalIds {
        let get = |name: &str| get(name).filter(|v| kept(v));
        let number = |name: &str| get(name).and_then(|v| v.parse::<u64>().ok());
        let kitty = number(env_vars::KITTY_WINDOW_ID).map(|window_id| KittyWindow {
            window_id,
            listen_on: get(env_vars::KITTY_LISTEN_ON),
        });
        let wezterm = number(env_vars::WEZTERM_PANE).map(|pane_id| WeztermPane {
            pane_id,
            socket: get(env_vars::WEZTERM_UNIX_SOCKET),
        });
        let konsole = (|| {
            let service = get(env_vars::KONSOLE_DBUS_SERVICE)?;
            let window = get(env_vars::KONSOLE_DBUS_WINDOW)?;
            let session = numbered_path(&get(env_vars::KONSOLE_DBUS_SESSION)?, "/Sessions/")?;
            Some(KonsoleSession {
                service,
                window,
                session,
            })
        })();
        let gnome_terminal = (|| {
            let service = get(env_vars::GNOME_TERMINAL_SERVICE)?;
            let path = get(env_vars::GNOME_TERMINAL_SCREEN)?;
            let screen = path
                .strip_prefix(GNOME_TERMINAL_SCREEN_PREFIX)?
                .replace('_', "-");
            Some(GnomeTerminalScreen { service, screen })
        })();
        let editor = match (
            get(env_vars::TERM_PROGRAM).as_deref(),
            get(env_vars::TERMINAL_EMULATOR).as_deref(),
        ) {
            (Some("vscode"), _) => Some(Editor::VsCode),
            (_, Some("JetBrains-JediTerm")) => Some(Editor::JetBrains),
            _ => None,
        };
        // Each value's shape is checked in one place, the same for ids read back.
        TerminalIds {
            tmux_pane: get(env_vars::TMUX_PANE),
            x11_window: number(env_vars::WINDOWID).filter(|&w| w != 0),
            kitty,
            wezterm,
            konsole,
            gnome_terminal,
            windows_terminal: get(env_vars::WT_SESSION),
            iterm2: get(env_vars::ITERM_SESSION_ID),
            apple_terminal: get(env_vars::TERM_SESSION_ID),
            editor,
        }
        .checked()
    }

    pub fn is_empty(&self) -> bool {
        *self == TerminalIds::default()
    }

    /// The same ids with every value that lacks the shape of its id dropped: the one check,
    /// for what [`Self::from_lookup`] finds and for ids read back from a file (the session's
    /// record), which anyone able to write it could have changed.
    pub fn checked(self) -> TerminalIds {
        let text = |v: &String, shape: fn(&str) -> bool| kept(v) && shape(v);
        TerminalIds {
            tmux_pane: self
                .tmux_pane
                .filter(|v| text(v, |v| v.strip_prefix('%').is_some_and(all_digits))),
            x11_window: self
                .x11_window
                .filter(|&w| w != 0 && w <= u64::from(u32::MAX)),
            kitty: self.kitty.map(|k| KittyWindow {
                window_id: k.window_id,
                listen_on: k.listen_on.filter(|v| text(v, is_socket_address)),
            }),
            wezterm: self.wezterm.map(|w| WeztermPane {
                pane_id: w.pane_id,
                socket: w.socket.filter(|v| text(v, is_plain_path)),
            }),
            konsole: self.konsole.filter(|k| {
                text(&k.service, is_bus_name)
                    && text(&k.window, |v| numbered_path(v, "/Windows/").is_some())
            }),
            gnome_terminal: self
                .gnome_terminal
                .filter(|g| text(&g.service, is_unique_bus_name) && text(&g.screen, is_uuid)),
            windows_terminal: self.windows_terminal.filter(|v| text(v, is_session_id)),
            iterm2: self.iterm2.filter(|v| text(v, is_session_id)),
            apple_terminal: self.apple_terminal.filter(|v| text(v, is_session_id)),
            editor: self.editor,
        }
    }
}

/// The object path prefix of GNOME Terminal's screens (`terminal-defines.hh`,
/// `TERMINAL_RECEIVER_OBJECT_PATH_FORMAT`).
const GNOME_TERMINAL_SCREEN_PREFIX: &str = "/org/gnome/Terminal/screen/";

/// A uuid in its text form: 8-4-4-4-12 hex digits.
fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, len)| g.len() == len && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A unique bus name (`:1.42`): GNOME Terminal names its server's connection, never a
/// well-known name another program could own.
fn is_unique_bus_name(s: &str) -> bool {
    s.strip_prefix(':')
        .is_some_and(|rest| rest.split('.').all(all_digits) && rest.contains('.'))
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A GUID or `w0t1p0:GUID`: letters, digits, `-`, `:` and `.` only.
fn is_session_id(s: &str) -> bool {
    s.len() <= 80
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b':' | b'.'))
}

/// kitty's `unix:/path` or `unix:@abstract`: a local socket only (never `tcp:`, which could
/// name another host, and whose port anyone on the machine may take).
fn is_socket_address(s: &str) -> bool {
    s.strip_prefix("unix:")
        .is_some_and(|rest| rest.len() > 1 && (rest.starts_with('/') || rest.starts_with('@')))
        && !s.bytes().any(|b| b.is_ascii_control())
}

/// A kept value: not empty, at most [`MAX_LEN`] bytes.
fn kept(s: &str) -> bool {
    !s.is_empty() && s.len() <= MAX_LEN
}

/// An absolute path without control characters (WezTerm's socket).
fn is_plain_path(s: &str) -> bool {
    (s.starts_with('/') || s.get(1..3) == Some(":\\")) && !s.bytes().any(|b| b.is_ascii_control())
}

/// A D-Bus bus name: `:1.42` or `org.kde.konsole-1234`.
fn is_bus_name(s: &str) -> bool {
    s.len() <= 255
        && s.contains('.')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b':'))
}

/// `N` of `<prefix>N`.
fn numbered_path(s: &str, prefix: &str) -> Option<u32> {
    s.strip_prefix(prefix)
        .filter(|n| all_digits(n))
        .and_then(|n| n.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn ids(vars: &[(&str, &str)]) -> TerminalIds {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        TerminalIds::from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn each_terminals_ids_are_read() {
        let found = ids(&[
            ("TMUX_PANE", "%7"),
            ("KITTY_WINDOW_ID", "3"),
            ("KITTY_LISTEN_ON", "unix:/tmp/kitty-sock"),
            ("WEZTERM_PANE", "12"),
            ("WEZTERM_UNIX_SOCKET", "/run/user/1000/wezterm/gui-sock-99"),
            ("KONSOLE_DBUS_SERVICE", ":1.42"),
            ("KONSOLE_DBUS_WINDOW", "/Windows/1"),
            ("KONSOLE_DBUS_SESSION", "/Sessions/4"),
            ("WT_SESSION", "0b7a2b6c-4a3e-4f5e-9d1a-6a0c5b2f1e77"),
            (
                "ITERM_SESSION_ID",
                "w0t1p0:6B1C9A3E-0D8F-4C1B-8E2A-3F4D5C6B7A89",
            ),
            ("TERM_SESSION_ID", "6B1C9A3E-0D8F-4C1B-8E2A-3F4D5C6B7A89"),
            ("TERM_PROGRAM", "vscode"),
        ]);
        assert_eq!(found.tmux_pane.as_deref(), Some("%7"));
        assert_eq!(
            found.kitty,
            Some(KittyWindow {
                window_id: 3,
                listen_on: Some("unix:/tmp/kitty-sock".into())
            })
        );
        assert_eq!(found.wezterm.as_ref().map(|w| w.pane_id), Some(12));
        assert_eq!(
            found.konsole,
            Some(KonsoleSession {
                service: ":1.42".into(),
                window: "/Windows/1".into(),
                session: 4
            })
        );
        assert!(found.windows_terminal.is_some());
        assert!(found.iterm2.is_some());
        assert!(found.apple_terminal.is_some());
        assert_eq!(found.editor, Some(Editor::VsCode));
        assert_eq!(
            ids(&[("TERMINAL_EMULATOR", "JetBrains-JediTerm")]).editor,
            Some(Editor::JetBrains)
        );
        assert!(ids(&[]).is_empty());
    }

    #[test]
    fn only_values_shaped_like_ids_are_kept() {
        let found = ids(&[
            ("TMUX_PANE", "7"),
            ("KITTY_WINDOW_ID", "three"),
            ("WEZTERM_PANE", "5"),
            ("WEZTERM_UNIX_SOCKET", "relative/sock"),
            ("KONSOLE_DBUS_SERVICE", "org.kde.konsole"),
            ("KONSOLE_DBUS_WINDOW", "/Windows/1"),
            ("KONSOLE_DBUS_SESSION", "/Sessions/x"),
            ("WT_SESSION", "not a guid; rm -rf"),
            ("TERM_PROGRAM", "iTerm.app"),
        ]);
        assert_eq!(found.tmux_pane, None);
        assert_eq!(found.kitty, None);
        assert_eq!(
            found.wezterm,
            Some(WeztermPane {
                pane_id: 5,
                socket: None
            })
        );
        assert_eq!(found.konsole, None);
        assert_eq!(found.windows_terminal, None);
        assert_eq!(found.editor, None);
        let kitty = ids(&[
            ("KITTY_WINDOW_ID", "1"),
            ("KITTY_LISTEN_ON", "/tmp/no-scheme"),
        ]);
        assert_eq!(kitty.kitty.unwrap().listen_on, None);
        // Issue 22, item 4: only a local socket; `tcp:` could name another host.
        for remote in [
            "tcp:evil.example:9999",
            "tcp:127.0.0.1:9999",
            "unix:",
            "unix:rel",
        ] {
            let kitty = ids(&[("KITTY_WINDOW_ID", "1"), ("KITTY_LISTEN_ON", remote)]);
            assert_eq!(kitty.kitty.unwrap().listen_on, None, "{remote}");
        }
        let abstract_socket = ids(&[("KITTY_WINDOW_ID", "1"), ("KITTY_LISTEN_ON", "unix:@kitty")]);
        assert_eq!(
            abstract_socket.kitty.unwrap().listen_on.as_deref(),
            Some("unix:@kitty")
        );
        let long = "9".repeat(MAX_LEN + 1);
        assert_eq!(ids(&[("KITTY_WINDOW_ID", &long)]).kitty, None);
    }

    /// Issue 22, item 4: ids read back from a record are checked again, not only when the
    /// hook recorded them: a value changed in the file since is dropped.
    #[test]
    fn ids_read_back_are_checked_again() {
        let planted: TerminalIds = serde_json::from_str(
            r#"{"tmuxPane": "%1; rm -rf", "kitty": {"windowId": 3, "listenOn": "tcp:evil.example:1"},
                "wezterm": {"paneId": 2, "socket": "relative/sock"},
                "konsole": {"service": "org.kde.konsole-1 x", "window": "/Windows/1", "session": 1},
                "windowsTerminal": "a b", "iterm2": "w0t0p0:ok", "editor": "vsCode"}"#,
        )
        .unwrap();
        let checked = planted.checked();
        assert_eq!(checked.tmux_pane, None);
        assert_eq!(
            checked.kitty,
            Some(KittyWindow {
                window_id: 3,
                listen_on: None
            })
        );
        assert_eq!(
            checked.wezterm.as_ref().and_then(|w| w.socket.as_ref()),
            None
        );
        assert_eq!(checked.konsole, None);
        assert_eq!(checked.windows_terminal, None);
        assert_eq!(checked.iterm2.as_deref(), Some("w0t0p0:ok"));
        assert_eq!(checked.editor, Some(Editor::VsCode));
        let good = ids(&[
            ("TMUX_PANE", "%7"),
            ("KITTY_WINDOW_ID", "3"),
            ("KITTY_LISTEN_ON", "unix:/tmp/kitty-sock"),
            ("KONSOLE_DBUS_SERVICE", ":1.42"),
            ("KONSOLE_DBUS_WINDOW", "/Windows/1"),
            ("KONSOLE_DBUS_SESSION", "/Sessions/4"),
        ]);
        assert_eq!(good.clone().checked(), good, "what the hook keeps stays");
    }

    /// GNOME Terminal's variables as `terminal-screen.cc` sets them (3.46 to 3.60): the
    /// server's unique name and the screen's object path, whose `_` are the uuid's `-`.
    #[test]
    fn gnome_terminal_s_screen_is_kept_as_its_uuid() {
        let found = ids(&[
            ("GNOME_TERMINAL_SERVICE", ":1.87"),
            (
                "GNOME_TERMINAL_SCREEN",
                "/org/gnome/Terminal/screen/4f1a8a36_0a2d_4b7e_9c1e_5d2f3a6b7c8d",
            ),
        ]);
        assert_eq!(
            found.gnome_terminal,
            Some(GnomeTerminalScreen {
                service: ":1.87".into(),
                screen: "4f1a8a36-0a2d-4b7e-9c1e-5d2f3a6b7c8d".into()
            })
        );
        assert_eq!(found.clone().checked(), found, "what the hook keeps stays");
        let screen = "/org/gnome/Terminal/screen/4f1a8a36_0a2d_4b7e_9c1e_5d2f3a6b7c8d";
        for (service, path) in [
            // A well-known name another program could own; not a bus name at all.
            ("org.gnome.Terminal", screen),
            (":1.x", screen),
            (":1", screen),
            // Not a screen path, not a uuid.
            (":1.87", "/org/gnome/Terminal/window/1"),
            (":1.87", "/org/gnome/Terminal/screen/4f1a8a36"),
            (
                ":1.87",
                "/org/gnome/Terminal/screen/4f1a8a36_0a2d_4b7e_9c1e_5d2f3a6b7c8z",
            ),
        ] {
            let found = ids(&[
                ("GNOME_TERMINAL_SERVICE", service),
                ("GNOME_TERMINAL_SCREEN", path),
            ]);
            assert_eq!(found.gnome_terminal, None, "{service} {path}");
        }
        assert_eq!(
            ids(&[("GNOME_TERMINAL_SCREEN", screen)]).gnome_terminal,
            None
        );
        // Read back from a record changed since: checked again.
        let planted: TerminalIds = serde_json::from_str(
            r#"{"gnomeTerminal": {"service": ":1.87", "screen": "x; rm -rf /"}}"#,
        )
        .unwrap();
        assert_eq!(planted.checked().gnome_terminal, None);
    }

    #[test]
    fn the_record_round_trips_and_stays_small_when_empty() {
        let found = ids(&[("KITTY_WINDOW_ID", "2"), ("TMUX_PANE", "%1")]);
        let text = serde_json::to_string(&found).unwrap();
        assert_eq!(text, r#"{"tmuxPane":"%1","kitty":{"windowId":2}}"#);
        assert_eq!(serde_json::from_str::<TerminalIds>(&text).unwrap(), found);
        assert_eq!(
            serde_json::to_string(&TerminalIds::default()).unwrap(),
            "{}"
        );
    }
}
