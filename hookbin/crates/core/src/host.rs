//! The agent hosts we serve (Claude Code, Codex, Kimi Code) and the few facts that differ
//! between them: their names on our command line, Fabric's runner name, and how a hook's
//! answer is shaped.

use serde::{Deserialize, Serialize};

/// An agent host that runs our hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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
}

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.cli_name())
    }
}
