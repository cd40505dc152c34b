//! Jump to a session: raise the window a live agent session runs in and, in tmux, select its
//! pane. The one implementation behind the tray's session lines and notification clicks, the
//! dashboard's session rows and `fabric-session focus <session id>`.
//!
//! From the host process recorded in the session's spool (pid and start ticks, so a reused
//! pid is not mistaken for the host) we walk up its ancestors:
//!
//! - an ancestor that is a tmux pane: select its window and pane, then continue from the tmux
//!   client attached to that session (its terminal is the window to raise);
//! - the first ancestor owning a top-level window (X11: `_NET_WM_PID` or the X-Resource
//!   extension over `_NET_CLIENT_LIST`) is raised the EWMH way; an editor's integrated
//!   terminal finds the editor this way;
//! - on Wayland the compositor raises it: GNOME Shell through our own GNOME Shell extension
//!   (once the person turned it on), KWin through its scripting interface ([`compositor`]);
//! - macOS activates the owning application (`NSRunningApplication`); Windows raises the
//!   owning window (`SetForegroundWindow`, the console host's window for a console);
//!   both written and compiled for their systems, not run here.
//!
//! Before the window is raised, the terminal is asked to show the session's own tab or pane
//! ([`terminal`]: kitty, WezTerm, Konsole, iTerm2, by the ids the session-start hook
//! recorded); where a terminal offers no way to, the answer says which tab it is.
//!
//! Where raising is impossible (a Wayland desktop without a way, no window manager, a
//! desktop that refuses) the error carries where the session is ([`Place`]: project folder,
//! host, terminal, tab, tmux target) so the person can get there. This crate never runs on a
//! hook's path, never prints, and never reads more of another process than its parent, name,
//! command line and (Linux) the two tmux variables of its environment.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

use companion_hosts::host::Host;
use companion_sessions::spool::{SessionId, Spool};
use companion_sessions::terminal_ids::TerminalIds;

pub mod ancestry;
#[cfg(all(unix, not(target_os = "macos")))]
pub mod compositor;
pub mod gnome_extension;
pub mod in_front;
#[cfg(target_os = "macos")]
mod macos;
pub mod terminal;
pub mod tmux;
#[cfg(windows)]
mod windows;
#[cfg(all(unix, not(target_os = "macos")))]
mod x11;

/// Where a session is, for a person to get there by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The project folder's name.
    pub project: String,
    /// The session's folder (shown to the person, never logged).
    pub folder: Option<PathBuf>,
    pub host: Host,
    /// The terminal (or editor) program the session runs in, when one was recognised.
    pub terminal: Option<String>,
    /// The tmux pane, `session:window.pane`.
    pub tmux: Option<String>,
    /// The terminal's tab or pane, when the terminal's ids were recorded.
    pub tab: Option<terminal::Tab>,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let project = if self.project.is_empty() {
            "?"
        } else {
            &self.project
        };
        write!(f, "{project} ({})", self.host.display_name())?;
        if let Some(folder) = &self.folder {
            write!(f, " in {}", folder.display())?;
        }
        if let Some(tmux) = &self.tmux {
            write!(f, ", tmux {tmux}")?;
        }
        if let Some(terminal) = &self.terminal {
            write!(f, ", terminal {terminal}")?;
        }
        if let Some(tab) = &self.tab {
            write!(f, ", {tab}")?;
        }
        Ok(())
    }
}

/// Why the window could not be raised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A Wayland session: a program may not raise another's window there, and this
    /// compositor offers us no way.
    Wayland,
    /// GNOME Shell on Wayland, where only our extension can raise a window, and it is not
    /// installed.
    GnomeExtensionMissing,
    /// GNOME Shell on Wayland, our extension installed but not turned on.
    GnomeExtensionOff,
    /// GNOME Shell on Wayland, our extension installed for other versions of the shell.
    GnomeExtensionOutOfDate,
    /// GNOME Shell on Wayland, our extension failed to load or turn on; the shell's error.
    GnomeExtensionFailed(gnome_extension::ShellError),
    /// No graphical display to talk to (no `DISPLAY`).
    NoDisplay,
    /// The X display took the connection and did not answer in time: nothing could be told.
    DisplaySilent,
    /// KWin took the jump's script and did not call back in time (the script was unloaded and
    /// its file removed).
    CompositorSilent,
    /// The X server has no window manager implementing EWMH's `_NET_ACTIVE_WINDOW`.
    NoWindowManager,
    /// No top-level window belongs to the session's process or its ancestors.
    NoWindow,
    /// The tmux session has no client attached: no terminal shows it.
    NoTmuxClient,
    /// The window manager was asked and did not make the window active.
    Refused,
    /// Raising is not written for this system.
    Unsupported,
    /// A remote's session: no terminal here runs the `ssh` (or container or WSL command)
    /// that reaches that machine.
    NoLocalClient,
    /// A remote's session: several terminals here reach that machine (their programs and
    /// pids), and none can be told to hold the session.
    SeveralLocalClients(Vec<String>),
}

