//! What the model does in a turn: reply with the fixed text, or call a tool the prompt asks
//! for. A pure function of the request's body, so tests can ask a real host for a tool call
//! that needs the person's permission, exactly as a model would.
//!
//! The prompt says it in words the stand-in looks for in the *last* message only (a trailing
//! `system` message, which Claude Code adds, is passed over):
//! - `stand-in: run <command>` — call the host's shell tool with `<command>`;
//! - `stand-in: run-here <command>` — the same, but never asking to leave Codex's sandbox (so
//!   Codex runs it without asking the person);
//! - `stand-in: agent run <command>` — call the host's subagent tool, whose prompt is
//!   `stand-in: run <command>` (so the subagent calls the shell tool in turn);
//! - `stand-in: agents run <command>` — call the subagent tool twice at once (Anthropic
//!   Messages; the Responses API gets the first call): one subagent runs `<command>`, the
//!   other is answered after [`PARALLEL_WAIT_SECS`] (`stand-in: wait <secs>`), so it ends
//!   while the first may still wait for the person;
//! - `stand-in: wait <secs>` — the fixed reply, given after `<secs>` (at most 30).
//!
//! Once the last message carries a tool's result (the tool ran, was refused or failed) and no
//! new ask, the answer is the fixed reply: the turn ends. A request that offers no such tool (a title or
//! summary request a host makes on the side) gets the fixed reply too.
//!
//! The tool is found by name among the request's tools (Claude Code `Bash`/`Agent`, Codex
//! `exec_command`/`shell`/`shell_command`, Kimi Code `Shell`/`Agent`…), and its input is built
//! from the tool's own JSON schema: the command goes into `command` or `cmd` (a string, or
//! `["bash", "-lc", …]` where the schema wants an array), the subagent's prompt into `prompt`
//! (or `message`), every other required string gets a short fixed word (the first of an
//! `enum`). Where the shell tool can ask to leave the sandbox (Codex's `sandbox_permissions`),
//! it asks (`require_escalated`), so Codex asks the person as it would for a real model.

use serde_json::{Map, Value, json};

/// The words that ask for a shell command.
pub const RUN: &str = "stand-in: run ";
/// The words that ask for a shell command inside the host's sandbox.
pub const RUN_HERE: &str = "stand-in: run-here ";
/// The words that ask for a subagent running a shell command.
pub const AGENT_RUN: &str = "stand-in: agent run ";

/// The words that ask for two subagents at once.
pub const AGENTS_RUN: &str = "stand-in: agents run ";
/// The words that ask for the fixed reply after some seconds.
pub const WAIT: &str = "stand-in: wait ";
/// How long the second of two parallel subagents takes.
pub const PARALLEL_WAIT_SECS: u64 = 6;
/// The longest a reply is held back.
const MAX_WAIT_SECS: u64 = 30;

/// Shell tools, most specific first.
const SHELL_TOOLS: &[&str] = &[
    "Bash",
    "Shell",
    "bash",
    "shell",
    "exec_command",
    "shell_command",
    "local_shell",
];
/// Subagent tools.
const AGENT_TOOLS: &[&str] = &["Agent", "Task", "spawn_agent", "task", "agent"];

/// What the model answers.
#[derive(Clone, Debug, PartialEq)]
pub enum Move {
    /// The fixed reply: the turn ends.
    Reply,
    /// A call of `name` with `input` (a JSON object); `namespace` names the group a
    /// Responses API tool was offered in (Codex's `multi_agent_v1`).
    Call {
        name: String,
        namespace: Option<String>,
        input: Value,
    },
    /// Calls of the same tool with each of `inputs`, in one answer (parallel subagents).
    Parallel {
        name: String,
        namespace: Option<String>,
        inputs: Vec<Value>,
    },
    /// The fixed reply, given after a while.
    ReplyAfter(std::time::Duration),
}

/// A tool as the request offers it: its name and the JSON schema of its input.
struct Tool<'a> {
    name: &'a str,
    namespace: Option<&'a str>,
    schema: Option<&'a Value>,
}

/// What the request's last message asks for.
#[derive(Debug, PartialEq)]
enum Ask {
    Nothing,
    Run(String),
    RunHere(String),
    AgentRun(String),
    AgentsRun(String),
    Wait(u64),
}

