//! The dashboard's "Set up…" for a remote: before consent, its system checked, our
//! `fabric-session` copied there and a host's hook plan read there ([`prepare`]); on the
//! person's click, exactly that plan applied (by its digest) and the remote followed
//! ([`apply`]). The steps are `companion_remotes::setup`'s, the same as `fabric-session remote
//! add`. They run `ssh`: the commands run them off the page's thread.

use std::path::PathBuf;

use companion_hosts::host::Host;
use companion_platform::paths::Paths;
use companion_remotes::remote::{PlanDigest, Remote};
use companion_remotes::setup;
use serde::Serialize;
use tauri::State;

use crate::commands::{self, AppState, SettingsView};
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

fn parse(destination: &str) -> CommandResult<Remote> {
    let destination = destination.trim();
    Remote::parse(destination).map_err(|err| {
        CommandError::Invalid(format!("\"{destination}\" is not a remote we take: {err}"))
    })
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
    let expect = PlanDigest::new(digest.trim()).ok_or_else(|| {
        CommandError::Invalid(format!("\"{digest}\" is not a digest a plan shows"))
    })?;
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

/// "Set up…": [`prepare`], off the page's thread.
#[tauri::command]
pub async fn prepare_remote(
    state: State<'_, AppState>,
    destination: String,
    host: Host,
) -> CommandResult<RemoteSetupPlan> {
    let paths = state.paths.clone();
    tauri::async_runtime::spawn_blocking(move || prepare(&paths, &destination, host))
        .await
        .map_err(|e| CommandError::Invalid(e.to_string()))?
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
    tauri::async_runtime::spawn_blocking(move || apply(&paths, &destination, host, &digest))
        .await
        .map_err(|e| CommandError::Invalid(e.to_string()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_like_destination_or_a_bad_digest_is_refused_before_any_ssh() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        let paths = Paths {
            home: home.to_path_buf(),
            fabric_dir: home.join("fabric"),
            services_dir: home.join("fabric/services"),
            cache_dir: home.join("cache"),
            data_dir: home.join("data"),
            config_dir: home.join("config"),
        };
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