impl Refusal {
    /// One line saying why.
    pub fn describe(&self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Refusal::Wayland => {
                "this Wayland desktop does not let a program raise another's window"
            }
            Refusal::GnomeExtensionMissing => {
                "GNOME Shell lets a program raise another's window only through an extension, \
                 and Fabric Companion's (fabric-companion-focus@passioncode.ai) is not \
                 installed; it comes with the Linux package (installed during this session, \
                 GNOME Shell sees it after you log out and in)"
            }
            Refusal::GnomeExtensionOff => {
                "GNOME Shell lets a program raise another's window only through an extension, \
                 and Fabric Companion's is installed but off; to allow it, run `gnome-extensions \
                 enable fabric-companion-focus@passioncode.ai` (or turn it on in Extensions)"
            }
            Refusal::GnomeExtensionOutOfDate => {
                "GNOME Shell lets a program raise another's window only through an extension, \
                 and Fabric Companion's is out of date for this GNOME Shell (it was installed \
                 for another version); reinstalling the Linux package, then logging out and \
                 in, fixes it"
            }
            Refusal::GnomeExtensionFailed(error) => {
                return Cow::Owned(format!(
                    "GNOME Shell lets a program raise another's window only through an \
                     extension, and Fabric Companion's failed to load (GNOME Shell said: \
                     {error}); reinstalling the Linux package, then logging out and in, may \
                     fix it"
                ));
            }
            Refusal::NoDisplay => "there is no display to raise a window on",
            Refusal::DisplaySilent => "the X display did not answer in time",
            Refusal::CompositorSilent => {
                "KWin took the request to raise the window and did not answer in time"
            }
            Refusal::NoWindowManager => {
                "this desktop's window manager does not support raising windows (EWMH)"
            }
            Refusal::NoWindow => "no window belongs to the session's process",
            Refusal::NoTmuxClient => "no terminal is attached to the session's tmux session",
            Refusal::Refused => "the window manager did not raise the window",
            Refusal::Unsupported => "raising windows is not supported on this system",
            Refusal::NoLocalClient => {
                "no terminal here is connected to that machine (no ssh to it runs here)"
            }
            Refusal::SeveralLocalClients(clients) => {
                return Cow::Owned(format!(
                    "{} terminals here are connected to that machine ({}), and which holds \
                     the session cannot be told",
                    clients.len(),
                    clients.join(", ")
                ));
            }
        })
    }
}

/// What was raised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raised {
    /// The program owning the raised window (its process name), e.g. `xterm`, `code`.
    pub program: String,
    /// Its pid.
    pub pid: u32,
    /// The platform's window id (X11 window, Windows `HWND`), 0 where there is none (macOS:
    /// the application is activated).
    pub window: u64,
    /// The tmux pane selected on the way, `session:window.pane`.
    pub tmux: Option<String>,
    /// The terminal's tab or pane: selected, or which it is when the terminal cannot be asked.
    pub tab: Option<terminal::Tab>,
}

impl fmt::Display for Raised {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (pid {}", self.program, self.pid)?;
        if self.window != 0 {
            write!(f, ", window 0x{:x}", self.window)?;
        }
        f.write_str(")")?;
        if let Some(tmux) = &self.tmux {
            write!(f, ", tmux pane {tmux}")?;
        }
        if let Some(tab) = &self.tab {
            write!(f, ", {tab}")?;
        }
        Ok(())
    }
}

/// Why jumping did not raise a window.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FocusError {
    #[error("no session with that id")]
    UnknownSession,
    #[error("the session's process is gone")]
    ProcessGone,
    #[error("{}; the session is {place}", refusal.describe())]
    NotAllowed { refusal: Refusal, place: Box<Place> },
}

impl FocusError {
    /// The exit status of `fabric-session focus`: 2 unknown, 3 gone, 4 not allowed.
    pub fn exit_code(&self) -> u8 {
        match self {
            FocusError::UnknownSession => 2,
            FocusError::ProcessGone => 3,
            FocusError::NotAllowed { .. } => 4,
        }
    }
}

