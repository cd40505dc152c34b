//! The JSON hooks shape Claude Code (`settings.json`) and Codex (`hooks.json`) share:
//! `{"hooks": {"<Event>": [{"matcher": …, "hooks": [{"type": "command", "command": …,
//! "timeout": 5}]}]}}`.
//!
//! Owns parsing such a file into a generic value (so unknown keys survive, in their order),
//! checking its shape, finding our command hooks, and writing it back in the file's own
//! layout: its indentation (spaces or tabs), line endings, final line break and BOM. A file
//! already in that layout comes back byte for byte except for our entries; any other layout
//! is re-indented (same data), and the plan says so.
//!
//! It never changes a hook, group, event or key that is not ours, and never drops a
//! container it did not empty itself.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use super::{ConfigDoc, Entry, InstallError};
use crate::hook_command as command;

/// A parsed JSON config with our entries located.
pub(crate) struct JsonDoc {
    path: PathBuf,
    root: Map<String, Value>,
    style: Style,
    /// Re-serialising the file unchanged gives its exact text.
    layout_kept: bool,
    ours: Vec<Entry>,
    /// Where each of `ours` is: event key, group index, hook index.
    places: Vec<(String, usize, usize)>,
}

/// How a file is laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Style {
    indent: String,
    crlf: bool,
    final_newline: bool,
    bom: bool,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            indent: "  ".into(),
            crlf: false,
            final_newline: true,
            bom: false,
        }
    }
}

impl JsonDoc {
    /// Parses `text` (`None`: the file does not exist). An empty file is an empty object.
    pub(crate) fn open(path: &Path, text: Option<&str>) -> Result<JsonDoc, InstallError> {
        let (root, style, layout_kept) = match text {
            None => (Map::new(), Style::default(), true),
            Some(text) => {
                let (bom, body) = match text.strip_prefix('\u{feff}') {
                    Some(body) => (true, body),
                    None => (false, text),
                };
                let mut style = detect_style(body);
                style.bom = bom;
                if body.trim().is_empty() {
                    style.final_newline = true;
                    (Map::new(), style, true)
                } else {
                    let value: Value =
                        serde_json::from_str(body).map_err(|e| InstallError::NotParseable {
                            path: path.to_path_buf(),
                            format: "JSON",
                            detail: e.to_string(),
                        })?;
                    let Value::Object(root) = value else {
                        return Err(wrong_shape(path, "the top level is not an object"));
                    };
                    let layout_kept = render(&root, &style) == text;
                    (root, style, layout_kept)
                }
            }
        };
        check_shape(path, &root)?;
        let (ours, places) = find_ours(&root);
        Ok(JsonDoc {
            path: path.to_path_buf(),
            root,
            style,
            layout_kept,
            ours,
            places,
        })
    }
}

impl ConfigDoc for JsonDoc {
    fn ours(&self) -> &[Entry] {
        &self.ours
    }

    fn edit(&self, remove: &[usize], add: &[Entry]) -> Result<String, InstallError> {
        let mut root = self.root.clone();
        let mut places: Vec<&(String, usize, usize)> =
            remove.iter().map(|&i| &self.places[i]).collect();
        // Last first, so the indexes of the ones still to go stay right.
        places.sort_by(|x, y| y.cmp(x));
        let mut emptied_groups: BTreeSet<(String, usize)> = BTreeSet::new();
        let mut touched_events: BTreeSet<String> = BTreeSet::new();
        for (event, group, hook) in places {
            if let Some(hooks) = root
                .get_mut("hooks")
                .and_then(|h| h.get_mut(event))
                .and_then(|e| e.get_mut(*group))
                .and_then(|g| g.get_mut("hooks"))
                .and_then(Value::as_array_mut)
                && *hook < hooks.len()
            {
                hooks.remove(*hook);
                if hooks.is_empty() {
                    emptied_groups.insert((event.clone(), *group));
                }
                touched_events.insert(event.clone());
            }
        }
        // A group we emptied held only our hooks: it goes. One that was empty before stays.
        for (event, group) in emptied_groups.iter().rev() {
            if let Some(groups) = root
                .get_mut("hooks")
                .and_then(|h| h.get_mut(event))
                .and_then(Value::as_array_mut)
            {
                groups.remove(*group);
            }
        }
        for entry in add {
            let hooks = root
                .entry("hooks")
                .or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(hooks) = hooks else {
                return Err(wrong_shape(&self.path, "\"hooks\" is not an object"));
            };
            let groups = hooks
                .entry(entry.event.clone())
                .or_insert_with(|| Value::Array(Vec::new()));
            let Value::Array(groups) = groups else {
                return Err(wrong_shape(&self.path, "an event is not a list"));
            };
            groups.push(group_value(entry));
        }
        // Events we emptied go, then a `hooks` object we emptied.
        if let Some(Value::Object(hooks)) = root.get_mut("hooks") {
            for event in &touched_events {
                if hooks
                    .get(event)
                    .and_then(Value::as_array)
                    .is_some_and(Vec::is_empty)
                {
                    hooks.shift_remove(event);
                }
            }
            if hooks.is_empty() && !touched_events.is_empty() {
                root.shift_remove("hooks");
            }
        }
        let text = render(&root, &self.style);
        // The text must read back as exactly the value we meant.
        let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
        match serde_json::from_str::<Value>(body) {
            Ok(Value::Object(back)) if back == root => Ok(text),
            _ => Err(InstallError::EditCheckFailed {
                path: self.path.clone(),
                detail: "the JSON written would not read back as the same data".into(),
            }),
        }
    }

