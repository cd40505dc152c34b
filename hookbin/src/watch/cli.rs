//! The `watch-mail` command line. (Placeholder until it lands.)

use crate::host::Host;

/// Arguments of `fabric-session watch-mail`.
#[derive(Debug, Clone, clap::Args)]
pub struct WatchArgs {
    /// Seconds between looks (± 20 %, never under 10).
    #[arg(long, default_value_t = 60)]
    pub interval: u64,
    /// The session to rejoin (default: $CLAUDE_CODE_SESSION_ID).
    #[arg(long)]
    pub session_id: Option<String>,
    /// The host whose session this is.
    #[arg(long, value_enum, default_value_t = Host::Claude)]
    pub host: Host,
}

/// Runs the command; returns the process exit code.
pub fn run(_args: &WatchArgs, _paths: &crate::paths::Paths) -> i32 {
    eprintln!("fabric-session: watch-mail is not built yet");
    2
}
