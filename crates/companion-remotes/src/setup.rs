//! Setting a remote up and taking it down, one fixed command at a time: its system and
//! architecture checked, our program copied to its stable path (the checksum compared at both
//! ends), a host's hook plan read there (the same dry run and digest as a local install) and
//! applied only with that digest, our program removed again, and the remote followed (or no
//! longer) in the settings. `fabric-session remote` and the dashboard's "Set up…" both take
//! these steps. What a remote answers is read as untrusted: bounded, every string cleaned
//! before a person reads it.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use thiserror::Error;

use companion_hosts::host::Host;
use companion_platform::paths::Paths;
use companion_sessions::settings::{self, SettingsError};

use crate::board::Down;
use crate::link::why_ended;
use crate::remote::{PlanDigest, Remote, RemoteCommand, Sha256Hex};
use crate::stream::clean_to;

/// The most a setup command's answer may hold (a plan is a few KiB).
const MAX_ANSWER: u64 = 1024 * 1024;
/// How long one step may take (a copy over a slow link included).
const STEP_DEADLINE: Duration = Duration::from_secs(120);
/// The longest line of a plan a person reads.
const MAX_PLAN_LINE: usize = 400;

/// A system our program is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    LinuxX86_64,
    LinuxAarch64,
}

impl Arch {
    /// The `uname -m` word for it.
    pub fn machine(self) -> &'static str {
        match self {
            Arch::LinuxX86_64 => "x86_64",
            Arch::LinuxAarch64 => "aarch64",
        }
    }

    /// The system this program was built for, when it is one a remote can run.
    pub fn of_this_build() -> Option<Arch> {
        match (std::env::consts::OS, std::env::consts::ARCH) {
            ("linux", "x86_64") => Some(Arch::LinuxX86_64),
            ("linux", "aarch64") => Some(Arch::LinuxAarch64),
            _ => None,
        }
    }
}

/// Where the program for a remote of `arch` is, for this program at `me`, in the order looked
/// at: `me` itself when it was built for `arch`; else `fabric-session-<machine>` beside it (a
/// build folder, an unpacked archive), then in `../lib/fabric-companion/` from its folder.
/// The last is where the Linux package puts the other architectures' programs
/// (`/usr/lib/fabric-companion/fabric-session-aarch64` for `/usr/bin/fabric-session`): a
/// program this machine cannot run does not belong on `PATH`.
pub fn program_paths(me: &Path, arch: Arch) -> Vec<PathBuf> {
    if Arch::of_this_build() == Some(arch) {
        return vec![me.to_path_buf()];
    }
    let name = format!("fabric-session-{}", arch.machine());
    let mut paths = vec![me.with_file_name(&name)];
    if let Some(dir) = me.parent().and_then(Path::parent) {
        paths.push(dir.join("lib/fabric-companion").join(&name));
    }
    paths
}

/// Why a step of setting a remote up (or taking it down) stopped.
#[derive(Debug, Error)]
pub enum SetupError {
    #[error("{label}: {}", why.describe())]
    Link { label: String, why: Down },
    #[error("{label} runs {system}; fabric-session is built for Linux on x86_64 and aarch64 only")]
    Unsupported { label: String, system: String },
    #[error("no fabric-session for Linux {} here ({why})", arch.machine())]
    NoProgram { arch: Arch, why: String },
    #[error(
        "the copy on {label} has sha256 {got}, not {want}: nothing was installed there; try again"
    )]
    Checksum {
        label: String,
        got: String,
        want: String,
    },
    #[error("{label}: {message}")]
    Refused { label: String, message: String },
    #[error(
        "{label}: {} runs fabric-session there, and that was not in the plan shown: fabric-session stays there; look at the plan again",
        host.display_name()
    )]
    StillHooked { label: String, host: Host },
    #[error("{label} gave an answer that does not read as {what}")]
    Garbled { label: String, what: &'static str },
    #[error("{label} did not finish {what} within {} s", STEP_DEADLINE.as_secs())]
    TimedOut { label: String, what: &'static str },
    #[error("could not run the command for {label}: {source}")]
    Spawn {
        label: String,
        #[source]
        source: std::io::Error,
    },
}

/// What a command at the remote answered.
struct Answer {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs one fixed command for `remote`, `input` on its stdin, under [`STEP_DEADLINE`].
fn run(
    remote: &Remote,
    what: &RemoteCommand,
    input: Option<&[u8]>,
    doing: &'static str,
) -> Result<Answer, SetupError> {
    let label = remote.label();
    let mut command = remote.command(what);
    command
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().map_err(|source| SetupError::Spawn {
        label: label.clone(),
        source,
    })?;
    let writer = match (input, child.stdin.take()) {
        (Some(bytes), Some(mut stdin)) => {
            let bytes = bytes.to_vec();
            Some(std::thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            }))
        }
        _ => None,
    };
    let stdout = read_in_thread(child.stdout.take());
    let stderr = read_in_thread(child.stderr.take());
    let status = wait_until(&mut child, Instant::now() + STEP_DEADLINE);
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    let stdout = stdout.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&stderr.join().unwrap_or_default()).into_owned();
    let Some(status) = status else {
        return Err(SetupError::TimedOut { label, what: doing });
    };
    // 255 is ssh's own failure (the link, not the command at the other end).
    if status.code() == Some(255) || status.code() == Some(127) {
        return Err(SetupError::Link {
            label,
            why: why_ended(remote, Some(status), &stderr),
        });
    }
    Ok(Answer {
        status,
        stdout,
        stderr,
    })
}

