//! The agent hosts we serve (Claude Code, Codex, Kimi Code) and the few facts that differ
//! between them: their names on our command line, Fabric's runner name, how a hook's answer is
//! shaped, and what of it reaches the model (measured on the real hosts: `tests/real-hosts`).

use serde::{Deserialize, Serialize};

/// An agent host that runs our hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "HostId"))]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Host {
    /// Claude Code.
    Claude,
    /// OpenAI Codex.
    Codex,
    /// Kimi Code.
    Kimi,
}

impl Host {
    /// Every host, in display order.
    pub const ALL: [Host; 3] = [Host::Claude, Host::Codex, Host::Kimi];

    /// The name on our command line (`--host <name>`) and in files we write.
    pub fn cli_name(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Kimi => "kimi",
        }
    }

    /// The name a person reads.
    pub fn display_name(self) -> &'static str {
        match self {
            Host::Claude => "Claude Code",
            Host::Codex => "Codex",
            Host::Kimi => "Kimi Code",
        }
    }

    /// The `--runner` value `fabric-mcp` takes for this host.
    pub fn runner(self) -> &'static str {
        match self {
            Host::Claude => "claude-code",
            Host::Codex => "codex",
            Host::Kimi => "kimi-code",
        }
    }

    /// Parses [`Host::cli_name`] back.
    pub fn from_cli_name(name: &str) -> Option<Host> {
        Host::ALL.into_iter().find(|host| host.cli_name() == name)
    }

    /// Whether the host takes `hookSpecificOutput` JSON (Claude Code) or plain text.
    pub fn wants_json_output(self) -> bool {
        matches!(self, Host::Claude)
    }

    /// Whether what a SessionStart hook prints reaches the model. Kimi Code shows it to no one,
    /// so there the preamble rides on the first prompt instead.
    pub fn session_start_reaches_model(self) -> bool {
        !matches!(self, Host::Kimi)
    }

    /// Whether a session resumed in a new process still has the context our hooks gave it
    /// before: Codex keeps SessionStart's text in the thread it resumes and Kimi Code keeps the
    /// prompt's text (ours rides on it), so saying it again would double it. Claude Code does
    /// not replay SessionStart context on `--resume`, so it needs it again.
    pub fn history_keeps_hook_context(self) -> bool {
        matches!(self, Host::Codex | Host::Kimi)
    }
}

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.cli_name())
    }
}
