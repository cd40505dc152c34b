//! The `fabric-mcp` stand-in: an MCP server over stdio (rmcp) whose behaviour comes from the
//! state folder (see [`crate::state`]).
//!
//! At start it records itself in `calls.jsonl`, reads `mode` and `refusal-code`, then:
//! `crash` exits 3 without speaking MCP; `hang-start` never answers anything; `garbage`
//! prints lines that are not JSON-RPC until killed; `close-stdout` closes its stdout and
//! waits; `fork-holder` leaves a `sleep` holding its stdout open and exits; `hub-silent`
//! takes what arrives on stdin, connects to the origin `hub.json` names, sends a request and
//! waits for a reply (answering nothing meanwhile), as a `fabric-mcp` whose hub accepts the
//! connection and never answers; every other
//! mode serves the tools below until stdin closes. `hang` answers `initialize` and
//! `tools/list` but blocks the whole process on the first tool call. "Forever" is capped at
//! [`HANG_LIMIT`] so that a fake a test forgot to kill does not outlive the run by much.
//! With `leave-child` in the state folder it first starts `sleep` (in the stand-in's own
//! process group, stdio closed), records its pid and never waits for it: a `fabric-mcp` whose
//! child outlives it unless whoever started it ends the whole group.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, ServerInitializeError};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::answers::{self, Mode};
use crate::files::now_rfc3339;
use crate::state;

/// The tools the stand-in lists and answers.
pub const TOOLS: &[&str] = &[
    "fabric_whoami",
    "com.status",
    "com.list",
    "com.read_ack",
    "fabric_session_observe",
    "fabric_work_release",
    "fabric_work_list",
    "fabric_work_claim",
];

/// How long `hang` and `hang-start` block before giving up and exiting with code 4.
pub const HANG_LIMIT: Duration = Duration::from_secs(600);

/// Exit code of `crash` mode.
pub const CRASH_EXIT: u8 = 3;

/// What the command line said, as far as the stand-in cares.
#[derive(Clone, Debug, Default)]
pub struct Session {
    /// Every argument after the program name, as recorded in `calls.jsonl`.
    pub argv: Vec<String>,
    pub runner: String,
    pub runtime_session_id: Option<String>,
}

/// Blocks the calling thread (and so, on a current-thread runtime, the whole server), then
/// exits. SIGTERM and SIGKILL end it sooner.
fn hang() -> ! {
    std::thread::sleep(HANG_LIMIT);
    std::process::exit(4)
}

/// Prints lines that are not JSON-RPC until killed (capped like [`hang`]).
fn garbage() -> ! {
    use std::io::Write;
    let start = std::time::Instant::now();
    let mut out = std::io::stdout();
    while start.elapsed() < HANG_LIMIT {
        if out
            .write_all(b"this is not json-rpc {{{ \x01\n")
            .and_then(|()| out.flush())
            .is_err()
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::process::exit(4)
}

/// Starts a `sleep` holding this process's stdout, records it, and exits.
fn fork_holder(dir: &std::path::Path) -> ExitCode {
    let child = std::process::Command::new("sleep")
        .arg(state::LEFT_CHILD_SECS.to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::inherit())
        .stderr(std::process::Stdio::null())
        .spawn();
    let recorded = child.and_then(|child| {
        state::append_record(dir, &state::child_record(child.id(), std::process::id()))
    });
    match recorded {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fabric-fake: cannot leave a child holding stdout: {e}");
            ExitCode::from(2)
        }
    }
}

/// `hub.json` where the stand-in looks for it: Fabric's folder under `$XDG_DATA_HOME` (else
/// `~/.local/share`), the Linux layout the tests use.
fn hub_json() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(data.join("passioncode-fabric").join(crate::files::HUB_FILE))
}

