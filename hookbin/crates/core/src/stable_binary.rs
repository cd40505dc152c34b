//! The stable copy of `fabric-session` that installed hooks point at
//! (`<data dir>/bin/fabric-session`): the desktop app copies its bundled binary there on first
//! start and keeps it current on upgrade, replacing it atomically and only when the content
//! differs, so the hook command string (and Codex's trust in it) never changes.

use std::path::Path;

use crate::fsutil;

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
    let wanted = std::fs::read(source)?;
    let outcome = match std::fs::read(stable) {
        Ok(current) if current == wanted => return Ok(CopyOutcome::Unchanged),
        Ok(_) => CopyOutcome::Updated,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => CopyOutcome::Installed,
        Err(err) => return Err(err),
    };
    if let Some(dir) = stable.parent() {
        fsutil::create_private_dir(dir)?;
    }
    // A fresh file gets 0755; a replaced one keeps whatever mode the person gave it.
    fsutil::write_atomic(stable, &wanted, 0o755)?;
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