/// The move for an Anthropic Messages request.
pub fn anthropic_move(body: &Value) -> Move {
    // Claude Code puts a `system` message of its own after the conversation.
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] != "system"));
    let Some(last) = last else {
        return Move::Reply;
    };
    let texts: Vec<&str> = match &last["content"] {
        Value::String(text) => vec![text.as_str()],
        // A tool's result is not text: the turn ends, unless the person's next prompt rides
        // in the same message (Kimi Code does that after an interrupt).
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect(),
        _ => Vec::new(),
    };
    if last["role"] != "user" {
        return Move::Reply;
    }
    let tools: Vec<Tool<'_>> = body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| {
                    Some(Tool {
                        name: t["name"].as_str()?,
                        namespace: None,
                        schema: t.get("input_schema"),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    decide(&ask_in(&texts), &tools)
}

/// The move for an OpenAI Responses request.
pub fn openai_move(body: &Value) -> Move {
    let Some(last) = body["input"].as_array().and_then(|i| i.last()) else {
        return Move::Reply;
    };
    let kind = last["type"].as_str().unwrap_or("message");
    if kind.ends_with("_output") {
        return Move::Reply;
    }
    if kind != "message" || last["role"] != "user" {
        return Move::Reply;
    }
    let texts: Vec<&str> = match &last["content"] {
        Value::String(text) => vec![text.as_str()],
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => Vec::new(),
    };
    let mut tools: Vec<Tool<'_>> = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        let (namespace, group) = match tool["type"].as_str() {
            Some("namespace") => (tool["name"].as_str(), tool["tools"].as_array()),
            _ => (None, None),
        };
        let members = group.map_or_else(|| vec![tool], |g| g.iter().collect());
        for member in members.into_iter().filter(|t| t["type"] == "function") {
            if let Some(name) = member["name"].as_str() {
                tools.push(Tool {
                    name,
                    namespace,
                    schema: member.get("parameters"),
                });
            }
        }
    }
    decide(&ask_in(&texts), &tools)
}

/// The ask in the texts of the last message (the last one that says anything).
fn ask_in(texts: &[&str]) -> Ask {
    let mut ask = Ask::Nothing;
    for text in texts {
        if let Some(at) = text.rfind(AGENTS_RUN) {
            ask = Ask::AgentsRun(command_after(&text[at + AGENTS_RUN.len()..]));
        } else if let Some(at) = text.rfind(WAIT) {
            let secs = command_after(&text[at + WAIT.len()..]).parse::<u64>();
            ask = secs.map_or(Ask::Nothing, |s| Ask::Wait(s.min(MAX_WAIT_SECS)));
        } else if let Some(at) = text.rfind(AGENT_RUN) {
            ask = Ask::AgentRun(command_after(&text[at + AGENT_RUN.len()..]));
        } else if let Some(at) = text.rfind(RUN_HERE) {
            ask = Ask::RunHere(command_after(&text[at + RUN_HERE.len()..]));
        } else if let Some(at) = text.rfind(RUN) {
            ask = Ask::Run(command_after(&text[at + RUN.len()..]));
        }
    }
    match ask {
        Ask::Run(c) | Ask::RunHere(c) | Ask::AgentRun(c) | Ask::AgentsRun(c) if c.is_empty() => {
            Ask::Nothing
        }
        other => other,
    }
}

/// The command: the rest of its line.
fn command_after(rest: &str) -> String {
    rest.lines().next().unwrap_or_default().trim().to_owned()
}