/// `hub-silent`: stdin is read (and dropped) on a thread so the caller's writes never block;
/// the hub named in `hub.json` is asked over HTTP and its reply awaited (capped like
/// [`hang`]); the attempt is recorded. Nothing is ever written to stdout. After the reply, an
/// error, or a hub that cannot be reached, it keeps silent until killed (capped likewise).
fn hub_silent(dir: &std::path::Path) -> ! {
    use std::io::{Read, Write};
    std::thread::spawn(|| {
        let mut sink = [0u8; 4096];
        let mut stdin = std::io::stdin();
        while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    });
    let origin = hub_json()
        .and_then(|path| std::fs::read(path).ok())
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .and_then(|hub| hub["origin"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let address = origin.strip_prefix("http://").unwrap_or(&origin).to_owned();
    let stream = std::net::TcpStream::connect(&address);
    let _ = state::append_record(
        dir,
        &state::hub_record(std::process::id(), &origin, stream.is_ok()),
    );
    if let Ok(mut stream) = stream {
        let _ = stream.set_read_timeout(Some(HANG_LIMIT));
        let request = format!("POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Length: 0\r\n\r\n");
        if stream.write_all(request.as_bytes()).is_ok() {
            let mut reply = [0u8; 1];
            let _ = stream.read(&mut reply);
        }
    }
    hang()
}

/// Runs the server mode of `fabric-fake` and gives its exit code. Errors in the state folder
/// are reported on stderr as one line, with exit code 2.
pub fn run(session: Session) -> ExitCode {
    let Some(dir) = std::env::var_os(state::STATE_ENV) else {
        eprintln!(
            "fabric-fake: {} is not set (it names the stand-in's state folder)",
            state::STATE_ENV
        );
        return ExitCode::from(2);
    };
    let dir = PathBuf::from(dir);
    let start = state::start_record(&session.argv, std::process::id());
    let setup = state::append_record(&dir, &start).and_then(|()| {
        let mode = state::read_mode(&dir)?;
        Ok((mode, state::read_refusal_code(&dir)?))
    });
    let (mode, refusal_code) = match setup {
        Ok(setup) => setup,
        Err(e) => {
            eprintln!("fabric-fake: state folder {}: {e}", dir.display());
            return ExitCode::from(2);
        }
    };
    if state::read_leave_child(&dir) {
        let child = std::process::Command::new("sleep")
            .arg(state::LEFT_CHILD_SECS.to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        let recorded = child.and_then(|child| {
            state::append_record(&dir, &state::child_record(child.id(), std::process::id()))
        });
        if let Err(e) = recorded {
            eprintln!("fabric-fake: cannot leave a child behind: {e}");
            return ExitCode::from(2);
        }
    }
    match mode {
        Mode::Crash => return ExitCode::from(CRASH_EXIT),
        Mode::HangStart => hang(),
        Mode::Garbage => garbage(),
        Mode::CloseStdout => {
            // SAFETY: fd 1 is this process's stdout, owned by nothing else here; it is closed
            // once and never used again.
            #[cfg(unix)]
            drop(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(1) });
            hang()
        }
        Mode::ForkHolder => return fork_holder(&dir),
        Mode::HubSilent => hub_silent(&dir),
        _ => {}
    }
    let server = FakeServer {
        dir,
        mode,
        refusal_code,
        session: Arc::new(session),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread tokio runtime builds");
    let served: Result<(), String> = runtime.block_on(async {
        let running = match server.serve(rmcp::transport::stdio()).await {
            Ok(running) => running,
            // stdin closed before `initialize`: a clean stop, like after it.
            Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(e) => return Err(e.to_string()),
        };
        running.waiting().await.map(drop).map_err(|e| e.to_string())
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fabric-fake: MCP session failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The rmcp handler.
struct FakeServer {
    dir: PathBuf,
    mode: Mode,
    refusal_code: String,
    session: Arc<Session>,
}

impl FakeServer {
    /// The JSON answer of tool `name`, or `None` for a tool the stand-in does not know.
    fn answer(&self, name: &str) -> Result<Option<Value>, McpError> {
        let answer = match name {
            "fabric_whoami" => answers::whoami_answer(
                &self.session.runner,
                self.session.runtime_session_id.as_deref(),
            ),
            "com.status" => {
                let unread = state::read_unread(&self.dir)
                    .map_err(|e| McpError::internal_error(format!("fabric-fake: {e}"), None))?;
                answers::status_answer(self.mode, unread)
            }
            "com.list" => answers::list_answer(&now_rfc3339()),
            _ if TOOLS.contains(&name) => answers::ok_answer(),
            _ => return Ok(None),
        };
        Ok(Some(answer))
    }
}

impl ServerHandler for FakeServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("fabric-fake", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut schema = JsonObject::new();
        schema.insert("type".into(), "object".into());
        let schema = Arc::new(schema);
        let tools = TOOLS
            .iter()
            .map(|name| Tool::new(*name, "A tool of the Fabric stand-in.", schema.clone()))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.as_ref();
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let record = state::call_record(&self.session.argv, std::process::id(), name, arguments);
        state::append_record(&self.dir, &record)
            .map_err(|e| McpError::internal_error(format!("fabric-fake: {e}"), None))?;
        if let Some(delay) = state::read_delay(&self.dir)
            .map_err(|e| McpError::internal_error(format!("fabric-fake: {e}"), None))?
        {
            tokio::time::sleep(delay).await;
        }
        let result = match self.mode {
            Mode::Hang => hang(),
            Mode::Refusal => CallToolResult::error(vec![ContentBlock::text(
                answers::refusal_answer(&self.refusal_code).to_string(),
            )]),
            _ => match self.answer(name)? {
                Some(answer) => {
                    CallToolResult::success(vec![ContentBlock::text(answer.to_string())])
                }
                None => {
                    return Err(McpError::invalid_params(
                        format!("fabric-fake has no tool named {name:?}"),
                        None,
                    ));
                }
            },
        };
        Ok(result.into())
    }
}
