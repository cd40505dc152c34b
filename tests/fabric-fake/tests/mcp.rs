//! The real `fabric-fake` binary as an MCP server over stdio, driven by the rmcp client the
//! way the hook binary drives `fabric-mcp`, in each mode.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fabric_fake::{FakeFabric, fake_binary};
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ServiceError, ServiceExt};
use serde_json::{Value, json};
use tempfile::TempDir;

type Client = RunningService<RoleClient, ()>;

/// The argv the hook binary uses.
const ARGV: [&str; 5] = [
    "--runner",
    "claude-code",
    "--rejoin-only",
    "--runtime-session-id",
    "sess-1",
];

fn fake(mode: &str) -> (TempDir, FakeFabric) {
    let root = tempfile::tempdir().expect("a temp folder");
    let fake = FakeFabric::new(root.path());
    fake.set_mode(mode);
    (root, fake)
}

/// Starts the stand-in with `args` and the stand-in's environment; gives the transport and
/// the child's pid.
fn spawn(fake: &FakeFabric, args: &[&str]) -> (TokioChildProcess, u32) {
    let mut command = tokio::process::Command::new(fake_binary());
    command.args(args).envs(fake.env()).kill_on_drop(true);
    let transport = TokioChildProcess::new(command).expect("fabric-fake starts");
    let pid = transport.id().expect("a running child has a pid");
    (transport, pid)
}

async fn connect(fake: &FakeFabric) -> (Client, u32) {
    let (transport, pid) = spawn(fake, &ARGV);
    let client = ().serve(transport).await.expect("the stand-in initializes");
    (client, pid)
}

async fn call(client: &Client, tool: &str) -> Result<CallToolResult, ServiceError> {
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()))
        .await
}

/// The JSON in `content[0].text`.
fn text_json(result: &CallToolResult) -> Value {
    let text = &result.content[0]
        .as_text()
        .expect("the answer is text")
        .text;
    serde_json::from_str(text).expect("the text is JSON")
}

/// Kills the child at once (SIGKILL on Unix) and ends the client.
async fn kill(client: Client, pid: u32) {
    #[cfg(unix)]
    {
        let status = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -KILL {pid} failed");
    }
    #[cfg(not(unix))]
    let _ = pid;
    // Closes stdin and reaps the child (or, off Unix, terminates it).
    let _ = client.cancel().await;
}

#[tokio::test]
async fn ready_answers_status_and_records_the_call() {
    let (_root, fake) = fake("ready");
    fake.set_unread(5);
    let (client, _pid) = connect(&fake).await;

    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    for tool in [
        "fabric_whoami",
        "com.status",
        "fabric_session_observe",
        "fabric_work_release",
    ] {
        assert!(names.contains(&tool), "{tool} missing from {names:?}");
    }

    let status = call(&client, "com.status").await.expect("com.status");
    assert_eq!(status.is_error, Some(false));
    let status = text_json(&status);
    assert_eq!(status["unread"], 5);
    assert_eq!(status["board"]["state"], "ready");

    // `unread` is re-read at every call.
    fake.set_unread(9);
    let status = call(&client, "com.status").await.expect("com.status");
    assert_eq!(text_json(&status)["unread"], 9);

    let whoami = call(&client, "fabric_whoami").await.expect("fabric_whoami");
    assert_eq!(
        text_json(&whoami),
        json!({"enrolled": true, "runtimeSessionId": "sess-1", "runner": "claude-code"})
    );

    let mut arguments = JsonObject::new();
    arguments.insert("event".into(), json!("stop"));
    let observed = client
        .call_tool(CallToolRequestParams::new("fabric_session_observe").with_arguments(arguments))
        .await
        .expect("fabric_session_observe");
    assert_eq!(text_json(&observed), json!({"ok": true}));
    client.cancel().await.expect("the client closes");

    let starts = fake.starts();
    assert_eq!(starts.len(), 1);
    assert_eq!(starts[0]["argv"], json!(ARGV));
    let calls = fake.tool_calls("com.status");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["arguments"], json!({}));
    assert_eq!(calls[0]["pid"], starts[0]["pid"]);
    assert!(
        calls[0]["argv"]
            .as_array()
            .expect("argv is a list")
            .contains(&json!("--rejoin-only"))
    );
    let observed = fake.tool_calls("fabric_session_observe");
    assert_eq!(observed[0]["arguments"], json!({"event": "stop"}));
}

