//! The plan of an install or removal, as data (for the dashboard and `--json`) and as text
//! (for the dry run), plus a diff of our entries for the dashboard.
//!
//! A plan never writes. Every form of it shows only our own entries and where they are
//! ("in hooks.SessionStart, after 2 other groups"): never a line of the person's config, which
//! may hold tokens (an `env` block, say). The new file text is never serialised or printed.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Entry, Operation};
use crate::hook_command as command;
use crate::host::Host;
use companion_platform::paths::PROGRAM_NAME;

/// What applying the plan would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Action {
    /// Add our entries (and take out old entries of ours that point elsewhere).
    Install,
    /// Take our entries out.
    Remove,
    /// The file is already as asked.
    NothingToDo { reason: String },
}

/// Everything an install or removal would do to one host's config.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub host: Host,
    pub operation: Operation,
    /// The config file (as named: a symlink is written through to its target).
    pub file: PathBuf,
    pub exists: bool,
    /// The file's sha256 (lowercase hex); `None` when it does not exist.
    pub sha256: Option<String>,
    /// What `--expect-sha256` must be: the plan digest, a sha256 of the file's digest and of
    /// everything applying does (the entries, their program, the new text; see [`super::apply`]).
    pub digest: String,
    pub action: Action,
    /// Entries to add.
    pub add: Vec<Entry>,
    /// Entries of ours to take out.
    pub remove: Vec<Entry>,
    /// `add` in the file's own format (empty when there is nothing to add).
    pub add_text: String,
    /// `remove` in the file's own format (empty when there is nothing to take out).
    pub remove_text: String,
    /// Where each of `add` goes, in words ("in hooks.SessionStart, after 2 other groups").
    pub add_at: Vec<String>,
    /// Where each of `remove` is, in words ("from hooks.Stop, group 3 of 4").
    pub remove_at: Vec<String>,
    /// The program the commands run (installs only).
    pub program: Option<PathBuf>,
    /// The command that applies this plan; `None` when there is nothing to do.
    pub apply_command: Option<String>,
    /// Things that may go wrong later, worth reading before applying.
    pub warnings: Vec<String>,
    /// What to expect once applied.
    pub notes: Vec<String>,
    /// Applying deletes the file: a removal that leaves nothing in a file our install created
    /// (it gives back what was there before, no file).
    pub removes_file: bool,
    /// The whole new file; `None` when nothing changes. Never printed: it holds other values.
    #[serde(skip)]
    pub new_text: Option<String>,
    /// Our entries as a diff: per entry, an `@@ <where> @@` line, then its lines with `-`
    /// (taken out) or `+` (added). Nothing else of the file.
    #[serde(skip)]
    pub diff: String,
}

impl Plan {
    /// The dry run as a person reads it.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        out.push_str("Dry run: nothing was written.\n");
        out.push_str(&format!(
            "{} config: {}\n",
            self.host.display_name(),
            self.file.display()
        ));
        match &self.sha256 {
            Some(sha) => out.push_str(&format!("sha256: {sha}\n")),
            None => out.push_str(&format!(
                "sha256: none, the file does not exist yet (digest: {})\n",
                self.digest
            )),
        }
        if let Action::NothingToDo { reason } = &self.action {
            let reason = capitalise(reason);
            out.push_str(&format!("{reason}: nothing to do.\n"));
            for note in &self.notes {
                out.push_str(&format!("Note: {note}\n"));
            }
            return out;
        }
        if !self.remove.is_empty() {
            out.push_str(&format!(
                "\nWould take out {} of ours{}:\n",
                count(self.remove.len()),
                if self.add.is_empty() {
                    ""
                } else {
                    " (they point elsewhere)"
                }
            ));
            out.push_str(&indent(&self.remove_text));
            out.push_str(&where_lines(&self.remove_at));
        }
        if !self.add.is_empty() {
            out.push_str(&format!("\nWould add {}:\n", count(self.add.len())));
            out.push_str(&indent(&self.add_text));
            out.push_str(&where_lines(&self.add_at));
        }
        if self.removes_file {
            out.push_str(
                "\nNothing else is in the file and our install created it: it would be deleted (no backup).\n",
            );
        }
        if !self.warnings.is_empty() || !self.notes.is_empty() {
            out.push('\n');
        }
        for warning in &self.warnings {
            out.push_str(&format!("Warning: {warning}\n"));
        }
        for note in &self.notes {
            out.push_str(&format!("Note: {note}\n"));
        }
        if let Some(command) = &self.apply_command {
            out.push_str(&format!("\nTo apply, run:\n  {command}\n"));
        }
        out
    }
}

/// The full command that applies a plan: this binary (when it is `fabric-session`), the
/// host, the operation, `--script` when one was given, and the digest.
pub(crate) fn apply_command(
    host: Host,
    operation: Operation,
    script: Option<&Path>,
    digest: &str,
) -> String {
    let program = std::env::current_exe()
        .ok()
        .filter(|exe| {
            exe.file_stem()
                .is_some_and(|stem| stem.to_string_lossy() == PROGRAM_NAME)
        })
        .map(|exe| command::quote_program(&exe))
        .unwrap_or_else(|| PROGRAM_NAME.to_string());
    let mut command = format!("{program} install-host-hooks --host {}", host.cli_name());
    if operation == Operation::Remove {
        command.push_str(" --remove");
    }
    if let Some(script) = script {
        command.push_str(" --script ");
        command.push_str(&command::quote_argument(script));
    }
    command.push_str(&format!(" --apply --expect-sha256 {digest}"));
    command
}

/// Our entries as a diff: each taken-out entry (`-` lines) and each added one (`+` lines)
/// under an `@@ <where> @@` line. Built from our entries only, so it can hold nothing else.
pub fn entries_diff(removed: &[(String, &str)], added: &[(String, &str)]) -> String {
    let mut out = String::new();
    for (sign, entries) in [('-', removed), ('+', added)] {
        for (text, at) in entries {
            out.push_str(&format!("@@ {at} @@\n"));
            for line in text.lines() {
                out.push(sign);
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

fn where_lines(places: &[String]) -> String {
    places.iter().map(|at| format!("  ({at})\n")).collect()
}

fn count(n: usize) -> String {
    if n == 1 {
        "1 entry".into()
    } else {
        format!("{n} entries")
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| {
            if line.is_empty() {
                "\n".to_string()
            } else {
                format!("  {line}\n")
            }
        })
        .collect()
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_diff_is_only_our_entries_under_their_places() {
        let diff = entries_diff(
            &[(
                "{\n  \"hooks\": []\n}".into(),
                "from hooks.Stop, group 2 of 3",
            )],
            &[(
                "[[hooks]]\nevent = \"Stop\"".into(),
                "a [[hooks]] table at the end of the file",
            )],
        );
        assert_eq!(
            diff,
            "@@ from hooks.Stop, group 2 of 3 @@\n-{\n-  \"hooks\": []\n-}\n@@ a [[hooks]] table at the end of the file @@\n+[[hooks]]\n+event = \"Stop\"\n"
        );
        assert_eq!(entries_diff(&[], &[]), "");
    }
}
