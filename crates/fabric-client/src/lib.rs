//! `fabric-client`: everything that talks to Fabric, asynchronously.
//!
//! - [`mcp`]: `fabric-mcp --rejoin-only` as an MCP child process (spawn, deadline, kill, reap).
//! - [`worker`]: the detached worker's work: turn observations, `com.status` into
//!   `board.json`, the session's end.
//! - [`git_turn`]: a turn as numbers (HEAD, files, lines), for the worker.
//! - [`watch`]: the mail watch engine that `watch-mail` and the tray drive.
//! - [`deadline`]: `now + wait` on tokio's clock, never overflowing.
//! - [`group`]: a child and everything it starts, ended together (process group, job object).
//!
//! Nothing here runs on a hook's fast path; the hooks only start the worker, detached.

pub mod deadline;
pub mod git_turn;
pub mod group;
pub mod mcp;
pub mod watch;
pub mod worker;
