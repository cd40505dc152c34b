//! Kimi Code: our SessionStart, UserPromptSubmit, Stop and SessionEnd hooks and the state
//! events (PermissionRequest, PermissionResult, PreToolUse for `AskUserQuestion` only,
//! PostToolUse, PostToolUseFailure, StopFailure, Interrupt, SubagentStop) as `[[hooks]]`
//! tables (exactly
//! `event`, `matcher`, `command`, `timeout`) in `$KIMI_CODE_HOME/config.toml` (default
//! `~/.kimi-code`).
//!
//! The file is edited as text so that everything else stays byte for byte — comments, odd
//! spacing, CRLF line endings, a missing final line break: our tables are appended at the
//! end, separated by a blank line, in the file's line endings; removing one cuts exactly its
//! lines and that separator. `toml_edit` finds the tables and their spans; the edit is then
//! checked with the `toml` parser: everything but our tables must be the same data.
//!
//! Why not `toml_edit`'s document API (`DocumentMut`, push/remove in the `hooks` array of
//! tables, then `to_string()`): checked with toml_edit 0.25, it does not keep the byte-for-byte
//! round trip promised here. A CRLF file comes back with LF line endings even when nothing
//! was changed, and a file without a final line break gets one; both are cases of the install
//! tests. So `toml_edit` only locates the tables, and the edit stays a cut and an append.
//!
//! It never rewrites a table that is not ours and never prints a value from the file. A
//! `hooks` key that is not an array of `[[hooks]]` tables (an inline array, a `[hooks]`
//! table) is refused.

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::{ConfigDoc, Entry, EventSpec, HOOK_TIMEOUT_SECS, InstallError};
use crate::hook_command as command;
use companion_platform::paths::Paths;

/// Kimi Code shows SessionStart output to no one, so SessionStart only records the session and
/// the preamble rides on the first prompt (UserPromptSubmit), with the unread line on later
/// ones; Stop and SessionEnd as for every host (`kimi -p` never fires SessionEnd: its spool is
/// pruned once the process is gone).
pub(crate) const EVENTS: &[EventSpec] = &[
    EventSpec {
        name: "SessionStart",
        arg: "session-start",
        matcher: Some(""),
        timeout: HOOK_TIMEOUT_SECS,
    },
    EventSpec {
        name: "UserPromptSubmit",
        arg: "user-prompt-submit",
        matcher: Some(""),
        timeout: HOOK_TIMEOUT_SECS,
    },
    EventSpec {
        name: "Stop",
        arg: "stop",
        matcher: Some(""),
        timeout: HOOK_TIMEOUT_SECS,
    },
    EventSpec {
        name: "SessionEnd",
        arg: "session-end",
        matcher: Some(""),
        timeout: HOOK_TIMEOUT_SECS,
    },
    EventSpec::kimi_state("PermissionRequest", "permission-request"),
    EventSpec::kimi_state("PermissionResult", "permission-result"),
    // A question (AskUserQuestion) asks no permission in Kimi Code; the matcher is a regular
    // expression on the tool's name, so this hook runs for that tool alone.
    EventSpec {
        name: "PreToolUse",
        arg: "pre-tool-use",
        matcher: Some("^AskUserQuestion$"),
        timeout: HOOK_TIMEOUT_SECS,
    },
    EventSpec::kimi_state("PostToolUse", "post-tool-use"),
    EventSpec::kimi_state("PostToolUseFailure", "post-tool-use-failure"),
    EventSpec::kimi_state("StopFailure", "stop-failure"),
    EventSpec::kimi_state("Interrupt", "interrupt"),
    EventSpec::kimi_state("SubagentStop", "subagent-stop"),
];

/// Said with every Kimi Code install plan.
pub(crate) const PREAMBLE_NOTE: &str = "Kimi Code does not show SessionStart output to the model, so the preamble comes with your first prompt (the UserPromptSubmit hook); Kimi Code shows that text, and the unread line, to you too.";

pub(crate) fn config_file(paths: &Paths) -> PathBuf {
    paths.kimi_home().join("config.toml")
}

/// A parsed `config.toml` with our tables located.
pub(crate) struct TomlDoc {
    path: PathBuf,
    text: String,
    newline: &'static str,
    /// The whole file as data, to check an edit against.
    data: toml::Table,
    ours: Vec<Entry>,
    /// How many `[[hooks]]` tables the file has (ours and others).
    tables: usize,
    /// For each of `ours`: its index among the `[[hooks]]` tables, and its span from the
    /// start of its header line to the end of its last value's line (line break excluded).
    places: Vec<(usize, Option<Range<usize>>)>,
}

