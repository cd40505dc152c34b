//! Finding our own programs (`fabric-session`, `fabric-tray`, `fabric-companion`): the one
//! rule the hooks' installer, the tray and the dashboard share. It only looks at names and
//! files; it never starts anything (that is [`companion_platform::detach`]'s job).
//!
//! The rule, in order:
//! 1. `$FABRIC_<NAME>_BIN` when set and not empty. A variable that names something that is
//!    not a file is an error, never a reason to take another copy behind the person's back.
//! 2. The program beside our own executable (an installed bundle ships them together).
//! 3. The program on `PATH` ([`Search::BesideOrPath`] only).
//!
//! Program file names carry the platform's executable suffix (`.exe` on Windows).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use companion_platform::env_vars;

/// One of our programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Program {
    /// The hook binary, `fabric-session`.
    Session,
    /// The tray, `fabric-tray`.
    Tray,
    /// The dashboard, `fabric-companion`.
    Companion,
}

impl Program {
    /// The program's name (without the executable suffix).
    pub fn name(self) -> &'static str {
        match self {
            Program::Session => "fabric-session",
            Program::Tray => "fabric-tray",
            Program::Companion => "fabric-companion",
        }
    }

    /// The variable that names the program to use instead of looking for it.
    pub fn env_var(self) -> &'static str {
        match self {
            Program::Session => env_vars::FABRIC_SESSION_BIN,
            Program::Tray => env_vars::FABRIC_TRAY_BIN,
            Program::Companion => env_vars::FABRIC_COMPANION_BIN,
        }
    }

    /// The program's file name on this platform.
    pub fn file_name(self) -> String {
        format!("{}{}", self.name(), std::env::consts::EXE_SUFFIX)
    }
}

/// Where to look after the variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Search {
    /// Beside our own executable only: the copy shipped with us (the tray copies this
    /// `fabric-session` to the stable path, and must never take some other one from `PATH`).
    BesideOnly,
    /// Beside our own executable, then on `PATH`.
    BesideOrPath,
}

/// Why a program was not found. Messages name the places looked at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FindError {
    #[error("${var} names {}, which is not a file", path.display())]
    VariableNotAFile { var: &'static str, path: PathBuf },
    #[error("{name} not found (${var}, beside this program{})", if *searched_path { ", or on PATH" } else { "" })]
    NotFound {
        name: &'static str,
        var: &'static str,
        searched_path: bool,
    },
}

/// Finds `program` by the rule above, from this process's environment and executable.
pub fn find(program: Program, search: Search) -> Result<PathBuf, FindError> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    find_in(
        program,
        search,
        env_vars::path_var(program.env_var()),
        beside.as_deref(),
        std::env::var_os("PATH"),
    )
}

/// [`find`] with its inputs given: the variable's value, our executable's folder and `PATH`.
pub fn find_in(
    program: Program,
    search: Search,
    variable: Option<PathBuf>,
    beside: Option<&Path>,
    path_var: Option<OsString>,
) -> Result<PathBuf, FindError> {
    if let Some(path) = variable {
        return if path.is_file() {
            Ok(path)
        } else {
            Err(FindError::VariableNotAFile {
                var: program.env_var(),
                path,
            })
        };
    }
    let file = program.file_name();
    if let Some(found) = beside.map(|dir| dir.join(&file)).filter(|p| p.is_file()) {
        return Ok(found);
    }
    let on_path = match (search, path_var) {
        (Search::BesideOrPath, Some(path_var)) => std::env::split_paths(&path_var)
            .map(|dir| dir.join(&file))
            .find(|p| p.is_file()),
        _ => None,
    };
    on_path.ok_or(FindError::NotFound {
        name: program.name(),
        var: program.env_var(),
        searched_path: search == Search::BesideOrPath,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"").unwrap();
    }

    #[test]
    fn the_variable_wins_then_beside_then_path() {
        let dir = tempfile::tempdir().unwrap();
        let named = dir.path().join("named/fabric-tray");
        let beside = dir.path().join("app");
        let on_path = dir.path().join("bin");
        touch(&named);
        touch(&beside.join(Program::Tray.file_name()));
        touch(&on_path.join(Program::Tray.file_name()));
        let path_var = Some(std::env::join_paths([&on_path]).unwrap());
        let find = |var: Option<PathBuf>, beside: Option<&Path>, search| {
            find_in(Program::Tray, search, var, beside, path_var.clone())
        };
        assert_eq!(
            find(Some(named.clone()), Some(&beside), Search::BesideOrPath),
            Ok(named)
        );
        assert_eq!(
            find(None, Some(&beside), Search::BesideOrPath),
            Ok(beside.join(Program::Tray.file_name()))
        );
        assert_eq!(
            find(None, None, Search::BesideOrPath),
            Ok(on_path.join(Program::Tray.file_name()))
        );
        // Beside only never takes the one on PATH.
        assert!(matches!(
            find(None, None, Search::BesideOnly),
            Err(FindError::NotFound {
                searched_path: false,
                ..
            })
        ));
    }

    #[test]
    fn a_variable_naming_no_file_is_an_error_not_a_fallback() {
        let dir = tempfile::tempdir().unwrap();
        touch(&dir.path().join(Program::Session.file_name()));
        let missing = dir.path().join("gone/fabric-session");
        let err = find_in(
            Program::Session,
            Search::BesideOrPath,
            Some(missing.clone()),
            Some(dir.path()),
            None,
        )
        .unwrap_err();
        assert_eq!(
            err,
            FindError::VariableNotAFile {
                var: "FABRIC_SESSION_BIN",
                path: missing
            }
        );
        assert!(err.to_string().starts_with("$FABRIC_SESSION_BIN names "));
        let none = find_in(Program::Companion, Search::BesideOrPath, None, None, None);
        assert_eq!(
            none.unwrap_err().to_string(),
            "fabric-companion not found ($FABRIC_COMPANION_BIN, beside this program, or on PATH)"
        );
    }
}
