//! Is this a session Fabric launched, or a Claude Code background job? Then every hook and
//! `watch-mail` stays silent: Fabric briefed that session itself, and a background job is not
//! the person's session.
//!
//! Signals, cheapest first. Only variable *names* are checked for presence, never their values
//! (two carry the session's credential); the exceptions are `FABRIC_LAUNCHED_SESSION`, whose
//! value must be `1`, and `CODEX_HOME`, a folder path compared with Fabric's sessions folder.
//! Last, a few ancestor processes are searched for `--mcp-config <Fabric>/sessions/<id>/mcp.json`;
//! only whether it matched is used, nothing is kept or logged.

use std::path::Path;

use companion_platform::env_vars;
use companion_platform::paths::Paths;
use companion_platform::process;

/// How many ancestors to look at for Fabric's `--mcp-config`.
const ANCESTOR_SCAN_DEPTH: usize = 6;

/// Why a hook stays silent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Silence {
    /// Fabric launched this session.
    FabricLaunched,
    /// A Claude Code background job (`CLAUDE_CODE_SESSION_KIND` set).
    BackgroundJob,
}

/// Checks the environment only (no process scan): cheap enough for every hook.
pub fn silence_from_env(paths: &Paths) -> Option<Silence> {
    if std::env::var_os(env_vars::CLAUDE_CODE_SESSION_KIND).is_some() {
        return Some(Silence::BackgroundJob);
    }
    if std::env::var_os(env_vars::FABRIC_LAUNCHED_SESSION).is_some_and(|v| v == "1") {
        return Some(Silence::FabricLaunched);
    }
    if env_vars::LAUNCHED_MARKERS
        .iter()
        .any(|name| std::env::var_os(name).is_some())
    {
        return Some(Silence::FabricLaunched);
    }
    if let Some(codex_home) = env_vars::path_var(env_vars::CODEX_HOME)
        && codex_home.starts_with(paths.fabric_sessions_dir())
    {
        return Some(Silence::FabricLaunched);
    }
    None
}

/// The environment checks, then the ancestor scan.
pub fn silence(paths: &Paths) -> Option<Silence> {
    silence_from_env(paths).or_else(|| {
        ancestor_launched_by_fabric(&paths.fabric_sessions_dir()).then_some(Silence::FabricLaunched)
    })
}

/// Whether one of our first few ancestors runs with Fabric's per-session `--mcp-config`.
pub fn ancestor_launched_by_fabric(fabric_sessions: &Path) -> bool {
    let mut pid = process::parent_pid();
    for _ in 0..ANCESTOR_SCAN_DEPTH {
        if pid <= 1 {
            return false;
        }
        if let Some(args) = process::command_line(pid)
            && args_name_fabric_config(&args, fabric_sessions)
        {
            return true;
        }
        match process::process_info(pid) {
            Some(info) => pid = info.parent,
            None => return false,
        }
    }
    false
}

/// Whether a command line holds `--mcp-config <fabric sessions>/<id>/mcp.json`
/// (or `--mcp-config=<…>`).
pub fn args_name_fabric_config(args: &[String], fabric_sessions: &Path) -> bool {
    let is_fabric_config = |value: &str| {
        let path = Path::new(value);
        path.starts_with(fabric_sessions) && path.file_name().is_some_and(|n| n == "mcp.json")
    };
    args.iter().enumerate().any(|(i, arg)| {
        if arg == "--mcp-config" {
            args.get(i + 1).is_some_and(|v| is_fabric_config(v))
        } else if let Some(value) = arg.strip_prefix("--mcp-config=") {
            is_fabric_config(value)
        } else {
            false
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn recognises_fabrics_mcp_config_only() {
        let sessions = Path::new("/home/a/.local/share/passioncode-fabric/sessions");
        let fabric = "/home/a/.local/share/passioncode-fabric/sessions/s-1/mcp.json";
        assert!(args_name_fabric_config(
            &args(&["claude", "--mcp-config", fabric]),
            sessions
        ));
        assert!(args_name_fabric_config(
            &args(&["claude", &format!("--mcp-config={fabric}")]),
            sessions
        ));
        assert!(!args_name_fabric_config(
            &args(&["claude", "--mcp-config", "/tmp/mcp.json"]),
            sessions
        ));
        assert!(!args_name_fabric_config(
            &args(&["claude", fabric]),
            sessions
        ));
        assert!(!args_name_fabric_config(
            &args(&["claude", "--mcp-config"]),
            sessions
        ));
    }
}
