//! `install-host-hooks`: consented, reversible installs of our hook entries into the hosts'
//! own config files — Claude Code's `settings.json`, Codex's `hooks.json`, Kimi Code's
//! `config.toml` — for the command line and for the tray, which calls the same functions.
//!
//! The contract:
//! - [`plan`] reads the file and computes everything — the entries to add or take out, the
//!   new text, its digest — and writes nothing. A dry run is only a printed plan.
//! - [`apply`] recomputes the plan from the file on disk and writes only when the plan is still
//!   the one the person saw: its digest ([`Plan::digest`], what `--expect-sha256` takes)
//!   covers the file's own digest and everything the apply would do — the exact entries taken
//!   out and added, the program their command runs, the new text. It backs the file up first
//!   (never overwriting a backup), looks at the file once more just before the atomic rename
//!   (keeping the mode; a symlink stays a link), and reads the file back to prove it parses.
//!   What someone else wrote meanwhile is never overwritten or rolled back: the apply stops
//!   and says so.
//! - Our entries are recognised by their command alone (see [`command`]): a program named
//!   `fabric-session`, in any folder, followed by ` hook `. Nothing else in a file is ever
//!   changed, and no value already in a file is ever printed (they may hold tokens).
//! - A file that does not parse, has the wrong shape, or is read-only is refused, untouched.
//!
//! One module per file format: [`json`] (the nested `hooks` shape Claude Code and Codex
//! share), [`kimi`] (`[[hooks]]` tables, edited as text and checked with `toml_edit`); host
//! facts in [`claude`], [`codex`] and [`kimi`]; the plan and its texts in [`plan`].
//!
//! Decisions the spec left open:
//! - **Stale** ([`HookState::Stale`]) means our entries are there but the program their
//!   command names is not an existing file. A path that exists but differs from the app's
//!   stable copy (say one given with `--script`) is [`HookState::Installed`]; a dry run shows
//!   when an install would re-point it.
//! - A read-only file is refused ("make it writable first") rather than replaced behind the
//!   person's back, even though an atomic rename could replace it.
//! - Installing over entries of ours with another command (an old path) replaces them; the
//!   plan lists both what it takes out and what it adds.
//! - Removing the last of our entries drops the event list, then the `hooks` object, when
//!   they end up empty. When that leaves nothing at all in a file our install created
//!   ([`created`]), the removal deletes the file instead (no `{}`, no backup): an install into
//!   a missing file and its removal give back no file. A file the person had keeps its bytes.

mod claude;
mod codex;
mod created;
mod events;
mod json;
mod kimi;
mod plan;
mod program;
#[cfg(test)]
mod properties;
mod write;

use events::{ConfigDoc, EventSpec, Format, events};
use program::choose_program;
#[cfg(test)]
use program::unstable_reason;
use write::{check_edit, read_back};

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::host::Host;
use companion_platform::fsutil;
use companion_platform::paths::Paths;

use crate::hook_command::{self as command, hook_command, our_program};
pub use claude::PLUGIN_NAME as CLAUDE_PLUGIN_NAME;
use companion_platform::paths::PROGRAM_NAME;
pub use plan::{Action, Plan};

/// The digest of a file that does not exist, as the plan digest takes it in.
pub const ABSENT_DIGEST: &str = "absent";
/// The timeout of the hooks we install, in seconds (a host that caps an event lower gets its cap).
pub const HOOK_TIMEOUT_SECS: u64 = 5;
/// We refuse to edit a config file larger than this.
pub const MAX_CONFIG_BYTES: u64 = 8 * 1024 * 1024;

/// Add our entries, or take them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    Install,
    Remove,
}