    fn positions(&self, remove: &[usize], add: &[Entry]) -> (Vec<String>, Vec<String>) {
        let groups_in = |event: &str| {
            self.root
                .get("hooks")
                .and_then(|h| h.get(event))
                .and_then(Value::as_array)
        };
        let removed: Vec<&(String, usize, usize)> =
            remove.iter().map(|&i| &self.places[i]).collect();
        let remove_at = removed
            .iter()
            .map(|(event, g, h)| {
                let groups = groups_in(event).map_or(0, Vec::len);
                let hooks = groups_in(event)
                    .and_then(|gs| gs.get(*g))
                    .and_then(|group| group.get("hooks"))
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                let mut at = format!("from hooks.{event}, group {} of {groups}", g + 1);
                if hooks > 1 {
                    at.push_str(&format!(
                        " (hook {} of {hooks}; the group's other hooks stay)",
                        h + 1
                    ));
                }
                at
            })
            .collect();
        // Groups left in each event once ours are out: all but those whose every hook goes.
        let mut before_adds: std::collections::BTreeMap<&str, usize> = Default::default();
        let add_at = add
            .iter()
            .map(|entry| {
                let event = entry.event.as_str();
                let count = before_adds.entry(event).or_insert_with(|| {
                    let groups = groups_in(event).map_or(0, Vec::len);
                    let emptied = (0..groups)
                        .filter(|&g| {
                            let hooks = groups_in(event)
                                .and_then(|gs| gs.get(g))
                                .and_then(|group| group.get("hooks"))
                                .and_then(Value::as_array)
                                .map_or(0, Vec::len);
                            let going = removed
                                .iter()
                                .filter(|(e, gi, _)| e == event && *gi == g)
                                .count();
                            hooks > 0 && going == hooks
                        })
                        .count();
                    groups - emptied
                });
                let at = match *count {
                    0 => format!("in hooks.{event}, the first group"),
                    1 => format!("in hooks.{event}, after 1 other group"),
                    n => format!("in hooks.{event}, after {n} other groups"),
                };
                *count += 1;
                at
            })
            .collect();
        (remove_at, add_at)
    }

    fn entry_text(&self, entry: &Entry) -> String {
        let mut buf = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(b"  ");
        let mut serializer = serde_json::Serializer::with_formatter(&mut buf, formatter);
        let _ = group_value(entry).serialize(&mut serializer);
        String::from_utf8(buf).unwrap_or_default()
    }

    fn layout_warning(&self) -> Option<String> {
        (!self.layout_kept).then(|| {
            format!(
                "{} is laid out differently from how this installer writes JSON: writing it re-indents the whole file ({}) — its data stays the same.",
                self.path.display(),
                describe_indent(&self.style.indent)
            )
        })
    }
}

