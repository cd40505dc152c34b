//! X11, the EWMH way, through `x11rb` (pure Rust: no libX11, no new dynamic library): find
//! the top-level window of a process among the window manager's clients
//! (`_NET_CLIENT_LIST_STACKING`; a window's process from `_NET_WM_PID` when its
//! `WM_CLIENT_MACHINE` is this machine's name, else the X-Resource extension, which knows only
//! local clients), switch to its desktop, ask for it to be active (`_NET_ACTIVE_WINDOW`, source
//! indication 2 with a current server timestamp), and read `_NET_ACTIVE_WINDOW` back.
//!
//! Also answers "which process owns the active window" for the tray's rule that a session the
//! person is looking at is not notified.
//!
//! Every exchange with the server is bounded: the connection is made within
//! [`CONNECT_WITHIN`] (TCP and Unix sockets alike, never a blocking `connect`), and the socket
//! is a [`BoundedStream`] whose every wait ends at the connection's deadline, so a display that
//! never answers (a listener that accepts and stays silent, a stale `DISPLAY` another user's
//! program now holds) ends in [`Refusal::DisplaySilent`] and no thread is left behind.

use std::io::{self, IoSlice};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::res::{self, ClientIdMask, ClientIdSpec};
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ClientMessageEvent, ConnectionExt as _, CreateWindowAux, EventMask, PropMode,
    Window, WindowClass,
};
use x11rb::reexports::x11rb_protocol::parse_display::{self, ConnectAddress};
use x11rb::reexports::x11rb_protocol::xauth;
use x11rb::rust_connection::{DefaultStream, PollMode, RustConnection, Stream};
use x11rb::utils::RawFdContainer;
use x11rb::wrapper::ConnectionExt as _;

use crate::Refusal;
use crate::ancestry::Ancestor;

/// How long the window manager has to make the window active.
const VERIFY_FOR: Duration = Duration::from_millis(1500);

/// How long making the connection (one address) may take.
const CONNECT_WITHIN: Duration = Duration::from_secs(2);
/// How long a whole jump may talk to the server (connect, read the clients, activate and
/// read back: [`VERIFY_FOR`] and the timestamp probe included).
pub const JUMP_WITHIN: Duration = Duration::from_secs(6);
/// How long asking which window is active may take (the tray's looked-at check).
pub const QUERY_WITHIN: Duration = Duration::from_secs(2);

/// The X server's socket, every wait on it ending at `deadline`: past it, a wait fails with
/// `TimedOut` at once, and so does every request waiting for a reply.
pub struct BoundedStream {
    inner: DefaultStream,
    deadline: Instant,
}

impl BoundedStream {
    fn timed_out() -> io::Error {
        io::Error::new(
            io::ErrorKind::TimedOut,
            "the X server did not answer in time",
        )
    }
}

impl Stream for BoundedStream {
    fn poll(&self, mode: PollMode) -> io::Result<()> {
        let mut events = 0;
        if mode.readable() {
            events |= libc::POLLIN;
        }
        if mode.writable() {
            events |= libc::POLLOUT;
        }
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Self::timed_out());
            }
            let mut fd = libc::pollfd {
                fd: self.inner.as_raw_fd(),
                events,
                revents: 0,
            };
            let millis = i32::try_from(left.as_millis()).unwrap_or(i32::MAX).max(1);
            // SAFETY: one valid pollfd for the length given; the fd is open while `self` is.
            let rc = unsafe { libc::poll(&mut fd, 1, millis) };
            if rc > 0 {
                return Ok(());
            }
            if rc < 0 {
                let error = io::Error::last_os_error();
                if error.kind() != io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
        }
    }

    fn read(&self, buf: &mut [u8], fd_storage: &mut Vec<RawFdContainer>) -> io::Result<usize> {
        self.inner.read(buf, fd_storage)
    }

    fn write(&self, buf: &[u8], fds: &mut Vec<RawFdContainer>) -> io::Result<usize> {
        self.inner.write(buf, fds)
    }

    fn write_vectored(
        &self,
        bufs: &[IoSlice<'_>],
        fds: &mut Vec<RawFdContainer>,
    ) -> io::Result<usize> {
        self.inner.write_vectored(bufs, fds)
    }
}

