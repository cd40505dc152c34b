//! `companion-hosts`: the agent hosts (Claude Code, Codex, Kimi Code) and their config files.
//!
//! Which host is which (`host`), the versions tested and installed (`host_version`), our hook
//! command and how it is recognised (`hook_command`), the hook installer and its plans
//! (`install`), each host's own record of the person's approval (`approval`, read only), the
//! MCP registration of `fabric` (`registration`, `config_cache`, `json_scan`) and the program
//! the hooks point at (`stable_binary`). It never forges an approval, never starts an async
//! runtime and never talks to Fabric. See `docs/ARCHITECTURE.md`.

pub mod approval;
pub mod config_cache;
pub mod hook_command;
pub mod host;
pub mod host_version;
pub mod install;
pub mod json_scan;
pub mod registration;
pub mod stable_binary;
