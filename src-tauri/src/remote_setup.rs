//! The dashboard's "Set up…" and "Take down…" for a remote: before consent, its system
//! checked, our `fabric-session` copied there and a host's hook plan read there ([`prepare`]);
//! on the person's click, exactly that plan applied (by its digest) and the remote followed
//! ([`apply`]). Taking down: each host's removal plan shown ([`removal`]), then on the click
//! exactly those taken out, our program removed and the remote no longer followed
//! ([`take_down`]). The steps are `companion_remotes::setup`'s, the same as `fabric-session
//! remote add/remove`. They run `ssh`: the commands run them off the page's thread.

use std::path::PathBuf;

use companion_hosts::host::Host;
use companion_platform::paths::Paths;
use companion_remotes::remote::{PlanDigest, Remote};
use companion_remotes::setup;
use serde::{Deserialize, Serialize};
use tauri::State;

use crate::commands::{self, AppState, SettingsView, off_thread};
use crate::error::{CommandError, CommandResult};

/// A remote made ready: what the person reads before consenting.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RemoteSetupPlan {
    /// The remote as the settings will hold it.
    pub remote: String,
    /// Its name as a person reads it.
    pub label: String,
    pub host: Host,
    /// Its architecture (`uname -m`): `x86_64` or `aarch64`.
    pub machine: String,
    /// The sha256 of our program as copied there (compared at both ends).
    pub program_sha256: String,
    /// Whether applying the plan would change the host's config there.
    pub changes: bool,
    /// The plan as the remote's dry run gives it (the same text as `remote add` prints).
    pub plan_text: String,
    /// What applying exactly this plan takes.
    pub digest: String,
}

/// What applying did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RemoteSetupDone {
    pub remote: String,
    pub label: String,
    pub host: Host,
    /// Whether the remote was added to the remotes the tray follows now (not already there).
    pub followed: bool,
    /// The settings as they are now (their `remotes` holding it).
    pub settings: SettingsView,
}

/// One host's removal plan at the remote.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RemoteHostRemoval {
    pub host: Host,
    /// The plan as the remote's dry run gives it (the same text as `remote remove` prints).
    pub plan_text: String,
    pub digest: String,
}

/// What taking a remote down would do: each host whose config there runs our hooks (none
/// when nothing of ours runs there; the program is removed either way).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RemoteRemovalPlan {
    pub remote: String,
    pub label: String,
    pub hosts: Vec<RemoteHostRemoval>,
}

/// A host's removal plan the person saw: the page sends back each one it showed.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ShownDigest {
    pub host: Host,
    pub digest: String,
}

/// What taking down did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RemoteTakenDown {
    pub remote: String,
    pub label: String,
    /// Whether the remote was taken out of the remotes the tray follows (it was there).
    pub unfollowed: bool,
    pub settings: SettingsView,
}

fn parse(destination: &str) -> CommandResult<Remote> {
    let destination = destination.trim();
    Remote::parse(destination).map_err(|err| {
        CommandError::Invalid(format!("\"{destination}\" is not a remote we take: {err}"))
    })
}

/// A digest the page sends back: one a plan shows, or refused before any `ssh`.
fn parse_digest(text: &str) -> CommandResult<PlanDigest> {
    PlanDigest::new(text.trim())
        .ok_or_else(|| CommandError::Invalid(format!("\"{text}\" is not a digest a plan shows")))
}

/// The `fabric-session` this machine's hooks run, to be copied: the package's, else the app's
/// stable copy, else the one the dashboard finds (the lookup local hook installs use).
fn local_program(paths: &Paths) -> CommandResult<PathBuf> {
    if let Some(packaged) = companion_hosts::stable_binary::packaged_program() {
        return Ok(packaged);
    }
    let stable = paths.stable_binary();
    if stable.is_file() {
        return Ok(stable);
    }
    commands::found_session_binary()
}

/// Checks the remote's system, copies our program there and reads `host`'s hook plan there.
/// Nothing of the host's config is written.
pub fn prepare(paths: &Paths, destination: &str, host: Host) -> CommandResult<RemoteSetupPlan> {
    let remote = parse(destination)?;
    let local = local_program(paths)?;
    let label = remote.label();
    let prepared = setup::prepare(&remote, &local, host)?;
    tracing::info!(
        host = host.cli_name(),
        machine = prepared.arch.machine(),
        changes = prepared.plan.changes(),
        "remote prepared"
    );
    Ok(RemoteSetupPlan {
        remote: remote.spec().to_string(),
        plan_text: prepared.plan.render(host, &label),
        changes: prepared.plan.changes(),
        label,
        host,
        machine: prepared.arch.machine().to_string(),
        program_sha256: prepared.program_sha256.as_str().to_string(),
        digest: prepared.digest.as_str().to_string(),
    })
}

