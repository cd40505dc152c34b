//! `fabric-session`: Fabric's session hooks for Claude Code, Codex and Kimi Code.
//!
//! The library holds all the logic; the `fabric-session` binary is a thin command line over
//! it, and the desktop tray reads the same files through it. See `docs/ARCHITECTURE.md`.

pub mod board;
pub mod clock;
pub mod env_vars;
pub mod fabric_client;
pub mod fsutil;
pub mod git_turn;
pub mod hook_input;
pub mod hook_log;
pub mod hooks;
pub mod host;
pub mod hub;
pub mod install;
pub mod launched;
pub mod output;
pub mod paths;
pub mod process;
pub mod registration;
pub mod services;
pub mod settings;
pub mod spool;
pub mod stable_binary;
pub mod status;
pub mod texts;
pub mod watch;
pub mod worker;
