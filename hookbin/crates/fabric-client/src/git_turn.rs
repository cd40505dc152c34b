//! What a turn changed, as numbers only: the HEAD commit, how many files differ from it
//! (untracked files included), and the lines added and removed against it.
//!
//! `git` runs with `--no-optional-locks` (and `GIT_OPTIONAL_LOCKS=0`) so it never takes a lock
//! the person's own git might want. No path, branch name, commit message or diff text leaves
//! this module. Outside a repository every field is null.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;
use tokio::process::Command;

/// The git of an empty tree, to diff a repository that has no commit yet.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
/// One git command may take this long.
const GIT_TIMEOUT: Duration = Duration::from_secs(3);

/// The numbers `fabric_session_observe` carries for a turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnStats {
    pub head: Option<String>,
    pub files_changed: Option<u64>,
    pub lines_added: Option<u64>,
    pub lines_removed: Option<u64>,
}

async fn git(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let mut command = Command::new("git");
    command
        .arg("--no-optional-locks")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(GIT_TIMEOUT, command.output())
        .await
        .ok()?
        .ok()?;
    output.status.success().then_some(output.stdout)
}

/// Measures the working tree at `dir` against its HEAD.
pub async fn measure(dir: &Path) -> TurnStats {
    let Some(inside) = git(dir, &["rev-parse", "--is-inside-work-tree"]).await else {
        return TurnStats::default();
    };
    if String::from_utf8_lossy(&inside).trim() != "true" {
        return TurnStats::default();
    }
    let head = git(dir, &["rev-parse", "--verify", "-q", "HEAD"])
        .await
        .map(|out| String::from_utf8_lossy(&out).trim().to_string())
        .filter(|h| !h.is_empty());
    let base = head.as_deref().unwrap_or(EMPTY_TREE);
    let numstat = git(dir, &["diff", "--numstat", "-z", "--no-renames", base]).await;
    let untracked = git(dir, &["ls-files", "--others", "--exclude-standard", "-z"]).await;
    let (Some(numstat), Some(untracked)) = (numstat, untracked) else {
        return TurnStats {
            head,
            ..TurnStats::default()
        };
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
}
