//! The `remote` command line: `add` sets a remote up (its system checked, this program copied
//! there, a host's hook plan shown and applied only on the person's consent) and has the tray
//! follow it; `remove` takes our hooks and program off it and stops following it; `list` says
//! which remotes are followed and how their links stand. The steps themselves are
//! `companion_remotes::setup`'s.
//!
//! Output contract: progress and plans on stdout; a refusal is one line on stderr starting
//! `fabric-session: `, exit 1. A plan is applied only with `--apply --expect-sha256 <digest>`
//! (the digest the plan printed) or a "y" typed at the prompt on a terminal.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{Context, bail};

use companion_hosts::host::Host;
use companion_platform::paths::Paths;
use companion_remotes::board::{self, LinkState};
use companion_remotes::remote::{PlanDigest, Remote};
use companion_remotes::setup::{self, Arch, RemotePlan, SetupError};
use companion_sessions::settings;

/// `fabric-session remote …`.
#[derive(Debug, clap::Subcommand)]
pub enum RemoteArgs {
    /// Set a remote up (an ssh destination or Host alias, `docker:<container>`,
    /// `podman:<container>` or `wsl:<distribution>`): check its system, copy fabric-session to
    /// its stable path, show a host's hook plan there and apply it on your consent. The tray
    /// then shows its sessions.
    Add {
        destination: String,
        /// The host whose hooks to install there.
        #[arg(long, value_enum, default_value_t = Host::Claude)]
        host: Host,
        /// Apply the plan (needs `--expect-sha256` with the digest the plan printed).
        #[arg(long, requires = "expect_sha256")]
        apply: bool,
        /// The plan digest printed by the dry run.
        #[arg(long, value_name = "DIGEST", requires = "apply")]
        expect_sha256: Option<String>,
    },
    /// Take our hooks (every host's) and program off a remote, and stop following it.
    Remove {
        destination: String,
        /// Do it (without it, or a "y" at the prompt, this only shows what would change).
        #[arg(long)]
        apply: bool,
    },
    /// The remotes the tray follows, and how their links stand.
    List,
}

/// Runs the command; the exit code.
pub fn run(args: &RemoteArgs, paths: &Paths) -> anyhow::Result<u8> {
    match args {
        RemoteArgs::Add {
            destination,
            host,
            apply,
            expect_sha256,
        } => add(paths, destination, *host, *apply, expect_sha256.as_deref()),
        RemoteArgs::Remove { destination, apply } => remove(paths, destination, *apply),
        RemoteArgs::List => list(paths),
    }
}

fn parse(destination: &str) -> anyhow::Result<Remote> {
    Remote::parse(destination).with_context(|| format!("{destination:?} is not a remote we take"))
}

fn add(
    paths: &Paths,
    destination: &str,
    host: Host,
    apply: bool,
    expect: Option<&str>,
) -> anyhow::Result<u8> {
    let remote = parse(destination)?;
    let label = remote.label();
    let expect = match expect {
        Some(text) => Some(
            PlanDigest::new(text)
                .with_context(|| format!("{text:?} is not a digest a plan prints"))?,
        ),
        None => None,
    };
    let arch = setup::probe(&remote)?;
    let program = program_for(arch)?;
    let sha256 = setup::install_program(&remote, &program)?;
    println!(
        "Copied fabric-session to {label} (Linux {}, sha256 {}).",
        arch.machine(),
        sha256.as_str()
    );
    let (plan, digest) = setup::hook_plan(&remote, host, false)?;
    print!("\n{}", plan.render(host, &label));
    let applied = if !plan.changes() {
        false
    } else if apply {
        let expect = expect.unwrap_or(digest);
        setup::hook_apply(&remote, host, false, &expect)?;
        true
    } else if consents(&format!("Apply this on {label}?"))? {
        setup::hook_apply(&remote, host, false, &digest)?;
        true
    } else {
        println!(
            "\nNothing was changed in {}'s config on {label}. To apply this plan:\n  fabric-session remote add {} --host {} --apply --expect-sha256 {}",
            host.display_name(),
            remote.spec(),
            host.cli_name(),
            digest.as_str()
        );
        false
    };
    if applied {
        println!(
            "Applied: {}'s hooks on {label} are ours now.",
            host.display_name()
        );
    }
    if follow(paths, &remote, true)? {
        println!("The tray now shows {label}'s sessions.");
    }
    Ok(0)
}

