//! Which host programs the suite runs, and what happens when one is not there.
//!
//! `tests/real-hosts/run.sh` installs the pinned versions (`versions.env`) and sets
//! `FABRIC_TEST_CLAUDE`, `FABRIC_TEST_CODEX`, `FABRIC_TEST_KIMI` (and `FABRIC_TEST_NODE_BIN`,
//! the Node that Kimi Code needs). Without them a test writes `not run: <why> (run
//! tests/real-hosts/run.sh)` to the real stderr (past the test harness's capture) and
//! returns; with `FABRIC_REAL_HOSTS_REQUIRED=1` (what `run.sh` sets) it fails instead.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The pinned versions, as `install-hosts.sh` reads them.
pub const VERSIONS_ENV: &str = include_str!("../versions.env");

/// Set to `1` to make a missing host a failure.
pub const REQUIRED_ENV: &str = "FABRIC_REAL_HOSTS_REQUIRED";

/// An agent host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Host {
    Claude,
    Codex,
    Kimi,
}

impl Host {
    /// Our `--host` name.
    pub fn cli_name(self) -> &'static str {
        match self {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Kimi => "kimi",
        }
    }

    pub fn display_name(self) -> &'static str {
        match self {
            Host::Claude => "Claude Code",
            Host::Codex => "Codex",
            Host::Kimi => "Kimi Code",
        }
    }

    /// Fabric's runner name (`fabric-mcp --runner`).
    pub fn runner(self) -> &'static str {
        match self {
            Host::Claude => "claude-code",
            Host::Codex => "codex",
            Host::Kimi => "kimi-code",
        }
    }

    fn program_env(self) -> &'static str {
        match self {
            Host::Claude => "FABRIC_TEST_CLAUDE",
            Host::Codex => "FABRIC_TEST_CODEX",
            Host::Kimi => "FABRIC_TEST_KIMI",
        }
    }

    fn not_run_env(self) -> String {
        format!("{}_NOT_RUN", self.program_env())
    }

    fn version_key(self) -> &'static str {
        match self {
            Host::Claude => "CLAUDE_CODE_VERSION",
            Host::Codex => "CODEX_VERSION",
            Host::Kimi => "KIMI_CODE_VERSION",
        }
    }

    /// The version `versions.env` pins.
    pub fn pinned_version(self) -> String {
        pinned(self.version_key()).unwrap_or_default()
    }
}

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.display_name())
    }
}

/// A value of `versions.env`.
pub fn pinned(key: &str) -> Option<String> {
    VERSIONS_ENV.lines().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        (k.trim() == key).then(|| v.trim().to_owned())
    })
}

/// A host program ready to run.
#[derive(Clone, Debug)]
pub struct HostProgram {
    pub host: Host,
    /// The program (`node_modules/.bin/<name>` of its install).
    pub path: PathBuf,
    /// A folder with a `node` to put first on PATH (Kimi Code needs Node >= 22.19).
    pub node_bin: Option<PathBuf>,
    /// What `--version` said.
    pub version: String,
}

impl HostProgram {
    /// The PATH the host runs with: its Node (when it has one), the folder of its program
    /// (as a person's PATH has it, so `status` finds it), then the system's folders.
    pub fn path_var(&self) -> String {
        let mut parts = Vec::new();
        if let Some(node) = &self.node_bin {
            parts.push(node.to_string_lossy().into_owned());
        }
        if let Some(dir) = self.path.parent() {
            parts.push(dir.to_string_lossy().into_owned());
        }
        parts.extend(
            ["/usr/local/bin", "/usr/bin", "/bin"]
                .iter()
                .map(|s| s.to_string()),
        );
        parts.join(":")
    }
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The host's program, or why it cannot run here (looked up once per process).
pub fn program(host: Host) -> Result<HostProgram, String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static FOUND: OnceLock<Mutex<HashMap<Host, Result<HostProgram, String>>>> = OnceLock::new();
    let found = FOUND.get_or_init(|| Mutex::new(HashMap::new()));
    let mut found = found.lock().unwrap_or_else(|e| e.into_inner());
    found.entry(host).or_insert_with(|| look_up(host)).clone()
}

fn look_up(host: Host) -> Result<HostProgram, String> {
    if let Some(reason) = var(&host.not_run_env()) {
        return Err(format!("{host}: {reason}"));
    }
    let Some(path) = var(host.program_env()) else {
        return Err(format!("{host}: {} is not set", host.program_env()));
    };
    let path = PathBuf::from(path);
    if !path.exists() {
        return Err(format!(
            "{host}: {} names {}, which does not exist",
            host.program_env(),
            path.display()
        ));
    }
    let node_bin = match host {
        Host::Kimi => {
            let Some(node) = var("FABRIC_TEST_NODE_BIN") else {
                return Err(format!(
                    "{host}: FABRIC_TEST_NODE_BIN is not set (Kimi Code needs Node >= 22.19)"
                ));
            };
            Some(PathBuf::from(node))
        }
        _ => None,
    };
    let mut program = HostProgram {
        host,
        path,
        node_bin,
        version: String::new(),
    };
    program.version = version_of(&program)?;
    let pinned = host.pinned_version();
    if !program.version.contains(&pinned) {
        let _ = writeln!(
            std::io::stderr(),
            "note: {host} says {:?}; the suite was written against {pinned} (versions.env)",
            program.version
        );
    }
    Ok(program)
}

fn version_of(program: &HostProgram) -> Result<String, String> {
    let output = Command::new(&program.path)
        .arg("--version")
        .env("PATH", program.path_var())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            format!(
                "{}: cannot run {}: {e}",
                program.host,
                program.path.display()
            )
        })?;
    if !output.status.success() {
        return Err(format!(
            "{}: {} --version failed ({}): {}",
            program.host,
            program.path.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Whether a missing host is a failure (`FABRIC_REAL_HOSTS_REQUIRED=1`).
pub fn required() -> bool {
    var(REQUIRED_ENV).as_deref() == Some("1")
}

/// Writes one line to the process's real stderr, past the test harness's capture.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The host's program; or, when it cannot run, says `not run: <why>` and gives `None` (the
/// test then returns), or fails when hosts are required.
pub fn require(host: Host, test: &str) -> Option<HostProgram> {
    match program(host) {
        Ok(program) => Some(program),
        Err(why) if required() => panic!("{test}: {why}"),
        Err(why) => {
            say(&format!(
                "{test}: not run: {why} (run tests/real-hosts/run.sh)"
            ));
            None
        }
    }
}

/// A path as text for config files and arguments.
pub fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The product warns when a host is older than the version it was tested with: that
    /// version is the one this suite pins.
    #[test]
    fn the_product_s_tested_versions_are_the_pinned_ones() {
        for (host, product) in [
            (Host::Claude, companion_hosts::host::Host::Claude),
            (Host::Codex, companion_hosts::host::Host::Codex),
            (Host::Kimi, companion_hosts::host::Host::Kimi),
        ] {
            assert_eq!(
                companion_hosts::host_version::tested(product),
                host.pinned_version(),
                "{host}: companion_hosts::host_version::TESTED and versions.env differ"
            );
        }
    }
}