/// Connects a Unix socket without blocking past `deadline` (a listener that never accepts
/// fills its backlog, and a blocking `connect` then waits for good).
fn connect_unix(path: &str, deadline: Instant) -> io::Result<UnixStream> {
    let bytes = path.as_bytes();
    // SAFETY: a zeroed sockaddr_un is a valid value (family set below).
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if bytes.len() >= addr.sun_path.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "socket path too long",
        ));
    }
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (to, from) in addr.sun_path.iter_mut().zip(bytes) {
        *to = *from as libc::c_char;
    }
    // SAFETY: plain socket(2); the result is checked and owned at once.
    let raw = unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a new descriptor no one else owns.
    let socket = unsafe { OwnedFd::from_raw_fd(raw) };
    let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
    loop {
        // SAFETY: `addr` is a valid sockaddr_un of `len` bytes.
        let rc = unsafe {
            libc::connect(
                socket.as_raw_fd(),
                (&raw const addr).cast::<libc::sockaddr>(),
                len,
            )
        };
        if rc == 0 {
            return Ok(UnixStream::from(socket));
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EINTR) => {}
            // The listener's backlog is full: it is not taking connections now.
            Some(libc::EAGAIN) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            _ => return Err(error),
        }
    }
}

/// Connects a TCP address within `deadline` (the name looked up on a thread of its own, given
/// up at the deadline).
fn connect_tcp(host: &str, port: u16, deadline: Instant) -> io::Result<TcpStream> {
    let (sender, receiver) = std::sync::mpsc::channel();
    let name = format!("{host}:{port}");
    std::thread::Builder::new()
        .name("x11-resolve".into())
        .spawn(move || {
            let _ = sender.send(name.to_socket_addrs().map(Iterator::collect::<Vec<_>>));
        })?;
    let left = deadline.saturating_duration_since(Instant::now());
    let addrs = receiver
        .recv_timeout(left)
        .map_err(|_| BoundedStream::timed_out())??;
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for addr in addrs {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(BoundedStream::timed_out());
        }
        match TcpStream::connect_timeout(&addr, left) {
            Ok(stream) => return Ok(stream),
            Err(error) => last = error,
        }
    }
    Err(last)
}

/// Why connecting did not give a connection.
#[derive(Debug)]
enum ConnectFailure {
    /// Nothing to connect to, or the server refused.
    Unreachable,
    /// The server (or the connect) did not answer in time.
    Silent,
}

impl From<ConnectFailure> for Refusal {
    fn from(failure: ConnectFailure) -> Refusal {
        match failure {
            ConnectFailure::Unreachable => Refusal::NoDisplay,
            ConnectFailure::Silent => Refusal::DisplaySilent,
        }
    }
}

fn is_timeout(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::TimedOut
}

/// Connects to `display` (`None`: `$DISPLAY`) as `x11rb::connect` does (the same addresses in
/// the same order, the same `Xauthority` entry), every step bounded: the connection's waits
/// end at `deadline`.
fn connect_bounded(
    display: Option<&str>,
    deadline: Instant,
) -> Result<(RustConnection<BoundedStream>, usize), ConnectFailure> {
    let parsed = parse_display::parse_display(display).map_err(|error| {
        tracing::debug!(%error, "no X display to connect to");
        ConnectFailure::Unreachable
    })?;
    let screen = usize::from(parsed.screen);
    let mut failure = ConnectFailure::Unreachable;
    for address in parsed.connect_instruction() {
        let connect_by = deadline.min(Instant::now() + CONNECT_WITHIN);
        let stream = match &address {
            ConnectAddress::Hostname(host, port) => {
                connect_tcp(host, *port, connect_by).and_then(DefaultStream::from_tcp_stream)
            }
            ConnectAddress::Socket(path) => {
                connect_unix(path, connect_by).and_then(DefaultStream::from_unix_stream)
            }
            _ => continue,
        };
        let (stream, (family, peer)) = match stream {
            Ok(connected) => connected,
            Err(error) => {
                tracing::debug!(%error, "cannot connect to the X server");
                if is_timeout(&error) {
                    failure = ConnectFailure::Silent;
                }
                continue;
            }
        };
        let (auth_name, auth_data) = xauth::get_auth(family, &peer, parsed.display)
            .ok()
            .flatten()
            .unwrap_or_default();
        let stream = BoundedStream {
            inner: stream,
            deadline,
        };
        return match RustConnection::connect_to_stream_with_auth_info(
            stream, screen, auth_name, auth_data,
        ) {
            Ok(conn) => Ok((conn, screen)),
            Err(x11rb::errors::ConnectError::IoError(error)) if is_timeout(&error) => {
                tracing::debug!("the X server did not answer the connection in time");
                Err(ConnectFailure::Silent)
            }
            Err(error) => {
                tracing::debug!(%error, "the X server refused the connection");
                Err(ConnectFailure::Unreachable)
            }
        };
    }
    Err(failure)
}

