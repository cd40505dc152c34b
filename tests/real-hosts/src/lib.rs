//! The real-hosts suite's harness: the real agent hosts (Claude Code, Codex, Kimi Code) run
//! whole sessions against the model stand-in (`model-stand-in`), with Fabric played by
//! `fabric-fake`, in a temporary HOME, with our hooks wired by our own installer.
//!
//! - [`hosts`]: which host programs to run (the variables `run.sh` sets) and the "not run"
//!   rule: without a host the test says why and returns; with `FABRIC_REAL_HOSTS_REQUIRED=1`
//!   a missing host fails.
//! - [`binaries`]: the `fabric-session` and `fabric-fake` programs under test.
//! - [`home`]: the temporary HOME, the project, Fabric's state, the hosts' config files.
//! - [`install`]: the person's install: the stable copy, the dry run, the printed apply.
//! - [`codex_trust`]: Codex's record of approval, computed as Codex's source does, and
//!   granted through Codex's own app-server, as its `/hooks` screen does.
//! - [`sessions`]: one real session per host (Claude `-p` stream-json, Codex app-server,
//!   Kimi `-p` and `-S <id>`), turn by turn, timed.
//! - [`scenario`]: the scenarios the tests assert on, run once per test binary.
//! - [`findings`]: what is looked for in the recorded requests and in our files.
//! - [`checks`]: the assertions, one per test, and the macro making a host's tests.
//! - [`tui`], [`desktop`], [`needs_you`]: a host's TUI in tmux, the tray on a real SNI host
//!   with a real notification daemon, and the proof of "which session needs you" on them.
//! - [`remote`]: the same for Claude Code on another machine (a real sshd as another user),
//!   set up with `fabric-session remote add` and followed by the tray over `ssh`.
//!
//! It never edits the product's code paths or forges a person's approval: approval goes
//! through the host's own program.

pub mod binaries;
pub mod checks;
pub mod codex_trust;
#[cfg(unix)]
pub mod desktop;
pub mod findings;
pub mod home;
pub mod hosts;
pub mod install;
pub mod jsonrpc;
#[cfg(unix)]
pub mod needs_you;
#[cfg(unix)]
pub mod remote;
pub mod scenario;
pub mod sessions;
#[cfg(unix)]
pub mod tui;

pub use hosts::{Host, HostProgram};