fn remove(paths: &Paths, destination: &str, apply: bool) -> anyhow::Result<u8> {
    let remote = parse(destination)?;
    let label = remote.label();
    let mut plans: Vec<(Host, RemotePlan, PlanDigest)> = Vec::new();
    for host in Host::ALL {
        let (plan, digest) = setup::hook_plan(&remote, host, true).or_else(|err| match err {
            // No program there: nothing of ours to take out of any config.
            SetupError::Link {
                why: board::Down::NotSetUp,
                ..
            } => Ok((
                nothing_planned(),
                PlanDigest::new("absent").expect("a digest"),
            )),
            err => Err(err),
        })?;
        if plan.changes() {
            print!("{}", plan.render(host, &label));
            plans.push((host, plan, digest));
        }
    }
    if plans.is_empty() {
        println!("No hooks of ours on {label}.");
    }
    if !apply && !consents(&format!("Take fabric-session off {label}?"))? {
        println!(
            "\nNothing was changed on {label}. To do it:\n  fabric-session remote remove {} --apply",
            remote.spec()
        );
        return Ok(0);
    }
    for (host, _, digest) in &plans {
        setup::hook_apply(&remote, *host, true, digest)?;
        println!(
            "Took {}'s hooks of ours out on {label}.",
            host.display_name()
        );
    }
    setup::remove_program(&remote)?;
    println!("Removed fabric-session from {label}.");
    if follow(paths, &remote, false)? {
        println!("The tray no longer follows {label}.");
    }
    Ok(0)
}

/// A plan that changes nothing (a remote without our program has no hooks of ours to run).
fn nothing_planned() -> RemotePlan {
    serde_json::from_value(serde_json::json!({
        "file": "",
        "digest": "absent",
        "action": {"kind": "nothing-to-do", "reason": "fabric-session is not there"},
    }))
    .expect("a plan")
}

fn list(paths: &Paths) -> anyhow::Result<u8> {
    let settings = settings::load(&settings::settings_path(paths));
    if settings.remotes.is_empty() {
        println!("No remotes. Add one with: fabric-session remote add <destination>");
        return Ok(0);
    }
    let board = board::load(&board::file_path(paths));
    for spec in &settings.remotes {
        let state = board.iter().find(|e| e.remote == *spec).map(|e| &e.link);
        let line = match state {
            None => "not followed now (the tray is not running)".to_string(),
            Some(LinkState::Connecting { .. }) => "connecting".into(),
            Some(LinkState::Up { .. }) => "connected".into(),
            Some(LinkState::Down { why, .. }) => why.describe(),
        };
        println!("{spec}: {line}");
    }
    Ok(0)
}

/// The program to copy to a remote of `arch`: the first of [`setup::program_paths`] there is
/// (this one, or another architecture's beside it or in the package's lib folder).
fn program_for(arch: Arch) -> anyhow::Result<Vec<u8>> {
    let me = std::env::current_exe().context("cannot tell where this program is")?;
    let mut why = Vec::new();
    for path in setup::program_paths(&me, arch) {
        match std::fs::read(&path) {
            Ok(bytes) => return Ok(bytes),
            Err(err) => why.push(format!("{}: {err}", path.display())),
        }
    }
    Err(SetupError::NoProgram {
        arch,
        why: why.join("; "),
    }
    .into())
}

/// Asks `question` on a terminal; `false` at once when stdin is not one.
fn consents(question: &str) -> anyhow::Result<bool> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Ok(false);
    }
    print!("\n{question} [y/N] ");
    std::io::stdout().flush()?;
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// Adds the remote to (or takes it out of) the remotes the tray follows; whether that
/// changed the settings.
fn follow(paths: &Paths, remote: &Remote, on: bool) -> anyhow::Result<bool> {
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
    if let Err(err) = settings::save(&path, &current) {
        bail!("{err}");
    }
    Ok(true)
}
