//! What the stand-in keeps of each request: [`Recorded`], kept in memory in arrival order and,
//! when a log file is given, appended to it as one JSON line per request.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::Mutex;

use serde_json::{Value, json};

/// One request as the stand-in saw it, with the status it answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    /// 1, 2, 3… in arrival order.
    pub seq: u64,
    pub method: String,
    /// The path without the query (`/v1/messages`).
    pub path: String,
    /// The query string without `?` (`beta=true`), when there was one.
    pub query: Option<String>,
    /// The body as JSON when it parses; else the body as (lossy) text; `Null` when empty.
    pub body: Value,
    /// The HTTP status the stand-in answered.
    pub status: u16,
}

impl Recorded {
    /// The record as one JSON object (the shape of a line in the log file).
    pub fn to_json(&self) -> Value {
        json!({
            "seq": self.seq,
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "body": self.body,
            "status": self.status,
        })
    }

    /// Reads a record back from [`Recorded::to_json`]'s shape.
    pub fn from_json(value: &Value) -> Option<Recorded> {
        Some(Recorded {
            seq: value.get("seq")?.as_u64()?,
            method: value.get("method")?.as_str()?.to_owned(),
            path: value.get("path")?.as_str()?.to_owned(),
            query: value.get("query")?.as_str().map(str::to_owned),
            body: value.get("body")?.clone(),
            status: u16::try_from(value.get("status")?.as_u64()?).ok()?,
        })
    }

    /// The body as one text to search in: the JSON text (strings unescaped by a parse, so
    /// searching for a sentence works whatever JSON escaping it went through), or the raw
    /// text of a body that was not JSON.
    pub fn body_text(&self) -> String {
        let mut out = String::new();
        collect_strings(&self.body, &mut out);
        out
    }

    /// Whether the model was asked to stream its answer (`"stream": true`).
    pub fn is_streaming(&self) -> bool {
        self.body.get("stream").and_then(Value::as_bool) == Some(true)
    }

    /// How many times `needle` occurs in the body's strings (see [`Recorded::body_text`]).
    pub fn count(&self, needle: &str) -> usize {
        count_occurrences(&self.body_text(), needle)
    }
}

/// Every string in a JSON value (keys left out), one per line, in document order.
fn collect_strings(value: &Value, out: &mut String) {
    match value {
        Value::String(text) => {
            out.push_str(text);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, out)),
        Value::Object(map) => map.values().for_each(|item| collect_strings(item, out)),
        _ => {}
    }
}

/// Non-overlapping occurrences of `needle` in `haystack` (0 for an empty needle).
pub fn count_occurrences(haystack: &str, needle: &str) -> usize {
    if needle.is_empty() {
        0
    } else {
        haystack.matches(needle).count()
    }
}

/// The body of a request as a [`Recorded::body`] value.
pub fn body_value(bytes: &[u8]) -> Value {
    if bytes.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

/// The requests seen so far, and the log file they are appended to.
#[derive(Debug, Default)]
pub struct Log {
    inner: Mutex<LogInner>,
}

#[derive(Debug, Default)]
struct LogInner {
    records: Vec<Recorded>,
    file: Option<File>,
}

impl Log {
    /// A log kept in memory and, when `file` is given, appended to it (created when missing).
    pub fn new(file: Option<&Path>) -> io::Result<Log> {
        let file = match file {
            Some(path) => Some(OpenOptions::new().create(true).append(true).open(path)?),
            None => None,
        };
        Ok(Log {
            inner: Mutex::new(LogInner {
                records: Vec::new(),
                file,
            }),
        })
    }

    /// Records one request; gives its sequence number. A failed write to the log file is
    /// reported on stderr once per request and does not stop the stand-in.
    pub fn push(&self, mut record: Recorded) -> u64 {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        record.seq = inner.records.len() as u64 + 1;
        if let Some(file) = inner.file.as_mut() {
            let mut line = record.to_json().to_string();
            line.push('\n');
            if let Err(e) = file.write_all(line.as_bytes()).and_then(|()| file.flush()) {
                eprintln!("model-stand-in: cannot append to the request log: {e}");
            }
        }
        let seq = record.seq;
        inner.records.push(record);
        seq
    }

    /// Every request so far, in arrival order.
    pub fn records(&self) -> Vec<Recorded> {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .records
            .clone()
    }
}

/// Reads a log file the binary wrote (one JSON record per line); lines that are not records
/// are an error naming the line.
pub fn read_log_file(path: &Path) -> io::Result<Vec<Recorded>> {
    let text = std::fs::read_to_string(path)?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str::<Value>(line)
                .ok()
                .and_then(|value| Recorded::from_json(&value))
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("{} line {}: not a request record", path.display(), n + 1),
                    )
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_text_finds_sentences_whatever_the_escaping() {
        let record = Recorded {
            seq: 1,
            method: "POST".into(),
            path: "/v1/messages".into(),
            query: None,
            body: body_value(br#"{"messages":[{"content":"say \"hi\" \u2014 twice"}],"n":3}"#),
            status: 200,
        };
        assert_eq!(record.count("say \"hi\" — twice"), 1);
        assert_eq!(record.count("n"), 0, "keys and numbers are not searched");
        assert!(!record.is_streaming());
    }

    #[test]
    fn bodies_that_are_not_json_are_kept_as_text() {
        assert_eq!(body_value(b"a=1&b=2"), Value::String("a=1&b=2".into()));
        assert_eq!(body_value(b""), Value::Null);
    }

    #[test]
    fn records_round_trip_through_json() {
        let record = Recorded {
            seq: 7,
            method: "GET".into(),
            path: "/v1/models".into(),
            query: Some("limit=5".into()),
            body: Value::Null,
            status: 404,
        };
        assert_eq!(Recorded::from_json(&record.to_json()), Some(record));
    }

    #[test]
    fn counting_is_non_overlapping_and_empty_needles_count_nothing() {
        assert_eq!(count_occurrences("aaaa", "aa"), 2);
        assert_eq!(count_occurrences("abc", ""), 0);
    }
}