/// One hook entry, format-independent: a Codex or Claude Code matcher group holding one
/// command hook, or one Kimi Code `[[hooks]]` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "HookEntry"))]
pub struct Entry {
    /// The host's event name (`SessionStart`, `Stop`, `UserPromptSubmit`, `SessionEnd`).
    pub event: String,
    /// The matcher; `None` for a group without one (or, for entries found in a file, a
    /// group that also holds hooks not ours, whose matcher we do not report).
    pub matcher: Option<String>,
    /// The command the host runs.
    pub command: String,
    /// Seconds.
    pub timeout: Option<u64>,
}

/// What [`apply`] did.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    /// The config file (as named, not its symlink target).
    pub file: PathBuf,
    /// The copy made before writing; `None` when nothing was written or the file was new.
    pub backup: Option<PathBuf>,
    /// Whether the file was written.
    pub changed: bool,
    /// The file's digest now.
    pub sha256: String,
    /// The plan that was carried out.
    pub plan: Plan,
}

/// Our hooks' state in one host's config (for `status` and the tray).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum HookState {
    /// None of our entries is in the file (or there is no file).
    NotInstalled,
    /// All our entries are there and their program exists.
    Installed { command_path: PathBuf },
    /// Our entries are there but the program their command names is not an existing file.
    Stale { command_path: PathBuf },
    /// Some of our entries are there, not all (`missing` lists the host's event names).
    Incomplete {
        command_path: PathBuf,
        missing: Vec<String>,
    },
    /// The file could not be read, does not parse, or has the wrong shape.
    Unreadable { reason: String },
}

/// Which [`HookState`] it is, without its details (`status`'s `hooks.state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum HookStateKind {
    Installed,
    NotInstalled,
    Stale,
    Incomplete,
    Unreadable,
}

impl HookState {
    /// Which state this is.
    pub fn kind(&self) -> HookStateKind {
        match self {
            HookState::NotInstalled => HookStateKind::NotInstalled,
            HookState::Installed { .. } => HookStateKind::Installed,
            HookState::Stale { .. } => HookStateKind::Stale,
            HookState::Incomplete { .. } => HookStateKind::Incomplete,
            HookState::Unreadable { .. } => HookStateKind::Unreadable,
        }
    }

    /// `installed`, `not-installed`, `stale`, `incomplete` or `unreadable`.
    pub fn word(&self) -> &'static str {
        match self.kind() {
            HookStateKind::NotInstalled => "not-installed",
            HookStateKind::Installed => "installed",
            HookStateKind::Stale => "stale",
            HookStateKind::Incomplete => "incomplete",
            HookStateKind::Unreadable => "unreadable",
        }
    }

    /// The program our installed command runs, when installed.
    pub fn command_path(&self) -> Option<&Path> {
        match self {
            HookState::Installed { command_path }
            | HookState::Stale { command_path }
            | HookState::Incomplete { command_path, .. } => Some(command_path),
            _ => None,
        }
    }

    /// Words for a person.
    pub fn describe(&self) -> String {
        match self {
            HookState::NotInstalled => "not installed".into(),
            HookState::Installed { command_path } => {
                format!("installed ({})", command_path.display())
            }
            HookState::Stale { command_path } => format!(
                "installed with a stale path ({} does not exist)",
                command_path.display()
            ),
            HookState::Incomplete { missing, .. } => {
                format!("partly installed (missing {})", missing.join(", "))
            }
            HookState::Unreadable { reason } => format!("unknown ({reason})"),
        }
    }
}