#[tokio::test]
async fn unknown_flags_are_ignored() {
    let (_root, fake) = fake("ready");
    let (transport, _pid) = spawn(
        &fake,
        &[
            "--bogus",
            "1",
            "--runner=codex",
            "-x",
            "--runtime-session-id=s2",
        ],
    );
    let client = ().serve(transport).await.expect("the stand-in initializes");
    let whoami = call(&client, "fabric_whoami").await.expect("fabric_whoami");
    assert_eq!(text_json(&whoami)["runner"], "codex");
    assert_eq!(text_json(&whoami)["runtimeSessionId"], "s2");
    client.cancel().await.expect("the client closes");
}

#[tokio::test]
async fn degraded_and_unavailable_boards() {
    let (_root, fake) = fake("degraded");
    fake.set_unread(3);
    let (client, _pid) = connect(&fake).await;
    let status = text_json(&call(&client, "com.status").await.expect("com.status"));
    assert_eq!(status["board"]["state"], "degraded");
    assert_eq!(status["unread"], 3);
    client.cancel().await.expect("the client closes");

    fake.set_mode("unavailable");
    let (client, _pid) = connect(&fake).await;
    let status = text_json(&call(&client, "com.status").await.expect("com.status"));
    assert_eq!(status["board"]["state"], "unavailable");
    assert!(
        status.get("unread").is_none(),
        "unavailable has no unread: {status}"
    );
    client.cancel().await.expect("the client closes");
}

#[tokio::test]
async fn refusal_refuses_every_tool() {
    let (_root, fake) = fake("refusal");
    fake.set_refusal_code("fenced");
    let (client, _pid) = connect(&fake).await;
    for tool in ["com.status", "fabric_whoami", "fabric_work_release"] {
        let result = call(&client, tool).await.expect("a tool-level refusal");
        assert_eq!(result.is_error, Some(true), "{tool}");
        assert_eq!(text_json(&result)["error"]["code"], "fenced", "{tool}");
    }
    client.cancel().await.expect("the client closes");
    assert_eq!(fake.tool_calls("com.status").len(), 1);
}

#[tokio::test]
async fn crash_exits_3_after_recording_the_start() {
    let (_root, fake) = fake("crash");
    let (transport, _pid) = spawn(&fake, &ARGV);
    assert!(().serve(transport).await.is_err(), "initialize must fail");
    assert_eq!(fake.starts().len(), 1);
    assert!(fake.tool_calls("com.status").is_empty());

    let status = Command::new(fake_binary())
        .args(ARGV)
        .envs(fake.env())
        .stdin(Stdio::null())
        .status()
        .expect("fabric-fake runs");
    assert_eq!(status.code(), Some(3));
    assert_eq!(fake.starts().len(), 2);
}

#[tokio::test]
async fn hang_never_answers_a_tool_call() {
    let (_root, fake) = fake("hang");
    let (client, pid) = connect(&fake).await;
    let answer = tokio::time::timeout(Duration::from_secs(1), call(&client, "com.status")).await;
    assert!(answer.is_err(), "a hanging stand-in answered: {answer:?}");
    assert_eq!(fake.tool_calls("com.status").len(), 1);
    kill(client, pid).await;
}

#[tokio::test]
async fn hang_start_never_answers_initialize() {
    let (_root, fake) = fake("hang-start");
    let (transport, pid) = spawn(&fake, &ARGV);
    let started = tokio::time::timeout(Duration::from_secs(1), ().serve(transport)).await;
    assert!(started.is_err(), "a stand-in hanging at start initialized");
    assert_eq!(fake.starts().len(), 1);
    // The transport was dropped with the timed-out future; make sure the child is gone.
    #[cfg(unix)]
    let _ = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
    #[cfg(not(unix))]
    let _ = pid;
}

#[test]
fn stops_cleanly_on_stdin_eof() {
    let (_root, fake) = fake("ready");
    let mut child = Command::new(fake_binary())
        .args(ARGV)
        .envs(fake.env())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("fabric-fake starts");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}},
    });
    writeln!(stdin, "{initialize}").expect("write initialize");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped stdout"))
        .read_line(&mut line)
        .expect("read the answer");
    let answer: Value = serde_json::from_str(&line).expect("one JSON message per line");
    assert_eq!(answer["id"], 1);
    assert!(
        answer["result"]["capabilities"]["tools"].is_object(),
        "{answer}"
    );
    drop(stdin);

    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("fabric-fake did not stop on stdin EOF");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}

#[test]
fn missing_state_folder_exits_2() {
    let output = Command::new(fake_binary())
        .args(ARGV)
        .env_remove("FABRIC_FAKE_STATE")
        .stdin(Stdio::null())
        .output()
        .expect("fabric-fake runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("FABRIC_FAKE_STATE"), "{stderr}");
}