fn decide(ask: &Ask, tools: &[Tool<'_>]) -> Move {
    let find = |names: &[&str]| {
        names
            .iter()
            .find_map(|name| tools.iter().find(|t| t.name == *name))
    };
    match ask {
        Ask::Nothing => Move::Reply,
        Ask::Wait(secs) => Move::ReplyAfter(std::time::Duration::from_secs(*secs)),
        Ask::AgentsRun(command) => match find(AGENT_TOOLS) {
            Some(tool) => Move::Parallel {
                name: tool.name.to_owned(),
                namespace: tool.namespace.map(str::to_owned),
                inputs: vec![
                    agent_input(tool.schema, &format!("{RUN}{command}")),
                    agent_input(tool.schema, &format!("{WAIT}{PARALLEL_WAIT_SECS}")),
                ],
            },
            None => Move::Reply,
        },
        Ask::Run(command) | Ask::RunHere(command) => match find(SHELL_TOOLS) {
            Some(tool) => Move::Call {
                name: tool.name.to_owned(),
                namespace: tool.namespace.map(str::to_owned),
                input: shell_input(tool.schema, command, matches!(ask, Ask::Run(_))),
            },
            None => Move::Reply,
        },
        Ask::AgentRun(command) => match find(AGENT_TOOLS) {
            Some(tool) => Move::Call {
                name: tool.name.to_owned(),
                namespace: tool.namespace.map(str::to_owned),
                input: agent_input(tool.schema, &format!("{RUN}{command}")),
            },
            None => Move::Reply,
        },
    }
}

/// The input of a shell tool running `command`, asking to leave the sandbox when `escalate`
/// and the tool can.
fn shell_input(schema: Option<&Value>, command: &str, escalate: bool) -> Value {
    let properties = schema.and_then(|s| s["properties"].as_object());
    let key = ["command", "cmd"]
        .into_iter()
        .find(|k| properties.is_some_and(|p| p.contains_key(*k)))
        .unwrap_or("command");
    let wants_array = properties
        .and_then(|p| p.get(key))
        .is_some_and(|p| p["type"] == "array");
    let value = if wants_array {
        json!(["bash", "-lc", command])
    } else {
        json!(command)
    };
    let mut input = fill_required(schema, [(key, value)]);
    // Codex runs a command in its sandbox without asking unless the model asks to leave it,
    // as a model does for a command that needs to.
    let escalates = escalate
        && properties
            .and_then(|p| p.get("sandbox_permissions"))
            .and_then(|p| p["enum"].as_array())
            .is_some_and(|e| e.iter().any(|v| v == "require_escalated"));
    if escalates {
        input["sandbox_permissions"] = json!("require_escalated");
        input["justification"] = json!("The stand-in asks to run this outside the sandbox.");
    }
    input
}

/// The input of a subagent tool with `prompt`.
fn agent_input(schema: Option<&Value>, prompt: &str) -> Value {
    let properties = schema.and_then(|s| s["properties"].as_object());
    let key = ["prompt", "message", "task", "input"]
        .into_iter()
        .find(|k| properties.is_some_and(|p| p.contains_key(*k)))
        .unwrap_or("prompt");
    fill_required(schema, [(key, json!(prompt))])
}

/// `given`, plus a short word for every other required string property of `schema`.
fn fill_required<const N: usize>(schema: Option<&Value>, given: [(&str, Value); N]) -> Value {
    let mut input = Map::new();
    for (key, value) in given {
        input.insert(key.to_owned(), value);
    }
    let properties = schema.and_then(|s| s["properties"].as_object());
    let required = schema
        .and_then(|s| s["required"].as_array())
        .map(|r| r.iter().filter_map(Value::as_str).collect::<Vec<_>>())
        .unwrap_or_default();
    for key in required {
        if input.contains_key(key) {
            continue;
        }
        let property = properties.and_then(|p| p.get(key));
        let value = match property {
            Some(p) if p["enum"].is_array() => p["enum"][0].clone(),
            Some(p) if p["type"] == "boolean" => json!(false),
            Some(p) if p["type"] == "integer" || p["type"] == "number" => json!(1),
            Some(p) if p["type"] == "array" => json!([]),
            _ => json!("stand-in"),
        };
        input.insert(key.to_owned(), value);
    }
    Value::Object(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bash_tool() -> Value {
        json!({"name": "Bash", "input_schema": {"type": "object",
            "properties": {"command": {"type": "string"}, "description": {"type": "string"},
                           "timeout": {"type": "number"}},
            "required": ["command"]}})
    }

    fn agent_tool() -> Value {
        json!({"name": "Agent", "input_schema": {"type": "object",
            "properties": {"description": {"type": "string"}, "prompt": {"type": "string"},
                           "subagent_type": {"type": "string", "enum": ["general-purpose", "Explore"]}},
            "required": ["description", "prompt", "subagent_type"]}})
    }

    #[test]
    fn a_prompt_asking_to_run_gets_a_shell_call() {
        let body = json!({"tools": [agent_tool(), bash_tool()], "messages": [
            {"role": "user", "content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"},
                                         {"type": "text", "text": "please stand-in: run touch made-here\nthanks"}]},
            {"role": "system", "content": [{"type": "text", "text": "# Environment"}]}]});
        assert_eq!(
            anthropic_move(&body),
            Move::Call {
                name: "Bash".into(),
                namespace: None,
                input: json!({"command": "touch made-here"})
            }
        );
    }

    #[test]
    fn a_tool_result_ends_the_turn_and_no_tool_means_a_reply() {
        let body = json!({"tools": [bash_tool()], "messages": [
            {"role": "user", "content": "stand-in: run ls"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}]});
        assert_eq!(anthropic_move(&body), Move::Reply);
        let next_prompt_with_the_result = json!({"tools": [bash_tool()], "messages": [
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "stand-in: run ls"}]},
                {"type": "text", "text": "stand-in: run pwd"}]}]});
        assert_eq!(
            anthropic_move(&next_prompt_with_the_result),
            Move::Call {
                name: "Bash".into(),
                namespace: None,
                input: json!({"command": "pwd"})
            }
        );
        let no_tools = json!({"messages": [{"role": "user", "content": "stand-in: run ls"}]});
        assert_eq!(anthropic_move(&no_tools), Move::Reply);
        let plain =
            json!({"tools": [bash_tool()], "messages": [{"role": "user", "content": "hello"}]});
        assert_eq!(anthropic_move(&plain), Move::Reply);
    }

    #[test]
    fn an_agent_ask_calls_the_subagent_tool_with_a_run_prompt() {
        let body = json!({"tools": [bash_tool(), agent_tool()], "messages": [
            {"role": "user", "content": "stand-in: agent run touch sub"}]});
        assert_eq!(
            anthropic_move(&body),
            Move::Call {
                name: "Agent".into(),
                namespace: None,
                input: json!({"prompt": "stand-in: run touch sub", "description": "stand-in",
                              "subagent_type": "general-purpose"})
            }
        );
    }

    #[test]
    fn responses_requests_call_functions_with_the_schema_s_shape() {
        let body = json!({"tools": [
            {"type": "function", "name": "shell", "parameters": {"type": "object",
                "properties": {"command": {"type": "array", "items": {"type": "string"}},
                               "workdir": {"type": "string"}}, "required": ["command"]}}],
            "input": [{"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": "stand-in: run touch x"}]}]});
        assert_eq!(
            openai_move(&body),
            Move::Call {
                name: "shell".into(),
                namespace: None,
                input: json!({"command": ["bash", "-lc", "touch x"]})
            }
        );
        let answered = json!({"tools": body["tools"], "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "stand-in: run touch x"}]},
            {"type": "function_call", "call_id": "c", "name": "shell", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": "ok"}]});
        assert_eq!(openai_move(&answered), Move::Reply);
    }

    #[test]
    fn codex_is_asked_to_leave_its_sandbox_and_its_subagents_are_namespaced() {
        let tools = json!([
            {"type": "function", "name": "exec_command", "parameters": {"type": "object",
                "properties": {"cmd": {"type": "string"}, "justification": {"type": "string"},
                    "sandbox_permissions": {"type": "string", "enum": ["use_default", "require_escalated"]}},
                "required": ["cmd"]}},
            {"type": "namespace", "name": "multi_agent_v1", "tools": [
                {"type": "function", "name": "spawn_agent", "parameters": {"type": "object",
                    "properties": {"message": {"type": "string"}}}}]}]);
        let ask = |text: &str| {
            json!({"tools": tools, "input": [{"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": text}]}]})
        };
        let Move::Call {
            name,
            namespace,
            input,
        } = openai_move(&ask("stand-in: run touch y"))
        else {
            panic!("no call")
        };
        assert_eq!((name.as_str(), namespace), ("exec_command", None));
        assert_eq!(input["cmd"], "touch y");
        assert_eq!(input["sandbox_permissions"], "require_escalated");
        let Move::Call { input, .. } = openai_move(&ask("stand-in: run-here touch y")) else {
            panic!("no call")
        };
        assert_eq!(input["cmd"], "touch y");
        assert!(input.get("sandbox_permissions").is_none(), "{input}");
        assert_eq!(
            openai_move(&ask("stand-in: agent run touch z")),
            Move::Call {
                name: "spawn_agent".into(),
                namespace: Some("multi_agent_v1".into()),
                input: json!({"message": "stand-in: run touch z"})
            }
        );
    }

    #[test]
    fn two_subagents_at_once_one_of_them_answered_late() {
        let body = json!({"messages": [{"role": "user", "content": "stand-in: agents run touch p"}],
                          "tools": [agent_tool()]});
        let Move::Parallel { name, inputs, .. } = anthropic_move(&body) else {
            panic!("not two calls at once");
        };
        assert_eq!(name, "Agent");
        assert_eq!(inputs.len(), 2);
        assert_eq!(inputs[0]["prompt"], "stand-in: run touch p");
        assert_eq!(
            inputs[1]["prompt"],
            format!("stand-in: wait {PARALLEL_WAIT_SECS}")
        );
        let late = json!({"messages": [{"role": "user", "content": inputs[1]["prompt"]}],
                          "tools": [agent_tool()]});
        assert_eq!(
            anthropic_move(&late),
            Move::ReplyAfter(std::time::Duration::from_secs(PARALLEL_WAIT_SECS))
        );
        let too_long = json!({"messages": [{"role": "user", "content": "stand-in: wait 999"}]});
        assert_eq!(
            anthropic_move(&too_long),
            Move::ReplyAfter(std::time::Duration::from_secs(30))
        );
    }
}