/// Why an install or removal was refused. Every message names the file and is one line.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot read or write {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is larger than {limit} bytes; not editing it", path.display())]
    TooLarge { path: PathBuf, limit: u64 },
    #[error("{} does not parse as {format} ({detail}); nothing was changed", path.display())]
    NotParseable {
        path: PathBuf,
        format: &'static str,
        detail: String,
    },
    #[error("{} does not have the expected shape ({detail}); nothing was changed", path.display())]
    WrongShape { path: PathBuf, detail: String },
    #[error(
        "{} changed since the dry run (expected {what} {expected}, it is now {actual}): the file, or the program the hooks would run, is not what the dry run showed; run the dry run again",
        path.display()
    )]
    DigestMismatch {
        path: PathBuf,
        /// `plan digest`, or `sha256` when the file changed while it was being written.
        what: &'static str,
        expected: String,
        actual: String,
    },
    #[error("{} is read-only; make it writable first (chmod u+w), then run the dry run again", path.display())]
    ReadOnly { path: PathBuf },
    #[error(
        "--script {}: the program must be named {PROGRAM_NAME}, or its entries could not be recognised to remove them",
        path.display()
    )]
    BadScript { path: PathBuf },
    #[error(
        "cannot tell which {PROGRAM_NAME} the hooks should run ({detail}); pass --script <path>"
    )]
    NoProgram { detail: String },
    #[error("{detail}")]
    UnrunnablePath { path: PathBuf, detail: String },
    #[error("refusing to write {}: the edit did not check out ({detail}); nothing was changed", path.display())]
    EditCheckFailed { path: PathBuf, detail: String },
    #[error("{} did not read back as written ({detail}); {outcome}", path.display())]
    ReadBackFailed {
        path: PathBuf,
        detail: String,
        outcome: String,
    },
}

