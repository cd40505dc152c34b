//! `fabric-session`: the hook binary. The four hooks and the command line live here; the
//! library crates `companion-platform`, `companion-hosts`, `companion-sessions` (files,
//! installer, status), `companion-remotes` (other machines) and `fabric-client` (talking to
//! Fabric) do the rest.
//!
//! Hooks (`hook <event>`) and the worker never fail outward: every error and every panic ends
//! in exit 0 with nothing printed. The other commands report errors in one line on stderr.
//!
//! On Linux the program starts without std's runtime start-up (`no_main`): see `startup`.

#![cfg_attr(all(target_os = "linux", not(test)), no_main)]

use std::path::PathBuf;

mod follow;
mod hook_input;
mod hooks;
mod install_cmd;
mod output;
mod remote_cmd;
mod signals;
#[cfg(all(target_os = "linux", not(test)))]
mod startup;
mod texts;
mod watch_cmd;

use clap::{Parser, Subcommand};
use companion_hosts::host::Host;
use companion_platform::paths::Paths;
use companion_sessions::status;
use fabric_client::worker;

use crate::hooks::HookEvent;

#[derive(Parser)]
#[command(
    name = "fabric-session",
    version,
    about = "Fabric's session hooks for Claude Code, Codex and Kimi Code"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one session hook (reads the host's JSON on stdin; always exits 0). The state events
    /// (permission-request, notification, post-tool-use, …) print nothing.
    Hook {
        #[arg(value_enum)]
        event: HookEvent,
        /// The host running the hook.
        #[arg(long, value_enum, default_value_t = Host::Claude)]
        host: Host,
    },
    /// Report Fabric, the hosts' registrations and hooks, and live sessions.
    Status {
        /// Print the snapshot as JSON (schema fabric-session-status/1).
        #[arg(long)]
        json: bool,
        /// With --json: keep running, one JSON document a line now and on every change (a
        /// heartbeat line after 30 s without one); ends when the output closes.
        #[arg(long, requires = "json")]
        follow: bool,
    },
    /// Install or remove our hooks in a host's config (a dry run unless --apply).
    InstallHostHooks(install_cmd::InstallArgs),
    /// Watch the project board for an idle session; one line each time the unread count rises.
    WatchMail(watch_cmd::WatchArgs),
    /// Sessions on other machines: set a remote up, take it down, list them.
    #[command(subcommand)]
    Remote(remote_cmd::RemoteArgs),
    /// Raise the window (and tmux pane) a live session runs in. Exit 0 raised, 2 unknown
    /// session, 3 its process is gone, 4 this desktop does not allow raising.
    Focus {
        /// The session's id (as `status` lists it).
        session: String,
    },
    /// The detached worker a Stop or SessionEnd hook starts (internal).
    #[command(hide = true)]
    Worker {
        /// The session's spool folder.
        spool: PathBuf,
    },
}

/// The C entry point: glibc hands std the arguments and environment itself, so `std::env`
/// works as usual; [`startup`] does the rest of what std's start-up would have done.
#[cfg(all(target_os = "linux", not(test)))]
#[unsafe(no_mangle)]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    startup::prepare();
    let code = program();
    startup::finish();
    std::ffi::c_int::from(code)
}

#[cfg(any(not(target_os = "linux"), test))]
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(program())
}

/// The whole program; returns the exit status.
fn program() -> u8 {
    // Hooks must exit 0 whatever happens, before clap can object to anything else.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let is_quiet = matches!(
        args.get(1).and_then(|a| a.to_str()),
        Some("hook") | Some("worker")
    );
    if is_quiet {
        std::panic::set_hook(Box::new(|_| {}));
        let _ = std::panic::catch_unwind(|| run_quiet(&args));
        return 0;
    }
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("fabric-session: {err:#}");
            1
        }
    }
}

/// `hook` and `worker`: bad arguments are ignored like everything else.
fn run_quiet(args: &[std::ffi::OsString]) {
    // The hook fast path reads its few arguments by hand: building clap's whole command tree
    // costs more than the rest of a hook.
    if let Some((event, host)) = hooks::parse_hook_args(args.get(2..).unwrap_or_default()) {
        hooks::run(event, host);
        return;
    }
    let Ok(cli) = Cli::try_parse_from(args) else {
        return;
    };
    match cli.command {
        Command::Hook { event, host } => hooks::run(event, host),
        Command::Worker { spool } => worker::run(&spool),
        _ => {}
    }
}

/// `focus`: one line on stdout saying what was raised, or one on stderr saying why not (and,
/// when the desktop refuses, where the session is).
fn focus(paths: &Paths, session: &str) -> u8 {
    match session_focus::focus(&paths.sessions_dir(), session) {
        Ok(raised) => {
            println!("raised {raised}");
            0
        }
        Err(error) => {
            eprintln!("fabric-session: {error}");
            error.exit_code()
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<u8> {
    let paths = Paths::from_env().ok_or_else(|| anyhow::anyhow!("no home folder is known"))?;
    match cli.command {
        Command::Status { json, follow } => {
            // A special file where a config should be is read as absent; say so, once each.
            companion_platform::fsutil::report_skipped_with(|name, special| {
                eprintln!("fabric-session: {name} is {special}; read as absent");
            });
            let cwd = std::env::current_dir().ok();
            if follow {
                return follow::run(&paths, cwd.as_deref());
            }
            let snapshot = status::collect(&paths, cwd.as_deref());
            if json {
                println!("{}", serde_json::to_string_pretty(&snapshot)?);
            } else {
                print!("{}", status::render_text(&snapshot));
            }
            Ok(0)
        }
        Command::InstallHostHooks(args) => {
            let code = install_cmd::run(&args, &paths);
            Ok(u8::try_from(code).unwrap_or(1))
        }
        Command::WatchMail(args) => {
            let code = watch_cmd::run(&args, &paths);
            Ok(u8::try_from(code).unwrap_or(1))
        }
        Command::Focus { session } => Ok(focus(&paths, &session)),
        Command::Remote(args) => remote_cmd::run(&args, &paths),
        Command::Hook { .. } | Command::Worker { .. } => Ok(0),
    }
}
