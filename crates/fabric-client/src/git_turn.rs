//! What a turn changed, as numbers only: the HEAD commit, how many files differ from it
//! (untracked files included), and the lines added and removed against it.
//!
//! `git` runs in the session's folder, which may come from an untrusted archive, so it runs
//! with every program a repository's config or attributes can name turned off ([`git`]): no
//! fsmonitor, hooks, pager, external diff, textconv, clean/smudge/process filter, and no
//! transport (a partial clone's lazy fetch would run one). It also runs with
//! `--no-optional-locks` (and `GIT_OPTIONAL_LOCKS=0`) so it never takes a lock the person's own
//! git might want. All of a turn's git commands together get one time budget; past it the
//! numbers are null; each command runs in its own process group, so at the deadline it is
//! killed with everything it started ([`crate::group`]). No path, branch name, commit message
//! or diff text leaves this module.
//! Outside a repository every field is null.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;

use serde::Serialize;
use tokio::process::Command;
use tokio::time::Instant;

use crate::group::{GroupChild, Output};

/// The most a git command may print (a diff's numbers or a list of untracked files); more
/// makes the numbers null rather than a memory cost.
const OUTPUT_LIMIT: u64 = 64 * 1024 * 1024;

/// The git of an empty tree, to diff a repository that has no commit yet.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Configuration that turns off every program git could run for the commands below, whatever
/// the repository's `.git/config`, its includes or the person's config say (command-line
/// configuration outranks every file). With `--no-pager`, `--no-ext-diff`, `--no-textconv`,
/// `--ignore-submodules=all`, the filter drivers turned off one by one ([`filter_drivers`]) and
/// the environment below, nothing is left that runs a program. `core.virtualFilesystem` is a
/// hook of Microsoft's git fork; other gits ignore the key.
const HARDENING: [(&str, &str); 7] = [
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.virtualFilesystem", ""),
    ("diff.external", ""),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
];

/// An environment variable holding an empty value, for `--config-env` (which reads a value
/// from the environment, so a driver's name never has to be parsed out of `-c name=value`).
const EMPTY_ENV: &str = "FABRIC_GIT_EMPTY";
/// The same for `false`.
const FALSE_ENV: &str = "FABRIC_GIT_FALSE";

/// Environment variables that would point git elsewhere or run a program; the host's
/// environment reaches the worker, so they are dropped.
const DROPPED_ENV: [&str; 9] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_SSH_COMMAND",
];

/// The numbers `fabric_session_observe` carries for a turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnStats {
    pub head: Option<String>,
    pub files_changed: Option<u64>,
    pub lines_added: Option<u64>,
    pub lines_removed: Option<u64>,
}

/// One hardened git command in `dir`, with the filter drivers named in `filters` turned off.
fn command(dir: &Path, filters: &BTreeSet<String>, args: &[&str]) -> Command {
    let mut command = Command::new("git");
    command.arg("--no-optional-locks").arg("--no-pager");
    for (key, value) in HARDENING {
        command.arg("-c").arg(format!("{key}={value}"));
    }
    for name in filters {
        for key in ["clean", "smudge", "process"] {
            command.arg(format!("--config-env=filter.{name}.{key}={EMPTY_ENV}"));
        }
        command.arg(format!("--config-env=filter.{name}.required={FALSE_ENV}"));
    }
    command.arg("-C").arg(dir).args(args);
    for name in DROPPED_ENV {
        command.env_remove(name);
    }
    command
        .env(EMPTY_ENV, "")
        .env(FALSE_ENV, "false")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        // No object is ever fetched (a partial clone's missing blob makes the diff fail)…
        .env("GIT_NO_LAZY_FETCH", "1")
        // …and no transport is allowed, whatever `protocol.*.allow` the repository sets.
        .env("GIT_ALLOW_PROTOCOL", "")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    command
}

/// Runs one git command in its own process group ([`GroupChild`]); at `deadline` it and
/// everything it started (a hook, a helper, a wrapper's child) are killed and `None` comes
/// back, as it does for a command that fails or prints more than [`OUTPUT_LIMIT`].
async fn run(
    dir: &Path,
    filters: &BTreeSet<String>,
    args: &[&str],
    deadline: Instant,
) -> Option<Output> {
    GroupChild::spawn(&mut command(dir, filters, args))
        .ok()?
        .output_until(deadline, OUTPUT_LIMIT)
        .await
}

