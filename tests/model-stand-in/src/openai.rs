//! The OpenAI Responses API, as much as a host needs to finish a turn: one assistant message
//! with the fixed reply, as a JSON response or as the SSE event sequence (`response.created`,
//! `response.in_progress`, `response.output_item.added`, `response.content_part.added`,
//! `response.output_text.delta`, `response.output_text.done`, `response.content_part.done`,
//! `response.output_item.done`, `response.completed`); or one `function_call` item when the
//! script calls a tool ([`crate::script`]: `response.output_item.added`,
//! `response.function_call_arguments.delta`/`.done`, `response.output_item.done`,
//! `response.completed`); and a model list.

use serde_json::{Value, json};

use crate::routes::sse_event;

/// The model named in the answer when the request names none.
pub const DEFAULT_MODEL: &str = "gpt-stand-in";

fn model_of(request: &Value) -> String {
    request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or(DEFAULT_MODEL)
        .to_owned()
}

fn output_text(reply: &str) -> Value {
    json!({"type": "output_text", "text": reply, "annotations": []})
}

fn message_item(item_id: &str, reply: &str, done: bool) -> Value {
    json!({
        "id": item_id,
        "type": "message",
        "status": if done { "completed" } else { "in_progress" },
        "role": "assistant",
        "content": if done { json!([output_text(reply)]) } else { json!([]) },
    })
}

fn usage(input_tokens: u64, output_tokens: u64) -> Value {
    json!({
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    })
}

/// The response object, finished (`done`) or just started.
pub fn response(
    request: &Value,
    id: &str,
    reply: &str,
    input_tokens: u64,
    created_at: u64,
    done: bool,
) -> Value {
    let item_id = format!("msg_{id}");
    json!({
        "id": id,
        "object": "response",
        "created_at": created_at,
        "status": if done { "completed" } else { "in_progress" },
        "model": model_of(request),
        "output": if done { json!([message_item(&item_id, reply, true)]) } else { json!([]) },
        "usage": if done {
            usage(input_tokens, crate::anthropic::estimate_tokens(reply.len()))
        } else {
            Value::Null
        },
    })
}

/// The streaming answer to `POST /v1/responses` (`"stream": true`), as the SSE body.
pub fn response_stream(
    request: &Value,
    id: &str,
    reply: &str,
    input_tokens: u64,
    created_at: u64,
) -> String {
    let item_id = format!("msg_{id}");
    let started = response(request, id, reply, input_tokens, created_at, false);
    let events = [
        json!({"type": "response.created", "response": started}),
        json!({"type": "response.in_progress", "response": started}),
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": message_item(&item_id, reply, false)}),
        json!({"type": "response.content_part.added", "item_id": item_id, "output_index": 0,
               "content_index": 0, "part": output_text("")}),
        json!({"type": "response.output_text.delta", "item_id": item_id, "output_index": 0,
               "content_index": 0, "delta": reply}),
        json!({"type": "response.output_text.done", "item_id": item_id, "output_index": 0,
               "content_index": 0, "text": reply}),
        json!({"type": "response.content_part.done", "item_id": item_id, "output_index": 0,
               "content_index": 0, "part": output_text(reply)}),
        json!({"type": "response.output_item.done", "output_index": 0,
               "item": message_item(&item_id, reply, true)}),
        json!({"type": "response.completed",
               "response": response(request, id, reply, input_tokens, created_at, true)}),
    ];
    events
        .iter()
        .enumerate()
        .map(|(n, event)| {
            let mut event = event.clone();
            event["sequence_number"] = json!(n);
            let name = event["type"].as_str().unwrap_or_default().to_owned();
            sse_event(Some(&name), &event)
        })
        .collect()
}

/// A function the model calls: its name, the namespace it was offered in, its input.
#[derive(Clone, Copy, Debug)]
pub struct Call<'a> {
    pub name: &'a str,
    pub namespace: Option<&'a str>,
    pub input: &'a Value,
}

fn function_call_item(id: &str, call: &Call<'_>, done: bool) -> Value {
    let mut item = json!({
        "id": format!("fc_{id}"),
        "type": "function_call",
        "status": if done { "completed" } else { "in_progress" },
        "call_id": format!("call_{id}"),
        "name": call.name,
        "arguments": if done { call.input.to_string() } else { String::new() },
    });
    if let Some(namespace) = call.namespace {
        item["namespace"] = json!(namespace);
    }
    item
}

/// The response calling a function.
pub fn function_call(
    request: &Value,
    id: &str,
    call: &Call<'_>,
    input_tokens: u64,
    created_at: u64,
) -> Value {
    json!({
        "id": id,
        "object": "response",
        "created_at": created_at,
        "status": "completed",
        "model": model_of(request),
        "output": [function_call_item(id, call, true)],
        "usage": usage(input_tokens, 10),
    })
}

/// The streaming response calling a function, as the SSE body.
pub fn function_call_stream(
    request: &Value,
    id: &str,
    call: &Call<'_>,
    input_tokens: u64,
    created_at: u64,
) -> String {
    let arguments = call.input.to_string();
    let item_id = format!("fc_{id}");
    let started = response(request, id, "", input_tokens, created_at, false);
    let events = [
        json!({"type": "response.created", "response": started}),
        json!({"type": "response.in_progress", "response": started}),
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": function_call_item(id, call, false)}),
        json!({"type": "response.function_call_arguments.delta", "item_id": item_id,
               "output_index": 0, "delta": arguments}),
        json!({"type": "response.function_call_arguments.done", "item_id": item_id,
               "output_index": 0, "arguments": arguments}),
        json!({"type": "response.output_item.done", "output_index": 0,
               "item": function_call_item(id, call, true)}),
        json!({"type": "response.completed",
               "response": function_call(request, id, call, input_tokens, created_at)}),
    ];
    events
        .iter()
        .enumerate()
        .map(|(n, event)| {
            let mut event = event.clone();
            event["sequence_number"] = json!(n);
            let name = event["type"].as_str().unwrap_or_default().to_owned();
            sse_event(Some(&name), &event)
        })
        .collect()
}

/// The answer to `GET /v1/models` for an OpenAI client.
pub fn models() -> Value {
    json!({
        "object": "list",
        "data": [{"id": DEFAULT_MODEL, "object": "model", "created": 1_767_225_600,
                  "owned_by": "model-stand-in"}],
    })
}

/// An error in the OpenAI API's shape.
pub fn error(kind: &str, message: &str) -> Value {
    json!({"error": {"type": kind, "message": message, "code": kind}})
}