impl InstallError {
    /// A stable identifier for the tray and `--json`.
    pub fn code(&self) -> &'static str {
        match self {
            InstallError::Io { .. } => "io",
            InstallError::TooLarge { .. } => "too-large",
            InstallError::NotParseable { .. } => "not-parseable",
            InstallError::WrongShape { .. } => "wrong-shape",
            InstallError::DigestMismatch { .. } => "digest-mismatch",
            InstallError::ReadOnly { .. } => "read-only",
            InstallError::BadScript { .. } => "bad-script",
            InstallError::NoProgram { .. } => "no-program",
            InstallError::UnrunnablePath { .. } => "unrunnable-path",
            InstallError::EditCheckFailed { .. } => "edit-check-failed",
            InstallError::ReadBackFailed { .. } => "read-back-failed",
        }
    }

    fn io(path: &Path, source: io::Error) -> Self {
        InstallError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The config file our hooks go into for `host`.
pub fn config_file(host: Host, paths: &Paths) -> PathBuf {
    match host {
        Host::Claude => claude::config_file(paths),
        Host::Codex => codex::config_file(paths),
        Host::Kimi => kimi::config_file(paths),
    }
}

/// The entries an install adds for `host` when its hooks run `program`.
pub fn entries_for(host: Host, program: &Path) -> Vec<Entry> {
    events(host)
        .iter()
        .map(|event| Entry {
            event: event.name.to_string(),
            matcher: event.matcher.map(str::to_string),
            command: hook_command(program, host, event.arg),
            timeout: Some(event.timeout),
        })
        .collect()
}

/// Computes what installing or removing our hooks would do to `host`'s config. Writes
/// nothing. `script` is the program the commands should run (see [`cli`] for the default).
pub fn plan(
    host: Host,
    operation: Operation,
    script: Option<&Path>,
    paths: &Paths,
) -> Result<Plan, InstallError> {
    let file = config_file(host, paths);
    let current = read_current(&file)?;
    let format = Format::of(host);
    let doc = format.open(&file, current.text.as_deref())?;
    let mut warnings = Vec::new();
    let (program, wanted) = match operation {
        Operation::Install => {
            let mut choice = choose_program(host, script, paths)?;
            choice.path = command::runnable_program(host, &choice.path).map_err(|detail| {
                InstallError::UnrunnablePath {
                    path: choice.path.clone(),
                    detail,
                }
            })?;
            warnings.extend(choice.warnings);
            let wanted = entries_for(host, &choice.path);
            (Some(choice.path), wanted)
        }
        Operation::Remove => (None, Vec::new()),
    };
    let ours = doc.ours();
    let selection = select(ours, &wanted, operation);
    let removed: Vec<Entry> = selection.remove.iter().map(|&i| ours[i].clone()).collect();
    let (action, new_text) = if selection.remove.is_empty() && selection.add.is_empty() {
        let reason = match (operation, &program, current.text.is_some()) {
            (Operation::Install, Some(program), _) => {
                format!("already installed, running {}", program.display())
            }
            (Operation::Install, None, _) => "already installed".into(),
            (Operation::Remove, _, true) => {
                "not installed (the file has none of our entries)".into()
            }
            (Operation::Remove, _, false) => "not installed (the file does not exist)".into(),
        };
        (Action::NothingToDo { reason }, None)
    } else {
        if current.text.is_some() && is_read_only(&file) {
            return Err(InstallError::ReadOnly { path: file });
        }
        let new_text = doc.edit(&selection.remove, &selection.add)?;
        check_edit(format, &file, &new_text, ours, &selection)?;
        warnings.extend(doc.layout_warning());
        let action = match operation {
            Operation::Install => Action::Install,
            Operation::Remove => Action::Remove,
        };
        (action, Some(new_text))
    };
    let mut notes = Vec::new();
    match (&action, host) {
        (Action::Install, Host::Claude) => {
            warnings.extend(claude::warnings(current.text.as_deref()))
        }
        (Action::Install, Host::Codex) => {
            warnings.extend(codex::warnings(paths));
            notes.push(codex::TRUST_NOTE.to_string());
        }
        (Action::Install, Host::Kimi) => notes.push(kimi::PREAMBLE_NOTE.to_string()),
        // Already installed: what is left is the host's own approval, read from its record.
        (Action::NothingToDo { .. }, _) if operation == Operation::Install => {
            if let Some(left) =
                crate::approval::read(host, paths).and_then(|record| record.approval.describe(host))
            {
                notes.push(format!("Installed, {left}."));
            }
        }
        _ => {}
    }
    // Codex keys an approval by the hook's place in hooks.json.
    if host == Host::Codex
        && let Some(new_text) = &new_text
    {
        warnings.extend(codex::moved_warning(json::moved_hooks_not_ours(
            current.text.as_deref(),
            new_text,
        )));
    }
    // A removal that empties a file our install created gives back no file.
    let removes_file = operation == Operation::Remove
        && new_text
            .as_deref()
            .is_some_and(|text| format.is_empty_document(text))
        && fs::symlink_metadata(&file).is_ok_and(|meta| meta.is_file())
        && created::was_created(paths, &file);
    let file_digest = current.sha256.as_deref().unwrap_or(ABSENT_DIGEST);
    let digest = plan_digest(&PlanFacts {
        host,
        operation,
        file: &file,
        file_digest,
        action: &action,
        remove: &removed,
        add: &selection.add,
        program: program.as_deref(),
        new_text: new_text.as_deref(),
        removes_file,
    });
    let needs_apply = !matches!(action, Action::NothingToDo { .. });
    let script_used = script.and(program.as_deref());
    let apply_command =
        needs_apply.then(|| plan::apply_command(host, operation, script_used, &digest));
    // Only our entries and where they are: never a line of the person's own config.
    let (remove_at, add_at) = doc.positions(&selection.remove, &selection.add);
    let diff = plan::entries_diff(
        &removed
            .iter()
            .zip(&remove_at)
            .map(|(e, at)| (doc.entry_text(e), at.as_str()))
            .collect::<Vec<_>>(),
        &selection
            .add
            .iter()
            .zip(&add_at)
            .map(|(e, at)| (doc.entry_text(e), at.as_str()))
            .collect::<Vec<_>>(),
    );
    Ok(Plan {
        host,
        operation,
        file,
        exists: current.text.is_some(),
        sha256: current.sha256,
        digest,
        action,
        add_text: format.entries_text(&selection.add),
        remove_text: format.entries_text(&removed),
        add: selection.add,
        remove: removed,
        add_at,
        remove_at,
        program,
        new_text,
        removes_file,
        diff,
        apply_command,
        warnings,
        notes,
    })
}

/// Carries out the plan for `host` and `operation` if the file still has `expected_sha256`
/// (the plan's digest). A plan with nothing to do succeeds without writing.
pub fn apply(
    host: Host,
    operation: Operation,
    script: Option<&Path>,
    paths: &Paths,
    expected_sha256: &str,
) -> Result<Applied, InstallError> {
    apply_with_stamp(
        host,
        operation,
        script,
        paths,
        expected_sha256,
        &companion_platform::clock::now_stamp(),
    )
}

/// [`apply`] with the backup's stamp given (tests use it to make two backups in one second).
pub fn apply_with_stamp(
    host: Host,
    operation: Operation,
    script: Option<&Path>,
    paths: &Paths,
    expected_sha256: &str,
    stamp: &str,
) -> Result<Applied, InstallError> {
    let plan = plan(host, operation, script, paths)?;
    let file = plan.file.clone();
    let Some(new_text) = plan.new_text.clone() else {
        return Ok(Applied {
            file,
            backup: None,
            changed: false,
            sha256: plan.digest.clone(),
            plan,
        });
    };
    let expected = expected_sha256.trim().to_ascii_lowercase();
    if expected != plan.digest {
        return Err(InstallError::DigestMismatch {
            path: file,
            what: "plan digest",
            expected,
            actual: plan.digest,
        });
    }
    let file_digest = plan
        .sha256
        .clone()
        .unwrap_or_else(|| ABSENT_DIGEST.to_string());
    // The file's digest as it is now; the write goes ahead only while it is still the plan's.
    let digest_now = |file: &Path| -> Result<String, InstallError> {
        Ok(read_current(file)?
            .sha256
            .unwrap_or_else(|| ABSENT_DIGEST.to_string()))
    };
    let changed = |actual: String| InstallError::DigestMismatch {
        path: file.clone(),
        what: "sha256",
        expected: file_digest.clone(),
        actual,
    };
    let now = digest_now(&file)?;
    if now != file_digest {
        return Err(changed(now));
    }
    if plan.removes_file {
        // Nothing but our entries is in it and our install created it: no backup, no file.
        let mut seen = None;
        let removed = fsutil::remove_unless_changed(&file, |moved| {
            let now = read_current(moved)
                .map_err(std::io::Error::other)?
                .sha256
                .unwrap_or_else(|| ABSENT_DIGEST.to_string());
            let same = now == file_digest;
            seen = Some(now);
            Ok(same)
        })
        .map_err(|e| InstallError::io(&file, e))?;
        if !removed {
            return Err(changed(seen.unwrap_or_default()));
        }
        created::forget(paths, &file);
        return Ok(Applied {
            file,
            backup: None,
            changed: true,
            sha256: ABSENT_DIGEST.to_string(),
            plan,
        });
    }
    let backup = if plan.exists {
        Some(fsutil::backup_file(&file, stamp).map_err(|e| InstallError::io(&file, e))?)
    } else {
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.exists()
        {
            fsutil::create_private_dir(dir).map_err(|e| InstallError::io(dir, e))?;
        }
        None
    };
    let mut seen = None;
    let written = fsutil::write_atomic_unless_changed(
        &file,
        new_text.as_bytes(),
        fsutil::PRIVATE_FILE_MODE,
        || {
            let now = digest_now(&file).map_err(std::io::Error::other)?;
            let same = now == file_digest;
            seen = Some(now);
            Ok(same)
        },
    )
    .map_err(|e| InstallError::io(&file, e))?;
    if !written {
        return Err(changed(seen.unwrap_or_default()));
    }
    if !plan.exists {
        created::remember(paths, &file);
    }
    read_back(
        Format::of(host),
        &file,
        new_text.as_bytes(),
        backup.as_deref(),
    )?;
    Ok(Applied {
        file,
        backup,
        changed: true,
        sha256: sha256_hex(new_text.as_bytes()),
        plan,
    })
}

/// Everything an apply does, as the plan digest covers it.
struct PlanFacts<'a> {
    host: Host,
    operation: Operation,
    file: &'a Path,
    file_digest: &'a str,
    action: &'a Action,
    remove: &'a [Entry],
    add: &'a [Entry],
    program: Option<&'a Path>,
    new_text: Option<&'a str>,
    removes_file: bool,
}

