//! Codex's record of the person's approval of our hooks, read the way Codex reads it.
//!
//! What Codex 0.169.0 does (measured against its `app-server` `hooks/list`; source
//! `codex-rs/hooks/src/engine/discovery.rs` `append_matcher_groups`, `command_hook_hash`,
//! `hook_trust_status`, `hook_enabled`; `codex-rs/hooks/src/lib.rs` `hook_key`;
//! `codex-rs/config/src/fingerprint.rs` `version_for_toml`):
//! - each command hook in `hooks.json` has a key, `<hooks.json path>:<event label>:<group
//!   index>:<handler index>` (the path as Codex names it: `$CODEX_HOME` canonicalised when set,
//!   else `~/.codex`), and a hash, `sha256:` and the hex SHA-256 of the compact JSON, keys
//!   sorted at every level, of `{"event_name", "matcher" (events that take one, when set),
//!   "hooks": [{"type": "command", "command", "timeout" (600 when absent, at least 1;
//!   SessionEnd and Interrupt at most 3), "async", "statusMessage" (when set)}]}`;
//! - the record is `[hooks.state."<key>"]` in `$CODEX_HOME/config.toml`: `trusted_hash` equal
//!   to the hash → approved, another → changed, none → not approved yet; `enabled = false` →
//!   turned off; `[features] hooks = false` (or the older `codex_hooks = false`) → no hook runs.
//!
//! The key holds the group's index: anything inserted before our group voids its approval,
//! which is why the installer appends ours after the groups already there.
//!
//! `config.toml` may hold tokens: it is parsed into a type holding only `hooks.state` and
//! `features`; nothing else is kept, and nothing from it is printed. Nothing here writes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Approval, HookApproval, HookVerdict, HooksOff, HostApproval, summarise};
use crate::hook_command::is_ours;
use companion_platform::env_vars;
use companion_platform::fsutil;
use companion_platform::paths::Paths;

/// We read at most this much of `config.toml` or `hooks.json`.
const CONFIG_LIMIT: u64 = 8 * 1024 * 1024;
/// Codex's timeout for a hook without one, in seconds.
const DEFAULT_TIMEOUT_SECS: u64 = 600;
/// Codex's ceiling for a SessionEnd or Interrupt hook, in seconds (measured: its hash of an
/// Interrupt hook asking for 5 s holds 3).
const SESSION_END_CAP_SECS: u64 = 3;

/// Codex's label of an event name as written in `hooks.json`, for the events a command hook
/// of ours can be in.
pub fn event_label(event: &str) -> Option<&'static str> {
    Some(match event {
        "SessionStart" => "session_start",
        "UserPromptSubmit" => "user_prompt_submit",
        "Stop" => "stop",
        "SessionEnd" => "session_end",
        "PreToolUse" => "pre_tool_use",
        "PermissionRequest" => "permission_request",
        "PostToolUse" => "post_tool_use",
        "SubagentStop" => "subagent_stop",
        "Interrupt" => "interrupt",
        _ => return None,
    })
}

/// Whether Codex keeps a group's matcher for this event (it drops it for the others).
fn takes_matcher(event: &str) -> bool {
    matches!(
        event,
        "SessionStart"
            | "PreToolUse"
            | "PermissionRequest"
            | "PostToolUse"
            | "PreCompact"
            | "PostCompact"
            | "SubagentStart"
            | "SubagentStop"
    )
}

/// The `hooks.json` path as it appears in Codex's keys.
pub fn key_file(paths: &Paths) -> PathBuf {
    let home = paths.codex_home();
    // Codex canonicalises `$CODEX_HOME` (symlinks resolved); `~/.codex` it takes as it is.
    let home = if env_vars::path_var(env_vars::CODEX_HOME).is_some() {
        fs::canonicalize(&home).unwrap_or(home)
    } else {
        home
    };
    normalise(&home.join("hooks.json"))
}

/// `.` and `..` taken out by the letter, as Codex's absolute paths do (symlinks untouched).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Codex's key of one command hook.
pub fn hook_key(key_file: &Path, event: &str, group: usize, handler: usize) -> Option<String> {
    Some(format!(
        "{}:{}:{group}:{handler}",
        key_file.display(),
        event_label(event)?
    ))
}