impl TomlDoc {
    /// Parses `text` (`None`: the file does not exist).
    pub(crate) fn open(path: &Path, text: Option<&str>) -> Result<TomlDoc, InstallError> {
        let text = text.unwrap_or("");
        let not_parseable = |detail: String| InstallError::NotParseable {
            path: path.to_path_buf(),
            format: "TOML",
            detail,
        };
        let doc = toml_edit::Document::parse(text).map_err(|err| {
            let line = err
                .span()
                .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
            let message = err.message().lines().next().unwrap_or("").to_string();
            not_parseable(match line {
                Some(line) => format!("line {line}: {message}"),
                None => message,
            })
        })?;
        let data: toml::Table = text
            .parse()
            .map_err(|_| not_parseable("the toml parser refuses it".into()))?;
        let mut ours = Vec::new();
        let mut places = Vec::new();
        let mut count = 0;
        match doc.as_table().get("hooks") {
            None => {}
            Some(toml_edit::Item::ArrayOfTables(tables)) => {
                count = tables.len();
                for (index, table) in tables.iter().enumerate() {
                    let text_of = |key: &str| table.get(key).and_then(|i| i.as_str());
                    let Some(command) = text_of("command").filter(|c| command::is_ours(c)) else {
                        continue;
                    };
                    ours.push(Entry {
                        event: text_of("event").unwrap_or("").to_string(),
                        matcher: text_of("matcher").map(str::to_string),
                        command: command.to_string(),
                        timeout: table
                            .get("timeout")
                            .and_then(|i| i.as_integer())
                            .and_then(|t| u64::try_from(t).ok()),
                    });
                    places.push((index, table_span(text, table)));
                }
            }
            Some(_) => {
                return Err(InstallError::WrongShape {
                    path: path.to_path_buf(),
                    detail: "\"hooks\" is not an array of [[hooks]] tables".into(),
                });
            }
        }
        let newline = match text.find('\n') {
            Some(i) if text[..i].ends_with('\r') => "\r\n",
            _ => "\n",
        };
        Ok(TomlDoc {
            path: path.to_path_buf(),
            text: text.to_string(),
            newline,
            data,
            tables: count,
            ours,
            places,
        })
    }

    fn check_failed(&self, detail: &str) -> InstallError {
        InstallError::EditCheckFailed {
            path: self.path.clone(),
            detail: detail.to_string(),
        }
    }
}

impl ConfigDoc for TomlDoc {
    fn ours(&self) -> &[Entry] {
        &self.ours
    }

    fn positions(&self, remove: &[usize], add: &[Entry]) -> (Vec<String>, Vec<String>) {
        let total = self.tables;
        let remove_at = remove
            .iter()
            .map(|&i| format!("[[hooks]] table {} of {total}", self.places[i].0 + 1))
            .collect();
        let left = total - remove.len();
        let add_at = (0..add.len())
            .map(|k| match left + k {
                0 => "a [[hooks]] table at the end of the file".to_string(),
                1 => "a [[hooks]] table at the end of the file, after 1 other".to_string(),
                n => format!("a [[hooks]] table at the end of the file, after {n} others"),
            })
            .collect();
        (remove_at, add_at)
    }

    fn entry_text(&self, entry: &Entry) -> String {
        table_text(entry, "\n")
    }

    fn edit(&self, remove: &[usize], add: &[Entry]) -> Result<String, InstallError> {
        let mut text = self.text.clone();
        let mut spans = Vec::new();
        for &i in remove {
            match &self.places[i].1 {
                Some(span) => spans.push(span.clone()),
                None => return Err(self.check_failed("cannot locate one of our tables")),
            }
        }
        // Last first, so the spans still to cut stay right.
        spans.sort_by_key(|span| std::cmp::Reverse(span.start));
        for span in spans {
            let cut = removal_range(&text, span);
            text.replace_range(cut, "");
        }
        if !add.is_empty() {
            text = append_tables(&text, add, self.newline);
        }
        // Everything but our tables must be the same data as before.
        let after: toml::Table = text
            .parse()
            .map_err(|_| self.check_failed("the new text would not parse"))?;
        let mut expected = self.data.clone();
        let mut removed_indexes: Vec<usize> = remove.iter().map(|&i| self.places[i].0).collect();
        removed_indexes.sort_unstable_by(|a, b| b.cmp(a));
        let mut hooks = match expected.remove("hooks") {
            Some(toml::Value::Array(hooks)) => hooks,
            _ => Vec::new(),
        };
        for index in removed_indexes {
            if index < hooks.len() {
                hooks.remove(index);
            }
        }
        hooks.extend(add.iter().map(entry_value));
        if !hooks.is_empty() {
            expected.insert("hooks".into(), toml::Value::Array(hooks));
        }
        if !same_table(&expected, &after) {
            return Err(self.check_failed("the rest of the file would not stay the same"));
        }
        Ok(text)
    }
}

