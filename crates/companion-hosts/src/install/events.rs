//! The hook events each host gets from us (`EventSpec`, `events`) and the format of each host's
//! config file (`Format`, opened into a `ConfigDoc`).

use super::*;

/// One hook event a host gets from us.
pub(crate) struct EventSpec {
    /// The host's name for it.
    pub name: &'static str,
    /// Our `hook <event>` argument.
    pub arg: &'static str,
    /// The matcher we install (`None`: the group has no `matcher` key).
    pub matcher: Option<&'static str>,
    /// Seconds ([`HOOK_TIMEOUT_SECS`] unless the host caps the event lower).
    pub timeout: u64,
}

impl EventSpec {
    /// A state event (see `companion_sessions::session_state`) in the JSON shape: every tool,
    /// notification type and agent, so no matcher.
    pub(crate) const fn state(name: &'static str, arg: &'static str) -> EventSpec {
        EventSpec {
            name,
            arg,
            matcher: None,
            timeout: HOOK_TIMEOUT_SECS,
        }
    }

    /// A state event as a Kimi Code table (every table has a matcher; `""` matches all).
    pub(crate) const fn kimi_state(name: &'static str, arg: &'static str) -> EventSpec {
        EventSpec {
            name,
            arg,
            matcher: Some(""),
            timeout: HOOK_TIMEOUT_SECS,
        }
    }
}

pub(super) fn events(host: Host) -> &'static [EventSpec] {
    match host {
        Host::Claude => claude::EVENTS,
        Host::Codex => codex::EVENTS,
        Host::Kimi => kimi::EVENTS,
    }
}

/// A parsed config file, whatever its format.
pub(crate) trait ConfigDoc {
    /// Our entries in the file, in file order; [`ConfigDoc::edit`] takes indexes into it.
    fn ours(&self) -> &[Entry];
    /// The new text with `remove` (indexes into [`ConfigDoc::ours`]) taken out and `add`
    /// added. It must keep everything else.
    fn edit(&self, remove: &[usize], add: &[Entry]) -> Result<String, InstallError>;
    /// A warning when writing the file changes its layout (not its data).
    fn layout_warning(&self) -> Option<String> {
        None
    }
    /// Where each of `remove` is and where each of `add` goes, in words that name only keys,
    /// events and counts (never a value from the file).
    fn positions(&self, remove: &[usize], add: &[Entry]) -> (Vec<String>, Vec<String>);
    /// One of our entries as the file would hold it (a group, a table).
    fn entry_text(&self, entry: &Entry) -> String;
}

/// The two file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// `{"hooks": {"<Event>": [{"matcher": …, "hooks": [{"type": "command", …}]}]}}`.
    HooksJson,
    /// `[[hooks]]` tables with `event`, `matcher`, `command`, `timeout`.
    KimiToml,
}

impl Format {
    pub(super) fn of(host: Host) -> Format {
        match host {
            Host::Claude | Host::Codex => Format::HooksJson,
            Host::Kimi => Format::KimiToml,
        }
    }

    pub(super) fn open(
        self,
        path: &Path,
        text: Option<&str>,
    ) -> Result<Box<dyn ConfigDoc>, InstallError> {
        Ok(match self {
            Format::HooksJson => Box::new(json::JsonDoc::open(path, text)?),
            Format::KimiToml => Box::new(kimi::TomlDoc::open(path, text)?),
        })
    }

    /// Whether `text` holds nothing at all: `{}` (JSON), or only blank lines (TOML; a comment
    /// is something).
    pub(super) fn is_empty_document(self, text: &str) -> bool {
        match self {
            Format::HooksJson => serde_json::from_str::<serde_json::Value>(text)
                .is_ok_and(|value| value.as_object().is_some_and(|o| o.is_empty())),
            Format::KimiToml => text.trim().is_empty(),
        }
    }

    pub(super) fn entries_text(self, entries: &[Entry]) -> String {
        match self {
            Format::HooksJson => json::entries_text(entries),
            Format::KimiToml => kimi::entries_text(entries, "\n"),
        }
    }
}
