//! Our GNOME Shell extension's states as the real shell reports them (issue 28), on whichever
//! GNOME Shell runs here (43 on Debian 12; 48 and 50 in tests/desktop-roots): off, then
//! turned on and read back as on; installed in the other format (what a 40–44 extension is
//! on 45+, and the reverse) it is "out of date", and turning it on reads that back instead of
//! trusting the shell's `true`; an extension that fails in `enable()` is "failed", with the
//! shell's own error, cleaned. `fabric-session focus` says each of them apart.
#![cfg(target_os = "linux")]

use std::path::Path;

use desktop_shells::gnome::{self, FOCUS, GnomeShell};
use desktop_shells::programs::{ExtensionFormat, focus_extension_dir};
use desktop_shells::{WAIT, require, wait_until};
use session_focus::compositor::gnome as focus_gnome;
use session_focus::gnome_extension::ExtensionState;

fn available(test: &str) -> bool {
    gnome::available(test) && require(test, &["foot"], "foot")
}

/// A session whose host runs in a foot window, for `focus` to answer about.
fn one_session(shell: &mut GnomeShell, id: &str) {
    shell.wire_claude_and_fabric();
    let script = shell.host_script(id, "alpha");
    let foot = desktop_shells::terminal::foot(shell, &format!("foot-{id}"), &script);
    shell.wait_for_window(foot);
    shell.recorded_host(id);
}

fn state(shell: &GnomeShell) -> ExtensionState {
    let bus = shell.bus().clone();
    shell.block_on(async move { focus_gnome::state(&bus).await })
}

fn turn_on(shell: &GnomeShell) -> ExtensionState {
    let bus = shell.bus().clone();
    shell.block_on(async move { focus_gnome::enable_extension(&bus).await })
}

#[test]
fn off_then_turned_on_is_read_back_as_on() {
    let test = "off_then_turned_on_is_read_back_as_on";
    if !available(test) {
        return;
    }
    let format = gnome::extension_format();
    let shell = GnomeShell::start_with(
        "gnome-extension-states",
        "off-then-on",
        &[],
        Some(&focus_extension_dir(format)),
    );
    assert_eq!(state(&shell), ExtensionState::Off);
    assert_eq!(turn_on(&shell), ExtensionState::On);
    assert_eq!(state(&shell), ExtensionState::On);
    // enable() again without disable() between (GNOME 48 did so while starting): no
    // "An object is already exported", and the service still answers.
    shell.eval(&format!(
        "const ours = Main.extensionManager.lookup('{FOCUS}');
         ours.stateObj.enable(); ours.stateObj.enable(); 0"
    ));
    let bus = shell.bus().clone();
    let answered = shell.block_on(async move {
        bus.call_method(
            Some("org.gnome.Shell"),
            "/ai/passioncode/FabricCompanion/Focus",
            Some("ai.passioncode.FabricCompanion.Focus1"),
            "FocusedProcess",
            &(),
        )
        .await
        .is_ok()
    });
    assert!(answered, "the service answers after enable() twice");
    assert_eq!(state(&shell), ExtensionState::On);
}

#[test]
fn the_other_format_is_out_of_date_and_turning_it_on_says_so() {
    let test = "the_other_format_is_out_of_date_and_turning_it_on_says_so";
    if !available(test) {
        return;
    }
    let other = gnome::extension_format().other();
    let mut shell = GnomeShell::start_with(
        "gnome-extension-states",
        "out-of-date",
        &[FOCUS],
        Some(&focus_extension_dir(other)),
    );
    assert_eq!(state(&shell), ExtensionState::OutOfDate);
    // The shell takes the request; the state read back says it is not on.
    assert_eq!(turn_on(&shell), ExtensionState::OutOfDate);
    one_session(&mut shell, "stale");
    let (code, out, err) = shell.focus("stale");
    assert_eq!(code, Some(4), "{out}{err}");
    assert!(err.contains("out of date"), "{err}");
    assert!(!err.contains("gnome-extensions enable"), "{err}");
}

/// Our extension's metadata in this shell's format, with an `enable()` that throws.
fn failing_extension(dir: &Path) {
    let format = gnome::extension_format();
    let shipped = focus_extension_dir(format);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(shipped.join("metadata.json"), dir.join("metadata.json")).unwrap();
    let script = match format {
        ExtensionFormat::Module => {
            "import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';\n\
             export default class Failing extends Extension {\n\
                 enable() { throw new Error('fabric test:\\n\\trefused \\u202eto start'); }\n\
                 disable() {}\n\
             }\n"
        }
        ExtensionFormat::Legacy => {
            "function init() {\n\
                 return { enable() { throw new Error('fabric test:\\n\\trefused \\u202eto start'); }, disable() {} };\n\
             }\n"
        }
    };
    std::fs::write(dir.join("extension.js"), script).unwrap();
}

#[test]
fn a_failing_extension_is_failed_with_the_shells_error() {
    let test = "a_failing_extension_is_failed_with_the_shells_error";
    if !available(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let failing = dir.path().join(FOCUS);
    failing_extension(&failing);
    let mut shell =
        GnomeShell::start_with("gnome-extension-states", "failed", &[FOCUS], Some(&failing));
    let failed = wait_until("the extension's failure", WAIT, || match state(&shell) {
        ExtensionState::Failed(error) => Some(error),
        _ => None,
    });
    // Cleaned: no newline, tab or bidirectional override, as the shell said it otherwise.
    assert!(
        failed.as_str().contains("fabric test: refused to start"),
        "{failed}"
    );
    one_session(&mut shell, "broken");
    let (code, out, err) = shell.focus("broken");
    assert_eq!(code, Some(4), "{out}{err}");
    assert!(err.contains("failed to load"), "{err}");
    assert!(err.contains("fabric test: refused to start"), "{err}");
}
