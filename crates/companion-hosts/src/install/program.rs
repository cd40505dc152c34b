//! Which program the hooks run: the package's own, the app's stable copy, or the running
//! binary when neither is there (said so); a path that looks unstable (a build folder, a
//! versioned folder) is named as such.

use super::*;

/// The program the hook commands run, and what a person should know about it.
pub(super) struct ProgramChoice {
    pub(super) path: PathBuf,
    pub(super) warnings: Vec<String>,
}

/// `--script` when given; else the package's `/usr/bin/fabric-session` when the running
/// program is the package's ([`stable_binary::packaged_program`]); else the app's stable copy
/// when it is there; else this binary.
pub(super) fn choose_program(
    host: Host,
    script: Option<&Path>,
    paths: &Paths,
) -> Result<ProgramChoice, InstallError> {
    if let Some(script) = script {
        let path = std::path::absolute(script).map_err(|e| InstallError::io(script, e))?;
        let name_ok = path.file_name().is_some_and(|name| {
            let name = name.to_string_lossy();
            name == PROGRAM_NAME || name.eq_ignore_ascii_case(&format!("{PROGRAM_NAME}.exe"))
        });
        if !name_ok {
            return Err(InstallError::BadScript { path });
        }
        let mut warnings = Vec::new();
        if !path.is_file() {
            warnings.push(format!(
                "{} does not exist (yet): the hooks fail until it does.",
                path.display()
            ));
        }
        return Ok(ProgramChoice { path, warnings });
    }
    if let Some(path) = crate::stable_binary::packaged_program() {
        return Ok(ProgramChoice {
            path,
            warnings: Vec::new(),
        });
    }
    let stable = paths.stable_binary();
    if stable.is_file() {
        return Ok(ProgramChoice {
            path: stable,
            warnings: Vec::new(),
        });
    }
    let exe = std::env::current_exe().map_err(|e| InstallError::NoProgram {
        detail: e.to_string(),
    })?;
    let mut warnings = vec![format!(
        "The app's stable copy of {PROGRAM_NAME} ({}) is not there, so the hooks would run this binary.",
        stable.display()
    )];
    if let Some(why) = unstable_reason(&exe) {
        let codex = if host == Host::Codex {
            ", and Codex asks you to trust the hook again whenever its command changes"
        } else {
            ""
        };
        warnings.push(format!(
            "{} looks like a {why} path: the hooks break when it moves or is updated{codex}. Install the app, or pass --script <a stable path>.",
            exe.display()
        ));
    }
    Ok(ProgramChoice {
        path: exe,
        warnings,
    })
}

/// Why a program path is unlikely to stay put: a build output, a cache, a temporary folder,
/// a package store, or a folder named after a version.
pub(super) fn unstable_reason(path: &Path) -> Option<&'static str> {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_ascii_lowercase())
        .collect();
    let has = |name: &str| parts.iter().any(|p| p == name);
    let pair = |a: &str, b: &[&str]| {
        parts
            .windows(2)
            .any(|w| w[0] == a && b.contains(&w[1].as_str()))
    };
    // Cargo marks its target folder (wherever CARGO_TARGET_DIR puts it) with CACHEDIR.TAG.
    let in_cargo_target = path
        .ancestors()
        .skip(1)
        .take(3)
        .any(|dir| dir.join("CACHEDIR.TAG").is_file());
    if in_cargo_target || (has("target") && (has("debug") || has("release"))) {
        return Some("build-output");
    }
    if has("cache") || has(".cache") || has("caches") || has("registry") {
        return Some("cache");
    }
    let temporary = has("tmp") || has("temp") || path.starts_with(std::env::temp_dir());
    if temporary
        || parts
            .iter()
            .any(|p| p.starts_with(".mount_") || p == "apptranslocation")
    {
        return Some("temporary");
    }
    if pair("nix", &["store"]) || has("cellar") || has("node_modules") {
        return Some("versioned package");
    }
    if parts.iter().any(|p| looks_like_version(p)) {
        return Some("versioned");
    }
    None
}

/// `1.2`, `v0.3.1`, `fabric-session-0.3.1`, `2.1.0-beta`: a dotted number after a start, `v`
/// or `-`.
pub(super) fn looks_like_version(part: &str) -> bool {
    let bytes = part.as_bytes();
    (0..bytes.len()).any(|start| {
        let boundary = start == 0 || matches!(bytes[start - 1], b'-' | b'v' | b'_' | b'@');
        if !boundary || !bytes[start].is_ascii_digit() {
            return false;
        }
        let rest = &part[start..];
        let mut pieces = rest.split('.');
        let first = pieces.next().unwrap_or("");
        let second = pieces.next().unwrap_or("");
        !first.is_empty()
            && first.bytes().all(|b| b.is_ascii_digit())
            && second.bytes().next().is_some_and(|b| b.is_ascii_digit())
    })
}