/// Our entries as a JSON fragment in the file's own shape.
pub(crate) fn entries_text(entries: &[Entry]) -> String {
    if entries.is_empty() {
        return String::new();
    }
    let mut events = Map::new();
    for entry in entries {
        let groups = events
            .entry(entry.event.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(groups) = groups {
            groups.push(group_value(entry));
        }
    }
    let mut root = Map::new();
    root.insert("hooks".into(), Value::Object(events));
    render(&root, &Style::default())
}

/// How many hooks not ours change place (their group's index in its event, or their index in
/// their group) from `before` to `after`: Codex ties an approval to that place. Ours are
/// always added after the groups already there, so only taking one of ours out (a removal, or
/// a re-pointed entry) can move others.
pub(crate) fn moved_hooks_not_ours(before: Option<&str>, after: &str) -> usize {
    let places = |text: &str| -> Vec<(String, usize, usize)> {
        let body = text.strip_prefix('\u{feff}').unwrap_or(text);
        let Ok(Value::Object(root)) = serde_json::from_str::<Value>(body) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        let Some(Value::Object(hooks)) = root.get("hooks") else {
            return found;
        };
        for (event, groups) in hooks {
            for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
                let handlers = group.get("hooks").and_then(Value::as_array);
                for (h, hook) in handlers.into_iter().flatten().enumerate() {
                    let ours = hook
                        .get("command")
                        .and_then(Value::as_str)
                        .is_some_and(command::is_ours);
                    if !ours {
                        found.push((event.clone(), g, h));
                    }
                }
            }
        }
        found
    };
    let (Some(before), after) = (before.map(places), places(after)) else {
        return 0;
    };
    let mut after_by_event: std::collections::BTreeMap<&str, Vec<(usize, usize)>> =
        std::collections::BTreeMap::new();
    for (event, g, h) in &after {
        after_by_event
            .entry(event.as_str())
            .or_default()
            .push((*g, *h));
    }
    let mut before_by_event: std::collections::BTreeMap<&str, Vec<(usize, usize)>> =
        std::collections::BTreeMap::new();
    for (event, g, h) in &before {
        before_by_event
            .entry(event.as_str())
            .or_default()
            .push((*g, *h));
    }
    before_by_event
        .iter()
        .map(|(event, old)| {
            let new = after_by_event.get(event).map(Vec::as_slice).unwrap_or(&[]);
            old.iter().zip(new).filter(|(a, b)| a != b).count()
        })
        .sum()
}

/// Whether written text parses as JSON (the read-back check).
pub(crate) fn verify_parses(text: &str) -> Result<(), String> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str::<Value>(body)
        .map(|_| ())
        .map_err(|e| format!("it does not parse as JSON: {e}"))
}

fn group_value(entry: &Entry) -> Value {
    let mut hook = Map::new();
    hook.insert("type".into(), "command".into());
    hook.insert("command".into(), entry.command.clone().into());
    if let Some(timeout) = entry.timeout {
        hook.insert("timeout".into(), timeout.into());
    }
    let mut group = Map::new();
    if let Some(matcher) = &entry.matcher {
        group.insert("matcher".into(), matcher.clone().into());
    }
    group.insert("hooks".into(), Value::Array(vec![Value::Object(hook)]));
    Value::Object(group)
}

fn wrong_shape(path: &Path, detail: &str) -> InstallError {
    InstallError::WrongShape {
        path: path.to_path_buf(),
        detail: detail.to_string(),
    }
}

/// `hooks` must be an object of lists of objects, each with an optional list `hooks` of
/// objects. Only key names are quoted in the message, never a value.
fn check_shape(path: &Path, root: &Map<String, Value>) -> Result<(), InstallError> {
    let Some(hooks) = root.get("hooks") else {
        return Ok(());
    };
    let Value::Object(hooks) = hooks else {
        return Err(wrong_shape(path, "\"hooks\" is not an object"));
    };
    for (event, groups) in hooks {
        let Value::Array(groups) = groups else {
            return Err(wrong_shape(path, &format!("hooks.{event} is not a list")));
        };
        for (i, group) in groups.iter().enumerate() {
            let Value::Object(group) = group else {
                return Err(wrong_shape(
                    path,
                    &format!("hooks.{event}[{i}] is not an object"),
                ));
            };
            match group.get("hooks") {
                None => {}
                Some(Value::Array(inner)) => {
                    if let Some(j) = inner.iter().position(|h| !h.is_object()) {
                        return Err(wrong_shape(
                            path,
                            &format!("hooks.{event}[{i}].hooks[{j}] is not an object"),
                        ));
                    }
                }
                Some(_) => {
                    return Err(wrong_shape(
                        path,
                        &format!("hooks.{event}[{i}].hooks is not a list"),
                    ));
                }
            }
        }
    }
    Ok(())
}

