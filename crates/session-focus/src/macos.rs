//! macOS, natively (AppKit's `NSRunningApplication`; no subprocess, no AppleScript): the first
//! process among the session's ancestors that is an application a person can switch to (a
//! terminal, an editor) is activated with all its windows. Which of its windows or tabs comes
//! forward is the application's choice. Written and compiled for macOS; not run here.

use objc2_app_kit::{
    NSApplicationActivationOptions, NSApplicationActivationPolicy, NSRunningApplication,
};

use crate::Refusal;
use crate::ancestry::Ancestor;

/// Activates the application of the first process in `chain` that is one; its name, pid and
/// 0 (macOS activates applications, not windows).
pub fn raise_first(chain: &[Ancestor]) -> Result<(String, u32, u64), Refusal> {
    for ancestor in chain {
        let Ok(pid) = libc::pid_t::try_from(ancestor.pid) else {
            continue;
        };
        let Some(app) = NSRunningApplication::runningApplicationWithProcessIdentifier(pid) else {
            continue;
        };
        if app.activationPolicy() == NSApplicationActivationPolicy::Prohibited {
            continue;
        }
        let name = app
            .localizedName()
            .map(|n| n.to_string())
            .unwrap_or_else(|| ancestor.name.clone());
        return if app.activateWithOptions(NSApplicationActivationOptions::ActivateAllWindows) {
            Ok((name, ancestor.pid, 0))
        } else {
            Err(Refusal::Refused)
        };
    }
    Err(Refusal::NoWindow)
}
