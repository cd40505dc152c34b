//! The stable copy of `fabric-session` that installed hooks point at
//! (`<data dir>/bin/fabric-session`): the desktop app copies its bundled binary there on first
//! start and keeps it current on upgrade, replacing it atomically and only when the content
//! differs, so the hook command string (and Codex's trust in it) never changes.
//!
//! Windows refuses to replace an executable while it runs (a hook, or a detached worker
//! finishing its turn), but lets it be renamed: there the running copy is moved aside to
//! `fabric-session.exe.<n>.old` first, and such leftovers are removed on a later call, once
//! nothing runs them.
//!
//! Installed from a package, there is no copy: the hooks run the package's own program
//! ([`packaged_program`]), which an upgrade replaces in place (same path, same command, same
//! approval) and a removal takes away: the Linux package's `/usr/bin/fabric-session`, the
//! Windows installer's `fabric-session.exe` in the folder it recorded as its
//! `InstallLocation` under [`WINDOWS_UNINSTALL_KEY`] (per person, `HKEY_CURRENT_USER`).

use std::path::{Path, PathBuf};

use companion_platform::fsutil;

/// No build of `fabric-session` comes near this.
const BINARY_LIMIT: u64 = 512 * 1024 * 1024;

/// Where the Linux package puts the three programs.
pub const PACKAGED_BIN_DIR: &str = "/usr/bin";

/// Where the Linux package keeps its helper programs (the tray's GTK shell).
pub const PACKAGED_HELPER_DIR: &str = "/usr/lib/fabric-companion";

/// The Windows installer's key under `HKEY_CURRENT_USER` (`packaging/windows/` writes it):
/// its `InstallLocation` is the folder the package's programs are in.
pub const WINDOWS_UNINSTALL_KEY: &str =
    r"Software\Microsoft\Windows\CurrentVersion\Uninstall\FabricCompanion";

/// The package's `fabric-session` when the running program is one of the package's and that
/// file is there: on Linux it runs from [`PACKAGED_BIN_DIR`] or [`PACKAGED_HELPER_DIR`]; on
/// Windows from the installer's folder ([`WINDOWS_UNINSTALL_KEY`]). `None` elsewhere: built
/// from source, a program anywhere else, or macOS.
pub fn packaged_program() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    #[cfg(windows)]
    {
        packaged_program_in(&exe, &windows_package::install_dir()?)
    }
    #[cfg(not(windows))]
    {
        if !cfg!(target_os = "linux") {
            return None;
        }
        let exe = match exe.parent() {
            Some(dir) if dir == Path::new(PACKAGED_HELPER_DIR) => {
                Path::new(PACKAGED_BIN_DIR).join(exe.file_name()?)
            }
            _ => exe,
        };
        packaged_program_in(&exe, Path::new(PACKAGED_BIN_DIR))
    }
}

/// Whether `program` is the package's `fabric-session` (its hook commands get a guard that
/// does nothing once the package is removed): in [`PACKAGED_BIN_DIR`] on Linux, in the
/// installer's folder on Windows.
pub fn is_packaged_program(program: &Path) -> bool {
    let Some(dir) = program.parent() else {
        return false;
    };
    #[cfg(windows)]
    {
        windows_package::install_dir().is_some_and(|installed| same_dir(dir, &installed))
    }
    #[cfg(not(windows))]
    {
        cfg!(target_os = "linux") && dir == Path::new(PACKAGED_BIN_DIR)
    }
}

/// [`packaged_program`] with the running program and the package's folder given.
pub fn packaged_program_in(exe: &Path, packaged_dir: &Path) -> Option<PathBuf> {
    if !same_dir(exe.parent()?, packaged_dir) {
        return None;
    }
    let program = packaged_dir.join(
        companion_platform::platform::Os::CURRENT
            .executable(companion_platform::paths::PROGRAM_NAME),
    );
    program.is_file().then_some(program)
}

/// Two folders are the same: exactly on Unix; on Windows the same folder on disk (a short 8.3
/// spelling and the long one alike), else the same text in any case, a trailing `\` aside.
fn same_dir(a: &Path, b: &Path) -> bool {
    if cfg!(windows) {
        if let (Ok(a), Ok(b)) = (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            return a == b;
        }
        let text = |p: &Path| {
            p.to_string_lossy()
                .trim_end_matches(['\\', '/'])
                .replace('/', "\\")
                .to_lowercase()
        };
        text(a) == text(b)
    } else {
        a == b
    }
}

/// The Windows installer's record of where it put the programs.
#[cfg(windows)]
mod windows_package {
    use std::os::windows::ffi::OsStringExt;
    use std::path::PathBuf;

    use windows_sys::Win32::Foundation::ERROR_SUCCESS;
    use windows_sys::Win32::System::Registry::{HKEY_CURRENT_USER, RRF_RT_REG_SZ, RegGetValueW};