type Places = Vec<(String, usize, usize)>;

fn find_ours(root: &Map<String, Value>) -> (Vec<Entry>, Places) {
    let mut ours = Vec::new();
    let mut places = Vec::new();
    let Some(Value::Object(hooks)) = root.get("hooks") else {
        return (ours, places);
    };
    for (event, groups) in hooks {
        let Value::Array(groups) = groups else {
            continue;
        };
        for (g, group) in groups.iter().enumerate() {
            let Some(Value::Array(inner)) = group.get("hooks") else {
                continue;
            };
            let command_of = |hook: &Value| {
                hook.get("command")
                    .and_then(Value::as_str)
                    .filter(|c| command::is_ours(c))
                    .map(str::to_string)
            };
            let all_ours = inner.iter().all(|h| command_of(h).is_some());
            for (h, hook) in inner.iter().enumerate() {
                let Some(command) = command_of(hook) else {
                    continue;
                };
                ours.push(Entry {
                    event: event.clone(),
                    matcher: if all_ours {
                        group
                            .get("matcher")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    } else {
                        None
                    },
                    command,
                    timeout: hook.get("timeout").and_then(Value::as_u64),
                });
                places.push((event.clone(), g, h));
            }
        }
    }
    (ours, places)
}

/// The indentation of the first indented line, the line ending of the first line, and
/// whether the text ends with a line break.
fn detect_style(text: &str) -> Style {
    let indent = text
        .lines()
        .skip(1)
        .map(|line| {
            let width = line.len() - line.trim_start_matches([' ', '\t']).len();
            &line[..width]
        })
        .find(|lead| !lead.is_empty())
        .map(|lead| {
            if lead.starts_with('\t') {
                "\t".to_string()
            } else {
                " ".repeat(lead.chars().take_while(|c| *c == ' ').count())
            }
        })
        .unwrap_or_else(|| "  ".into());
    Style {
        indent,
        crlf: text.find('\n').is_some_and(|i| text[..i].ends_with('\r')),
        final_newline: text.ends_with('\n'),
        bom: false,
    }
}

fn render(root: &Map<String, Value>, style: &Style) -> String {
    let mut buf = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(style.indent.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut buf, formatter);
    // Serialising a map of JSON values into memory cannot fail.
    let _ = root.serialize(&mut serializer);
    let mut text = String::from_utf8(buf).unwrap_or_default();
    let newline = if style.crlf { "\r\n" } else { "\n" };
    if style.crlf {
        text = text.replace('\n', "\r\n");
    }
    if style.final_newline {
        text.push_str(newline);
    }
    if style.bom {
        text.insert(0, '\u{feff}');
    }
    text
}

