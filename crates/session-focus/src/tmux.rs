//! tmux: which pane a session's process runs in, selecting that window and pane, and the
//! client (a terminal) that shows its session. Talks to the session's own tmux server (its
//! socket, from the process's `TMUX` or the server's command line), through the `tmux`
//! program, run by [`tmux`] alone: its output read while it runs, bounded in size and time
//! (the core's [`process_group::output`]: past either limit it and anything it started are
//! killed and reaped). Reads pane and client facts only, never a pane's content.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use companion_platform::process_group;

use crate::ancestry::{self, Ancestor};

/// How long one `tmux` command may take.
const DEADLINE: Duration = Duration::from_secs(2);
/// The most one `tmux` command may print (a list of thousands of panes is far less).
const OUTPUT_LIMIT: u64 = 1024 * 1024;

/// A pane that runs a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pane {
    /// The tmux server's socket.
    pub socket: PathBuf,
    /// `%N`.
    pub pane_id: String,
    /// `$N`.
    pub session_id: String,
    /// `session:window.pane`, as a person types it.
    pub target: String,
}

/// One line of `list-panes -a` with [`PANE_FORMAT`].
#[derive(Debug, Clone, PartialEq, Eq)]
struct PaneLine {
    pid: u32,
    pane_id: String,
    session_id: String,
    target: String,
}

// Fields are separated by ':' and ' ' (tmux turns a tab into '_' outside a UTF-8 locale);
// the one free-form field, the session's name, comes last. A name never holds ':' (tmux
// forbids it), pane and session ids and indexes never do.
const PANE_FORMAT: &str =
    "#{pane_pid}:#{pane_id}:#{session_id}:#{window_index}.#{pane_index}:#{session_name}";
const CLIENT_FORMAT: &str = "#{client_pid} #{session_id} #{client_activity} #{client_tty}";

fn parse_panes(text: &str) -> Vec<PaneLine> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.splitn(5, ':');
            let pid = f.next()?.parse().ok()?;
            let pane_id = f.next()?.to_string();
            let session_id = f.next()?.to_string();
            let place = f.next()?;
            let name = f.next()?;
            Some(PaneLine {
                pid,
                pane_id,
                session_id,
                target: format!("{name}:{place}"),
            })
        })
        .collect()
}

/// One line of `list-clients` with [`CLIENT_FORMAT`].
#[derive(Debug, Clone, PartialEq, Eq)]
struct ClientLine {
    pid: u32,
    session_id: String,
    activity: u64,
    tty: String,
}

fn parse_clients(text: &str) -> Vec<ClientLine> {
    text.lines()
        .filter_map(|line| {
            let mut f = line.splitn(4, ' ');
            Some(ClientLine {
                pid: f.next()?.parse().ok()?,
                session_id: f.next()?.to_string(),
                activity: f.next()?.parse().unwrap_or(0),
                tty: f.next()?.to_string(),
            })
        })
        .collect()
}

/// The client to raise for a session: the most recently active one attached to it; else the
/// most recently active client at all, which must then be switched to the session (`true`).
fn choose_client<'a>(
    clients: &'a [ClientLine],
    session_id: &str,
) -> Option<(&'a ClientLine, bool)> {
    let latest = |it: &mut dyn Iterator<Item = &'a ClientLine>| it.max_by_key(|c| c.activity);
    if let Some(client) = latest(&mut clients.iter().filter(|c| c.session_id == session_id)) {
        return Some((client, false));
    }
    latest(&mut clients.iter()).map(|c| (c, true))
}

/// The socket a tmux server was started with: `-S path`, `-L name`, else the default one.
fn socket_from_command_line(args: &[String], uid: u32) -> PathBuf {
    let dir = std::env::var_os("TMUX_TMPDIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"))
        .join(format!("tmux-{uid}"));
    let mut name = "default".to_string();
    let mut args = args.iter().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-S" => {
                if let Some(path) = args.next() {
                    return PathBuf::from(path);
                }
            }
            "-L" => {
                if let Some(label) = args.next() {
                    name = label.clone();
                }
            }
            // Options end where the command starts.
            a if !a.starts_with('-') => break,
            a if a.starts_with("-S") && a.len() > 2 => return PathBuf::from(&a[2..]),
            a if a.starts_with("-L") && a.len() > 2 => name = a[2..].to_string(),
            _ => {}
        }
    }
    dir.join(name)
}