/// The plan digest: sha256 (lowercase hex) of a fixed JSON document of the plan's facts.
fn plan_digest(facts: &PlanFacts<'_>) -> String {
    let mut document = serde_json::json!({
        "plan": "fabric-session-install-plan/1",
        "host": facts.host,
        "operation": facts.operation,
        "file": facts.file.to_string_lossy(),
        "fileSha256": facts.file_digest,
        "action": facts.action,
        "remove": facts.remove,
        "add": facts.add,
        "program": facts.program.map(|p| p.to_string_lossy()),
        "newTextSha256": facts.new_text.map(|t| sha256_hex(t.as_bytes())),
    });
    // Only when set, so that every other plan keeps the digest it always had.
    if facts.removes_file {
        document["removesFile"] = true.into();
    }
    sha256_hex(document.to_string().as_bytes())
}

/// Whether our hooks are in `host`'s config, and whether their program is still there.
pub fn hook_state(host: Host, paths: &Paths) -> HookState {
    let file = config_file(host, paths);
    // A missing file opens as an empty one: nothing of ours in it.
    let doc =
        match read_current(&file).and_then(|c| Format::of(host).open(&file, c.text.as_deref())) {
            Ok(doc) => doc,
            Err(err) => {
                return HookState::Unreadable {
                    reason: err.to_string(),
                };
            }
        };
    let ours = doc.ours();
    let programs: Vec<String> = ours
        .iter()
        .filter_map(|e| our_program(&e.command))
        .collect();
    let Some(first) = programs.first() else {
        return HookState::NotInstalled;
    };
    let command_path = PathBuf::from(first);
    let stale = programs.iter().any(|program| {
        command::checkable_path(program, &paths.home).is_some_and(|path| !path.is_file())
    });
    if stale {
        return HookState::Stale { command_path };
    }
    let missing: Vec<String> = events(host)
        .iter()
        .filter(|event| !ours.iter().any(|e| e.event == event.name))
        .map(|event| event.name.to_string())
        .collect();
    if missing.is_empty() {
        HookState::Installed { command_path }
    } else {
        HookState::Incomplete {
            command_path,
            missing,
        }
    }
}