/// Raises the window of session `id` (its spool under `sessions_dir`).
pub fn focus(sessions_dir: &Path, id: &str) -> Result<Raised, FocusError> {
    let id = SessionId::new(id).ok_or(FocusError::UnknownSession)?;
    let spool = Spool::new(sessions_dir, &id);
    let record = spool.read_session().ok_or(FocusError::UnknownSession)?;
    if !record.host_alive() || spool.read_end().is_some() {
        return Err(FocusError::ProcessGone);
    }
    let place = Place {
        project: record.project.clone(),
        folder: record.cwd.clone(),
        host: record.host,
        terminal: None,
        tmux: None,
        tab: None,
    };
    focus_chain(record.host_pid, &record.terminal, place)
}

/// Raises the terminal (and tab, and local tmux pane) a local process runs in: the `ssh`
/// (or `docker exec`, …) that reaches a remote session. `place` says where the session is;
/// its terminal is filled in here. Nothing of the process's environment is read beyond what
/// [`focus`] reads, so a terminal's tab is selected only through tmux.
pub fn focus_process(pid: u32, place: Place) -> Result<Raised, FocusError> {
    if !companion_platform::process::pid_alive(pid) {
        return Err(FocusError::ProcessGone);
    }
    focus_chain(pid, &TerminalIds::default(), place)
}

fn focus_chain(pid: u32, ids: &TerminalIds, mut place: Place) -> Result<Raised, FocusError> {
    let chain = ancestry::ancestors(pid);
    place.terminal = ancestry::terminal_name(&chain);
    // In tmux the window to raise is the terminal of the client showing the pane.
    let (chain, tmux_target) = match tmux::locate(&chain) {
        Some(pane) => {
            place.tmux = Some(pane.target.clone());
            let client = tmux::select(&pane);
            match client {
                Some(client_pid) => {
                    let client_chain = ancestry::ancestors(client_pid);
                    place.terminal = ancestry::terminal_name(&client_chain);
                    (client_chain, Some(pane.target))
                }
                None => {
                    return Err(FocusError::NotAllowed {
                        refusal: Refusal::NoTmuxClient,
                        place: Box::new(place),
                    });
                }
            }
        }
        None => (chain, None),
    };
    // The terminal's own tab first (outside tmux: inside, the recorded ids are the tmux
    // server's, not the attached client's), then its window.
    if tmux_target.is_none() {
        place.tab = terminal::select(ids, &chain);
    }
    // The session's own X11 window (`WINDOWID`), outside tmux (inside, it is whatever window
    // started the tmux server).
    let own_window = ids.x11_window.filter(|_| tmux_target.is_none());
    match raise(&chain, own_window) {
        Ok((program, pid, window)) => Ok(Raised {
            program,
            pid,
            window,
            tmux: tmux_target,
            tab: place.tab,
        }),
        Err(refusal) => Err(FocusError::NotAllowed {
            refusal,
            place: Box::new(place),
        }),
    }
}

/// Raises the window of the first process in `chain` that owns one: on Wayland through the
/// compositor (GNOME Shell with our extension, KWin), else (and for XWayland windows where
/// the compositor offers no way) the X11 way.
#[cfg(all(unix, not(target_os = "macos")))]
fn raise(chain: &[ancestry::Ancestor], own: Option<u64>) -> Result<(String, u32, u64), Refusal> {
    let wayland = ancestry::wayland_session();
    let mut compositor_refusal = None;
    if wayland {
        match compositor::raise_first(chain) {
            Some(Ok((program, pid))) => return Ok((program, pid, 0)),
            // The compositor looked and found no window, or would not: final.
            Some(Err(refusal @ (Refusal::NoWindow | Refusal::Refused))) => return Err(refusal),
            Some(Err(refusal)) => compositor_refusal = Some(refusal),
            None => {}
        }
    }
    let wayland_refusal = compositor_refusal.unwrap_or(Refusal::Wayland);
    if std::env::var_os("DISPLAY").is_none_or(|d| d.is_empty()) {
        return Err(if wayland {
            wayland_refusal
        } else {
            Refusal::NoDisplay
        });
    }
    let result =
        x11::Desktop::connect(x11::JUMP_WITHIN).and_then(|desktop| desktop.raise_first(chain, own));
    match result {
        // XWayland: only X11 windows are seen, the compositor decides, and most refuse.
        Err(Refusal::Refused | Refusal::NoWindow | Refusal::NoWindowManager) if wayland => {
            Err(wayland_refusal)
        }
        other => other,
    }
}

#[cfg(target_os = "macos")]
fn raise(chain: &[ancestry::Ancestor], _own: Option<u64>) -> Result<(String, u32, u64), Refusal> {
    macos::raise_first(chain)
}

#[cfg(windows)]
fn raise(chain: &[ancestry::Ancestor], _own: Option<u64>) -> Result<(String, u32, u64), Refusal> {
    windows::raise_first(chain)
}

