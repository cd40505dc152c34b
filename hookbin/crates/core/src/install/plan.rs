//! The plan of an install or removal, as data (for the tray and `--json`) and as text (for
//! the dry run), plus a line diff of the whole file for the dashboard.
//!
//! A plan never writes. Its printed forms show only our own entries: the new file text and
//! the diff may hold the person's other values (tokens, say), so they are never serialised
//! and the command line never prints them.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Entry, Operation, PROGRAM_NAME};
use crate::host::Host;

/// What applying the plan would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    /// The program the commands run (installs only).
    pub program: Option<PathBuf>,
    /// The command that applies this plan; `None` when there is nothing to do.
    pub apply_command: Option<String>,
    /// Things that may go wrong later, worth reading before applying.
    pub warnings: Vec<String>,
    /// What to expect once applied.
    pub notes: Vec<String>,
    /// The whole new file; `None` when nothing changes. Never printed: it holds other values.
    #[serde(skip)]
    pub new_text: Option<String>,
    /// A line diff of the whole file (`-`/`+` lines, two of context). Never printed.
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
        }
        if !self.add.is_empty() {
            out.push_str(&format!("\nWould add {}:\n", count(self.add.len())));
            out.push_str(&indent(&self.add_text));
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
        .map(|exe| super::command::quote_program(&exe))
        .unwrap_or_else(|| PROGRAM_NAME.to_string());
    let mut command = format!("{program} install-host-hooks --host {}", host.cli_name());
    if operation == Operation::Remove {
        command.push_str(" --remove");
    }
    if let Some(script) = script {
        command.push_str(" --script ");
        command.push_str(&super::command::quote_program(script));
    }
    command.push_str(&format!(" --apply --expect-sha256 {digest}"));
    command
}

/// A line diff of two texts: the changed stretch, with `-`/`+` lines and two lines of
/// context, hunks headed `@@ line N @@`. Small enough for any config; a huge changed stretch
/// is shown whole rather than aligned.
pub fn line_diff(old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mid_a = &a[prefix..a.len() - suffix];
    let mid_b = &b[prefix..b.len() - suffix];
    let ops = align(mid_a, mid_b);
    let context = 2;
    let start = prefix.saturating_sub(context);
    let mut out = format!("@@ line {} @@\n", start + 1);
    for line in &a[start..prefix] {
        out.push_str(&format!(" {line}\n"));
    }
    for op in ops {
        match op {
            Op::Same(line) => out.push_str(&format!(" {line}\n")),
            Op::Del(line) => out.push_str(&format!("-{line}\n")),
            Op::Add(line) => out.push_str(&format!("+{line}\n")),
        }
    }
    let tail_start = a.len() - suffix;
    for line in a.iter().skip(tail_start).take(context) {
        out.push_str(&format!(" {line}\n"));
    }
    if old.ends_with('\n') != new.ends_with('\n') {
        out.push_str("\\ the final line break differs\n");
    }
    out
}

enum Op<'a> {
    Same(&'a str),
    Del(&'a str),
    Add(&'a str),
}

/// Longest-common-subsequence alignment; past a size bound, everything old then everything
/// new.
fn align<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op<'a>> {
    const MAX_CELLS: usize = 4_000_000;
    if a.len().saturating_mul(b.len()) > MAX_CELLS {
        return a
            .iter()
            .map(|l| Op::Del(l))
            .chain(b.iter().map(|l| Op::Add(l)))
            .collect();
    }
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if a[i] == b[j] {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::new();
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Op::Same(a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
            ops.push(Op::Del(a[i]));
            i += 1;
        } else {
            ops.push(Op::Add(b[j]));
            j += 1;
        }
    }
    ops
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
    fn diff_shows_the_changed_stretch_with_context() {
        let old = "a\nb\nc\nd\ne\n";
        let new = "a\nb\nc\nX\nd\ne\n";
        assert_eq!(line_diff(old, new), "@@ line 2 @@\n b\n c\n+X\n d\n e\n");
        assert_eq!(line_diff(old, old), "");
        let removed = line_diff("a\nb\n", "a\n");
        assert_eq!(removed, "@@ line 1 @@\n a\n-b\n");
    }

    #[test]
    fn diff_aligns_inside_the_stretch() {
        let diff = line_diff("x\n1\n2\n3\ny\n", "x\n1\nA\n3\ny\n");
        assert_eq!(diff, "@@ line 1 @@\n x\n 1\n-2\n+A\n 3\n y\n");
    }
}