/// Plain lowercase hex sha256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A config file as read: its text (`None` when it does not exist) and digest.
struct Current {
    text: Option<String>,
    sha256: Option<String>,
}

fn read_current(file: &Path) -> Result<Current, InstallError> {
    let bytes = fsutil::read_bounded_strict(file, MAX_CONFIG_BYTES + 1)
        .map_err(|e| InstallError::io(file, e))?;
    let Some(bytes) = bytes else {
        if fs::symlink_metadata(file).is_ok() {
            return Err(InstallError::io(
                file,
                io::Error::new(io::ErrorKind::NotFound, "it is a symlink to a missing file"),
            ));
        }
        return Ok(Current {
            text: None,
            sha256: None,
        });
    };
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(InstallError::TooLarge {
            path: file.to_path_buf(),
            limit: MAX_CONFIG_BYTES,
        });
    }
    let sha256 = sha256_hex(&bytes);
    let text = String::from_utf8(bytes).map_err(|_| InstallError::NotParseable {
        path: file.to_path_buf(),
        format: "UTF-8 text",
        detail: "it holds bytes that are not UTF-8".into(),
    })?;
    Ok(Current {
        text: Some(text),
        sha256: Some(sha256),
    })
}

fn is_read_only(file: &Path) -> bool {
    fs::metadata(file).is_ok_and(|meta| meta.permissions().readonly())
}