/// Our entries as `[[hooks]]` tables, lines joined with `newline`.
pub(crate) fn entries_text(entries: &[Entry], newline: &str) -> String {
    entries
        .iter()
        .map(|entry| table_text(entry, newline) + newline)
        .collect::<Vec<_>>()
        .join(newline)
}

/// Whether written text parses with the `toml` parser (the read-back check).
pub(crate) fn verify_parses(text: &str) -> Result<(), String> {
    text.parse::<toml::Table>()
        .map(|_| ())
        .map_err(|_| "it does not parse as TOML".to_string())
}

fn table_text(entry: &Entry, newline: &str) -> String {
    let mut lines = vec![
        "[[hooks]]".to_string(),
        format!("event = {}", basic_string(&entry.event)),
        format!(
            "matcher = {}",
            basic_string(entry.matcher.as_deref().unwrap_or(""))
        ),
        format!("command = {}", basic_string(&entry.command)),
    ];
    if let Some(timeout) = entry.timeout {
        lines.push(format!("timeout = {timeout}"));
    }
    lines.join(newline)
}

fn entry_value(entry: &Entry) -> toml::Value {
    let mut table = toml::Table::new();
    table.insert("event".into(), entry.event.clone().into());
    table.insert(
        "matcher".into(),
        entry.matcher.clone().unwrap_or_default().into(),
    );
    table.insert("command".into(), entry.command.clone().into());
    if let Some(timeout) = entry.timeout {
        table.insert("timeout".into(), toml::Value::Integer(timeout as i64));
    }
    toml::Value::Table(table)
}

/// A TOML basic string.
fn basic_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// From the start of a table's header line to the end of the line of its last value.
fn table_span(text: &str, table: &toml_edit::Table) -> Option<Range<usize>> {
    let header = table.span()?;
    let line_start = text[..header.start].rfind('\n').map_or(0, |i| i + 1);
    if !text[line_start..header.start].trim().is_empty() {
        return None;
    }
    let mut last = header.end;
    for (key, item) in table.iter() {
        let end = match item {
            toml_edit::Item::Value(value) => value.span()?.end,
            _ => return None,
        };
        last = last.max(end);
        if let Some(key_span) = table.key(key).and_then(|k| k.span()) {
            last = last.max(key_span.end);
        }
    }
    let line_end = text[last..].find('\n').map_or(text.len(), |i| last + i);
    let line_end = if text[..line_end].ends_with('\r') {
        line_end - 1
    } else {
        line_end
    };
    Some(line_start..line_end)
}

/// What to cut for a table: its lines and the blank line we put before it — the inverse of
/// [`append_tables`]. A table at the very start takes the line break after it instead.
fn removal_range(text: &str, span: Range<usize>) -> Range<usize> {
    let before = &text[..span.start];
    if let Some(one) = trailing_newline_len(before) {
        let two = trailing_newline_len(&before[..before.len() - one]).unwrap_or(0);
        (span.start - one - two)..span.end
    } else {
        let after = &text[span.end..];
        let next = if after.starts_with("\r\n") {
            2
        } else if after.starts_with('\n') {
            1
        } else {
            0
        };
        span.start..span.end + next
    }
}

/// Appends tables at the end: a blank line before each (none before the first in an empty
/// file), the file's line endings, and a final line break only when the file had one (or
/// was empty).
fn append_tables(text: &str, entries: &[Entry], newline: &str) -> String {
    let (body, had_final) = match trailing_newline_len(text) {
        Some(n) => (&text[..text.len() - n], true),
        None => (text, false),
    };
    let mut out = body.to_string();
    let mut first_in_empty_file = text.is_empty();
    for entry in entries {
        if !first_in_empty_file {
            out.push_str(newline);
            out.push_str(newline);
        }
        first_in_empty_file = false;
        out.push_str(&table_text(entry, newline));
    }
    if had_final || text.is_empty() {
        out.push_str(newline);
    }
    out
}

fn trailing_newline_len(text: &str) -> Option<usize> {
    if text.ends_with("\r\n") {
        Some(2)
    } else if text.ends_with('\n') {
        Some(1)
    } else {
        None
    }
}

