//! `companion-core`: Fabric Companion's synchronous core, shared by the `fabric-session` hook
//! binary, the tray and the dashboard.
//!
//! It owns where things live, the hosts, careful file handling, processes, the per-session
//! spools, Fabric's `hub.json`, the hook log and its parser, MCP registrations, the desktop
//! settings, the typed status snapshot, the hook installer and the desktop plumbing (finding
//! and starting our programs). It never starts an async runtime and never talks to Fabric:
//! that is `fabric-client`'s job. See `docs/ARCHITECTURE.md`.

pub mod approval;
pub mod autostart;
pub mod board;
pub mod clock;
pub mod config_cache;
pub mod detach;
pub mod env_vars;
#[cfg(feature = "watch")]
pub mod file_watch;
pub mod fsutil;
pub mod hook_log;
pub mod host;
pub mod host_version;
pub mod hub;
pub mod install;
pub mod json_scan;
pub mod launched;
pub mod paths;
pub mod platform;
pub mod process;
pub mod process_group;
pub mod programs;
pub mod registration;
pub mod services;
pub mod settings;
pub mod shell_wrapper;
pub mod spool;
pub mod stable_binary;
pub mod status;
pub mod tray_lock;
pub mod watched;
