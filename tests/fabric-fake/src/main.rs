//! The `fabric-fake` command: a thin layer over the `fabric_fake` library.
//!
//! - With `--runner` anywhere in argv it is the `fabric-mcp` stand-in (MCP over stdio):
//!   `fabric-fake --runner <r> [--rejoin-only] [--runtime-session-id <id>]`; other
//!   arguments are ignored. See `fabric_fake::server`.
//! - Otherwise it runs a helper subcommand: `hub` (write or remove `hub.json`, or `--hold` it
//!   as the running Fabric until stdin closes) or `service` (write a service descriptor).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use fabric_fake::files::{self, Hub};
use fabric_fake::server::{self, Session};

/// The server-mode arguments. Only these are parsed; [`known_server_args`] drops the rest.
#[derive(Parser, Debug)]
#[command(name = "fabric-fake")]
struct ServerArgs {
    #[arg(long)]
    runner: Option<String>,
    #[arg(long)]
    rejoin_only: bool,
    #[arg(long)]
    runtime_session_id: Option<String>,
}

/// A stand-in for Fabric, for tests. Started with `--runner`, it is the `fabric-mcp`
/// stand-in (MCP over stdio, steered by the folder in FABRIC_FAKE_STATE).
#[derive(Parser, Debug)]
#[command(name = "fabric-fake")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Write `<fabric-dir>/hub.json` atomically (mode 0600), or remove it.
    Hub(HubArgs),
    /// Write a service descriptor `<dir>/<id>.<instance>.json`.
    Service(ServiceArgs),
}

#[derive(Args, Debug)]
struct HubArgs {
    /// Fabric's folder (created, mode 0700, when missing).
    #[arg(long)]
    fabric_dir: PathBuf,
    /// A feature to list in `features` (repeatable; left out when none).
    #[arg(long = "feature")]
    features: Vec<String>,
    /// The pid the hub names [default: the parent of this process].
    #[arg(long)]
    pid: Option<u32>,
    /// The origin the hub names.
    #[arg(long, default_value = files::DEFAULT_HUB_ORIGIN)]
    origin: String,
    /// The protocol the hub names (another value makes Fabric look down).
    #[arg(long, default_value = files::HUB_PROTOCOL)]
    protocol: String,
    /// Remove `hub.json` instead of writing it.
    #[arg(long, conflicts_with_all = ["features", "pid"])]
    remove: bool,
    /// Be the running Fabric: name this process in `hub.json` (unless --pid says otherwise),
    /// stay until stdin closes, then remove `hub.json` as Fabric does on quit. Where no
    /// parent process outlives the command (Wine), this is how a live pid is named.
    #[arg(long, conflicts_with = "remove")]
    hold: bool,
}

#[derive(Args, Debug)]
struct ServiceArgs {
    /// The services folder (created when missing).
    #[arg(long)]
    dir: PathBuf,
    /// The service id (`^[a-z][a-z0-9-]{1,62}$`).
    #[arg(long)]
    id: String,
    /// The instance (`^[a-z][a-z0-9-]{0,31}$`).
    #[arg(long)]
    instance: String,
    /// The service's origin, `http://127.0.0.1:<port>`.
    #[arg(long, default_value = files::DEFAULT_SERVICE_ORIGIN)]
    origin: String,
    /// Display name [default: "Fake service <id>"].
    #[arg(long)]
    name: Option<String>,
}

/// Keeps the server-mode flags `fabric-mcp` knows (`--runner <r>`, `--runtime-session-id <id>`,
/// both also as `--flag=value`, and `--rejoin-only`) and drops every other argument, so
/// that unknown flags never make the stand-in fail.
fn known_server_args(argv: &[String]) -> Vec<String> {
    const WITH_VALUE: [&str; 2] = ["--runner", "--runtime-session-id"];
    let mut kept = Vec::new();
    let mut args = argv.iter();
    while let Some(arg) = args.next() {
        let flag = arg.split_once('=').map_or(arg.as_str(), |(flag, _)| flag);
        if arg == "--rejoin-only" || (WITH_VALUE.contains(&flag) && flag != arg) {
            kept.push(arg.clone());
        } else if WITH_VALUE.contains(&flag) {
            kept.push(arg.clone());
            kept.extend(args.next().cloned());
        }
    }
    kept
}

fn parent_pid() -> u32 {
    #[cfg(unix)]
    return std::os::unix::process::parent_id();
    #[cfg(not(unix))]
    return std::process::id();
}

/// `hub --hold`: writes `hub.json` naming this process, prints its path, waits for stdin to
/// close, removes it.
fn hold_hub(args: HubArgs) -> std::io::Result<Option<PathBuf>> {
    let path = Hub {
        protocol: args.protocol,
        origin: args.origin,
        pid: args.pid.unwrap_or_else(std::process::id),
        features: args.features,
    }
    .write(&args.fabric_dir)?;
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", path.display())?;
        out.flush()?;
    }
    let mut sink = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
    files::remove_hub(&args.fabric_dir)?;
    Ok(None)
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    if argv
        .iter()
        .any(|arg| arg == "--runner" || arg.starts_with("--runner="))
    {
        let args = ServerArgs::parse_from(
            std::iter::once("fabric-fake".to_owned()).chain(known_server_args(&argv)),
        );
        return server::run(Session {
            argv,
            runner: args.runner.unwrap_or_default(),
            runtime_session_id: args.runtime_session_id,
        });
    }
    let result = match Cli::parse().command {
        Command::Hub(args) if args.remove => files::remove_hub(&args.fabric_dir).map(|()| None),
        Command::Hub(args) if args.hold => hold_hub(args),
        Command::Hub(args) => Hub {
            protocol: args.protocol,
            origin: args.origin,
            pid: args.pid.unwrap_or_else(parent_pid),
            features: args.features,
        }
        .write(&args.fabric_dir)
        .map(Some),
        Command::Service(args) => {
            let name = args
                .name
                .unwrap_or_else(|| files::default_service_name(&args.id));
            files::write_service_named(&args.dir, &args.id, &args.instance, &args.origin, &name)
                .map(Some)
        }
    };
    match result {
        Ok(Some(path)) => {
            println!("{}", path.display());
            ExitCode::SUCCESS
        }
        Ok(None) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fabric-fake: {e}");
            ExitCode::FAILURE
        }
    }
}
