//! The hosts' versions: the one each host was tested at (here, in one place; a real-hosts test
//! keeps it equal to `tests/real-hosts/versions.env`), and the installed one, read from files
//! beside the host's program — never by running it.
//!
//! The program is the first `claude` / `codex` / `kimi` on `PATH`, else in the few places the
//! hosts' own installers put it (`~/.local/bin`, `~/.npm-global/bin`, `~/.claude/local`). Its
//! version comes from the npm package it belongs to (`package.json` of the host's package, up
//! to a few folders above the program, symlinks resolved) or, for Claude Code's native
//! install, from the file's own name in its `versions/` folder. Only `name` and `version` are
//! read from a `package.json`. A host installed some other way has no version we can read
//! cheaply: `None`.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::host::Host;
use companion_platform::env_vars;
use companion_platform::fsutil;
use companion_platform::paths::Paths;

/// The version of each host the real-hosts suite ran our hooks with.
pub const TESTED: [(Host, &str); 3] = [
    (Host::Claude, "2.1.328"),
    (Host::Codex, "0.169.0"),
    (Host::Kimi, "2.1.0"),
];

/// A `package.json` larger than this is not one we read.
const PACKAGE_JSON_LIMIT: u64 = 256 * 1024;
/// How many folders above the program a `package.json` is looked for.
const PACKAGE_DEPTH: usize = 5;

/// The version of `host` the hooks were tested with.
pub fn tested(host: Host) -> &'static str {
    TESTED
        .iter()
        .find(|(h, _)| *h == host)
        .map(|(_, v)| *v)
        .unwrap_or("")
}

/// The program's name on `PATH`.
fn program_name(host: Host) -> &'static str {
    match host {
        Host::Claude => "claude",
        Host::Codex => "codex",
        Host::Kimi => "kimi",
    }
}

/// The npm package the host ships as (its platform packages start with it too).
fn package_name(host: Host) -> &'static str {
    match host {
        Host::Claude => "@anthropic-ai/claude-code",
        Host::Codex => "@openai/codex",
        Host::Kimi => "@moonshot-ai/kimi-code",
    }
}

/// A host's installed version, and where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Installed {
    pub version: String,
    /// The host's program, symlinks resolved.
    pub program: PathBuf,
}

/// The installed version of `host`, when the files say it.
pub fn installed(host: Host, paths: &Paths) -> Option<Installed> {
    let program = find_program(host, paths)?;
    let program = std::fs::canonicalize(&program).unwrap_or(program);
    let version = version_beside(host, &program)?;
    Some(Installed { version, program })
}

/// The host's program: on `PATH`, else where its installers put it.
fn find_program(host: Host, paths: &Paths) -> Option<PathBuf> {
    let name = program_name(host);
    let on_path = std::env::var_os(env_vars::PATH)
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    let mut places: Vec<PathBuf> = on_path
        .into_iter()
        .filter(|dir| dir.is_absolute())
        .collect();
    places.push(paths.home.join(".local/bin"));
    places.push(paths.home.join(".npm-global/bin"));
    if host == Host::Claude {
        places.push(paths.home.join(".claude/local"));
    }
    places
        .into_iter()
        .map(|dir| dir.join(name))
        .find(|candidate| is_program(candidate))
}

fn is_program(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[derive(Deserialize)]
struct PackageJson {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    version: Option<String>,
}

/// The version the files beside `program` (symlinks resolved) give.
fn version_beside(host: Host, program: &Path) -> Option<String> {
    // Claude Code's native install: `…/claude/versions/<version>`.
    if host == Host::Claude
        && program
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|dir| dir == "versions")
        && let Some(name) = program.file_name().and_then(|n| n.to_str())
        && parse(name).is_some()
    {
        return Some(name.to_string());
    }
    let wanted = package_name(host);
    program
        .ancestors()
        .skip(1)
        .take(PACKAGE_DEPTH)
        .find_map(|dir| {
            let package: PackageJson =
                fsutil::read_json(&dir.join("package.json"), PACKAGE_JSON_LIMIT)?;
            let name = package.name?;
            let ours = name == wanted
                || name
                    .strip_prefix(wanted)
                    .is_some_and(|rest| rest.starts_with('-'));
            let version = package.version.filter(|v| parse(v).is_some())?;
            ours.then_some(version)
        })
}

