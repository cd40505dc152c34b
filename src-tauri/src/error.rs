//! The one error type commands return to the page. It serializes as its message: the page shows
//! it in plain words. Messages may name the config file being edited (the person's own hook
//! config, shown to them) and our own program, never anything else of theirs. A remote's
//! refusal is its one line (`companion_remotes::setup::SetupError`), cleaned when read.

use serde::{Serialize, Serializer};

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("cannot find the home folder; set HOME")]
    NoHome,
    #[error("{0}")]
    Install(#[from] companion_hosts::install::InstallError),
    #[error("{0}")]
    Settings(#[from] companion_sessions::settings::SettingsError),
    #[error("{0}")]
    Remote(#[from] companion_remotes::setup::SetupError),
    #[error("{0}")]
    Invalid(String),
    #[error("{what}: {source}")]
    Io {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
}

impl Serialize for CommandError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

pub type CommandResult<T> = Result<T, CommandError>;