struct Atoms {
    net_supported: Atom,
    net_supporting_wm_check: Atom,
    net_client_list: Atom,
    net_client_list_stacking: Atom,
    net_active_window: Atom,
    net_wm_pid: Atom,
    net_wm_desktop: Atom,
    net_current_desktop: Atom,
    timestamp_probe: Atom,
}

/// A connection to the X server and its root window.
pub struct Desktop {
    conn: RustConnection<BoundedStream>,
    root: Window,
    atoms: Atoms,
    /// This machine's name, as clients write it in `WM_CLIENT_MACHINE`.
    host_name: Option<Vec<u8>>,
    /// When every wait on the connection ends.
    deadline: Instant,
}

impl Desktop {
    /// Connects to `$DISPLAY`; everything said on this connection ends within `within`.
    pub fn connect(within: Duration) -> Result<Desktop, Refusal> {
        Self::connect_to(None, within)
    }

    /// Connects to `display` (`None`: `$DISPLAY`); everything said on this connection ends
    /// within `within` (past it every request fails at once).
    pub fn connect_to(display: Option<&str>, within: Duration) -> Result<Desktop, Refusal> {
        let deadline = Instant::now() + within;
        let (conn, screen) = connect_bounded(display, deadline).map_err(Refusal::from)?;
        let root = conn
            .setup()
            .roots
            .get(screen)
            .ok_or(Refusal::NoDisplay)?
            .root;
        let lost = |error: &dyn std::fmt::Display| {
            tracing::debug!(%error, "the X server did not answer");
            if Instant::now() >= deadline {
                Refusal::DisplaySilent
            } else {
                Refusal::NoDisplay
            }
        };
        let intern = |name: &[u8]| -> Result<Atom, Refusal> {
            Ok(conn
                .intern_atom(false, name)
                .map_err(|e| lost(&e))?
                .reply()
                .map_err(|e| lost(&e))?
                .atom)
        };
        let atoms = Atoms {
            net_supported: intern(b"_NET_SUPPORTED")?,
            net_supporting_wm_check: intern(b"_NET_SUPPORTING_WM_CHECK")?,
            net_client_list: intern(b"_NET_CLIENT_LIST")?,
            net_client_list_stacking: intern(b"_NET_CLIENT_LIST_STACKING")?,
            net_active_window: intern(b"_NET_ACTIVE_WINDOW")?,
            net_wm_pid: intern(b"_NET_WM_PID")?,
            net_wm_desktop: intern(b"_NET_WM_DESKTOP")?,
            net_current_desktop: intern(b"_NET_CURRENT_DESKTOP")?,
            timestamp_probe: intern(b"_FABRIC_COMPANION_TIMESTAMP")?,
        };
        Ok(Desktop {
            conn,
            root,
            atoms,
            host_name: host_name(),
            deadline,
        })
    }

    /// A property's 32-bit values (empty when absent or unreadable).
    fn values32(&self, window: Window, property: Atom, kind: AtomEnum) -> Vec<u32> {
        self.conn
            .get_property(false, window, property, kind, 0, 1 << 16)
            .ok()
            .and_then(|cookie| cookie.reply().ok())
            .and_then(|reply| reply.value32().map(Iterator::collect))
            .unwrap_or_default()
    }

    /// Whether an EWMH window manager runs and supports `_NET_ACTIVE_WINDOW`.
    fn ewmh_active_window_supported(&self) -> bool {
        let check = self.values32(
            self.root,
            self.atoms.net_supporting_wm_check,
            AtomEnum::WINDOW,
        );
        let Some(&wm) = check.first() else {
            return false;
        };
        let own = self.values32(wm, self.atoms.net_supporting_wm_check, AtomEnum::WINDOW);
        own.first() == Some(&wm)
            && self
                .values32(self.root, self.atoms.net_supported, AtomEnum::ATOM)
                .contains(&self.atoms.net_active_window)
    }

    /// The window manager's client windows, bottom to top where it says.
    fn clients(&self) -> Vec<Window> {
        let stacking = self.values32(
            self.root,
            self.atoms.net_client_list_stacking,
            AtomEnum::WINDOW,
        );
        if !stacking.is_empty() {
            return stacking;
        }
        self.values32(self.root, self.atoms.net_client_list, AtomEnum::WINDOW)
    }