/// One command hook as Codex hashes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookDefinition<'a> {
    pub event: &'a str,
    pub matcher: Option<&'a str>,
    pub command: &'a str,
    pub timeout: Option<u64>,
    pub is_async: bool,
    pub status_message: Option<&'a str>,
}

/// Codex's hash of one command hook's definition.
pub fn hook_hash(hook: &HookDefinition<'_>) -> Option<String> {
    let label = event_label(hook.event)?;
    let mut timeout = hook.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS).max(1);
    if matches!(hook.event, "SessionEnd" | "Interrupt") {
        timeout = timeout.min(SESSION_END_CAP_SECS);
    }
    let mut handler = serde_json::Map::new();
    handler.insert("type".into(), "command".into());
    handler.insert("command".into(), hook.command.into());
    handler.insert("timeout".into(), timeout.into());
    handler.insert("async".into(), hook.is_async.into());
    if let Some(message) = hook.status_message {
        handler.insert("statusMessage".into(), message.into());
    }
    let mut identity = serde_json::Map::new();
    identity.insert("event_name".into(), label.into());
    if let Some(matcher) = hook.matcher.filter(|_| takes_matcher(hook.event)) {
        identity.insert("matcher".into(), matcher.into());
    }
    identity.insert("hooks".into(), Value::Array(vec![Value::Object(handler)]));
    let text = sorted_compact_json(&Value::Object(identity));
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("sha256:{hex}"))
}

/// Compact JSON with every object's keys in byte order (this crate's `serde_json` keeps
/// insertion order, so the sort is done here).
fn sorted_compact_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut fields: Vec<(&String, &Value)> = map.iter().collect();
            fields.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = fields
                .into_iter()
                .map(|(key, value)| {
                    format!(
                        "{}:{}",
                        Value::String(key.clone()),
                        sorted_compact_json(value)
                    )
                })
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(sorted_compact_json).collect();
            format!("[{}]", inner.join(","))
        }
        other => other.to_string(),
    }
}

/// One command hook of ours in `hooks.json`, keyed and hashed as Codex does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OurHook {
    pub event: String,
    pub key: String,
    pub hash: String,
}

/// Every command hook of ours in a `hooks.json` text, in file order. `key_file` is the path
/// Codex's keys name (see [`key_file`]). An error for text Codex could not read either.
pub fn our_hooks(key_file: &Path, text: &str) -> Result<Vec<OurHook>, String> {
    let root: Value = serde_json::from_str(text).map_err(|_| "hooks.json does not parse")?;
    let mut found = Vec::new();
    let Some(events) = root.get("hooks").and_then(Value::as_object) else {
        return Ok(found);
    };
    for (event, groups) in events {
        let Some(groups) = groups.as_array() else {
            continue;
        };
        for (g, group) in groups.iter().enumerate() {
            let matcher = group.get("matcher").and_then(Value::as_str);
            let Some(handlers) = group.get("hooks").and_then(Value::as_array) else {
                continue;
            };
            for (h, handler) in handlers.iter().enumerate() {
                if handler.get("type").and_then(Value::as_str) != Some("command") {
                    continue;
                }
                let command = if cfg!(windows) {
                    handler
                        .get("command_windows")
                        .or_else(|| handler.get("commandWindows"))
                        .and_then(Value::as_str)
                        .or_else(|| handler.get("command").and_then(Value::as_str))
                } else {
                    handler.get("command").and_then(Value::as_str)
                };
                let Some(command) = command.filter(|c| is_ours(c)) else {
                    continue;
                };
                let definition = HookDefinition {
                    event,
                    matcher,
                    command,
                    timeout: handler
                        .get("timeout")
                        .or_else(|| handler.get("timeoutSec"))
                        .and_then(Value::as_u64),
                    is_async: handler
                        .get("async")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    status_message: handler.get("statusMessage").and_then(Value::as_str),
                };
                if let (Some(key), Some(hash)) =
                    (hook_key(key_file, event, g, h), hook_hash(&definition))
                {
                    found.push(OurHook {
                        event: event.clone(),
                        key,
                        hash,
                    });
                }
            }
        }
    }
    Ok(found)
}

