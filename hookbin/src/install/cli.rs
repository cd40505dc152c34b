//! The `install-host-hooks` command line. (Placeholder until the installer lands.)

use std::path::PathBuf;

use crate::host::Host;
use crate::paths::Paths;

/// Arguments of `fabric-session install-host-hooks`.
#[derive(Debug, Clone, clap::Args)]
pub struct InstallArgs {
    /// The host whose config to change.
    #[arg(long, value_enum)]
    pub host: Host,
}

/// Runs the command; returns the process exit code.
pub fn run(_args: &InstallArgs, _paths: &Paths) -> i32 {
    eprintln!("fabric-session: install-host-hooks is not built yet");
    2
}