#[cfg(not(any(unix, windows)))]
fn raise(_chain: &[ancestry::Ancestor], _own: Option<u64>) -> Result<(String, u32, u64), Refusal> {
    Err(Refusal::Unsupported)
}

/// Whether jumping to a session can raise its window on this desktop: `Ok(())`, or why not
/// (a Wayland desktop without a way: GNOME Shell with our extension missing or off, an
/// unknown compositor). X11, macOS and Windows say yes (each jump still reads back).
pub fn jump_support() -> Result<(), Refusal> {
    #[cfg(all(unix, not(target_os = "macos")))]
    if ancestry::wayland_session() {
        return compositor::support();
    }
    Ok(())
}

/// Turns our GNOME Shell extension on, when the person asks for it (the dashboard's button),
/// and reads its state back: `Ok(())` when it is on, else why not (off, out of date, failed
/// with the shell's error). Nowhere else does anything turn it on.
pub fn enable_gnome_jump() -> Result<(), Refusal> {
    #[cfg(all(unix, not(target_os = "macos")))]
    {
        compositor::enable_gnome_extension()
    }
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    {
        Err(Refusal::Unsupported)
    }
}

/// The active window: the process owning it and, on X11, the window (Wayland: GNOME Shell
/// with our extension, KWin; X11 with an EWMH window manager, on `$DISPLAY`; Windows'
/// foreground window); `None` elsewhere or when it cannot be told.
pub fn active_window() -> Option<in_front::ActiveWindow> {
    #[cfg(windows)]
    {
        windows::active_pid().map(|pid| in_front::ActiveWindow { pid, x11: None })
    }
    #[cfg(not(windows))]
    {
        #[cfg(all(unix, not(target_os = "macos")))]
        if ancestry::wayland_session()
            && let Some(pid) = compositor::focused_pid()
        {
            return Some(in_front::ActiveWindow { pid, x11: None });
        }
        let display = std::env::var("DISPLAY").ok().filter(|d| !d.is_empty())?;
        active_window_on(&display)
    }
}

/// [`active_window`] on the X display `display` (`:0`).
pub fn active_window_on(display: &str) -> Option<in_front::ActiveWindow> {
    #[cfg(all(unix, not(target_os = "macos")))]
    {
        x11::Desktop::connect_to(Some(display), x11::QUERY_WITHIN)
            .ok()?
            .active()
    }
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    {
        let _ = display;
        None
    }
}

/// Which of these sessions (id, host pid; their spools under `sessions_dir`) the person is
/// looking at: the one whose own tab, pane or window is in front ([`in_front`]). `None` when
/// none is, or the desktop or the terminal cannot tell: the person is then notified.
pub fn looked_at(sessions_dir: &Path, sessions: &[(&str, u32)]) -> Option<String> {
    let active = active_window();
    tracing::debug!(
        ?active,
        wayland = ancestry::wayland_session(),
        "the active window"
    );
    looked_at_in(active?, sessions_dir, sessions)
}

/// Whether an XEmbed tray manager runs on the X display `$DISPLAY` (the tray's choice of
/// shell), asked within 2 s: a display that cannot be asked in time has none. False off
/// X11 systems.
pub fn xembed_tray_present() -> bool {
    #[cfg(all(unix, not(target_os = "macos")))]
    {
        let present = x11::xembed_tray_present(None, x11::QUERY_WITHIN);
        tracing::debug!(?present, "an XEmbed tray manager");
        present.unwrap_or(false)
    }
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    {
        false
    }
}

/// [`looked_at`] on the X display `display`.
pub fn looked_at_on(
    display: &str,
    sessions_dir: &Path,
    sessions: &[(&str, u32)],
) -> Option<String> {
    looked_at_in(active_window_on(display)?, sessions_dir, sessions)
}

fn looked_at_in(
    active: in_front::ActiveWindow,
    sessions_dir: &Path,
    sessions: &[(&str, u32)],
) -> Option<String> {
    sessions.iter().find_map(|&(id, pid)| {
        let ids = SessionId::new(id)
            .and_then(|id| Spool::new(sessions_dir, &id).read_session())
            .map(|record| record.terminal)
            .unwrap_or_default();
        (in_front::session_front(pid, &ids, active) == in_front::Front::Yes).then(|| id.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gnome_refusals_say_how_to_turn_the_extension_on() {
        let off = Refusal::GnomeExtensionOff.describe();
        assert!(off.contains(companion_desktop::desktop::GNOME_FOCUS_ENABLE_COMMAND));
        let missing = Refusal::GnomeExtensionMissing.describe();
        assert!(missing.contains(companion_desktop::desktop::GNOME_FOCUS_EXTENSION));
        assert!(missing.contains("is not installed"));
    }
}