/// A value of the expected type, or anything else (ignored, unread).
#[derive(Deserialize)]
#[serde(untagged)]
enum Loose<T> {
    Known(T),
    Other(IgnoredAny),
}

impl<T> Loose<T> {
    fn known(self) -> Option<T> {
        match self {
            Loose::Known(value) => Some(value),
            Loose::Other(_) => None,
        }
    }
}

/// The only parts of `config.toml` read: everything else is skipped by the parser.
#[derive(Deserialize, Default)]
struct ConfigToml {
    #[serde(default)]
    hooks: Option<Loose<HooksToml>>,
    #[serde(default)]
    features: Option<Loose<FeaturesToml>>,
}

#[derive(Deserialize, Default)]
struct HooksToml {
    #[serde(default)]
    state: BTreeMap<String, Loose<StateToml>>,
}

#[derive(Deserialize, Default)]
struct StateToml {
    #[serde(default)]
    trusted_hash: Option<Loose<String>>,
    #[serde(default)]
    enabled: Option<Loose<bool>>,
}

#[derive(Deserialize, Default)]
struct FeaturesToml {
    #[serde(default)]
    hooks: Option<Loose<bool>>,
    #[serde(default)]
    codex_hooks: Option<Loose<bool>>,
}

/// One record of `[hooks.state]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct HookState {
    trusted_hash: Option<String>,
    enabled: Option<bool>,
}

/// What `config.toml` says about hooks.
#[derive(Debug, Default)]
struct Record {
    states: BTreeMap<String, HookState>,
    /// `false` when `[features] hooks` or `codex_hooks` is `false`.
    hooks_on: bool,
}

/// Reads the record; a missing file is an empty one (hooks on, nothing approved).
fn read_record(paths: &Paths) -> Result<Record, String> {
    let path = paths.codex_home().join("config.toml");
    let bytes = match fsutil::read_bounded(&path, CONFIG_LIMIT) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            return Ok(Record {
                hooks_on: true,
                ..Record::default()
            });
        }
        Err(_) => return Err("config.toml cannot be read".into()),
    };
    let text = String::from_utf8(bytes).map_err(|_| "config.toml is not UTF-8".to_string())?;
    let config: ConfigToml =
        toml::from_str(&text).map_err(|_| "config.toml does not parse".to_string())?;
    let features = config.features.and_then(Loose::known).unwrap_or_default();
    let off = |flag: Option<Loose<bool>>| flag.and_then(Loose::known) == Some(false);
    let hooks_on = !(off(features.hooks) || off(features.codex_hooks));
    let states = config
        .hooks
        .and_then(Loose::known)
        .unwrap_or_default()
        .state
        .into_iter()
        .filter_map(|(key, state)| {
            let state = state.known()?;
            Some((
                key,
                HookState {
                    trusted_hash: state.trusted_hash.and_then(Loose::known),
                    enabled: state.enabled.and_then(Loose::known),
                },
            ))
        })
        .collect();
    Ok(Record { states, hooks_on })
}

/// `Some(false)` when Codex's `config.toml` turns every hook off; `Some(true)` when it does
/// not; `None` when it cannot be read.
pub fn hooks_feature(paths: &Paths) -> Option<bool> {
    read_record(paths).ok().map(|record| record.hooks_on)
}

/// Codex's approval of the hooks of ours in its `hooks.json`; `None` when there are none.
pub fn read(paths: &Paths) -> Option<HostApproval> {
    let file = paths.codex_home().join("hooks.json");
    let text = match fsutil::read_bounded(&file, CONFIG_LIMIT) {
        Ok(Some(bytes)) => String::from_utf8(bytes).ok()?,
        Ok(None) => return None,
        Err(_) => {
            return Some(unknown("hooks.json cannot be read"));
        }
    };
    let ours = match our_hooks(&key_file(paths), &text) {
        Ok(ours) if ours.is_empty() => return None,
        Ok(ours) => ours,
        Err(reason) => return Some(unknown(&reason)),
    };
    let record = match read_record(paths) {
        Ok(record) => record,
        Err(reason) => return Some(unknown(&reason)),
    };
    Some(judge(&ours, &record))
}