/// Which of our entries to take out and which to add.
#[derive(Debug, PartialEq, Eq)]
struct Selection {
    remove: Vec<usize>,
    add: Vec<Entry>,
}

/// Install: keep the first entry of ours that is exactly a wanted one, take out every other
/// entry of ours in the wanted events (an old path, a duplicate), add what is missing.
/// Remove: take out every entry of ours.
fn select(ours: &[Entry], wanted: &[Entry], operation: Operation) -> Selection {
    match operation {
        Operation::Remove => Selection {
            remove: (0..ours.len()).collect(),
            add: Vec::new(),
        },
        Operation::Install => {
            let mut kept = vec![false; ours.len()];
            let mut add = Vec::new();
            for want in wanted {
                let found = ours.iter().enumerate().position(|(i, e)| {
                    !kept[i] && e.event == want.event && e.command == want.command
                });
                match found {
                    Some(i) => kept[i] = true,
                    None => add.push(want.clone()),
                }
            }
            let remove = (0..ours.len())
                .filter(|&i| !kept[i] && wanted.iter().any(|w| w.event == ours[i].event))
                .collect();
            Selection { remove, add }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(event: &str, command: &str) -> Entry {
        Entry {
            event: event.into(),
            matcher: None,
            command: command.into(),
            timeout: Some(5),
        }
    }

    #[test]
    fn selection_keeps_exact_entries_and_replaces_old_paths() {
        let wanted = vec![entry(
            "SessionStart",
            "/new/fabric-session hook session-start",
        )];
        let cases: Vec<(&str, Vec<Entry>, Selection)> = vec![
            (
                "nothing there",
                vec![],
                Selection {
                    remove: vec![],
                    add: wanted.clone(),
                },
            ),
            (
                "already there",
                vec![entry(
                    "SessionStart",
                    "/new/fabric-session hook session-start",
                )],
                Selection {
                    remove: vec![],
                    add: vec![],
                },
            ),
            (
                "old path",
                vec![entry(
                    "SessionStart",
                    "/old/fabric-session hook session-start",
                )],
                Selection {
                    remove: vec![0],
                    add: wanted.clone(),
                },
            ),
            (
                "duplicate",
                vec![
                    entry("SessionStart", "/new/fabric-session hook session-start"),
                    entry("SessionStart", "/new/fabric-session hook session-start"),
                ],
                Selection {
                    remove: vec![1],
                    add: vec![],
                },
            ),
            (
                "ours in another event is left alone by an install",
                vec![
                    entry("Stop", "/old/fabric-session hook stop"),
                    entry("SessionStart", "/new/fabric-session hook session-start"),
                ],
                Selection {
                    remove: vec![],
                    add: vec![],
                },
            ),
        ];
        for (name, ours, expected) in cases {
            assert_eq!(
                select(&ours, &wanted, Operation::Install),
                expected,
                "{name}"
            );
        }
        let ours = vec![entry("Stop", "/a/fabric-session hook stop")];
        assert_eq!(select(&ours, &wanted, Operation::Remove).remove, vec![0]);
    }

    #[test]
    fn unstable_paths_are_spotted() {
        let cases = [
            ("/home/me/src/fabric/target/debug/fabric-session", true),
            (
                "/home/me/.claude/plugins/cache/fabric/fabric-session/0.3.1/bin/fabric-session",
                true,
            ),
            ("/tmp/.mount_Fabric123/usr/bin/fabric-session", true),
            (
                "/nix/store/abc-fabric-session-0.1.0/bin/fabric-session",
                true,
            ),
            (
                "/opt/homebrew/Cellar/fabric-session/0.1.0/bin/fabric-session",
                true,
            ),
            ("/opt/fabric-companion-1.4.2/fabric-session", true),
            (
                "/home/me/.local/share/fabric-companion/bin/fabric-session",
                false,
            ),
            ("/usr/local/bin/fabric-session", false),
            ("/home/me/.cargo/bin/fabric-session", false),
            ("/home/me/x86_64/bin/fabric-session", false),
        ];
        for (path, unstable) in cases {
            assert_eq!(
                unstable_reason(Path::new(path)).is_some(),
                unstable,
                "{path}"
            );
        }
    }

    #[test]
    fn digest_is_plain_lowercase_hex() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let stamp = companion_platform::clock::now_stamp();
        assert_eq!(stamp.len(), 16, "{stamp}");
        assert!(
            stamp.ends_with('Z') && stamp.as_bytes()[8] == b'T',
            "{stamp}"
        );
    }

    #[test]
    fn a_file_that_does_not_read_back_is_restored() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        let backup = dir.path().join("config.toml.bak");
        fs::write(&backup, "a = 1\n").unwrap();
        // As if the write had produced text that does not parse.
        fs::write(&file, "a = \n").unwrap();
        let err = read_back(Format::KimiToml, &file, b"a = \n", Some(&backup)).unwrap_err();
        assert_eq!(err.code(), "read-back-failed");
        assert!(err.to_string().contains("restored from"), "{err}");
        assert_eq!(fs::read_to_string(&file).unwrap(), "a = 1\n");

        // A new file that does not read back is removed again.
        let new = dir.path().join("hooks.json");
        fs::write(&new, "{").unwrap();
        let err = read_back(Format::HooksJson, &new, b"{", None).unwrap_err();
        assert!(err.to_string().contains("it was removed"), "{err}");
        assert!(!new.exists());

        // What we wrote reads back: fine.
        assert!(read_back(Format::KimiToml, &file, b"a = 1\n", Some(&backup)).is_ok());
    }

    #[test]
    fn a_change_another_program_made_after_our_write_is_never_rolled_back() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        let backup = dir.path().join("settings.json.bak");
        fs::write(&backup, "{}\n").unwrap();
        // The host saved its settings between our rename and our read-back.
        fs::write(&file, "{\"theme\": \"dark\"}\n").unwrap();
        let ours = b"{\"hooks\": {}}\n";
        let err = read_back(Format::HooksJson, &file, ours, Some(&backup)).unwrap_err();
        assert_eq!(err.code(), "read-back-failed");
        assert!(
            err.to_string().contains("another program changed it"),
            "{err}"
        );
        assert!(err.to_string().contains("settings.json.bak"), "{err}");
        assert_eq!(
            fs::read_to_string(&file).unwrap(),
            "{\"theme\": \"dark\"}\n",
            "their change was rolled back"
        );
        // Gone after our write (removed by someone else): not recreated.
        fs::remove_file(&file).unwrap();
        let err = read_back(Format::HooksJson, &file, ours, None).unwrap_err();
        assert!(err.to_string().contains("it is gone"), "{err}");
        assert!(!file.exists());
    }

    #[test]
    fn the_write_stops_when_the_file_changes_just_before_the_rename() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hooks.json");
        fs::write(&file, "{}\n").unwrap();
        let written =
            fsutil::write_atomic_unless_changed(&file, b"{\"hooks\": {}}\n", 0o600, || {
                // Someone writes while our temp file is being made.
                fs::write(&file, "{\"theirs\": 1}\n")?;
                Ok(sha256_hex(&fs::read(&file)?) == sha256_hex(b"{}\n"))
            })
            .unwrap();
        assert!(!written);
        assert_eq!(fs::read_to_string(&file).unwrap(), "{\"theirs\": 1}\n");
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(leftovers.len(), 1, "the temp file is gone");
    }

    #[test]
    fn hook_states_read_well() {
        let state = HookState::Stale {
            command_path: PathBuf::from("/gone/fabric-session"),
        };
        assert_eq!(state.word(), "stale");
        assert!(state.describe().contains("stale path"));
        let json = serde_json::to_value(&state).unwrap();
        assert_eq!(json["state"], "stale");
        assert_eq!(json["command_path"], "/gone/fabric-session");
    }
}