    /// `InstallLocation` of [`super::WINDOWS_UNINSTALL_KEY`], when the package is installed.
    pub(super) fn install_dir() -> Option<PathBuf> {
        let wide = |text: &str| -> Vec<u16> { text.encode_utf16().chain([0]).collect() };
        let (key, value) = (wide(super::WINDOWS_UNINSTALL_KEY), wide("InstallLocation"));
        let mut buffer = vec![0u16; 1024];
        let mut size = (buffer.len() * 2) as u32;
        // SAFETY: both names are NUL-terminated; the buffer holds `size` bytes.
        let code = unsafe {
            RegGetValueW(
                HKEY_CURRENT_USER,
                key.as_ptr(),
                value.as_ptr(),
                RRF_RT_REG_SZ,
                std::ptr::null_mut(),
                buffer.as_mut_ptr().cast(),
                &mut size,
            )
        };
        if code != ERROR_SUCCESS {
            return None;
        }
        let units = (size as usize / 2).min(buffer.len());
        let text = &buffer[..units];
        let text = &text[..text.iter().position(|&u| u == 0).unwrap_or(text.len())];
        (!text.is_empty()).then(|| PathBuf::from(std::ffi::OsString::from_wide(text)))
    }
}

/// What [`ensure_copy`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyOutcome {
    /// The stable copy was missing and is now in place.
    Installed,
    /// The stable copy differed and was replaced.
    Updated,
    /// The stable copy already had the same content.
    Unchanged,
}

/// Makes `stable` a copy of `source` (mode 0755), atomically, only when the content differs.
pub fn ensure_copy(source: &Path, stable: &Path) -> std::io::Result<CopyOutcome> {
    // Through the careful read: a FIFO or a device at either path is an error, never a hang.
    let wanted = fsutil::read_bounded_strict(source, BINARY_LIMIT)?
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
    let outcome = match fsutil::read_bounded_strict(stable, BINARY_LIMIT)? {
        Some(current) if current == wanted => return Ok(CopyOutcome::Unchanged),
        Some(_) => CopyOutcome::Updated,
        None => CopyOutcome::Installed,
    };
    if let Some(dir) = stable.parent() {
        fsutil::create_private_dir(dir)?;
    }
    #[cfg(windows)]
    remove_set_aside(stable);
    // A fresh file gets 0755; a replaced one keeps whatever mode the person gave it.
    match fsutil::write_atomic(stable, &wanted, 0o755) {
        #[cfg(windows)]
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ResourceBusy
            ) =>
        {
            // In use: rename the running copy out of the way, then put the new one in place.
            std::fs::rename(stable, set_aside_name(stable))?;
            fsutil::write_atomic(stable, &wanted, 0o755)?;
        }
        result => result?,
    }
    Ok(outcome)
}

/// A free `<stable>.<n>.old` beside the stable copy.
#[cfg(windows)]
fn set_aside_name(stable: &Path) -> std::path::PathBuf {
    let base = stable.as_os_str().to_string_lossy().into_owned();
    (1..)
        .map(|n| std::path::PathBuf::from(format!("{base}.{n}.old")))
        .find(|candidate| !candidate.exists())
        .expect("some number is free")
}

/// Removes copies set aside earlier; one still running stays until a later call.
#[cfg(windows)]
fn remove_set_aside(stable: &Path) {
    let (Some(dir), Some(name)) = (stable.parent(), stable.file_name()) else {
        return;
    };
    let prefix = format!("{}.", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        if file.starts_with(&prefix) && file.ends_with(".old") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_packaged_program_only_for_a_program_run_from_the_packages_folder() {
        let dir = tempfile::tempdir().unwrap();
        let usr_bin = dir.path().join("usr").join("bin");
        std::fs::create_dir_all(&usr_bin).unwrap();
        let dashboard = usr_bin.join("fabric-companion");
        // The package's folder without fabric-session in it: nothing to point at.
        assert_eq!(packaged_program_in(&dashboard, &usr_bin), None);
        std::fs::write(usr_bin.join("fabric-session"), b"").unwrap();
        let session = usr_bin.join("fabric-session");
        for exe in [&dashboard, &usr_bin.join("fabric-tray"), &session] {
            assert_eq!(
                packaged_program_in(exe, &usr_bin),
                Some(session.clone()),
                "{}",
                exe.display()
            );
        }
        // Built from source, or a copy elsewhere: not the package's.
        for exe in [
            dir.path().join("target/release/fabric-companion"),
            usr_bin.join("sub").join("fabric-tray"),
            dir.path().join("usr/local/bin/fabric-session"),
        ] {
            assert_eq!(
                packaged_program_in(&exe, &usr_bin),
                None,
                "{}",
                exe.display()
            );
        }
    }

    #[test]
    fn installs_updates_and_leaves_equal_content_alone() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("source");
        let stable = dir.path().join("data/bin/fabric-session");
        std::fs::write(&source, b"v1").unwrap();
        assert_eq!(
            ensure_copy(&source, &stable).unwrap(),
            CopyOutcome::Installed
        );
        assert_eq!(
            ensure_copy(&source, &stable).unwrap(),
            CopyOutcome::Unchanged
        );
        std::fs::write(&source, b"v2").unwrap();
        assert_eq!(ensure_copy(&source, &stable).unwrap(), CopyOutcome::Updated);
        assert_eq!(std::fs::read(&stable).unwrap(), b"v2");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&stable).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o755);
        }
    }

    /// A FIFO where the stable copy goes is an error at once (the dashboard calls this at
    /// start), and it is left as it is.
    #[cfg(unix)]
    #[test]
    fn a_fifo_in_the_way_is_an_error_not_a_hang() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("source");
        std::fs::write(&source, b"v1").unwrap();
        let stable = dir.path().join("fabric-session");
        let c = std::ffi::CString::new(stable.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = ensure_copy(&source, &stable).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert!(
            std::fs::symlink_metadata(&stable)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        let err = ensure_copy(&stable, &dir.path().join("other")).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    }
}