/// [`run`], where anything but success is the remote's refusal (its last line on stderr).
fn run_ok(
    remote: &Remote,
    what: &RemoteCommand,
    input: Option<&[u8]>,
    doing: &'static str,
) -> Result<Answer, SetupError> {
    let answer = run(remote, what, input, doing)?;
    if answer.status.success() {
        Ok(answer)
    } else {
        Err(SetupError::Refused {
            label: remote.label(),
            message: last_line(&answer.stderr),
        })
    }
}

fn read_in_thread<R: Read + Send + 'static>(source: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(source) = source {
            let _ = source.take(MAX_ANSWER).read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Waits for `child` until `deadline`; kills it and answers `None` past it.
fn wait_until(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// The last line the remote wrote on stderr, cleaned (a refusal is one line there).
fn last_line(stderr: &str) -> String {
    let line = stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("it failed and said nothing");
    let line = line.strip_prefix("fabric-session: ").unwrap_or(line);
    clean_to(line, MAX_PLAN_LINE)
}

/// The remote's system and architecture (`uname -sm`), refused unless we build for it.
pub fn probe(remote: &Remote) -> Result<Arch, SetupError> {
    let label = remote.label();
    let answer = run(remote, &RemoteCommand::Probe, None, "telling its system")?;
    let text = String::from_utf8_lossy(&answer.stdout);
    let mut words = text.split_whitespace();
    let (system, machine) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    match (system, machine) {
        ("Linux", "x86_64") => Ok(Arch::LinuxX86_64),
        ("Linux", "aarch64" | "arm64") => Ok(Arch::LinuxAarch64),
        _ if !answer.status.success() || system.is_empty() => Err(SetupError::Garbled {
            label,
            what: "a system and architecture",
        }),
        _ => Err(SetupError::Unsupported {
            label,
            system: clean_to(&format!("{system} {machine}"), 60),
        }),
    }
}

/// Copies `program` to the remote's stable path: written beside it, its sha256 compared with
/// ours there and here, then moved into place. Gives the digest installed.
pub fn install_program(remote: &Remote, program: &[u8]) -> Result<Sha256Hex, SetupError> {
    let label = remote.label();
    let want = companion_hosts::install::sha256_hex(program);
    let answer = run_ok(remote, &RemoteCommand::Upload, Some(program), "the copy")?;
    let text = String::from_utf8_lossy(&answer.stdout);
    let got = text.split_whitespace().next().unwrap_or("").to_string();
    if got != want {
        return Err(SetupError::Checksum {
            label,
            got: clean_to(&got, 64),
            want,
        });
    }
    let sha256 = Sha256Hex::new(&want).ok_or(SetupError::Garbled {
        label,
        what: "a sha256",
    })?;
    run_ok(
        remote,
        &RemoteCommand::Commit {
            sha256: sha256.clone(),
        },
        None,
        "putting the copy in place",
    )?;
    Ok(sha256)
}

/// Removes our program from the remote (nothing else of the remote is touched).
pub fn remove_program(remote: &Remote) -> Result<(), SetupError> {
    run_ok(
        remote,
        &RemoteCommand::RemoveProgram,
        None,
        "removing the program",
    )
    .map(drop)
}

/// What a plan does, as the remote's `install-host-hooks --json` says it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum PlanAction {
    Install,
    Remove,
    NothingToDo { reason: String },
}

/// A host's hook plan at the remote: the fields a person reads before consenting, and the
/// digest that applies exactly this plan. Every string is cleaned once read.
#[derive(Debug, Clone, Deserialize)]
pub struct RemotePlan {
    pub file: String,
    pub digest: String,
    pub action: PlanAction,
    #[serde(default)]
    pub add_text: String,
    #[serde(default)]
    pub remove_text: String,
    #[serde(default)]
    pub add_at: Vec<String>,
    #[serde(default)]
    pub remove_at: Vec<String>,
    #[serde(default)]
    pub warnings: Vec<String>,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default)]
    pub removes_file: bool,
}

