//! What the tests look for: the request of each turn among the recorded model requests,
//! words counted in them, prompt text in our files, and the worker's calls to Fabric.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use model_stand_in::Recorded;
use serde_json::Value;

/// Words whose count in a model request must not change with our hooks beyond what the one
/// expected line says (the preamble, the "start Fabric" line, the unread line use them).
pub const PROBE_WORDS: &[&str] = &[
    "Fabric",
    "fabric_whoami",
    "unread",
    "project board",
    "com.status",
    "com.list",
    "lifecycle broker",
];

/// The fragment of the line said when the unread count rose (`N unread on the project board`).
pub const UNREAD_FRAGMENT: &str = "unread on the project board";

/// The model endpoint each host posts turns to.
pub fn model_path(host: crate::Host) -> &'static str {
    match host {
        crate::Host::Codex => "/v1/responses",
        crate::Host::Claude | crate::Host::Kimi => "/v1/messages",
    }
}

/// The request of one turn: among `requests[from..]` to `path`, the last whose body holds
/// the turn's `tag` (side requests a host makes hold no prompt).
pub fn turn_request(requests: &[Recorded], from: usize, path: &str, tag: &str) -> Option<Recorded> {
    requests
        .iter()
        .skip(from)
        .rfind(|r| r.path == path && r.count(tag) > 0)
        .cloned()
}

/// How often each of [`PROBE_WORDS`] occurs in `text`.
pub fn word_counts(text: &str) -> BTreeMap<&'static str, usize> {
    PROBE_WORDS
        .iter()
        .map(|word| (*word, model_stand_in::count_occurrences(text, word)))
        .collect()
}

/// The strings of the message (in `messages` or `input`) that holds `needle`, joined.
pub fn message_holding(request: &Recorded, needle: &str) -> Option<String> {
    let list = request
        .body
        .get("messages")
        .or_else(|| request.body.get("input"))?
        .as_array()?;
    list.iter().find_map(|message| {
        let mut text = String::new();
        strings(message, &mut text);
        text.contains(needle).then_some(text)
    })
}

fn strings(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// Every file under `dirs` (recursively, links not followed) that holds one of `needles`, with
/// the needle found.
pub fn files_holding(dirs: &[PathBuf], needles: &[String]) -> Vec<(PathBuf, String)> {
    let mut hits = Vec::new();
    let mut stack: Vec<PathBuf> = dirs.to_vec();
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
        } else if meta.is_file()
            && let Ok(bytes) = std::fs::read(&path)
        {
            let text = String::from_utf8_lossy(&bytes);
            for needle in needles {
                if text.contains(needle.as_str()) {
                    hits.push((path.clone(), needle.clone()));
                }
            }
        }
    }
    hits
}

/// Whether a `fabric-fake` record's argv names `session` as the runtime session id.
pub fn names_session(record: &Value, session: &str) -> bool {
    let argv: Vec<&str> = record["argv"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    argv.windows(2)
        .any(|w| w[0] == "--runtime-session-id" && w[1] == session)
        || argv
            .iter()
            .any(|a| a.strip_prefix("--runtime-session-id=") == Some(session))
}

/// Whether a `fabric-fake` record comes from our worker (a `--rejoin-only` start), as opposed
/// to the host starting `fabric` as its MCP server.
pub fn from_worker(record: &Value) -> bool {
    record["argv"]
        .as_array()
        .is_some_and(|argv| argv.iter().any(|a| a == "--rejoin-only"))
}

/// The value after `flag` in a record's argv.
pub fn arg_value(record: &Value, flag: &str) -> Option<String> {
    let argv: Vec<&str> = record["argv"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    argv.windows(2)
        .find(|w| w[0] == flag)
        .map(|w| w[1].to_owned())
        .or_else(|| {
            argv.iter()
                .find_map(|a| a.strip_prefix(&format!("{flag}=")).map(str::to_owned))
        })
}

/// A short random tag for prompts: lowercase letters only, never one of the probe words.
pub fn tag(label: &str, turn: usize) -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
        ^ (u128::from(std::process::id()) << 32);
    let mut n = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(turn as u128);
    let mut letters = String::new();
    for _ in 0..10 {
        letters.push(char::from(b'a' + (n % 26) as u8));
        n /= 26;
    }
    format!("zq{label}{turn}{letters}")
}

/// `path` relative to `base` for messages.
pub fn shown(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .display()
        .to_string()
}
