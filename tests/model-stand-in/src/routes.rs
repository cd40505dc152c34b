//! Which request gets which answer: a pure function from the request to the status, the
//! content type and the body, so it can be tested without a socket.

use serde_json::Value;

use crate::script::{self, Move};
use crate::{anthropic, openai};

/// What the routes answer, listed in every 404.
pub const ANSWERED: &[&str] = &[
    "POST /v1/messages",
    "POST /v1/messages/count_tokens",
    "POST /v1/responses",
    "GET /v1/models",
];

/// One request, as the routes need it.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    pub method: &'a str,
    /// Without the query; a trailing `/` is ignored.
    pub path: &'a str,
    pub body: &'a [u8],
    /// The request carried `anthropic-version` (an Anthropic client).
    pub anthropic_client: bool,
}

/// What to send back.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
    /// Held back this long before it is sent (`stand-in: wait <secs>`).
    pub delay: Option<std::time::Duration>,
}

impl Answer {
    fn json(status: u16, value: &Value) -> Answer {
        Answer {
            status,
            content_type: "application/json",
            body: value.to_string(),
            delay: None,
        }
    }

    fn sse(body: String) -> Answer {
        Answer {
            status: 200,
            content_type: "text/event-stream",
            body,
            delay: None,
        }
    }
}

/// The fixed facts of one answer: the reply, and the ids and time to put in it.
#[derive(Clone, Debug)]
pub struct Turn<'a> {
    pub reply: &'a str,
    /// Unique per request (`msg_…`/`resp_…` are derived from it).
    pub seq: u64,
    /// Unix seconds.
    pub now: u64,
}

