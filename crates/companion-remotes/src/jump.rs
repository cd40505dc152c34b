//! The jump to a remote's session: its tmux pane selected at the other end (the fixed
//! `SelectPane` command, over the same transport), then the local terminal whose `ssh` (or
//! `docker exec`, `podman exec`) reaches that machine raised through `session-focus`, as a
//! local jump raises a session's window. Where no local terminal or several reach it, the
//! jump says so and where the session is.
//!
//! Local clients are found by their command lines (Linux: `/proc`), read for the program and
//! its destination only; our own links (`BatchMode=yes` and one of our fixed scripts) are
//! never taken for a person's terminal.

use std::time::Duration;

use companion_platform::process_group;
use session_focus::{FocusError, Place, Raised, Refusal};

use crate::remote::{Remote, RemoteCommand, TmuxPane, Transport};
use crate::stream::RemoteSession;

/// How long selecting the pane at the other end may take.
const SELECT_WITHIN: Duration = Duration::from_secs(8);

/// What a jump did.
#[derive(Debug)]
pub struct Jumped {
    /// The local terminal raised.
    pub raised: Raised,
    /// The remote tmux pane selected, when the session runs in tmux there.
    pub pane: Option<TmuxPane>,
}

/// Jumps to `session` on `remote`: selects its tmux pane there, then raises the one local
/// terminal reaching the remote.
pub fn jump(remote: &Remote, session: &RemoteSession) -> Result<Jumped, FocusError> {
    let mut place = Place {
        project: format!("{} on {}", session.project, remote.label()),
        folder: None,
        host: session.host,
        terminal: None,
        tmux: session
            .tmux_pane
            .as_ref()
            .map(|p| format!("{} there", p.as_str())),
        tab: None,
    };
    let pane = session.tmux_pane.clone().filter(|pane| {
        let mut command = remote.command(&RemoteCommand::SelectPane(pane.clone()));
        let selected = process_group::output(&mut command, SELECT_WITHIN, 4096)
            .is_ok_and(|out| out.status.success());
        if !selected {
            tracing::info!(
                remote = remote.spec(),
                "the remote tmux pane was not selected"
            );
        }
        selected
    });
    let clients = local_clients(remote);
    match clients.as_slice() {
        [] => Err(FocusError::NotAllowed {
            refusal: Refusal::NoLocalClient,
            place: Box::new(place),
        }),
        [(pid, _)] => {
            place.tmux = None;
            session_focus::focus_process(*pid, place).map(|raised| Jumped { raised, pane })
        }
        several => Err(FocusError::NotAllowed {
            refusal: Refusal::SeveralLocalClients(
                several
                    .iter()
                    .map(|(pid, program)| format!("{program} (pid {pid})"))
                    .collect(),
            ),
            place: Box::new(place),
        }),
    }
}

/// Jumps to session `id` of remote `spec` (as written) as the board saved in `board_file`
/// holds it (the tray saves it; the dashboard reads the same file).
pub fn jump_to(board_file: &std::path::Path, spec: &str, id: &str) -> Result<Jumped, FocusError> {
    let entries = crate::board::load(board_file);
    let session = entries
        .iter()
        .filter(|e| e.remote == spec)
        .flat_map(|e| e.sessions.iter())
        .find(|s| s.id == id)
        .ok_or(FocusError::UnknownSession)?;
    let remote = Remote::parse(spec).map_err(|_| FocusError::UnknownSession)?;
    jump(&remote, session)
}

/// The local processes (pid, program) whose command reaches `remote`, newest first.
pub fn local_clients(remote: &Remote) -> Vec<(u32, String)> {
    let mut found: Vec<(u32, String)> = process_ids()
        .into_iter()
        .filter(|&pid| pid != std::process::id())
        .filter_map(|pid| {
            let argv = companion_platform::process::command_line(pid)?;
            reaches(remote, &argv).then(|| (pid, program_name(&argv)))
        })
        .collect();
    found.sort_by_key(|(pid, _)| std::cmp::Reverse(*pid));
    found
}

fn program_name(argv: &[String]) -> String {
    argv.first()
        .map(|p| p.rsplit(['/', '\\']).next().unwrap_or(p).to_string())
        .unwrap_or_default()
}

