//! Checking an edit of a host's config: before it is written (only our entries change, the
//! text still parses), read back after, and the old text restored if the read-back differs.

use super::*;

/// Re-reads the new text as the format and checks that exactly the selected entries of ours
/// went and came (each format checks that nothing else changed).
pub(super) fn check_edit(
    format: Format,
    path: &Path,
    new_text: &str,
    before: &[Entry],
    selection: &Selection,
) -> Result<(), InstallError> {
    let failed = |detail: String| InstallError::EditCheckFailed {
        path: path.to_path_buf(),
        detail,
    };
    let after = format
        .open(path, Some(new_text))
        .map_err(|err| failed(format!("the new text does not read back: {}", err.code())))?;
    let mut expected: Vec<(String, String)> = before
        .iter()
        .enumerate()
        .filter(|(i, _)| !selection.remove.contains(i))
        .map(|(_, e)| (e.event.clone(), e.command.clone()))
        .chain(
            selection
                .add
                .iter()
                .map(|e| (e.event.clone(), e.command.clone())),
        )
        .collect();
    let mut found: Vec<(String, String)> = after
        .ours()
        .iter()
        .map(|e| (e.event.clone(), e.command.clone()))
        .collect();
    expected.sort();
    found.sort();
    if expected != found {
        return Err(failed("our entries would not be as planned".into()));
    }
    Ok(())
}

/// Reads the file back after writing: the bytes must be what was written and must parse.
/// Bytes that parse badly are ours: the file is restored from the backup (or removed when it
/// was new), unless it changed again meanwhile. Bytes that differ, or a file gone, are someone
/// else's doing (the host saving its settings, an editor): they are left exactly as they are,
/// never overwritten with the backup, and the error says so.
pub(super) fn read_back(
    format: Format,
    file: &Path,
    written: &[u8],
    backup: Option<&Path>,
) -> Result<(), InstallError> {
    let failed = |detail: String, outcome: String| InstallError::ReadBackFailed {
        path: file.to_path_buf(),
        detail,
        outcome,
    };
    let someone_else = |detail: &str| {
        let before = match backup {
            Some(backup) => format!("; the file as it was before is in {}", backup.display()),
            None => String::new(),
        };
        failed(
            detail.to_string(),
            format!(
                "another program changed it right after our write, so it was left as that program wrote it (our change may be lost{before}); run the dry run again"
            ),
        )
    };
    match fsutil::read_bounded(file, MAX_CONFIG_BYTES + 1) {
        Err(err) => Err(failed(
            format!("reading it failed: {err}"),
            "it was left as it is".into(),
        )),
        Ok(None) => Err(someone_else("it is gone")),
        Ok(Some(bytes)) if bytes != written => Err(someone_else("its bytes differ")),
        Ok(Some(bytes)) => match verify_parses(format, &bytes) {
            Ok(()) => Ok(()),
            Err(detail) => Err(failed(detail, restore(file, written, backup))),
        },
    }
}

/// Whether written bytes parse as the format, with a real parser (`toml` for Kimi Code).
pub(super) fn verify_parses(format: Format, bytes: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "it is not UTF-8".to_string())?;
    match format {
        Format::HooksJson => json::verify_parses(text),
        Format::KimiToml => kimi::verify_parses(text),
    }
}

/// Puts the file back as it was before our write, only while it still holds exactly what we
/// wrote (checked again just before the rename).
pub(super) fn restore(file: &Path, written: &[u8], backup: Option<&Path>) -> String {
    let still_ours = || {
        fsutil::read_bounded(file, MAX_CONFIG_BYTES + 1)
            .map(|bytes| bytes.as_deref() == Some(written))
    };
    match backup {
        Some(backup) => match fsutil::read_bounded_strict(backup, MAX_CONFIG_BYTES + 1)
            .and_then(|bytes| bytes.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound)))
            .and_then(|bytes| {
                fsutil::write_atomic_unless_changed(
                    file,
                    &bytes,
                    fsutil::PRIVATE_FILE_MODE,
                    still_ours,
                )
            }) {
            Ok(true) => format!("it was restored from {}", backup.display()),
            Ok(false) => format!(
                "it changed again meanwhile and was left as it is; the original is in {}",
                backup.display()
            ),
            Err(err) => format!(
                "restoring it failed ({err}); the original is in {}",
                backup.display()
            ),
        },
        None => match still_ours() {
            Ok(true) => match fsutil::resolve_write_target(file).and_then(fs::remove_file) {
                Ok(()) => "it was removed (it did not exist before)".into(),
                Err(err) => format!("removing it failed ({err})"),
            },
            _ => "it changed again meanwhile and was left as it is".into(),
        },
    }
}