fn unknown(reason: &str) -> HostApproval {
    HostApproval {
        approval: Approval::Unknown {
            reason: reason.to_string(),
        },
        hooks: Vec::new(),
    }
}

/// Each hook against the record, then the host-wide verdict.
fn judge(ours: &[OurHook], record: &Record) -> HostApproval {
    let hooks: Vec<HookApproval> = ours
        .iter()
        .map(|hook| {
            let state = record.states.get(&hook.key);
            let verdict = match state {
                Some(state) if state.enabled == Some(false) => HookVerdict::TurnedOff,
                Some(HookState {
                    trusted_hash: Some(trusted),
                    ..
                }) if *trusted == hook.hash => HookVerdict::Approved,
                Some(HookState {
                    trusted_hash: Some(_),
                    ..
                }) => HookVerdict::Changed,
                _ => HookVerdict::Waiting,
            };
            let approved_elsewhere = matches!(verdict, HookVerdict::Waiting | HookVerdict::Changed)
                && same_event_prefix(&hook.key).is_some_and(|prefix| {
                    record.states.iter().any(|(key, state)| {
                        *key != hook.key
                            && key.starts_with(prefix)
                            && state.trusted_hash.as_deref() == Some(hook.hash.as_str())
                    })
                });
            HookApproval {
                event: hook.event.clone(),
                key: hook.key.clone(),
                hash: hook.hash.clone(),
                verdict,
                approved_elsewhere,
            }
        })
        .collect();
    let approval = if record.hooks_on {
        summarise(&hooks)
    } else {
        Approval::HooksOff {
            cause: HooksOff::FeatureOff,
        }
    };
    HostApproval { approval, hooks }
}