fn describe_indent(indent: &str) -> String {
    if indent == "\t" {
        "indented with tabs".into()
    } else {
        format!("indented with {} spaces", indent.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_not_ours_that_change_place_are_counted() {
        let ours = r#"{"type": "command", "command": "/p/fabric-session hook stop --host codex"}"#;
        let theirs = r#"{"type": "command", "command": "true"}"#;
        let before = format!(
            r#"{{"hooks": {{"Stop": [{{"hooks": [{ours}]}}, {{"hooks": [{theirs}]}}], "SessionStart": [{{"hooks": [{theirs}]}}]}}}}"#
        );
        let ours_gone = format!(
            r#"{{"hooks": {{"Stop": [{{"hooks": [{theirs}]}}], "SessionStart": [{{"hooks": [{theirs}]}}]}}}}"#
        );
        assert_eq!(moved_hooks_not_ours(Some(&before), &ours_gone), 1);
        let appended = format!(
            r#"{{"hooks": {{"Stop": [{{"hooks": [{ours}]}}, {{"hooks": [{theirs}]}}, {{"hooks": [{ours}]}}], "SessionStart": [{{"hooks": [{theirs}]}}]}}}}"#
        );
        assert_eq!(moved_hooks_not_ours(Some(&before), &appended), 0);
        assert_eq!(moved_hooks_not_ours(None, &appended), 0);
    }

    const OURS: &str = "/p/fabric-session hook session-start --host codex";

    fn ours_entry() -> Entry {
        Entry {
            event: "SessionStart".into(),
            matcher: Some("startup|resume|clear".into()),
            command: OURS.into(),
            timeout: Some(5),
        }
    }

    fn open(text: &str) -> JsonDoc {
        JsonDoc::open(Path::new("/x/hooks.json"), Some(text)).unwrap()
    }

    #[test]
    fn keeps_layout_and_round_trips_byte_for_byte() {
        let cases = [
            (
                "two spaces",
                "{\n  \"a\": 1,\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n",
            ),
            (
                "four spaces",
                "{\n    \"z\": [\n        1\n    ],\n    \"a\": true\n}\n",
            ),
            ("tabs", "{\n\t\"model\": \"x\"\n}\n"),
            (
                "crlf, no final newline",
                "{\r\n  \"b\": 2,\r\n  \"a\": 1\r\n}",
            ),
            ("bom", "\u{feff}{\n  \"a\": 1\n}\n"),
            ("empty", ""),
        ];
        for (name, text) in cases {
            let doc = open(text);
            assert!(doc.layout_warning().is_none(), "{name}");
            let installed = doc.edit(&[], &[ours_entry()]).unwrap();
            assert!(installed.contains(OURS), "{name}");
            let again = open(&installed);
            assert_eq!(again.ours().len(), 1, "{name}");
            let removed = again.edit(&[0], &[]).unwrap();
            let expected = if text.is_empty() { "{}\n" } else { text };
            assert_eq!(removed, expected, "{name}");
        }
    }

    #[test]
    fn other_hooks_stay_and_only_our_groups_go() {
        let text = r#"{
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          {
            "type": "command",
            "command": "echo theirs"
          },
          {
            "type": "command",
            "command": "/old/fabric-session hook session-start --host codex",
            "timeout": 5
          }
        ]
      },
      {
        "hooks": []
      }
    ]
  }
}
"#;
        let doc = open(text);
        assert_eq!(doc.ours().len(), 1);
        assert_eq!(
            doc.ours()[0].matcher,
            None,
            "a shared group's matcher is not ours"
        );
        let removed = doc.edit(&[0], &[]).unwrap();
        let value: Value = serde_json::from_str(&removed).unwrap();
        let groups = value["hooks"]["SessionStart"].as_array().unwrap();
        assert_eq!(groups.len(), 2, "the shared group and the empty one stay");
        assert_eq!(groups[0]["hooks"].as_array().unwrap().len(), 1);
        assert_eq!(groups[0]["hooks"][0]["command"], "echo theirs");
    }

    #[test]
    fn wrong_shapes_are_refused() {
        let cases = [
            "[]",
            "\"text\"",
            r#"{"hooks": []}"#,
            r#"{"hooks": {"SessionStart": {}}}"#,
            r#"{"hooks": {"SessionStart": [1]}}"#,
            r#"{"hooks": {"SessionStart": [{"hooks": {}}]}}"#,
            r#"{"hooks": {"SessionStart": [{"hooks": ["x"]}]}}"#,
        ];
        for text in cases {
            let err = JsonDoc::open(Path::new("/x/hooks.json"), Some(text)).err();
            assert!(
                matches!(err, Some(InstallError::WrongShape { .. })),
                "{text}"
            );
        }
        let err = JsonDoc::open(Path::new("/x/hooks.json"), Some("{\"a\": ")).err();
        assert!(matches!(err, Some(InstallError::NotParseable { .. })));
    }

    #[test]
    fn compact_files_get_a_layout_warning() {
        let doc = open(r#"{"a":1,"hooks":{}}"#);
        assert!(doc.layout_warning().is_some());
        let installed = doc.edit(&[], &[ours_entry()]).unwrap();
        let value: Value = serde_json::from_str(&installed).unwrap();
        assert_eq!(value["a"], 1);
    }

    #[test]
    fn keys_keep_their_order() {
        let doc = open(
            "{\n  \"z\": 1,\n  \"hooks\": {\n    \"Stop\": [],\n    \"A\": []\n  },\n  \"a\": 2\n}\n",
        );
        let installed = doc.edit(&[], &[ours_entry()]).unwrap();
        let z = installed.find("\"z\"").unwrap();
        let hooks = installed.find("\"hooks\"").unwrap();
        let a = installed.find("\"a\"").unwrap();
        let stop = installed.find("\"Stop\"").unwrap();
        let session = installed.find("\"SessionStart\"").unwrap();
        assert!(z < hooks && hooks < a && stop < session, "{installed}");
    }
}