fn current_uid() -> u32 {
    #[cfg(unix)]
    {
        // SAFETY: getuid has no preconditions.
        unsafe { libc::getuid() }
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// Runs `tmux -S <socket> <args>` within [`DEADLINE`] and [`OUTPUT_LIMIT`]; its stdout when
/// it succeeded. The one place tmux is run.
fn tmux(socket: &std::path::Path, args: &[&str]) -> Option<String> {
    let mut command = Command::new("tmux");
    command.arg("-S").arg(socket).args(args).env_remove("TMUX");
    match process_group::output(&mut command, DEADLINE, OUTPUT_LIMIT) {
        Ok(out) if out.status.success() => String::from_utf8(out.stdout).ok(),
        Ok(_) => None,
        Err(error) => {
            tracing::debug!(%error, "tmux");
            None
        }
    }
}

/// The tmux pane among the session's ancestors, if it runs in tmux.
pub fn locate(chain: &[Ancestor]) -> Option<Pane> {
    let host = chain.first()?;
    let env = ancestry::tmux_env(host.pid);
    let server = chain.iter().find(|a| ancestry::is_tmux(&a.name));
    let socket = match (&env.socket, server) {
        (Some(socket), _) => PathBuf::from(socket),
        (None, Some(server)) => {
            let args = companion_platform::process::command_line(server.pid).unwrap_or_default();
            socket_from_command_line(&args, current_uid())
        }
        (None, None) => return None,
    };
    let panes = parse_panes(&tmux(&socket, &["list-panes", "-a", "-F", PANE_FORMAT])?);
    // The nearest ancestor that is a pane's process; the pane named by TMUX_PANE only when
    // its process is one of the ancestors (a pane id is reused after the pane closes).
    let line = chain
        .iter()
        .find_map(|a| panes.iter().find(|p| p.pid == a.pid))?;
    if let Some(pane) = &env.pane
        && *pane != line.pane_id
    {
        tracing::debug!("TMUX_PANE differs from the pane found through the ancestors");
    }
    Some(Pane {
        socket,
        pane_id: line.pane_id.clone(),
        session_id: line.session_id.clone(),
        target: line.target.clone(),
    })
}

/// Selects the pane's window and the pane, and makes a client show its session; returns the
/// client's pid (its terminal is the window to raise), `None` when no client is attached.
pub fn select(pane: &Pane) -> Option<u32> {
    let socket = pane.socket.as_path();
    tmux(socket, &["select-window", "-t", &pane.pane_id]);
    tmux(socket, &["select-pane", "-t", &pane.pane_id]);
    let clients = parse_clients(&tmux(socket, &["list-clients", "-F", CLIENT_FORMAT])?);
    let (client, switch) = choose_client(&clients, &pane.session_id)?;
    if switch {
        tmux(
            socket,
            &["switch-client", "-c", &client.tty, "-t", &pane.pane_id],
        );
    }
    Some(client.pid)
}

/// The tmux client showing the pane on screen (active in the session's current window) whose
/// terminal is (a descendant of) the process `window_pid`: its pid, `None` when none does.
pub fn shown_by(pane: &Pane, window_pid: u32) -> Option<u32> {
    let socket = pane.socket.as_path();
    let shown = tmux(
        socket,
        &[
            "display-message",
            "-p",
            "-t",
            &pane.pane_id,
            "#{pane_active}#{window_active}",
        ],
    )
    .is_some_and(|out| out.trim() == "11");
    if !shown {
        return None;
    }
    let clients = tmux(socket, &["list-clients", "-F", CLIENT_FORMAT])?;
    parse_clients(&clients)
        .iter()
        .filter(|c| c.session_id == pane.session_id)
        .find(|c| {
            ancestry::ancestors(c.pid)
                .iter()
                .any(|a| a.pid == window_pid)
        })
        .map(|c| c.pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pane_and_client_lines_parse_and_odd_lines_are_skipped() {
        let panes = parse_panes("4242:%3:$1:1.1:alpha\nnonsense\n17:%0:$0:0.0:beta gamma\n");
        assert_eq!(panes.len(), 2);
        assert_eq!(panes[1].target, "beta gamma:0.0");
        assert_eq!(
            panes[0],
            PaneLine {
                pid: 4242,
                pane_id: "%3".into(),
                session_id: "$1".into(),
                target: "alpha:1.1".into()
            }
        );
        let clients = parse_clients("900 $1 1700000000 /dev/pts/3\nx y\n");
        assert_eq!(
            clients,
            [ClientLine {
                pid: 900,
                session_id: "$1".into(),
                activity: 1_700_000_000,
                tty: "/dev/pts/3".into()
            }]
        );
    }

    #[test]
    fn the_latest_client_of_the_session_wins_else_one_is_switched() {
        let client = |pid, session: &str, activity| ClientLine {
            pid,
            session_id: session.into(),
            activity,
            tty: format!("/dev/pts/{pid}"),
        };
        let clients = [
            client(1, "$0", 50),
            client(2, "$1", 10),
            client(3, "$1", 20),
        ];
        let (chosen, switch) = choose_client(&clients, "$1").unwrap();
        assert_eq!((chosen.pid, switch), (3, false));
        let (chosen, switch) = choose_client(&clients, "$9").unwrap();
        assert_eq!((chosen.pid, switch), (1, true));
        assert!(choose_client(&[], "$1").is_none());
    }

    #[test]
    fn the_server_socket_from_its_command_line() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            socket_from_command_line(&args(&["tmux", "-S", "/run/x.sock", "new"]), 1000),
            PathBuf::from("/run/x.sock")
        );
        assert_eq!(
            socket_from_command_line(&args(&["tmux", "-S/run/y", "new"]), 1000),
            PathBuf::from("/run/y")
        );
        let default_dir = std::env::var_os("TMUX_TMPDIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        assert_eq!(
            socket_from_command_line(&args(&["tmux", "-L", "work", "new", "-S", "z"]), 7),
            default_dir.join("tmux-7/work")
        );
        assert_eq!(
            socket_from_command_line(&args(&["tmux", "new-session", "-S", "z"]), 7),
            default_dir.join("tmux-7/default")
        );
    }
}
