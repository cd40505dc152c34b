//! What a remote is, and the only commands ever run for one.
//!
//! A remote is written the way the person would type it: an `ssh` destination (`build-box`, a
//! `Host` alias of `~/.ssh/config`, `me@10.0.0.2`, `ssh://me@host:2222`), or a transport that is
//! a command: `docker:<container>`, `podman:<container>`, `wsl:<distribution>`. Each part is
//! checked against a narrow alphabet when parsed, so nothing that reaches a command line can
//! be read as an option or by a shell.
//!
//! [`Remote::command`] builds the whole command for one [`RemoteCommand`]: our side's program
//! and its fixed options, and, at the other end, a fixed `sh -c` script whose only variable
//! parts are validated tokens (a host name, a digest, a tmux pane id). The person's own `ssh`
//! does the rest (keys, agent, `~/.ssh/config`, jump hosts, ControlMaster), always with
//! `BatchMode=yes`: it never asks for a password or a host key, it fails and we say which
//! command to run once by hand.

use std::ffi::OsString;
use std::fmt;
use std::process::{Command, Stdio};

use companion_hosts::host::Host;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The longest remote as written.
pub const MAX_SPEC_CHARS: usize = 200;

/// Where a remote's `fabric-session` lives at the other end (the same stable path a local
/// install uses on Linux), and the upload's temporary name beside it.
const REMOTE_DIR: &str = "${XDG_DATA_HOME:-$HOME/.local/share}/fabric-companion/bin";

/// Why a remote as written was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SpecError {
    #[error("a remote cannot be empty")]
    Empty,
    #[error("a remote is at most {MAX_SPEC_CHARS} characters")]
    TooLong,
    #[error("a remote cannot start with '-'")]
    LeadingDash,
    #[error("'{0}' cannot be part of a remote (letters, digits and . _ - @ : / [ ] % only)")]
    BadCharacter(char),
    #[error("{0}: the name after the ':' is missing")]
    MissingName(&'static str),
}

/// How our side reaches a remote.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transport {
    /// The person's `ssh` to this destination (a host, `user@host`, an alias, `ssh://…`).
    Ssh(String),
    /// `docker exec` into this running container.
    Docker(String),
    /// `podman exec` into this running container.
    Podman(String),
    /// `wsl.exe -d` this distribution (the tray on Windows, agents in WSL).
    Wsl(String),
}

/// One remote: as written (its identity, what the settings keep) and how it is reached.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Remote {
    spec: String,
    transport: Transport,
}

impl Serialize for Remote {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.spec)
    }
}

impl<'de> Deserialize<'de> for Remote {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Remote::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spec)
    }
}

/// The command a remote runs at the other end. Nothing else is ever run there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteCommand {
    /// `fabric-session status --json --follow`: the stream the tray reads.
    Follow,
    /// `uname -sm`: the remote's system and architecture, before anything is copied.
    Probe,
    /// Receives our `fabric-session` on stdin into a temporary file beside the stable path
    /// and prints its SHA-256 (`sha256sum`), so the copy is checked before it is used.
    Upload,
    /// Moves the checked upload to the stable path, if it still has this digest.
    Commit { sha256: Sha256Hex },
    /// The host's hook plan at the other end: the same dry run and digest as a local install.
    HookPlan { host: Host, remove: bool },
    /// Applies the plan the person saw (its digest).
    HookApply {
        host: Host,
        remove: bool,
        expect: PlanDigest,
    },
    /// Removes our `fabric-session` from the stable path (after the hooks are removed).
    RemoveProgram,
    /// Selects a tmux pane (and its window) at the other end.
    SelectPane(TmuxPane),
}

/// A SHA-256 as 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sha256Hex(String);

