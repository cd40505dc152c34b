//! The four hooks, run as the real binary in a temporary HOME against the Fabric stand-in:
//! every row of the seed's tables, each host, and every "never".
#![cfg(unix)] // the temporary home is given by HOME and XDG variables, which Windows does not read

#[path = "../common/mod.rs"]
mod common;

use std::time::Duration;

use common::{Home, claude_context, stdout, wait_until, write};

mod never;
mod prompt_and_end;
mod session_start;
mod silence;
mod stop;

const SESSION_HOOKS: &[&str] = &["session-hooks/1"];
const WORKER_WAIT: Duration = Duration::from_secs(30);