impl RemotePlan {
    fn cleaned(mut self) -> RemotePlan {
        let lines = |text: &str| {
            text.lines()
                .map(|l| clean_to(l, MAX_PLAN_LINE))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let all = |list: Vec<String>| {
            list.iter()
                .take(64)
                .map(|l| clean_to(l, MAX_PLAN_LINE))
                .collect()
        };
        self.file = clean_to(&self.file, MAX_PLAN_LINE);
        self.add_text = lines(&self.add_text);
        self.remove_text = lines(&self.remove_text);
        self.add_at = all(self.add_at);
        self.remove_at = all(self.remove_at);
        self.warnings = all(self.warnings);
        self.notes = all(self.notes);
        if let PlanAction::NothingToDo { reason } = &mut self.action {
            *reason = clean_to(reason, MAX_PLAN_LINE);
        }
        self
    }

    /// Whether applying it would change anything.
    pub fn changes(&self) -> bool {
        !matches!(self.action, PlanAction::NothingToDo { .. })
    }

    /// The plan as a person reads it before consenting.
    pub fn render(&self, host: Host, label: &str) -> String {
        let mut out = format!("{} on {label}: {}\n", host.display_name(), self.file);
        if let PlanAction::NothingToDo { reason } = &self.action {
            out.push_str(&format!("  {reason}: nothing to do.\n"));
            return out;
        }
        let block = |out: &mut String, title: &str, text: &str, at: &[String]| {
            if text.is_empty() {
                return;
            }
            out.push_str(&format!("  {title}:\n"));
            for line in text.lines() {
                out.push_str(&format!("    {line}\n"));
            }
            for place in at {
                out.push_str(&format!("    ({place})\n"));
            }
        };
        block(
            &mut out,
            "Would take out",
            &self.remove_text,
            &self.remove_at,
        );
        block(&mut out, "Would add", &self.add_text, &self.add_at);
        if self.removes_file {
            out.push_str(
                "  Nothing else is in the file and our install created it: it would be deleted.\n",
            );
        }
        for warning in &self.warnings {
            out.push_str(&format!("  Warning: {warning}\n"));
        }
        for note in &self.notes {
            out.push_str(&format!("  Note: {note}\n"));
        }
        out.push_str(&format!("  Plan digest: {}\n", self.digest));
        out
    }
}

/// The program to copy to a remote of `arch`, given this machine's `fabric-session`
/// (`local`): the first of [`program_paths`] there is. None found: every path looked at, why.
pub fn program_for(arch: Arch, local: &Path) -> Result<Vec<u8>, SetupError> {
    let mut why = Vec::new();
    for path in program_paths(local, arch) {
        match std::fs::read(&path) {
            Ok(bytes) => return Ok(bytes),
            Err(err) => why.push(format!("{}: {err}", path.display())),
        }
    }
    Err(SetupError::NoProgram {
        arch,
        why: why.join("; "),
    })
}

/// A remote made ready for the person's consent: its system, our program copied there, and
/// a host's hook plan read there (nothing of the host's config written yet).
#[derive(Debug, Clone)]
pub struct Prepared {
    pub arch: Arch,
    /// The sha256 of the program now at the remote's stable path.
    pub program_sha256: Sha256Hex,
    pub plan: RemotePlan,
    /// What [`hook_apply`] takes to apply exactly `plan`.
    pub digest: PlanDigest,
}

/// The steps before consent, as `remote add` and the dashboard's "Set up…" take them: the
/// remote's system checked ([`probe`]), our program copied there ([`program_for`] with this
/// machine's `fabric-session`, `local`; [`install_program`]), then `host`'s hook plan read
/// there ([`hook_plan`]).
pub fn prepare(remote: &Remote, local: &Path, host: Host) -> Result<Prepared, SetupError> {
    let arch = probe(remote)?;
    let program = program_for(arch, local)?;
    let program_sha256 = install_program(remote, &program)?;
    let (plan, digest) = hook_plan(remote, host, false)?;
    Ok(Prepared {
        arch,
        program_sha256,
        plan,
        digest,
    })
}

/// Each host's removal plan at the remote, only those that take something out; none when our
/// program is not there (then no config there runs anything of ours).
pub fn removal_plans(remote: &Remote) -> Result<Vec<(Host, RemotePlan, PlanDigest)>, SetupError> {
    let mut plans = Vec::new();
    for host in Host::ALL {
        match hook_plan(remote, host, true) {
            Ok((plan, digest)) if plan.changes() => plans.push((host, plan, digest)),
            Ok(_) => {}
            Err(SetupError::Link {
                why: Down::NotSetUp,
                ..
            }) => return Ok(Vec::new()),
            Err(err) => return Err(err),
        }
    }
    Ok(plans)
}

/// Takes a remote down as the person saw it: each host's hooks of ours taken out with the
/// digest of the removal plan shown ([`removal_plans`]), then our program removed, only once
/// no config there runs it (hooks added since the plans were read stop it, in one line).
pub fn take_down(remote: &Remote, shown: &[(Host, PlanDigest)]) -> Result<(), SetupError> {
    for (host, digest) in shown {
        hook_apply(remote, *host, true, digest)?;
    }
    if let Some((host, _, _)) = removal_plans(remote)?.first() {
        return Err(SetupError::StillHooked {
            label: remote.label(),
            host: *host,
        });
    }
    remove_program(remote)
}

/// Has the tray follow `remote` (`on`) or stop following it: the settings' `remotes`, the
/// list the dashboard's Settings also edits, every other setting kept. Whether that changed
/// the settings (written only then).
pub fn follow(paths: &Paths, remote: &Remote, on: bool) -> Result<bool, SettingsError> {
    let path = settings::settings_path(paths);
    let mut current = settings::load(&path);
    let present = current.remotes.iter().any(|r| r == remote.spec());
    if present == on {
        return Ok(false);
    }
    if on {
        current.remotes.push(remote.spec().to_string());
    } else {
        current.remotes.retain(|r| r != remote.spec());
    }
    settings::save(&path, &current)?;
    Ok(true)
}

/// A host's hook plan at the remote (the dry run: nothing is written there), and the digest
/// that applies exactly it.
pub fn hook_plan(
    remote: &Remote,
    host: Host,
    remove: bool,
) -> Result<(RemotePlan, PlanDigest), SetupError> {
    let answer = run_ok(
        remote,
        &RemoteCommand::HookPlan { host, remove },
        None,
        "the hook plan",
    )?;
    let label = remote.label();
    let plan: RemotePlan =
        serde_json::from_slice(&answer.stdout).map_err(|_| SetupError::Garbled {
            label: label.clone(),
            what: "a hook plan",
        })?;
    let Some(digest) = PlanDigest::new(&plan.digest) else {
        return Err(SetupError::Garbled {
            label,
            what: "a hook plan",
        });
    };
    Ok((plan.cleaned(), digest))
}

/// Applies the plan whose digest is `expect` at the remote; refused there (one line) when the
/// file changed since the plan was read.
pub fn hook_apply(
    remote: &Remote,
    host: Host,
    remove: bool,
    expect: &PlanDigest,
) -> Result<(), SetupError> {
    run_ok(
        remote,
        &RemoteCommand::HookApply {
            host,
            remove,
            expect: expect.clone(),
        },
        None,
        "applying the plan",
    )
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_architecture_s_program_is_looked_for_beside_us_then_in_the_package_s_lib_folder() {
        let other = match Arch::of_this_build() {
            Some(Arch::LinuxAarch64) => Arch::LinuxX86_64,
            _ => Arch::LinuxAarch64,
        };
        let name = format!("fabric-session-{}", other.machine());
        assert_eq!(
            program_paths(Path::new("/usr/bin/fabric-session"), other),
            [
                PathBuf::from("/usr/bin").join(&name),
                PathBuf::from("/usr/lib/fabric-companion").join(&name),
            ]
        );
        if let Some(this) = Arch::of_this_build() {
            let me = Path::new("/opt/x/fabric-session");
            assert_eq!(program_paths(me, this), [me.to_path_buf()]);
        }
    }

    #[test]
    fn a_plan_from_a_remote_is_cleaned_before_a_person_reads_it() {
        let json = r#"{"file": "/home/me/.claude/settings.json\u001b[2J", "digest": "ab",
            "action": {"kind": "install"}, "add_text": "line one\u202e\nline two",
            "warnings": ["careful\u0007"], "unknown": 1}"#;
        let plan: RemotePlan = serde_json::from_str(json).unwrap();
        let plan = plan.cleaned();
        assert_eq!(plan.file, "/home/me/.claude/settings.json[2J");
        assert_eq!(plan.add_text, "line one\nline two");
        assert_eq!(plan.warnings, ["careful"]);
        let text = plan.render(Host::Claude, "build-box");
        assert!(text.starts_with("Claude Code on build-box: "), "{text}");
        assert!(text.contains("    line two\n"), "{text}");
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text}");
    }

    #[test]
    fn this_build_is_one_a_remote_may_run() {
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            assert_eq!(Arch::of_this_build(), Some(Arch::LinuxX86_64));
        }
    }
}