/// Data equality where a NaN equals a NaN (a file may hold `nan`).
fn same_value(a: &toml::Value, b: &toml::Value) -> bool {
    use toml::Value as V;
    match (a, b) {
        (V::Float(x), V::Float(y)) => x.to_bits() == y.to_bits() || x == y,
        (V::Array(x), V::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        (V::Table(x), V::Table(y)) => same_table(x, y),
        _ => a == b,
    }
}

fn same_table(a: &toml::Table, b: &toml::Table) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(key, value)| b.get(key).is_some_and(|other| same_value(value, other)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(event: &str) -> Entry {
        Entry {
            event: event.into(),
            matcher: Some(String::new()),
            command: format!(
                "/p/fabric-session hook {} --host kimi",
                event.to_lowercase()
            ),
            timeout: Some(5),
        }
    }

    fn open(text: &str) -> TomlDoc {
        TomlDoc::open(Path::new("/k/config.toml"), Some(text)).unwrap()
    }

    fn round_trip(text: &str) -> (String, String) {
        let doc = open(text);
        let installed = doc
            .edit(&[], &[ours("SessionStart"), ours("UserPromptSubmit")])
            .unwrap();
        let again = open(&installed);
        assert_eq!(again.ours().len(), 2, "{installed:?}");
        let removed = again.edit(&[0, 1], &[]).unwrap();
        (installed, removed)
    }

    #[test]
    fn install_then_remove_gives_back_the_same_bytes() {
        let cases = [
            ("empty", ""),
            ("one newline", "\n"),
            ("plain", "default_model = \"k2\"\n"),
            ("no final newline", "default_model = \"k2\""),
            ("trailing blank lines", "a = 1\n\n\n"),
            (
                "crlf",
                "# top\r\na = 1\r\n\r\n[models.x]\r\nname = \"x\"\r\n",
            ),
            (
                "comments and odd spacing",
                "# my config\n  a   =   1   # note\n\n[ mcp_servers . x ]\n  url='http://x' # c\n# trailing comment",
            ),
            (
                "their hooks",
                "[[hooks]]\nevent = \"Stop\"\nmatcher = \"\"\ncommand = \"notify-send done\"\ntimeout = 10\n",
            ),
            ("only whitespace", "   "),
        ];
        for (name, text) in cases {
            let (installed, removed) = round_trip(text);
            assert_eq!(removed, text, "{name}: installed was {installed:?}");
        }
    }

    #[test]
    fn appended_tables_use_the_files_line_endings() {
        let (installed, _) = round_trip("a = 1\r\n");
        assert!(
            !installed.replace("\r\n", "").contains('\n'),
            "{installed:?}"
        );
        assert!(installed.ends_with("timeout = 5\r\n"));
    }

    #[test]
    fn removes_ours_wherever_they_are_and_keeps_theirs() {
        let text = "a = 1\n\n[[hooks]]\nevent = \"SessionStart\"\nmatcher = \"\"\ncommand = \"'/old path/fabric-session' hook session-start --host kimi\"\ntimeout = 5 # ours\n# about theirs\n[[hooks]]\nevent = \"Stop\"\nmatcher = \"\"\ncommand = \"echo theirs\"\ntimeout = 3\n";
        let doc = open(text);
        assert_eq!(doc.ours().len(), 1);
        let removed = doc.edit(&[0], &[]).unwrap();
        assert_eq!(
            removed,
            "a = 1\n# about theirs\n[[hooks]]\nevent = \"Stop\"\nmatcher = \"\"\ncommand = \"echo theirs\"\ntimeout = 3\n"
        );
    }

    #[test]
    fn refuses_other_shapes_and_broken_files() {
        let shapes = [
            "hooks = []",
            "hooks = \"x\"",
            "[hooks]\nevent = \"SessionStart\"",
            "hooks = [{event = \"SessionStart\"}]",
        ];
        for text in shapes {
            let err = TomlDoc::open(Path::new("/k/config.toml"), Some(text)).err();
            assert!(
                matches!(err, Some(InstallError::WrongShape { .. })),
                "{text}"
            );
        }
        let err = TomlDoc::open(Path::new("/k/config.toml"), Some("a = 1\nb = \"secret")).err();
        match err {
            Some(InstallError::NotParseable { detail, .. }) => {
                assert!(detail.starts_with("line 2"), "{detail}");
                assert!(!detail.contains("secret"), "{detail}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn strings_are_escaped() {
        let entry = Entry {
            command: "'/a \"b\"/fabric-session' hook stop\\".into(),
            ..ours("Stop")
        };
        let text = entries_text(std::slice::from_ref(&entry), "\n");
        let table: toml::Table = text.parse().unwrap();
        let hooks = table["hooks"].as_array().unwrap();
        assert_eq!(hooks[0]["command"].as_str(), Some(entry.command.as_str()));
    }
}