/// Applies the plan whose digest the person saw (the remote refuses it when its config
/// changed since), then has the tray follow the remote. A refusal changes nothing here.
pub fn apply(
    paths: &Paths,
    destination: &str,
    host: Host,
    digest: &str,
) -> CommandResult<RemoteSetupDone> {
    let remote = parse(destination)?;
    let expect = parse_digest(digest)?;
    setup::hook_apply(&remote, host, false, &expect)?;
    let followed = setup::follow(paths, &remote, true)?;
    tracing::info!(host = host.cli_name(), followed, "remote set up");
    Ok(RemoteSetupDone {
        remote: remote.spec().to_string(),
        label: remote.label(),
        host,
        followed,
        settings: commands::settings_view(paths),
    })
}

/// Each host's removal plan at the remote (writes nothing).
pub fn removal(destination: &str) -> CommandResult<RemoteRemovalPlan> {
    let remote = parse(destination)?;
    let label = remote.label();
    let hosts = setup::removal_plans(&remote)?
        .into_iter()
        .map(|(host, plan, digest)| RemoteHostRemoval {
            host,
            plan_text: plan.render(host, &label),
            digest: digest.as_str().to_string(),
        })
        .collect();
    Ok(RemoteRemovalPlan {
        remote: remote.spec().to_string(),
        label,
        hosts,
    })
}

/// Takes out exactly the removal plans shown (by their digests), removes our program there
/// (refused when a config there still runs it) and stops following the remote.
pub fn take_down(
    paths: &Paths,
    destination: &str,
    shown: &[ShownDigest],
) -> CommandResult<RemoteTakenDown> {
    let remote = parse(destination)?;
    let shown = shown
        .iter()
        .map(|s| Ok((s.host, parse_digest(&s.digest)?)))
        .collect::<CommandResult<Vec<_>>>()?;
    setup::take_down(&remote, &shown)?;
    let unfollowed = setup::follow(paths, &remote, false)?;
    tracing::info!(hosts = shown.len(), unfollowed, "remote taken down");
    Ok(RemoteTakenDown {
        remote: remote.spec().to_string(),
        label: remote.label(),
        unfollowed,
        settings: commands::settings_view(paths),
    })
}

/// "Take down…": [`removal`], off the page's thread.
#[tauri::command]
pub async fn plan_remote_removal(destination: String) -> CommandResult<RemoteRemovalPlan> {
    off_thread(move || removal(&destination)).await?
}

/// "Take down" in the consent panel: [`take_down`] with the digests shown, off the page's
/// thread.
#[tauri::command]
pub async fn take_down_remote(
    state: State<'_, AppState>,
    destination: String,
    shown: Vec<ShownDigest>,
) -> CommandResult<RemoteTakenDown> {
    let paths = state.paths.clone();
    off_thread(move || take_down(&paths, &destination, &shown)).await?
}

/// "Set up…": [`prepare`], off the page's thread.
#[tauri::command]
pub async fn prepare_remote(
    state: State<'_, AppState>,
    destination: String,
    host: Host,
) -> CommandResult<RemoteSetupPlan> {
    let paths = state.paths.clone();
    off_thread(move || prepare(&paths, &destination, host)).await?
}

/// "Apply" in the consent panel: [`apply`] with the digest shown, off the page's thread.
#[tauri::command]
pub async fn apply_remote(
    state: State<'_, AppState>,
    destination: String,
    host: Host,
    digest: String,
) -> CommandResult<RemoteSetupDone> {
    let paths = state.paths.clone();
    off_thread(move || apply(&paths, &destination, host, &digest)).await?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_like_destination_or_a_bad_digest_is_refused_before_any_ssh() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        let paths = test_support::files::paths_in(home);
        let refused = prepare(&paths, "-oProxyCommand=x", Host::Claude).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "\"-oProxyCommand=x\" is not a remote we take: a remote cannot start with '-'"
        );
        let refused = apply(&paths, "build-box", Host::Claude, "not a digest").unwrap_err();
        assert_eq!(
            refused.to_string(),
            "\"not a digest\" is not a digest a plan shows"
        );
        assert!(!companion_sessions::settings::settings_path(&paths).exists());
    }
}
