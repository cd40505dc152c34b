//! The Anthropic Messages API, as much as a host needs to finish a turn: one assistant text
//! block with the fixed reply, `stop_reason: end_turn`, as a JSON message or as the SSE event
//! sequence (`message_start`, `content_block_start`, `ping`, `content_block_delta`,
//! `content_block_stop`, `message_delta`, `message_stop`); or one `tool_use` block
//! (`stop_reason: tool_use`, its input streamed as one `input_json_delta`) when the script
//! calls a tool ([`crate::script`]); a token count; a model list.

use serde_json::{Value, json};

use crate::routes::sse_event;

/// The model named in the answer when the request names none.
pub const DEFAULT_MODEL: &str = "claude-stand-in";

/// A rough token count for a body of `bytes` bytes (hosts only show it).
pub fn estimate_tokens(bytes: usize) -> u64 {
    (bytes as u64 / 4).max(1)
}

fn model_of(request: &Value) -> String {
    request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_MODEL)
        .to_owned()
}

fn usage(input_tokens: u64, output_tokens: u64) -> Value {
    json!({
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    })
}

/// The non-streaming answer to `POST /v1/messages`.
pub fn message(request: &Value, id: &str, reply: &str, input_tokens: u64) -> Value {
    json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model_of(request),
        "content": [{"type": "text", "text": reply}],
        "stop_reason": "end_turn",
        "stop_sequence": null,
        "usage": usage(input_tokens, estimate_tokens(reply.len())),
    })
}

/// The `message_start` event every streamed answer opens with.
fn message_start(request: &Value, id: &str, input_tokens: u64) -> Value {
    json!({
        "type": "message_start",
        "message": {
            "id": id,
            "type": "message",
            "role": "assistant",
            "model": model_of(request),
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": usage(input_tokens, 1),
        },
    })
}

/// The streaming answer to `POST /v1/messages` (`"stream": true`), as the SSE body.
pub fn message_stream(request: &Value, id: &str, reply: &str, input_tokens: u64) -> String {
    let output_tokens = estimate_tokens(reply.len());
    let events = [
        ("message_start", message_start(request, id, input_tokens)),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "text", "text": ""}}),
        ),
        ("ping", json!({"type": "ping"})),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": reply}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta",
                   "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                   "usage": {"output_tokens": output_tokens}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    events
        .iter()
        .map(|(name, data)| sse_event(Some(name), data))
        .collect()
}

/// A tool call's id: the first as `toolu_<message id>`, the next ones numbered.
fn call_id(id: &str, index: usize) -> String {
    if index == 0 {
        format!("toolu_{id}")
    } else {
        format!("toolu_{id}_{index}")
    }
}

/// The non-streaming answer calling `name` with each of `inputs` (one, or several at once).
pub fn tool_use(
    request: &Value,
    id: &str,
    name: &str,
    inputs: &[Value],
    input_tokens: u64,
) -> Value {
    let content: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            json!({"type": "tool_use", "id": call_id(id, i), "name": name, "input": input})
        })
        .collect();
    json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model_of(request),
        "content": content,
        "stop_reason": "tool_use",
        "stop_sequence": null,
        "usage": usage(input_tokens, 10),
    })
}

/// The streaming answer calling `name` with each of `inputs`, as the SSE body.
pub fn tool_use_stream(
    request: &Value,
    id: &str,
    name: &str,
    inputs: &[Value],
    input_tokens: u64,
) -> String {
    let mut events = vec![("message_start", message_start(request, id, input_tokens))];
    for (index, input) in inputs.iter().enumerate() {
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "tool_use", "id": call_id(id, index),
                                     "name": name, "input": {}}}),
        ));
        if index == 0 {
            events.push(("ping", json!({"type": "ping"})));
        }
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index,
                   "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
        ));
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": "tool_use", "stop_sequence": null},
               "usage": {"output_tokens": 10}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    events
        .iter()
        .map(|(name, data)| sse_event(Some(name), data))
        .collect()
}

/// The answer to `POST /v1/messages/count_tokens`.
pub fn count_tokens(input_tokens: u64) -> Value {
    json!({"input_tokens": input_tokens})
}

/// The answer to `GET /v1/models` for an Anthropic client.
pub fn models() -> Value {
    json!({
        "data": [{
            "type": "model",
            "id": DEFAULT_MODEL,
            "display_name": "Model stand-in",
            "created_at": "2026-01-01T00:00:00Z",
        }],
        "has_more": false,
        "first_id": DEFAULT_MODEL,
        "last_id": DEFAULT_MODEL,
    })
}

/// An error in the Messages API's shape.
pub fn error(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}
