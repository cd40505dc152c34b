//! Our GNOME Shell extension's state as the shell reports it (`GetExtensionInfo`), typed:
//! [`ExtensionState`] (not installed, off, being turned on or off, out of date, failed to
//! load with the shell's error, on), and [`ShellError`], the shell's error text made safe to
//! show (control characters dropped, whitespace collapsed, at most [`ShellError::MAX_CHARS`]).
//! Pure data, built on every system (the D-Bus side is `compositor::gnome`).

use std::fmt;

/// GNOME Shell's `ExtensionState` numbers (js/misc/extensionUtils.js; the names changed in
/// GNOME 46 — ENABLED/DISABLED became ACTIVE/INACTIVE, DISABLING/ENABLING became
/// DEACTIVATING/ACTIVATING — the numbers did not).
mod number {
    pub const ACTIVE: u32 = 1;
    pub const INACTIVE: u32 = 2;
    pub const ERROR: u32 = 3;
    pub const OUT_OF_DATE: u32 = 4;
    pub const DOWNLOADING: u32 = 5;
    pub const INITIALIZED: u32 = 6;
    pub const DEACTIVATING: u32 = 7;
    pub const ACTIVATING: u32 = 8;
    pub const UNINSTALLED: u32 = 99;
}

/// Our extension in the running shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtensionState {
    /// The shell does not know it (not installed, or installed during this session: the shell
    /// looks for extensions when it starts).
    NotInstalled,
    /// Installed and off (turned off, or never turned on).
    Off,
    /// Being turned on or off, or downloaded: a moment later it is another state.
    Changing,
    /// Installed for other GNOME Shell versions than this one (the shell will not load it).
    OutOfDate,
    /// The shell tried to load or turn it on and it failed; what the shell said.
    Failed(ShellError),
    /// On: the jump works.
    On,
}

impl ExtensionState {
    /// From `GetExtensionInfo`'s `state` (a double on the bus) and `error`; an empty answer
    /// (`has_info` false) is an extension the shell does not know.
    pub fn from_info(has_info: bool, state: Option<f64>, error: Option<&str>) -> ExtensionState {
        if !has_info {
            return ExtensionState::NotInstalled;
        }
        let Some(state) = state.filter(|s| s.is_finite() && *s >= 0.0 && *s <= 1000.0) else {
            return ExtensionState::Failed(ShellError::new("the shell reported no state"));
        };
        match state as u32 {
            number::ACTIVE => ExtensionState::On,
            number::INACTIVE | number::INITIALIZED => ExtensionState::Off,
            number::ERROR => ExtensionState::Failed(ShellError::new(
                error
                    .filter(|e| !e.trim().is_empty())
                    .unwrap_or("the shell gave no reason"),
            )),
            number::OUT_OF_DATE => ExtensionState::OutOfDate,
            number::DOWNLOADING | number::DEACTIVATING | number::ACTIVATING => {
                ExtensionState::Changing
            }
            number::UNINSTALLED => ExtensionState::NotInstalled,
            other => ExtensionState::Failed(ShellError::new(&format!(
                "the shell reported an unknown state ({other})"
            ))),
        }
    }

    /// Short words for logs.
    pub fn label(&self) -> &'static str {
        match self {
            ExtensionState::NotInstalled => "not installed",
            ExtensionState::Off => "off",
            ExtensionState::Changing => "changing",
            ExtensionState::OutOfDate => "out of date",
            ExtensionState::Failed(_) => "failed",
            ExtensionState::On => "on",
        }
    }
}

/// The shell's error text, safe to show and log: no control characters, whitespace runs made
/// one space, trimmed, at most [`ShellError::MAX_CHARS`] characters (an ellipsis marks a cut).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellError(String);

impl ShellError {
    /// The longest text kept, in characters.
    pub const MAX_CHARS: usize = 240;
    /// The most read of what the shell sent (anything beyond is never looked at).
    const MAX_READ: usize = 4096;

    pub fn new(raw: &str) -> ShellError {
        let mut cut = raw.len().min(Self::MAX_READ);
        while !raw.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut out = String::new();
        let mut chars = 0;
        let mut space = false;
        let mut truncated = cut < raw.len();
        for c in raw[..cut].chars() {
            let c = if c.is_whitespace() || c.is_control() {
                ' '
            } else {
                c
            };
            // Bidirectional overrides and zero-width marks can make a text read otherwise.
            if matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
            {
                continue;
            }
            if c == ' ' {
                space = !out.is_empty();
                continue;
            }
            if chars >= Self::MAX_CHARS {
                truncated = true;
                break;
            }
            if space {
                out.push(' ');
                chars += 1;
                space = false;
                if chars >= Self::MAX_CHARS {
                    truncated = true;
                    break;
                }
            }
            out.push(c);
            chars += 1;
        }
        if truncated {
            out.push('…');
        }
        ShellError(out)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ShellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_state_number_is_typed() {
        let state = |n: f64| ExtensionState::from_info(true, Some(n), None);
        assert_eq!(state(1.0), ExtensionState::On);
        assert_eq!(state(2.0), ExtensionState::Off);
        assert_eq!(state(6.0), ExtensionState::Off);
        assert_eq!(state(4.0), ExtensionState::OutOfDate);
        assert_eq!(state(7.0), ExtensionState::Changing);
        assert_eq!(state(8.0), ExtensionState::Changing);
        assert_eq!(state(99.0), ExtensionState::NotInstalled);
        assert_eq!(
            ExtensionState::from_info(false, None, None),
            ExtensionState::NotInstalled
        );
        assert!(matches!(state(42.0), ExtensionState::Failed(_)));
        assert!(matches!(state(f64::NAN), ExtensionState::Failed(_)));
        assert!(matches!(
            ExtensionState::from_info(true, None, None),
            ExtensionState::Failed(_)
        ));
    }

    #[test]
    fn a_failure_carries_the_shells_error() {
        let failed = ExtensionState::from_info(
            true,
            Some(3.0),
            Some("SyntaxError: import declarations may only appear at top level of a module"),
        );
        assert_eq!(
            failed,
            ExtensionState::Failed(ShellError::new(
                "SyntaxError: import declarations may only appear at top level of a module"
            ))
        );
        let silent = ExtensionState::from_info(true, Some(3.0), Some("  "));
        assert_eq!(
            silent,
            ExtensionState::Failed(ShellError::new("the shell gave no reason"))
        );
    }

    #[test]
    fn the_shells_error_is_bounded_and_cleaned() {
        assert_eq!(
            ShellError::new("  Error:\n\tAn object is already\r\n exported\u{7} ").as_str(),
            "Error: An object is already exported"
        );
        assert_eq!(ShellError::new("a\u{202e}b\u{200b}c").as_str(), "abc");
        let long = ShellError::new(&"é".repeat(10_000));
        assert_eq!(long.as_str().chars().count(), ShellError::MAX_CHARS + 1);
        assert!(long.as_str().ends_with('…'));
        let exact = ShellError::new(&"x".repeat(ShellError::MAX_CHARS));
        assert!(!exact.as_str().ends_with('…'));
    }
}