/// The numbers of a `1.2.3` version (a `-pre` or `+build` tail ignored); `None` for anything
/// else.
pub fn parse(version: &str) -> Option<Vec<u64>> {
    let core = version
        .trim()
        .trim_start_matches('v')
        .split(['-', '+'])
        .next()?;
    let numbers: Option<Vec<u64>> = core.split('.').map(|n| n.parse().ok()).collect();
    numbers.filter(|n| n.len() >= 2)
}

/// Compares two versions by their numbers; `None` when either does not parse.
pub fn compare(a: &str, b: &str) -> Option<Ordering> {
    let (a, b) = (parse(a)?, parse(b)?);
    let width = a.len().max(b.len());
    let pad = |v: Vec<u64>| {
        let mut v = v;
        v.resize(width, 0);
        v
    };
    Some(pad(a).cmp(&pad(b)))
}

/// Whether `installed` is older than the version `host` was tested at.
pub fn older_than_tested(host: Host, installed: &str) -> bool {
    compare(installed, tested(host)) == Some(Ordering::Less)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_their_numbers() {
        assert_eq!(compare("0.169.0", "0.169.0"), Some(Ordering::Equal));
        assert_eq!(compare("0.99.0", "0.169.0"), Some(Ordering::Less));
        assert_eq!(compare("2.1.332", "2.1.328"), Some(Ordering::Greater));
        assert_eq!(compare("2.1", "2.1.0"), Some(Ordering::Equal));
        assert_eq!(compare("v2.2.0-beta.1", "2.1.0"), Some(Ordering::Greater));
        assert_eq!(compare("latest", "2.1.0"), None);
        assert!(older_than_tested(Host::Codex, "0.160.2"));
        assert!(!older_than_tested(Host::Codex, "0.171.0"));
        assert!(!older_than_tested(Host::Kimi, "nonsense"));
        for host in Host::ALL {
            assert!(parse(tested(host)).is_some(), "{host}");
        }
    }

    #[cfg(unix)]
    fn program(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn read_from_the_package_or_the_native_versions_folder() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // npm: node_modules/.bin/codex -> ../@openai/codex/bin/codex.js
        let package = root.join("lib/node_modules/@openai/codex");
        program(&package.join("bin/codex.js"));
        std::fs::write(
            package.join("package.json"),
            r#"{"name": "@openai/codex", "version": "0.169.0", "bin": {"codex": "bin/codex.js"}}"#,
        )
        .unwrap();
        let bin = root.join("lib/node_modules/.bin");
        std::fs::create_dir_all(&bin).unwrap();
        symlink("../@openai/codex/bin/codex.js", bin.join("codex")).unwrap();
        let found = std::fs::canonicalize(bin.join("codex")).unwrap();
        assert_eq!(
            version_beside(Host::Codex, &found).as_deref(),
            Some("0.169.0")
        );
        // Another package's package.json is not the host's.
        assert_eq!(version_beside(Host::Kimi, &found), None);
        // Codex's native binary deep in the package.
        let native = package.join("vendor/x86_64-unknown-linux-musl/bin/codex");
        program(&native);
        assert_eq!(
            version_beside(Host::Codex, &native).as_deref(),
            Some("0.169.0")
        );
        // Claude Code's native install.
        let native = root.join(".local/share/claude/versions/2.1.328");
        program(&native);
        assert_eq!(
            version_beside(Host::Claude, &native).as_deref(),
            Some("2.1.328")
        );
        // A program with nothing to say.
        let lone = root.join("opt/kimi");
        program(&lone);
        assert_eq!(version_beside(Host::Kimi, &lone), None);
    }
}
