//! `watch-mail`: the idle session's mail watcher, as a command and as a library engine.
//!
//! - [`schedule`]: pure arithmetic of the waits (10 s floor, ± 20 % jitter, backoff doubling
//!   to 15 minutes).
//! - [`engine`]: [`MailWatcher`], one tokio task watching any number of sessions, with a
//!   shared Fabric gate, per-session counts and backoff, and a stream of [`WatchEvent`]s.
//!   The tray drives it for many sessions; [`Look`] is the seam tests script.
//! - `fabric-session watch-mail` (the binary's `watch_cmd`) drives the engine with one session and a printer:
//!   refusals, the lines the agent reads, and every way it exits.
//!
//! Looks go through `fabric-mcp --rejoin-only --runtime-session-id <id>` only, and only while
//! Fabric's `hub.json` is live and advertises `session-hooks/1`: a Fabric without that feature
//! is treated like an unreadable board (said once, backed off), never rejoined, because a
//! plain `fabric-mcp` would enroll a second Fabric session.
//!
//! Platform limits: stdin's end, SIGTERM/SIGINT/SIGHUP and the parent's death are watched on
//! Unix (`PR_SET_PDEATHSIG` on Linux, a twice-a-second parent-pid check on the others); on
//! Windows only Ctrl-C stops the command (no parent or stdin watch yet).

pub mod engine;
pub mod schedule;

pub use engine::{
    Audience, FabricLook, Look, LookFailure, LookTarget, MailWatcher, Problem, WatchConfig,
    WatchEvent, look_with,
};