/// One server-sent event: `event: <name>` (when given), `data: <json>`, a blank line.
pub fn sse_event(name: Option<&str>, data: &Value) -> String {
    match name {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

fn not_found(request: &Request<'_>) -> Answer {
    let message = format!(
        "model-stand-in does not answer {} {}; it answers {}",
        request.method,
        request.path,
        ANSWERED.join(", ")
    );
    let mut body = anthropic::error("not_found_error", &message);
    body["requested"] = serde_json::json!({"method": request.method, "path": request.path});
    Answer::json(404, &body)
}

fn bad_request(request: &Request<'_>, anthropic_shape: bool, why: &str) -> Answer {
    let message = format!("model-stand-in: {} {}: {why}", request.method, request.path);
    let body = if anthropic_shape {
        anthropic::error("invalid_request_error", &message)
    } else {
        openai::error("invalid_request_error", &message)
    };
    Answer::json(400, &body)
}

fn json_body(request: &Request<'_>) -> Result<Value, String> {
    match serde_json::from_slice::<Value>(request.body) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err("the body is JSON but not an object".to_owned()),
        Err(e) => Err(format!("the body is not JSON ({e})")),
    }
}

fn streams(body: &Value) -> bool {
    body.get("stream").and_then(Value::as_bool) == Some(true)
}

/// The answer to `request`.
pub fn answer(request: &Request<'_>, turn: &Turn<'_>) -> Answer {
    let path = match request.path.strip_suffix('/') {
        Some(trimmed) if !trimmed.is_empty() => trimmed,
        _ => request.path,
    };
    let input_tokens = anthropic::estimate_tokens(request.body.len());
    match (request.method, path) {
        ("POST", "/v1/messages") => match json_body(request) {
            Ok(body) => {
                let id = format!("msg_stand_in_{}", turn.seq);
                let (calls, delay) = match script::anthropic_move(&body) {
                    Move::Call { name, input, .. } => (Some((name, vec![input])), None),
                    Move::Parallel { name, inputs, .. } => (Some((name, inputs)), None),
                    Move::ReplyAfter(after) => (None, Some(after)),
                    Move::Reply => (None, None),
                };
                if let Some((name, inputs)) = calls {
                    return if streams(&body) {
                        Answer::sse(anthropic::tool_use_stream(
                            &body,
                            &id,
                            &name,
                            &inputs,
                            input_tokens,
                        ))
                    } else {
                        Answer::json(
                            200,
                            &anthropic::tool_use(&body, &id, &name, &inputs, input_tokens),
                        )
                    };
                }
                let mut answer = if streams(&body) {
                    Answer::sse(anthropic::message_stream(
                        &body,
                        &id,
                        turn.reply,
                        input_tokens,
                    ))
                } else {
                    Answer::json(
                        200,
                        &anthropic::message(&body, &id, turn.reply, input_tokens),
                    )
                };
                answer.delay = delay;
                answer
            }
            Err(why) => bad_request(request, true, &why),
        },
        ("POST", "/v1/messages/count_tokens") => match json_body(request) {
            Ok(_) => Answer::json(200, &anthropic::count_tokens(input_tokens)),
            Err(why) => bad_request(request, true, &why),
        },
        ("POST", "/v1/responses") => match json_body(request) {
            Ok(body) => {
                let id = format!("resp_stand_in_{}", turn.seq);
                let (call, delay) = match script::openai_move(&body) {
                    Move::Call {
                        name,
                        namespace,
                        input,
                    } => (Some((name, namespace, input)), None),
                    // One call at a time here: the first.
                    Move::Parallel {
                        name,
                        namespace,
                        mut inputs,
                    } => (Some((name, namespace, inputs.swap_remove(0))), None),
                    Move::ReplyAfter(after) => (None, Some(after)),
                    Move::Reply => (None, None),
                };
                if let Some((name, namespace, input)) = call {
                    let call = openai::Call {
                        name: &name,
                        namespace: namespace.as_deref(),
                        input: &input,
                    };
                    return if streams(&body) {
                        Answer::sse(openai::function_call_stream(
                            &body,
                            &id,
                            &call,
                            input_tokens,
                            turn.now,
                        ))
                    } else {
                        Answer::json(
                            200,
                            &openai::function_call(&body, &id, &call, input_tokens, turn.now),
                        )
                    };
                }
                let mut answer = if streams(&body) {
                    Answer::sse(openai::response_stream(
                        &body,
                        &id,
                        turn.reply,
                        input_tokens,
                        turn.now,
                    ))
                } else {
                    Answer::json(
                        200,
                        &openai::response(&body, &id, turn.reply, input_tokens, turn.now, true),
                    )
                };
                answer.delay = delay;
                answer
            }
            Err(why) => bad_request(request, false, &why),
        },
        ("GET", "/v1/models") if request.anthropic_client => {
            Answer::json(200, &anthropic::models())
        }
        ("GET", "/v1/models") => Answer::json(200, &openai::models()),
        _ => not_found(request),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post<'a>(path: &'a str, body: &'a [u8]) -> Request<'a> {
        Request {
            method: "POST",
            path,
            body,
            anthropic_client: false,
        }
    }

    const TURN: Turn<'static> = Turn {
        reply: "fixed reply",
        seq: 3,
        now: 1_700_000_000,
    };

    /// The `data:` payloads of an SSE body, with their event names.
    fn events(body: &str) -> Vec<(String, Value)> {
        body.split("\n\n")
            .filter(|block| !block.trim().is_empty())
            .map(|block| {
                let mut name = String::new();
                let mut data = Value::Null;
                for line in block.lines() {
                    if let Some(rest) = line.strip_prefix("event: ") {
                        name = rest.to_owned();
                    } else if let Some(rest) = line.strip_prefix("data: ") {
                        data = serde_json::from_str(rest).expect("data is JSON");
                    }
                }
                (name, data)
            })
            .collect()
    }

    #[test]
    fn a_streamed_message_is_the_full_event_sequence_with_the_reply() {
        let answer = answer(
            &post("/v1/messages", br#"{"model":"m1","stream":true}"#),
            &TURN,
        );
        assert_eq!(answer.status, 200);
        assert_eq!(answer.content_type, "text/event-stream");
        let events = events(&answer.body);
        let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "ping",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        for (name, data) in &events {
            assert_eq!(data["type"], name.as_str(), "each event's type is its name");
        }
        assert_eq!(events[0].1["message"]["model"], "m1");
        assert_eq!(events[3].1["delta"]["text"], "fixed reply");
        assert_eq!(events[5].1["delta"]["stop_reason"], "end_turn");
    }

    #[test]
    fn a_plain_message_is_one_json_message() {
        let answer = answer(&post("/v1/messages/", br#"{"model":"m2"}"#), &TURN);
        assert_eq!(answer.content_type, "application/json");
        let body: Value = serde_json::from_str(&answer.body).unwrap();
        assert_eq!(body["content"][0]["text"], "fixed reply");
        assert_eq!(body["model"], "m2");
        assert_eq!(body["stop_reason"], "end_turn");
    }

    #[test]
    fn count_tokens_counts_something() {
        let answer = answer(
            &post("/v1/messages/count_tokens", br#"{"messages":[]}"#),
            &TURN,
        );
        let body: Value = serde_json::from_str(&answer.body).unwrap();
        assert!(body["input_tokens"].as_u64().unwrap() >= 1);
    }

    #[test]
    fn a_streamed_response_completes_with_the_reply() {
        let answer = answer(
            &post("/v1/responses", br#"{"model":"gpt-x","stream":true}"#),
            &TURN,
        );
        let events = events(&answer.body);
        let (last_name, last) = events.last().unwrap();
        assert_eq!(last_name, "response.completed");
        assert_eq!(last["response"]["status"], "completed");
        assert_eq!(
            last["response"]["output"][0]["content"][0]["text"],
            "fixed reply"
        );
        let sequence: Vec<u64> = events
            .iter()
            .map(|(_, e)| e["sequence_number"].as_u64().unwrap())
            .collect();
        assert_eq!(sequence, (0..events.len() as u64).collect::<Vec<_>>());
        let done = events
            .iter()
            .find(|(n, _)| n == "response.output_item.done")
            .unwrap();
        assert_eq!(done.1["item"]["role"], "assistant");
    }

    #[test]
    fn models_take_the_shape_of_the_client_api() {
        let mut request = Request {
            method: "GET",
            path: "/v1/models",
            body: b"",
            anthropic_client: true,
        };
        let body: Value = serde_json::from_str(&answer(&request, &TURN).body).unwrap();
        assert_eq!(body["data"][0]["type"], "model");
        request.anthropic_client = false;
        let body: Value = serde_json::from_str(&answer(&request, &TURN).body).unwrap();
        assert_eq!(body["object"], "list");
    }

    #[test]
    fn anything_else_is_a_404_naming_what_was_asked() {
        let answer = answer(
            &Request {
                method: "GET",
                path: "/v1/engines",
                body: b"",
                anthropic_client: false,
            },
            &TURN,
        );
        assert_eq!(answer.status, 404);
        let body: Value = serde_json::from_str(&answer.body).unwrap();
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("GET /v1/engines"), "{message}");
        assert!(message.contains("POST /v1/responses"), "{message}");
        assert_eq!(body["requested"]["path"], "/v1/engines");
    }

    #[test]
    fn a_body_that_is_not_json_is_a_clear_400() {
        let answer = answer(&post("/v1/responses", b"not json"), &TURN);
        assert_eq!(answer.status, 400);
        assert!(answer.body.contains("not JSON"), "{}", answer.body);
    }
}
