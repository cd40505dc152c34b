//! Talking to Fabric: `fabric-mcp --runner <r> --rejoin-only --runtime-session-id <id>` as a
//! child process speaking MCP over stdio, through the `rmcp` client.
//!
//! The child is spawned outside any deadline, in its own process group ([`crate::group`]), and
//! always ended by [`FabricProcess::finish`]: stdin closed, a short grace for it to exit, then
//! SIGKILL to its whole process group — also when it exited in time, for what it started —
//! and a `wait`, so nothing is left running and no zombie stays behind, even when Fabric hangs. This module never starts a
//! `fabric-mcp` without `--rejoin-only` (that would enroll a second Fabric session).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use serde_json::{Map, Value};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::time::Instant;

use crate::group::GroupChild;
use companion_hosts::host::Host;
use companion_platform::env_vars;
use companion_sessions::spool::SessionId;

/// How long a child may take to exit on its own after its stdin closes.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// Why talking to Fabric failed.
#[derive(Debug, thiserror::Error)]
pub enum FabricError {
    #[error("fabric-mcp was not found (set FABRIC_MCP or put it on PATH)")]
    ProgramNotFound,
    #[error("fabric-mcp could not be started: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("fabric-mcp did not complete the MCP handshake: {0}")]
    Handshake(String),
    #[error("fabric-mcp did not answer before the deadline")]
    Deadline,
}

/// Who to rejoin: the program, the host's runner and the runtime session id.
#[derive(Debug, Clone)]
pub struct Rejoin {
    pub program: PathBuf,
    pub host: Host,
    pub session: SessionId,
}

impl Rejoin {
    /// Finds `fabric-mcp` (`$FABRIC_MCP`, else on `PATH`).
    pub fn new(host: Host, session: SessionId) -> Result<Self, FabricError> {
        let program = fabric_mcp_program().ok_or(FabricError::ProgramNotFound)?;
        Ok(Rejoin {
            program,
            host,
            session,
        })
    }

    /// The arguments `fabric-mcp` is started with.
    pub fn args(&self) -> [&str; 5] {
        [
            "--runner",
            self.host.runner(),
            "--rejoin-only",
            "--runtime-session-id",
            self.session.as_str(),
        ]
    }
}

/// `$FABRIC_MCP` when set, else the first `fabric-mcp` on `PATH`.
pub fn fabric_mcp_program() -> Option<PathBuf> {
    if let Some(path) = env_vars::path_var(env_vars::FABRIC_MCP) {
        return Some(path);
    }
    let name = if cfg!(windows) {
        "fabric-mcp.exe"
    } else {
        "fabric-mcp"
    };
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// The running `fabric-mcp` child ([`GroupChild`]: in its own process group). Dropping it
/// unfinished kills its whole process group.
pub struct FabricProcess {
    group: GroupChild,
}

impl FabricProcess {
    /// Starts the child in its own process group with piped stdin/stdout and no stderr.
    pub fn spawn(rejoin: &Rejoin) -> Result<(Self, ChildStdout, ChildStdin), FabricError> {
        let mut command = Command::new(&rejoin.program);
        command
            .args(rejoin.args())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut group = GroupChild::spawn(&mut command).map_err(FabricError::Spawn)?;
        let child = group.child_mut();
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(FabricError::Spawn(std::io::Error::other("no stdio pipes")));
        };
        Ok((FabricProcess { group }, stdout, stdin))
    }

    /// The child's pid (for tests and logs).
    pub fn id(&self) -> Option<u32> {
        self.group.id()
    }

    /// Ends the child: a short grace to exit by itself (skipped when it already missed its
    /// deadline), then SIGKILL to its whole process group, always (a child it started in the
    /// background must not outlive it), then `wait` so it is reaped ([`GroupChild::end`]).
    pub async fn finish(self, grace: bool) {
        let _ = self.group.end(grace.then_some(EXIT_GRACE)).await;
    }
}

/// An MCP client session with `fabric-mcp`.
pub struct FabricClient {
    service: RunningService<RoleClient, ClientConfig>,
}

/// What one tool call gave back.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutcome {
    /// An answer: its first text content and whether it is an error (a refusal).
    Answered {
        text: Option<String>,
        is_error: bool,
    },
    /// The call failed in transport or protocol; its effect is unknown.
    Failed,
}

impl FabricClient {
    /// Performs the MCP handshake over the child's stdio.
    pub async fn connect(stdout: ChildStdout, stdin: ChildStdin) -> Result<Self, FabricError> {
        let config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("fabric-session", env!("CARGO_PKG_VERSION")),
        );
        let service = config
            .serve((stdout, stdin))
            .await
            .map_err(|e| FabricError::Handshake(e.to_string()))?;
        Ok(FabricClient { service })
    }

    /// Calls one tool with JSON-object arguments.
    pub async fn call(&self, tool: &'static str, arguments: Map<String, Value>) -> CallOutcome {
        let params = CallToolRequestParams::new(tool).with_arguments(arguments);
        match self.service.peer().call_tool(params).await {
            Ok(result) => CallOutcome::Answered {
                text: result
                    .content
                    .iter()
                    .find_map(|block| block.as_text().map(|t| t.text.clone())),
                is_error: result.is_error.unwrap_or(false),
            },
            Err(_) => CallOutcome::Failed,
        }
    }

    /// Ends the session politely (closes the transport, so the child sees EOF).
    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

/// Runs `body` against a rejoined Fabric session under `deadline`, then always ends the child.
pub async fn with_session<T>(
    rejoin: &Rejoin,
    deadline: Instant,
    body: impl AsyncFnOnce(&FabricClient) -> T,
) -> Result<T, FabricError> {
    let (process, stdout, stdin) = FabricProcess::spawn(rejoin)?;
    let outcome = tokio::time::timeout_at(deadline, async {
        let client = FabricClient::connect(stdout, stdin).await?;
        let value = body(&client).await;
        client.close().await;
        Ok::<T, FabricError>(value)
    })
    .await;
    process.finish(outcome.is_ok()).await;
    outcome.unwrap_or(Err(FabricError::Deadline))
}
