//! The `install-host-hooks` command line: prints a plan (the dry run, the default) or
//! applies one, as text for a person or as JSON (`--json`) for the tray.
//!
//! Output contract: a dry run or a success goes to stdout with exit 0; a refusal is exactly
//! one line on stderr starting `fabric-session: `, exit 1 (with `--json`, stdout also gets
//! `{"error": {"code", "message"}}`). Usage errors are clap's (exit 2). Nothing printed ever
//! holds a value from the config file other than our own entries.

use std::path::PathBuf;

use serde::Serialize;

use companion_hosts::host::Host;
use companion_hosts::install::{self, Action, Applied, Entry, InstallError, Operation, Plan};
use companion_platform::paths::Paths;

/// Arguments of `fabric-session install-host-hooks`.
#[derive(Debug, Clone, clap::Args)]
pub struct InstallArgs {
    /// The host whose config to change.
    #[arg(long, value_enum)]
    pub host: Host,
    /// Write the change (needs `--expect-sha256` from the dry run).
    #[arg(long, requires = "expect_sha256")]
    pub apply: bool,
    /// The digest the dry run printed; the file must still have it (`absent` for no file).
    #[arg(long, value_name = "DIGEST", requires = "apply")]
    pub expect_sha256: Option<String>,
    /// Take our entries out instead of adding them.
    #[arg(long)]
    pub remove: bool,
    /// The stable path of `fabric-session` the hook command should use (default: the app's
    /// stable copy when it is installed, else this binary).
    #[arg(long, value_name = "PATH", conflicts_with = "remove")]
    pub script: Option<PathBuf>,
    /// Print the plan (or the result) as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command; returns the process exit code.
pub fn run(args: &InstallArgs, paths: &Paths) -> i32 {
    let operation = if args.remove {
        Operation::Remove
    } else {
        Operation::Install
    };
    let script = args.script.as_deref();
    let result = match (&args.expect_sha256, args.apply) {
        (Some(expected), true) => install::apply(args.host, operation, script, paths, expected)
            .map(|applied| output_applied(&applied, args.json)),
        _ => install::plan(args.host, operation, script, paths)
            .map(|plan| output_plan(&plan, args.json)),
    };
    match result {
        Ok(text) => {
            print!("{text}");
            0
        }
        Err(err) => {
            refuse(&err, args.json);
            1
        }
    }
}

fn output_plan(plan: &Plan, json: bool) -> String {
    if json {
        #[derive(Serialize)]
        struct DryRun<'a> {
            dry_run: bool,
            #[serde(flatten)]
            plan: &'a Plan,
        }
        to_json(&DryRun {
            dry_run: true,
            plan,
        })
    } else {
        plan.render_text()
    }
}

fn output_applied(applied: &Applied, json: bool) -> String {
    if json {
        return to_json(applied);
    }
    let plan = &applied.plan;
    let file = applied.file.display();
    let mut out = String::new();
    if !applied.changed {
        let reason = match &plan.action {
            Action::NothingToDo { reason } => reason.as_str(),
            _ => "nothing to do",
        };
        out.push_str(&format!("{file}: {reason}; nothing to do.\n"));
        return out;
    }
    let events = |entries: &[Entry]| {
        let mut names: Vec<&str> = entries.iter().map(|e| e.event.as_str()).collect();
        names.dedup();
        names.join(", ")
    };
    if !plan.remove.is_empty() {
        out.push_str(&format!(
            "Took out {} of ours from {file} ({}).\n",
            count(plan.remove.len()),
            events(&plan.remove)
        ));
    }
    if !plan.add.is_empty() {
        out.push_str(&format!(
            "Added {} to {file} ({}).\n",
            count(plan.add.len()),
            events(&plan.add)
        ));
    }
    if plan.removes_file {
        out.push_str(&format!(
            "Deleted {file}: our install created it and nothing else was in it.\n"
        ));
    } else {
        match &applied.backup {
            Some(backup) => out.push_str(&format!("Backup: {}\n", backup.display())),
            None => out.push_str("Backup: none (the file did not exist)\n"),
        }
        out.push_str(&format!("sha256 now: {}\n", applied.sha256));
    }
    for note in &plan.notes {
        out.push_str(&format!("Note: {note}\n"));
    }
    out
}

fn refuse(err: &InstallError, json: bool) {
    let message = err.to_string().replace(['\n', '\r'], " ");
    eprintln!("fabric-session: {message}");
    if json {
        let value = serde_json::json!({"error": {"code": err.code(), "message": message}});
        println!("{value}");
    }
}

fn to_json<T: Serialize>(value: &T) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    text
}

fn count(n: usize) -> String {
    if n == 1 {
        "1 entry".into()
    } else {
        format!("{n} entries")
    }
}