/// Runs one git command ([`run`]); its stdout when it succeeded.
async fn git(
    dir: &Path,
    filters: &BTreeSet<String>,
    args: &[&str],
    deadline: Instant,
) -> Option<Vec<u8>> {
    let output = run(dir, filters, args, deadline).await?;
    output.status.success().then_some(output.stdout)
}

/// The filter drivers the repository's config defines (`filter.<name>.*`), to turn off.
async fn filter_drivers(dir: &Path, deadline: Instant) -> Option<BTreeSet<String>> {
    let args = ["config", "-z", "--name-only", "--get-regexp", r"^filter\."];
    // `git config --get-regexp` exits 1 when nothing matches.
    let output = run(dir, &BTreeSet::new(), &args, deadline).await?;
    match output.status.code() {
        Some(0) => Some(parse_filter_names(&output.stdout)),
        Some(1) => Some(BTreeSet::new()),
        _ => None,
    }
}

/// The driver names in `git config -z --name-only` output: `filter.<name>.<key>`, the name
/// being everything between the first and the last dot.
fn parse_filter_names(out: &[u8]) -> BTreeSet<String> {
    out.split(|b| *b == 0)
        .filter_map(|key| std::str::from_utf8(key).ok())
        .filter_map(|key| {
            let rest = key.strip_prefix("filter.")?;
            let (name, _) = rest.rsplit_once('.')?;
            Some(name.to_string())
        })
        .collect()
}

/// Measures the working tree at `dir` against its HEAD, within `deadline` for all of it.
pub async fn measure(dir: &Path, deadline: Instant) -> TurnStats {
    let none = BTreeSet::new();
    let Some(inside) = git(
        dir,
        &none,
        &["rev-parse", "--is-inside-work-tree"],
        deadline,
    )
    .await
    else {
        return TurnStats::default();
    };
    if String::from_utf8_lossy(&inside).trim() != "true" {
        return TurnStats::default();
    }
    let head = git(
        dir,
        &none,
        &["rev-parse", "--verify", "-q", "HEAD"],
        deadline,
    )
    .await
    .map(|out| String::from_utf8_lossy(&out).trim().to_string())
    .filter(|h| !h.is_empty());
    let with_head = TurnStats {
        head: head.clone(),
        ..TurnStats::default()
    };
    let Some(filters) = filter_drivers(dir, deadline).await else {
        return with_head;
    };
    let base = head.as_deref().unwrap_or(EMPTY_TREE);
    let diff = [
        "diff",
        "--numstat",
        "-z",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=all",
        base,
    ];
    let numstat = git(dir, &filters, &diff, deadline).await;
    let others = ["ls-files", "--others", "--exclude-standard", "-z"];
    let untracked = git(dir, &filters, &others, deadline).await;
    let (Some(numstat), Some(untracked)) = (numstat, untracked) else {
        return with_head;
    };
    let (files, added, removed) = parse_numstat_z(&numstat);
    let untracked_files = untracked
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .count() as u64;
    TurnStats {
        head,
        files_changed: Some(files + untracked_files),
        lines_added: Some(added),
        lines_removed: Some(removed),
    }
}

/// Sums `git diff --numstat -z` output: files, lines added, lines removed (binary files count
/// as files with no lines).
fn parse_numstat_z(out: &[u8]) -> (u64, u64, u64) {
    let mut files = 0;
    let mut added = 0;
    let mut removed = 0;
    for record in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let text = String::from_utf8_lossy(record);
        let mut cols = text.splitn(3, '\t');
        let (Some(a), Some(r)) = (cols.next(), cols.next()) else {
            continue;
        };
        files += 1;
        added += a.parse::<u64>().unwrap_or(0);
        removed += r.parse::<u64>().unwrap_or(0);
    }
    (files, added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numstat_sums() {
        let out = b"3\t1\tsrc/a.rs\x00-\t-\timg.png\x0010\t0\tb.txt\x00";
        assert_eq!(parse_numstat_z(out), (3, 13, 1));
        assert_eq!(parse_numstat_z(b""), (0, 0, 0));
    }

    #[test]
    fn filter_driver_names_keep_dots_and_equals_signs() {
        let out =
            b"filter.lfs.clean\x00filter.lfs.process\x00filter.a.b=c.clean\x00filter.x.smudge\x00";
        let names: Vec<String> = parse_filter_names(out).into_iter().collect();
        assert_eq!(names, ["a.b=c", "lfs", "x"]);
        assert!(parse_filter_names(b"").is_empty());
    }
}