/// `<file>:<label>:` of a key (the key without its two indexes).
fn same_event_prefix(key: &str) -> Option<&str> {
    let without_handler = &key[..key.rfind(':')?];
    Some(&key[..without_handler.rfind(':')? + 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn definition<'a>(
        event: &'a str,
        matcher: Option<&'a str>,
        command: &'a str,
    ) -> HookDefinition<'a> {
        HookDefinition {
            event,
            matcher,
            command,
            timeout: Some(5),
            is_async: false,
            status_message: None,
        }
    }

    /// Hashes `codex app-server`'s `hooks/list` gave for these hooks (Codex 0.169.0).
    #[test]
    fn hashes_are_the_ones_codex_reported() {
        let cases = [
            (
                definition(
                    "SessionStart",
                    Some("startup|resume"),
                    "/tmp/r/probe.sh SessionStart",
                ),
                "sha256:4e451f9b26b1855b2da247ff4f07224d843fa7b41144709facf805e35b40c36a",
            ),
            (
                definition("SessionEnd", None, "/tmp/r/probe.sh SessionEnd"),
                "sha256:0f736429cd19b0adeb2f9b73de23667ef5e6158e5af22d530784f68336501ba3",
            ),
            (
                definition("UserPromptSubmit", None, "/tmp/r/probe.sh UserPromptSubmit"),
                "sha256:729f56ee0978454187805323cf9648a58921171246ebc9915166c5a19a8455b1",
            ),
            (
                definition("Stop", None, "/tmp/r/probe.sh Stop"),
                "sha256:298d9e22ff28f45e96a73c0bb63d0042c4d64294720b7ae6a096cec16b3d18d2",
            ),
        ];
        for (hook, expected) in cases {
            assert_eq!(hook_hash(&hook).unwrap(), expected, "{hook:?}");
        }
        // A matcher on an event that takes none is dropped, as Codex drops it.
        assert_eq!(
            hook_hash(&definition("Stop", Some("x"), "/tmp/r/probe.sh Stop")),
            hook_hash(&definition("Stop", None, "/tmp/r/probe.sh Stop"))
        );
        // SessionEnd's timeout is capped before hashing; an absent one is 600.
        let mut end = definition("SessionEnd", None, "/tmp/r/probe.sh SessionEnd");
        end.timeout = Some(3);
        assert_eq!(
            hook_hash(&end).unwrap(),
            "sha256:0f736429cd19b0adeb2f9b73de23667ef5e6158e5af22d530784f68336501ba3"
        );
        let mut stop = definition("Stop", None, "x");
        stop.timeout = None;
        let mut stop_600 = stop.clone();
        stop_600.timeout = Some(600);
        assert_eq!(hook_hash(&stop), hook_hash(&stop_600));
    }

    #[test]
    fn keys_name_the_file_the_event_and_the_places() {
        assert_eq!(
            hook_key(Path::new("/h/.codex/hooks.json"), "UserPromptSubmit", 2, 0).unwrap(),
            "/h/.codex/hooks.json:user_prompt_submit:2:0"
        );
        assert_eq!(hook_key(Path::new("/h"), "Nope", 0, 0), None);
        assert_eq!(
            normalise(Path::new("/a/./b/../c/hooks.json")),
            PathBuf::from("/a/c/hooks.json")
        );
        assert_eq!(
            same_event_prefix("/h/hooks.json:stop:3:0"),
            Some("/h/hooks.json:stop:")
        );
    }

    #[test]
    fn finds_only_our_command_hooks_with_their_places() {
        let text = r#"{"hooks": {
            "SessionStart": [
                {"hooks": [{"type": "command", "command": "notify-send hi"}]},
                {"matcher": "startup|resume|clear", "hooks": [
                    {"type": "command", "command": "/p/fabric-session hook session-start --host codex", "timeout": 5}]}
            ],
            "Stop": [{"hooks": [
                {"type": "command", "command": "true"},
                {"type": "command", "command": "/p/fabric-session hook stop --host codex", "timeout": 5}]}]
        }}"#;
        let ours = our_hooks(Path::new("/h/hooks.json"), text).unwrap();
        let keys: Vec<&str> = ours.iter().map(|h| h.key.as_str()).collect();
        assert_eq!(
            keys,
            ["/h/hooks.json:session_start:1:0", "/h/hooks.json:stop:0:1"]
        );
        assert_eq!(
            ours[0].hash,
            hook_hash(&definition(
                "SessionStart",
                Some("startup|resume|clear"),
                "/p/fabric-session hook session-start --host codex"
            ))
            .unwrap()
        );
        assert!(our_hooks(Path::new("/h"), "{").is_err());
        assert!(our_hooks(Path::new("/h"), "{}").unwrap().is_empty());
    }

    fn paths_in(home: &Path) -> Paths {
        Paths {
            home: home.to_path_buf(),
            fabric_dir: home.join("fabric"),
            services_dir: home.join("fabric/services"),
            cache_dir: home.join("cache"),
            data_dir: home.join("data"),
            config_dir: home.join("config"),
        }
    }

    #[test]
    fn verdicts_come_from_codex_s_record_and_nothing_else_is_kept() {
        if std::env::var_os(env_vars::CODEX_HOME).is_some() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        let codex = dir.path().join(".codex");
        fs::create_dir_all(&codex).unwrap();
        assert_eq!(read(&paths), None, "no hooks.json: nothing to approve");
        let start = "/p/fabric-session hook session-start --host codex";
        let stop = "/p/fabric-session hook stop --host codex";
        let hooks = serde_json::json!({"hooks": {
            "SessionStart": [{"matcher": "startup|resume|clear", "hooks": [{"type": "command", "command": start, "timeout": 5}]}],
            "Stop": [{"hooks": [{"type": "command", "command": stop, "timeout": 5}]}],
        }});
        fs::write(codex.join("hooks.json"), hooks.to_string()).unwrap();
        let ours = our_hooks(&key_file(&paths), &hooks.to_string()).unwrap();
        let got = read(&paths).unwrap();
        assert_eq!(
            got.approval,
            Approval::Waiting {
                events: vec!["SessionStart".into(), "Stop".into()],
                approved_elsewhere: false
            }
        );

        let secret = "sk-live-never-keep-me";
        let config = |states: &str| {
            format!(
                "model = \"o4\"\n[mcp_servers.x]\nbearer = \"{secret}\"\n\n[hooks]\nSessionStart = []\n\n{states}"
            )
        };
        let approved = format!(
            "[hooks.state.\"{}\"]\ntrusted_hash = \"{}\"\n\n[hooks.state.\"{}\"]\ntrusted_hash = \"{}\"\n",
            ours[0].key, ours[0].hash, ours[1].key, ours[1].hash
        );
        fs::write(codex.join("config.toml"), config(&approved)).unwrap();
        let got = read(&paths).unwrap();
        assert_eq!(got.approval, Approval::Approved);
        assert!(!format!("{got:?}").contains(secret));

        let changed = format!(
            "[hooks.state.\"{}\"]\ntrusted_hash = \"sha256:00\"\n\n[hooks.state.\"{}\"]\ntrusted_hash = \"{}\"\nenabled = true\n",
            ours[0].key, ours[1].key, ours[1].hash
        );
        fs::write(codex.join("config.toml"), config(&changed)).unwrap();
        assert_eq!(
            read(&paths).unwrap().approval,
            Approval::Changed {
                events: vec!["SessionStart".into()],
                approved_elsewhere: false
            }
        );

        let off = format!(
            "{approved}\n[hooks.state.\"{}\"]\nenabled = false\n",
            ours[1].key
        )
        .replacen(
            &format!(
                "[hooks.state.\"{}\"]\ntrusted_hash = \"{}\"\n",
                ours[1].key, ours[1].hash
            ),
            "",
            1,
        );
        fs::write(codex.join("config.toml"), config(&off)).unwrap();
        assert_eq!(read(&paths).unwrap().approval.word(), "turned-off");

        fs::write(
            codex.join("config.toml"),
            format!("[features]\nhooks = false\n\n{approved}"),
        )
        .unwrap();
        assert_eq!(
            read(&paths).unwrap().approval,
            Approval::HooksOff {
                cause: HooksOff::FeatureOff
            }
        );
        assert_eq!(hooks_feature(&paths), Some(false));

        // Odd types where values are expected are not approvals, and do not fail the read.
        fs::write(
            codex.join("config.toml"),
            format!(
                "[features]\nhooks = \"yes\"\n\n[hooks.state.\"{}\"]\ntrusted_hash = 7\n",
                ours[0].key
            ),
        )
        .unwrap();
        assert_eq!(read(&paths).unwrap().approval.word(), "waiting");

        fs::write(codex.join("config.toml"), "model = \n").unwrap();
        assert_eq!(
            read(&paths).unwrap().approval,
            Approval::Unknown {
                reason: "config.toml does not parse".into()
            }
        );
    }

    #[test]
    fn a_group_inserted_before_ours_is_explained() {
        if std::env::var_os(env_vars::CODEX_HOME).is_some() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        let codex = dir.path().join(".codex");
        fs::create_dir_all(&codex).unwrap();
        let stop = serde_json::json!({"hooks": [{"type": "command", "command": "/p/fabric-session hook stop --host codex", "timeout": 5}]});
        let before = serde_json::json!({"hooks": {"Stop": [stop.clone()]}});
        let ours = our_hooks(&key_file(&paths), &before.to_string()).unwrap();
        fs::write(
            codex.join("config.toml"),
            format!(
                "[hooks.state.\"{}\"]\ntrusted_hash = \"{}\"\n",
                ours[0].key, ours[0].hash
            ),
        )
        .unwrap();
        let other = serde_json::json!({"hooks": [{"type": "command", "command": "true"}]});
        let after = serde_json::json!({"hooks": {"Stop": [other, stop]}});
        fs::write(codex.join("hooks.json"), after.to_string()).unwrap();
        let got = read(&paths).unwrap();
        assert_eq!(
            got.approval,
            Approval::Waiting {
                events: vec!["Stop".into()],
                approved_elsewhere: true
            }
        );
        assert!(got.hooks[0].key.ends_with(":stop:1:0"));
    }
}