    /// Whether a window's client says it runs on this machine (`WM_CLIENT_MACHINE` is this
    /// host's name). A remote client's `_NET_WM_PID` is a process of another machine.
    fn on_this_machine(&self, window: Window) -> bool {
        let Some(host) = &self.host_name else {
            return false;
        };
        self.conn
            .get_property(
                false,
                window,
                AtomEnum::WM_CLIENT_MACHINE,
                AtomEnum::ANY,
                0,
                256,
            )
            .ok()
            .and_then(|cookie| cookie.reply().ok())
            .filter(|reply| reply.format == 8)
            .is_some_and(|reply| same_host(&reply.value, host))
    }

    /// The process owning a window: `_NET_WM_PID` when the window's client runs on this
    /// machine ([`Self::on_this_machine`]), else the X-Resource extension's answer for the
    /// client that created it (local clients only).
    fn window_pid(&self, window: Window) -> Option<u32> {
        if let Some(&pid) = self
            .values32(window, self.atoms.net_wm_pid, AtomEnum::CARDINAL)
            .first()
            && self.on_this_machine(window)
        {
            return Some(pid);
        }
        let spec = ClientIdSpec {
            client: window,
            mask: ClientIdMask::LOCAL_CLIENT_PID,
        };
        let reply = res::query_client_ids(&self.conn, &[spec])
            .ok()?
            .reply()
            .ok()?;
        reply
            .ids
            .iter()
            .find(|id| id.spec.mask.contains(ClientIdMask::LOCAL_CLIENT_PID))
            .and_then(|id| id.value.first().copied())
    }

    /// The window of the first process in `chain` that owns one: `own` when it is one of
    /// that process's, else its topmost.
    fn window_of(&self, chain: &[Ancestor], own: Option<u64>) -> Option<(Window, usize)> {
        let owners: Vec<(Window, Option<u32>)> = self
            .clients()
            .into_iter()
            .map(|w| (w, self.window_pid(w)))
            .collect();
        chain.iter().enumerate().find_map(|(index, ancestor)| {
            let theirs = |(_, pid): &&(Window, Option<u32>)| *pid == Some(ancestor.pid);
            // The session's own window (`WINDOWID`) when this process owns it, else its
            // topmost.
            owners
                .iter()
                .filter(theirs)
                .find(|(w, _)| own == Some(u64::from(*w)))
                .or_else(|| owners.iter().rev().find(theirs))
                .map(|(w, _)| (*w, index))
        })
    }

    /// The active window, as the window manager says.
    pub fn active_window(&self) -> Option<Window> {
        self.values32(self.root, self.atoms.net_active_window, AtomEnum::WINDOW)
            .first()
            .copied()
            .filter(|&w| w != 0)
    }

    /// The active window and the pid owning it.
    pub fn active(&self) -> Option<crate::in_front::ActiveWindow> {
        let window = self.active_window()?;
        Some(crate::in_front::ActiveWindow {
            pid: self.window_pid(window)?,
            x11: Some(u64::from(window)),
        })
    }

    /// A current server timestamp: the time of a PropertyNotify on a window of our own.
    fn server_time(&self) -> u32 {
        let probe = || -> Option<u32> {
            let window = self.conn.generate_id().ok()?;
            self.conn
                .create_window(
                    0,
                    window,
                    self.root,
                    -1,
                    -1,
                    1,
                    1,
                    0,
                    WindowClass::INPUT_ONLY,
                    0,
                    &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
                )
                .ok()?;
            self.conn
                .change_property8(
                    PropMode::REPLACE,
                    window,
                    self.atoms.timestamp_probe,
                    AtomEnum::STRING,
                    b"",
                )
                .ok()?;
            self.conn.flush().ok()?;
            let deadline = Instant::now() + Duration::from_millis(500);
            let mut time = None;
            while Instant::now() < deadline {
                match self.conn.poll_for_event() {
                    Ok(Some(Event::PropertyNotify(e))) if e.window == window => {
                        time = Some(e.time);
                        break;
                    }
                    Ok(Some(_)) => {}
                    Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                    Err(_) => break,
                }
            }
            let _ = self.conn.destroy_window(window);
            let _ = self.conn.flush();
            time
        };
        // 0 is CurrentTime, which window managers accept less readily; only a fallback.
        probe().unwrap_or(0)
    }

