//! The stand-in over a real socket: the library's `StandIn` and the `model-stand-in` binary,
//! spoken to in plain HTTP/1.1 the way the hosts' clients speak it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use model_stand_in::record::read_log_file;
use model_stand_in::{Options, StandIn};
use serde_json::{Value, json};

struct Reply {
    status: u16,
    headers: String,
    body: String,
}

/// Sends one request on `stream` and reads its answer (Content-Length framed).
fn exchange(
    stream: &mut TcpStream,
    method: &str,
    target: &str,
    headers: &[&str],
    body: &str,
) -> Reply {
    let mut request = format!(
        "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n",
        body.len()
    );
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream
        .write_all(request.as_bytes())
        .expect("the request is sent");
    let mut reader = BufReader::new(stream.try_clone().expect("the stream clones"));
    let mut head = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("a header line");
        if line == "\r\n" || line.is_empty() {
            break;
        }
        head.push_str(&line);
    }
    let status: u16 = head
        .split(' ')
        .nth(1)
        .expect("a status")
        .parse()
        .expect("a number");
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .expect("a Content-Length");
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("the body");
    Reply {
        status,
        headers: head.to_ascii_lowercase(),
        body: String::from_utf8(body).expect("UTF-8"),
    }
}

fn connect(url: &str) -> TcpStream {
    let addr = url.strip_prefix("http://").expect("an http URL");
    let stream = TcpStream::connect(addr).expect("the stand-in accepts");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    stream
}

fn data_lines(sse: &str) -> Vec<Value> {
    sse.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).expect("each data line is JSON"))
        .collect()
}

#[test]
fn answers_both_apis_on_one_connection_and_records_every_request() {
    let stand_in = StandIn::start(Options {
        reply: "the fixed reply".into(),
        log_file: None,
    })
    .expect("it starts");
    assert!(stand_in.addr().ip().is_loopback());
    let mut stream = connect(&stand_in.url());

    let streamed = exchange(
        &mut stream,
        "POST",
        "/v1/messages?beta=true",
        &["content-type: application/json", "anthropic-version: 2023-06-01"],
        &json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hello there"}]}).to_string(),
    );
    assert_eq!(streamed.status, 200);
    assert!(
        streamed.headers.contains("content-type: text/event-stream"),
        "{}",
        streamed.headers
    );
    let events = data_lines(&streamed.body);
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "content_block_delta")
        .filter_map(|e| e["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, "the fixed reply");
    assert_eq!(events.last().expect("events")["type"], "message_stop");

    let plain = exchange(
        &mut stream,
        "POST",
        "/v1/messages",
        &[],
        r#"{"model":"m","messages":[]}"#,
    );
    let message: Value = serde_json::from_str(&plain.body).expect("JSON");
    assert_eq!(message["content"][0]["text"], "the fixed reply");

    let counted = exchange(
        &mut stream,
        "POST",
        "/v1/messages/count_tokens?beta=true",
        &[],
        r#"{"messages":[]}"#,
    );
    assert_eq!(counted.status, 200);
    assert!(serde_json::from_str::<Value>(&counted.body).expect("JSON")["input_tokens"].is_u64());

    let responses = exchange(
        &mut stream,
        "POST",
        "/v1/responses",
        &[],
        &json!({"model": "gpt", "stream": true, "input": [{"role": "user", "content": "hi"}]})
            .to_string(),
    );
    let events = data_lines(&responses.body);
    let done = events.last().expect("events");
    assert_eq!(done["type"], "response.completed");
    assert_eq!(
        done["response"]["output"][0]["content"][0]["text"],
        "the fixed reply"
    );

    let missing = exchange(&mut stream, "GET", "/v1/engines?x=1", &[], "");
    assert_eq!(missing.status, 404);
    let error: Value = serde_json::from_str(&missing.body).expect("JSON");
    assert!(
        error["error"]["message"]
            .as_str()
            .expect("a message")
            .contains("GET /v1/engines"),
        "{error}"
    );

    let records = stand_in.requests();
    let seen: Vec<(&str, &str, Option<&str>, u16)> = records
        .iter()
        .map(|r| {
            (
                r.method.as_str(),
                r.path.as_str(),
                r.query.as_deref(),
                r.status,
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("POST", "/v1/messages", Some("beta=true"), 200),
            ("POST", "/v1/messages", None, 200),
            ("POST", "/v1/messages/count_tokens", Some("beta=true"), 200),
            ("POST", "/v1/responses", None, 200),
            ("GET", "/v1/engines", Some("x=1"), 404),
        ]
    );
    assert_eq!(
        records.iter().map(|r| r.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    assert_eq!(records[0].count("hello there"), 1, "the body is kept");
    assert!(records[0].is_streaming());
    assert_eq!(stand_in.requests_to("/v1/responses").len(), 1);
}

#[test]
fn a_body_that_is_not_json_gets_a_400_and_is_still_recorded() {
    let stand_in = StandIn::start(Options::default()).expect("it starts");
    let mut stream = connect(&stand_in.url());
    let reply = exchange(&mut stream, "POST", "/v1/responses", &[], "{not json");
    assert_eq!(reply.status, 400);
    let records = stand_in.requests();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].body, Value::String("{not json".into()));
    assert_eq!(records[0].status, 400);
}

#[test]
fn an_encoded_body_is_refused_clearly() {
    let stand_in = StandIn::start(Options::default()).expect("it starts");
    let mut stream = connect(&stand_in.url());
    let reply = exchange(
        &mut stream,
        "POST",
        "/v1/responses",
        &["content-encoding: zstd"],
        "xx",
    );
    assert_eq!(reply.status, 415);
    assert!(reply.body.contains("zstd"), "{}", reply.body);
}

#[test]
fn stopping_closes_the_port() {
    let stand_in = StandIn::start(Options::default()).expect("it starts");
    let addr = stand_in.addr();
    stand_in.stop();
    assert!(
        TcpStream::connect(addr).is_err(),
        "nothing listens after stop"
    );
}

#[test]
fn the_binary_prints_its_url_logs_json_lines_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().expect("a temp folder");
    let log = dir.path().join("requests.jsonl");
    let url_file = dir.path().join("url");
    let mut child = Command::new(env!("CARGO_BIN_EXE_model-stand-in"))
        .args(["--reply", "bin reply", "--log"])
        .arg(&log)
        .arg("--url-file")
        .arg(&url_file)
        .stdout(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut url = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut url)
        .expect("the URL line");
    let url = url.trim().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert_eq!(
        std::fs::read_to_string(&url_file)
            .expect("the URL file")
            .trim(),
        url
    );

    let mut stream = connect(&url);
    let reply = exchange(&mut stream, "POST", "/v1/messages", &[], r#"{"model":"m"}"#);
    let message: Value = serde_json::from_str(&reply.body).expect("JSON");
    assert_eq!(message["content"][0]["text"], "bin reply");
    let reply = exchange(&mut stream, "DELETE", "/v1/messages", &[], "");
    assert_eq!(reply.status, 404);

    let records = read_log_file(&log).expect("the log reads back");
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].body, json!({"model": "m"}));
    assert_eq!(
        (records[1].method.as_str(), records[1].status),
        ("DELETE", 404)
    );

    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let status = child.wait().expect("the binary ends");
    assert!(status.success(), "SIGTERM is a clean stop: {status}");
}
