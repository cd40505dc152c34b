//! Codex: our SessionStart hook in `$CODEX_HOME/hooks.json` (default `~/.codex`), in the JSON
//! shape [`super::json`] edits.
//!
//! Owns the event Codex gets, the trust note, and one look at `config.toml` for hooks turned
//! off. That file may hold tokens: it is parsed only to read `[features] hooks` (and the older
//! `codex_hooks`) as a yes/no, and nothing from it is ever printed.

use std::path::PathBuf;

use super::EventSpec;
use crate::fsutil;
use crate::paths::Paths;

/// SessionStart, for every way a session starts: a fresh start, a resume, and `/clear`
/// (which wipes the context the preamble was in).
pub(crate) const EVENTS: &[EventSpec] = &[EventSpec {
    name: "SessionStart",
    arg: "session-start",
    matcher: Some("startup|resume|clear"),
}];

/// Said with every Codex install plan.
pub(crate) const TRUST_NOTE: &str = "Codex runs a new or changed hook only after you trust it in /hooks; it asks again whenever the command string changes, so keep the program's path stable.";

pub(crate) fn config_file(paths: &Paths) -> PathBuf {
    paths.codex_home().join("hooks.json")
}

/// A warning when Codex's `config.toml` turns hooks off.
pub(crate) fn warnings(paths: &Paths) -> Vec<String> {
    let config = paths.codex_home().join("config.toml");
    let Ok(Some(bytes)) = fsutil::read_bounded(&config, super::MAX_CONFIG_BYTES) else {
        return Vec::new();
    };
    let Some(table) = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
    else {
        return Vec::new();
    };
    let features = table.get("features").and_then(toml::Value::as_table);
    let off = |key: &str| {
        features
            .and_then(|f| f.get(key))
            .and_then(toml::Value::as_bool)
            == Some(false)
    };
    if off("hooks") || off("codex_hooks") {
        vec![format!(
            "{} turns Codex hooks off ([features] hooks = false): ours will not run until that is changed.",
            config.display()
        )]
    } else {
        Vec::new()
    }
}