    fn send_root_message(&self, window: Window, kind: Atom, data: [u32; 5]) -> bool {
        let event = ClientMessageEvent::new(32, window, kind, data);
        self.conn
            .send_event(
                false,
                self.root,
                EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
                event,
            )
            .is_ok()
            && self.conn.flush().is_ok()
    }

    /// Activates `window`: its desktop first when it is on another, then `_NET_ACTIVE_WINDOW`
    /// as a pager (source 2) with a current timestamp; true when the window manager made it
    /// the active window.
    fn activate(&self, window: Window) -> bool {
        let time = self.server_time();
        let desktop = self
            .values32(window, self.atoms.net_wm_desktop, AtomEnum::CARDINAL)
            .first()
            .copied();
        let current = self
            .values32(
                self.root,
                self.atoms.net_current_desktop,
                AtomEnum::CARDINAL,
            )
            .first()
            .copied();
        if let (Some(desktop), Some(current)) = (desktop, current)
            && desktop != current
            && desktop != u32::MAX
        {
            self.send_root_message(
                self.root,
                self.atoms.net_current_desktop,
                [desktop, time, 0, 0, 0],
            );
        }
        let previous = self.active_window().unwrap_or(0);
        if !self.send_root_message(
            window,
            self.atoms.net_active_window,
            [2, time, previous, 0, 0],
        ) {
            return false;
        }
        let deadline = Instant::now() + VERIFY_FOR;
        loop {
            if self.active_window() == Some(window) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Raises the window of the first process in `chain` owning one (`own`, the session's
    /// `WINDOWID`, when that process owns it: one of several windows of one process, as
    /// Alacritty's `msg create-window` makes); the program, its pid and the window.
    pub fn raise_first(
        &self,
        chain: &[Ancestor],
        own: Option<u64>,
    ) -> Result<(String, u32, u64), Refusal> {
        if !self.ewmh_active_window_supported() {
            return Err(self.unless_silent(Refusal::NoWindowManager));
        }
        let (window, index) = self
            .window_of(chain, own)
            .ok_or_else(|| self.unless_silent(Refusal::NoWindow))?;
        let owner = &chain[index];
        if self.activate(window) {
            Ok((owner.name.clone(), owner.pid, u64::from(window)))
        } else {
            Err(self.unless_silent(Refusal::Refused))
        }
    }

    /// `refusal`, unless the server stopped answering (the connection's deadline passed: what
    /// was read may be cut short, so nothing is known).
    fn unless_silent(&self, refusal: Refusal) -> Refusal {
        if Instant::now() >= self.deadline {
            Refusal::DisplaySilent
        } else {
            refusal
        }
    }
}

/// Whether an XEmbed tray manager owns `_NET_SYSTEM_TRAY_S<screen>` on `display` (`None`:
/// `$DISPLAY`), every exchange within `within`; `None` when the display could not be asked
/// (none, refused, or silent past the bound).
pub fn xembed_tray_present(display: Option<&str>, within: Duration) -> Option<bool> {
    let deadline = Instant::now() + within;
    let (conn, screen) = connect_bounded(display, deadline).ok()?;
    let name = format!("_NET_SYSTEM_TRAY_S{screen}");
    let atom = conn
        .intern_atom(false, name.as_bytes())
        .ok()?
        .reply()
        .ok()?
        .atom;
    let owner = conn.get_selection_owner(atom).ok()?.reply().ok()?.owner;
    Some(owner != 0)
}

/// This machine's name (`gethostname`, the kernel's node name), as X clients write it.
fn host_name() -> Option<Vec<u8>> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for its whole length; gethostname NUL-terminates when
    // the name fits, and the name is cut at the first NUL below either way.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    (len > 0).then(|| buf[..len].to_vec())
}

/// Whether a `WM_CLIENT_MACHINE` value names `host`: the same name, ignoring case and the
/// trailing NULs some clients write.
fn same_host(value: &[u8], host: &[u8]) -> bool {
    let end = value.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    value[..end].eq_ignore_ascii_case(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_machine_names_this_host_only_when_it_is_the_same_name() {
        assert!(same_host(b"build-7", b"build-7"));
        assert!(same_host(b"Build-7\0", b"build-7"));
        assert!(!same_host(b"build-70", b"build-7"));
        assert!(!same_host(b"elsewhere.example", b"build-7"));
        assert!(!same_host(b"", b"build-7"));
        assert!(host_name().is_some_and(|name| !name.is_empty()));
    }
}
