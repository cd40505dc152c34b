//! `companion-sessions`: the live agent sessions and what the programs show of them.
//!
//! The per-session spools the hooks, the worker, watch-mail and the tray share (`spool`),
//! each session's state as a pure state machine (`session_state`), the terminal's ids
//! (`terminal_ids`), what a host's own record says (`host_activity`), silence in launched
//! sessions (`launched`), Fabric's board (`board`), `hub.json` (`hub`), service descriptors
//! (`services`), the hook log and its one parser (`hook_log`), the desktop settings
//! (`settings`) and the typed status snapshot (`status`). It never starts an async runtime and
//! never talks to Fabric. See `docs/ARCHITECTURE.md`.

pub mod board;
pub mod hook_log;
pub mod host_activity;
pub mod hub;
pub mod launched;
pub mod services;
pub mod session_state;
pub mod settings;
pub mod spool;
pub mod status;
pub mod terminal_ids;