impl Sha256Hex {
    pub fn new(text: &str) -> Option<Self> {
        (text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .then(|| Sha256Hex(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The digest an install plan printed: `absent` or `sha256:` and 64 hex digits (or the bare
/// hex), as `install-host-hooks --expect-sha256` takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanDigest(String);

impl PlanDigest {
    pub fn new(text: &str) -> Option<Self> {
        let hex = text.strip_prefix("sha256:").unwrap_or(text);
        (text == "absent" || Sha256Hex::new(hex).is_some()).then(|| PlanDigest(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A tmux pane id: `%` and digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct TmuxPane(String);

impl<'de> Deserialize<'de> for TmuxPane {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        TmuxPane::new(&text).ok_or_else(|| serde::de::Error::custom("not a tmux pane id"))
    }
}

impl TmuxPane {
    pub fn new(text: &str) -> Option<Self> {
        let digits = text.strip_prefix('%')?;
        (!digits.is_empty() && digits.len() <= 9 && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| TmuxPane(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Remote {
    /// Reads a remote as the person wrote it.
    pub fn parse(text: &str) -> Result<Remote, SpecError> {
        let spec = text.trim();
        if spec.is_empty() {
            return Err(SpecError::Empty);
        }
        if spec.chars().count() > MAX_SPEC_CHARS {
            return Err(SpecError::TooLong);
        }
        let named = |kind: &'static str, name: &str| -> Result<String, SpecError> {
            check_token(name)?;
            if name.is_empty() {
                return Err(SpecError::MissingName(kind));
            }
            if let Some(bad) = name
                .chars()
                .find(|c| matches!(c, ':' | '/' | '@' | '[' | ']' | '%'))
            {
                return Err(SpecError::BadCharacter(bad));
            }
            Ok(name.to_string())
        };
        let transport = if let Some(name) = spec.strip_prefix("docker:") {
            Transport::Docker(named("docker", name)?)
        } else if let Some(name) = spec.strip_prefix("podman:") {
            Transport::Podman(named("podman", name)?)
        } else if let Some(name) = spec.strip_prefix("wsl:") {
            Transport::Wsl(named("wsl", name)?)
        } else {
            check_token(spec)?;
            Transport::Ssh(spec.to_string())
        };
        Ok(Remote {
            spec: spec.to_string(),
            transport,
        })
    }

    /// The remote as written: its identity in the settings and on the board.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// The name a person reads in the menu and notifications: the host (without the user
    /// or `ssh://`), the container or the distribution.
    pub fn label(&self) -> String {
        match &self.transport {
            Transport::Ssh(dest) => {
                let dest = dest.strip_prefix("ssh://").unwrap_or(dest);
                let host = dest.rsplit_once('@').map_or(dest, |(_, host)| host);
                host.to_string()
            }
            Transport::Docker(name) | Transport::Podman(name) | Transport::Wsl(name) => {
                name.clone()
            }
        }
    }

    /// The command a person runs once by hand when the link needs them (a host key to
    /// accept, a password or key to set up): the same program and destination, interactive.
    pub fn by_hand(&self) -> String {
        match &self.transport {
            Transport::Ssh(dest) => match ssh_config_file() {
                Some(config) => format!("ssh -F {} {dest}", config.to_string_lossy()),
                None => format!("ssh {dest}"),
            },
            Transport::Docker(name) => format!("docker exec -it {name} sh"),
            Transport::Podman(name) => format!("podman exec -it {name} sh"),
            Transport::Wsl(name) => format!("wsl.exe -d {name}"),
        }
    }

    /// The whole command for `what`: stdin, stdout and stderr left for the caller to set
    /// (none is inherited by default: stdin is null).
    pub fn command(&self, what: &RemoteCommand) -> Command {
        let script = script(what);
        let mut command = match &self.transport {
            Transport::Ssh(dest) => {
                let mut command = Command::new(ssh_program());
                if let Some(config) = ssh_config_file() {
                    command.arg("-F").arg(config);
                }
                command.args([
                    "-T",
                    "-o",
                    "BatchMode=yes",
                    "-o",
                    "ConnectTimeout=10",
                    "-o",
                    "ServerAliveInterval=15",
                    "-o",
                    "ServerAliveCountMax=2",
                    "--",
                    dest,
                ]);
                // The remote's login shell reads this one string; our script is quoted for it
                // and holds no single quote.
                command.arg(format!("sh -c '{script}'"));
                command
            }
            Transport::Docker(name) | Transport::Podman(name) => {
                let program = if matches!(self.transport, Transport::Docker(_)) {
                    "docker"
                } else {
                    "podman"
                };
                let mut command = Command::new(program);
                command.args(["exec", "-i", name, "sh", "-c", &script]);
                command
            }
            Transport::Wsl(name) => {
                let mut command = Command::new("wsl.exe");
                command.args(["-d", name, "--", "sh", "-c", &script]);
                command
            }
        };
        command.stdin(Stdio::null());
        command
    }
}

/// The `ssh` program: `$FABRIC_SSH` (a test bench's or a person's choice), else `ssh` on `PATH`.
fn ssh_program() -> OsString {
    std::env::var_os(companion_platform::env_vars::FABRIC_SSH)
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "ssh".into())
}

/// An `ssh` config file to use instead of `~/.ssh/config` (`$FABRIC_SSH_CONFIG`).
fn ssh_config_file() -> Option<OsString> {
    std::env::var_os(companion_platform::env_vars::FABRIC_SSH_CONFIG).filter(|p| !p.is_empty())
}

/// The letters a remote may hold: nothing a shell or a command line reads specially.
fn check_token(text: &str) -> Result<(), SpecError> {
    if text.starts_with('-') {
        return Err(SpecError::LeadingDash);
    }
    match text.chars().find(|c| {
        !(c.is_ascii_alphanumeric()
            || matches!(c, '.' | '_' | '-' | '@' | ':' | '/' | '[' | ']' | '%'))
    }) {
        Some(bad) => Err(SpecError::BadCharacter(bad)),
        None => Ok(()),
    }
}

/// The `sh -c` script run at the other end: fixed text and validated tokens only, never a
/// single quote (the ssh transport quotes the whole script in single quotes).
fn script(what: &RemoteCommand) -> String {
    let program =
        format!("d=\"{REMOTE_DIR}\"; p=\"$d/fabric-session\"; [ -x \"$p\" ] || p=fabric-session; ");
    let text = match what {
        RemoteCommand::Follow => format!("{program}exec \"$p\" status --json --follow"),
        RemoteCommand::Probe => "exec uname -sm".to_string(),
        RemoteCommand::Upload => format!(
            "d=\"{REMOTE_DIR}\"; umask 077; mkdir -p \"$d\" && cat > \"$d/.fabric-session.upload\" && sha256sum \"$d/.fabric-session.upload\""
        ),
        RemoteCommand::Commit { sha256 } => format!(
            "d=\"{REMOTE_DIR}\"; u=\"$d/.fabric-session.upload\"; set -e; echo \"{}  $u\" | sha256sum -c --status; chmod 755 \"$u\"; mv -f \"$u\" \"$d/fabric-session\"",
            sha256.as_str()
        ),
        RemoteCommand::HookPlan { host, remove } => format!(
            "{program}exec \"$p\" install-host-hooks --host {}{} --json",
            host.cli_name(),
            if *remove { " --remove" } else { "" }
        ),
        RemoteCommand::HookApply {
            host,
            remove,
            expect,
        } => format!(
            "{program}exec \"$p\" install-host-hooks --host {}{} --json --apply --expect-sha256 {}",
            host.cli_name(),
            if *remove { " --remove" } else { "" },
            expect.as_str()
        ),
        RemoteCommand::RemoveProgram => {
            format!("d=\"{REMOTE_DIR}\"; rm -f \"$d/fabric-session\" \"$d/.fabric-session.upload\"")
        }
        RemoteCommand::SelectPane(pane) => format!(
            "exec tmux select-window -t {0} \\; select-pane -t {0}",
            pane.as_str()
        ),
    };
    debug_assert!(!text.contains('\''));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(command: &Command) -> Vec<String> {
        command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn an_ssh_destination_is_read_with_its_label() {
        for (text, label) in [
            ("build-box", "build-box"),
            ("me@10.0.0.2", "10.0.0.2"),
            ("ssh://me@host:2222", "host:2222"),
            (" dev.example.com ", "dev.example.com"),
        ] {
            let remote = Remote::parse(text).unwrap();
            assert!(matches!(remote.transport(), Transport::Ssh(_)), "{text}");
            assert_eq!(remote.label(), label);
        }
        let docker = Remote::parse("docker:devc").unwrap();
        assert_eq!(docker.transport(), &Transport::Docker("devc".into()));
        assert_eq!(docker.label(), "devc");
        assert_eq!(
            Remote::parse("wsl:Ubuntu-24.04").unwrap().transport(),
            &Transport::Wsl("Ubuntu-24.04".into())
        );
    }

    #[test]
    fn anything_a_shell_or_a_command_line_reads_is_refused() {
        for (text, err) in [
            ("", SpecError::Empty),
            ("-oProxyCommand=x", SpecError::LeadingDash),
            ("host;reboot", SpecError::BadCharacter(';')),
            ("host 'x'", SpecError::BadCharacter(' ')),
            ("a$(x)", SpecError::BadCharacter('$')),
            ("docker:", SpecError::MissingName("docker")),
            ("docker:-it", SpecError::LeadingDash),
            ("podman:a/b", SpecError::BadCharacter('/')),
            ("wsl:a\u{202e}b", SpecError::BadCharacter('\u{202e}')),
        ] {
            assert_eq!(Remote::parse(text), Err(err), "{text:?}");
        }
        assert_eq!(Remote::parse(&"a".repeat(201)), Err(SpecError::TooLong));
    }

    #[test]
    fn ssh_never_asks_and_the_destination_ends_the_options() {
        let remote = Remote::parse("me@build-box").unwrap();
        let command = remote.command(&RemoteCommand::Follow);
        let args = args(&command);
        let dash = args.iter().position(|a| a == "--").unwrap();
        assert_eq!(args[dash + 1], "me@build-box");
        assert!(args.windows(2).any(|w| w == ["-o", "BatchMode=yes"]));
        let script = &args[dash + 2];
        assert!(script.starts_with("sh -c '") && script.ends_with("status --json --follow'"));
        assert_eq!(script.matches('\'').count(), 2);
    }

    #[test]
    fn a_pane_is_selected_only_by_its_id() {
        assert!(TmuxPane::new("%12").is_some());
        for bad in ["12", "%", "%1;x", "%1 ", "%-1", "%1234567890"] {
            assert!(TmuxPane::new(bad).is_none(), "{bad}");
        }
        let remote = Remote::parse("docker:devc").unwrap();
        let command = remote.command(&RemoteCommand::SelectPane(TmuxPane::new("%3").unwrap()));
        assert_eq!(command.get_program(), "docker");
        assert_eq!(
            args(&command),
            [
                "exec",
                "-i",
                "devc",
                "sh",
                "-c",
                "exec tmux select-window -t %3 \\; select-pane -t %3"
            ]
        );
    }

    #[test]
    fn digests_are_checked_before_they_reach_a_command() {
        assert!(Sha256Hex::new(&"a".repeat(64)).is_some());
        assert!(Sha256Hex::new(&"A".repeat(64)).is_none());
        assert!(PlanDigest::new("absent").is_some());
        assert!(PlanDigest::new(&format!("sha256:{}", "0".repeat(64))).is_some());
        assert!(PlanDigest::new("sha256:x; rm -rf ~").is_none());
    }
}