/// Whether the command line `argv` is a person's command reaching `remote`.
pub fn reaches(remote: &Remote, argv: &[String]) -> bool {
    let ours = argv.iter().any(|a| a == "BatchMode=yes")
        && argv.last().is_some_and(|a| a.starts_with("sh -c '"));
    if ours {
        return false;
    }
    let program = program_name(argv);
    match remote.transport() {
        Transport::Ssh(dest) => {
            program == "ssh" && ssh_destination(&argv[1..]).is_some_and(|d| same_ssh(&d, dest))
        }
        Transport::Docker(name) => program == "docker" && exec_container(&argv[1..]) == Some(name),
        Transport::Podman(name) => program == "podman" && exec_container(&argv[1..]) == Some(name),
        Transport::Wsl(_) => false,
    }
}

/// `ssh`'s destination among its arguments (OpenSSH's options, those taking a value too).
fn ssh_destination(args: &[String]) -> Option<String> {
    const WITH_VALUE: &str = "BDEFIJLOPQRSWbceilmopw";
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--" {
            return args.next().cloned();
        }
        match arg.strip_prefix('-') {
            Some(flags) if !flags.is_empty() => {
                for (at, flag) in flags.char_indices() {
                    if WITH_VALUE.contains(flag) {
                        if at + flag.len_utf8() == flags.len() {
                            args.next();
                        }
                        break;
                    }
                }
            }
            _ => return Some(arg.clone()),
        }
    }
    None
}

/// Whether two ssh destinations name the same machine: the same text, or the same host with
/// the user or `ssh://` left out on one side.
fn same_ssh(a: &str, b: &str) -> bool {
    let host = |d: &str| {
        let d = d.strip_prefix("ssh://").unwrap_or(d);
        let d = d.rsplit_once('@').map_or(d, |(_, h)| h);
        d.to_string()
    };
    a == b || host(a) == host(b)
}

/// The container of `docker exec [options] <container> …`.
fn exec_container(args: &[String]) -> Option<&String> {
    const WITH_VALUE: [&str; 10] = [
        "-e",
        "--env",
        "-u",
        "--user",
        "-w",
        "--workdir",
        "--env-file",
        "--detach-keys",
        "--cidfile",
        "--privileged=false",
    ];
    let mut args = args.iter().skip_while(|a| *a != "exec").skip(1);
    while let Some(arg) = args.next() {
        if WITH_VALUE.contains(&arg.as_str()) {
            args.next();
        } else if !arg.starts_with('-') {
            return Some(arg);
        }
    }
    None
}

#[cfg(target_os = "linux")]
fn process_ids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Other systems: not written (the jump says no local terminal was found).
#[cfg(not(target_os = "linux"))]
fn process_ids() -> Vec<u32> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn a_person_s_ssh_to_the_machine_is_recognised_ours_never() {
        let remote = Remote::parse("me@build-box").unwrap();
        for line in [
            "ssh build-box",
            "/usr/bin/ssh -t me@build-box tmux attach",
            "ssh -p 2222 -i key build-box",
            "ssh -F cfg -- build-box",
            "ssh -tt -oServerAliveInterval=5 build-box",
        ] {
            assert!(reaches(&remote, &argv(line)), "{line}");
        }
        for line in [
            "ssh other-box",
            "ssh -l build-box other",
            "sshd: me@pts/0",
            "ssh",
            "vim build-box",
        ] {
            assert!(!reaches(&remote, &argv(line)), "{line}");
        }
        let mut ours = argv("ssh -T -o BatchMode=yes -- me@build-box");
        ours.push("sh -c 'exec uname -sm'".into());
        assert!(!reaches(&remote, &ours));
    }

    #[test]
    fn a_container_s_exec_is_recognised() {
        let remote = Remote::parse("docker:devc").unwrap();
        assert!(reaches(&remote, &argv("docker exec -it -u me devc bash")));
        assert!(!reaches(&remote, &argv("docker exec -it other bash")));
        assert!(!reaches(&remote, &argv("podman exec -it devc bash")));
    }
}
